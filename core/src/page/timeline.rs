//! The timeline of the window (the last hour, 24 hours or 7 days, see
//! `window.rs`): one lane per job (and one for rows no
//! job of the table has: spawned workers, removed jobs), one bar per ledger
//! row, coloured by its state, from its start (else its slot, else its
//! claim) to its end (now while it runs; at least [`MIN_BAR`] wide, so an
//! instant row is still a bar). A row that started after its slot has a
//! lateness whisker from the slot to the start, and a ▼ over its start when
//! it was [`LATE_MARK_MS`] or more late (a second is under a pixel of a day).
//! Every bar's `<title>` says what it was (a hover tooltip, no script).
//!
//! [`layout`] is the geometry as data (what the tests check), [`svg`] its text.

use super::escape::escape;
use super::model::{PageJob, PageRun};
use super::palette;
use super::window::Window;
use crate::run::ExecState;
use crate::schedule::{Timestamp, Tz, format_duration};
use crate::text::local_time;
use std::fmt::Write as _;

/// Lateness from which a bar gets its ▼ mark.
pub const LATE_MARK_MS: i64 = 1000;

/// The drawing's width in user units (it scales to the page).
pub const WIDTH: f64 = 1200.0;
/// Where the plot starts (the lane labels are to its left).
pub const PLOT_X: f64 = 210.0;
/// The plot's width: the window.
pub const PLOT_W: f64 = WIDTH - PLOT_X - 10.0;
const AXIS_H: f64 = 26.0;
const LANE_H: f64 = 22.0;
const BAR_H: f64 = 14.0;
/// The narrowest bar.
pub const MIN_BAR: f64 = 2.0;

/// One lane: a job, or the rows no listed job has.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// None for the lane of rows without a job.
    pub job_id: Option<String>,
    /// The label: the job's name (or the other lane's).
    pub label: String,
    /// The zone its bars' times are told in: the job's, else the page's.
    pub zone: Tz,
    /// Its bars, one per row.
    pub bars: Vec<Bar>,
}

/// One row's bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The row's id.
    pub run_id: String,
    /// The row's state: the bar's colour.
    pub state: ExecState,
    /// Where the bar starts, in user units.
    pub x: f64,
    /// Its width, in user units (at least [`MIN_BAR`]).
    pub width: f64,
    /// Its lateness whisker (None: it did not start after its slot).
    pub late: Option<Late>,
    /// The tooltip: what the row was.
    pub title: String,
}

/// A lateness whisker: from the slot (`x`) to the start.
#[derive(Clone, Debug, PartialEq)]
pub struct Late {
    /// Where the slot is, in user units.
    pub x: f64,
    /// The whisker's width, in user units.
    pub width: f64,
    /// How late the start was, in milliseconds.
    pub ms: i64,
    /// Late enough for the ▼ mark.
    pub marked: bool,
}

/// The timeline's geometry.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The window's start: `now` less its span.
    pub start: Timestamp,
    /// The window shown.
    pub window: Window,
    /// The window's end.
    pub now: Timestamp,
    /// The lanes, top to bottom.
    pub lanes: Vec<Lane>,
}

/// Where instant `t` is on the plot (clamped to the window).
fn x_of(t: Timestamp, start: Timestamp, window: Window) -> f64 {
    let frac = (t - start).num_milliseconds() as f64 / window.span().num_milliseconds() as f64;
    PLOT_X + frac.clamp(0.0, 1.0) * PLOT_W
}

fn secs(ms: i64) -> String {
    if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format_duration(std::time::Duration::from_millis(ms.max(0) as u64))
    }
}

/// What a row was, in one line.
fn title(run: &PageRun, zone: Tz, now: Timestamp) -> String {
    let mut t = format!("{} · {}", run.job_name, run.state.as_str());
    if let Some(slot) = run.scheduled_for {
        let _ = write!(t, " · slot {}", local_time(slot, zone));
    }
    if let Some(started) = run.started_at {
        let _ = write!(t, " · started {}", local_time(started, zone));
        if let Some(late) = run.lateness_ms() {
            let _ = write!(t, " ({} late)", secs(late));
        }
        let end = run.finished_at.unwrap_or(now);
        let took = (end - started).num_milliseconds().max(0);
        let verb = if run.finished_at.is_some() {
            "took"
        } else {
            "running for"
        };
        let _ = write!(t, " · {verb} {}", secs(took));
    }
    if let Some(mode) = run.mode {
        let _ = write!(t, " · {}", mode.as_str());
    }
    if run.attempt > 1 {
        let _ = write!(t, " · attempt {}", run.attempt);
    }
    if let Some(code) = &run.reason_code {
        let _ = write!(t, " · {code}");
    }
    t
}

/// The bar of `run`, or None when it lies wholly before the window.
fn bar(run: &PageRun, window: Window, start: Timestamp, now: Timestamp, zone: Tz) -> Option<Bar> {
    let begin = run
        .started_at
        .or(run.scheduled_for)
        .unwrap_or(run.claimed_at);
    let end = match run.finished_at {
        Some(end) => end.max(begin),
        None if run.state.is_terminal() => begin,
        None => now.max(begin),
    };
    if end < start {
        return None;
    }
    let x = x_of(begin, start, window);
    let width = (x_of(end, start, window) - x).max(MIN_BAR);
    let x = x.min(PLOT_X + PLOT_W - MIN_BAR);
    let late = match (run.lateness_ms(), run.scheduled_for, run.started_at) {
        (Some(ms), Some(slot), Some(started)) => {
            let lx = x_of(slot, start, window);
            let marked = ms >= LATE_MARK_MS;
            Some(Late {
                x: lx,
                width: (x_of(started, start, window) - lx).max(if marked { 1.0 } else { 0.0 }),
                ms,
                marked,
            })
        }
        _ => None,
    };
    Some(Bar {
        run_id: run.id.clone(),
        state: run.state,
        x,
        width,
        late,
        title: title(run, zone, now),
    })
}

/// The lanes of `jobs` (in their order) and their rows' bars; a last lane
/// holds the rows of no job in the table, when there are any. Rows of jobs
/// not in `jobs` (left out by the cap) are not drawn.
pub fn layout(
    jobs: &[PageJob],
    runs: &[PageRun],
    now: Timestamp,
    zone: Tz,
    window: Window,
) -> Layout {
    let start = now - window.span();
    let mut lanes: Vec<Lane> = jobs
        .iter()
        .map(|j| Lane {
            job_id: Some(j.id.clone()),
            label: j.name.clone(),
            zone: j.zone,
            bars: Vec::new(),
        })
        .collect();
    let mut other = Lane {
        job_id: None,
        label: "other (spawned, removed jobs)".into(),
        zone,
        bars: Vec::new(),
    };
    // Oldest first, so a later bar is drawn over an earlier one.
    for run in runs.iter().rev() {
        let lane = match &run.job_id {
            Some(id) if !run.orphan => lanes.iter_mut().find(|l| l.job_id.as_ref() == Some(id)),
            _ => Some(&mut other),
        };
        if let Some(lane) = lane
            && let Some(bar) = bar(run, window, start, now, lane.zone)
        {
            lane.bars.push(bar);
        }
    }
    if !other.bars.is_empty() {
        lanes.push(other);
    }
    Layout {
        start,
        window,
        now,
        lanes,
    }
}

/// The axis: the window's grid lines and labels, on the zone's clock.
fn axis(out: &mut String, layout: &Layout, zone: Tz, bottom: f64) {
    for (t, label) in layout.window.ticks(layout.start, layout.now, zone) {
        let x = x_of(t, layout.start, layout.window);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/>",
            AXIS_H - 6.0
        );
        if let Some(label) = label {
            let _ = write!(
                out,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                AXIS_H - 10.0,
            );
        }
    }
    let end = PLOT_X + PLOT_W;
    let _ = write!(
        out,
        "<line class=\"now\" x1=\"{end:.1}\" y1=\"{:.1}\" x2=\"{end:.1}\" y2=\"{bottom:.1}\"/>\
         <text x=\"{end:.1}\" y=\"{:.1}\" text-anchor=\"end\">now</text>",
        AXIS_H - 6.0,
        AXIS_H - 10.0
    );
}

/// The inline SVG of `layout`.
pub fn svg(layout: &Layout, zone: Tz) -> String {
    let height = AXIS_H + LANE_H * layout.lanes.len().max(1) as f64 + 4.0;
    let mut out = format!(
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height:.0}\" \
         role=\"img\" aria-label=\"runs of the {}, one lane per job\">",
        layout.window.heading().to_lowercase()
    );
    axis(&mut out, layout, zone, height - 4.0);
    if layout.lanes.is_empty() {
        let _ = write!(
            out,
            "<text x=\"{PLOT_X}\" y=\"{:.1}\">no jobs yet</text>",
            AXIS_H + 15.0
        );
    }
    for (i, lane) in layout.lanes.iter().enumerate() {
        let top = AXIS_H + LANE_H * i as f64;
        let mid = top + LANE_H / 2.0;
        match &lane.job_id {
            Some(id) => {
                let _ = write!(out, "<g class=\"lane\" data-job=\"{}\">", escape(id));
            }
            None => out.push_str("<g class=\"lane\" data-lane=\"other\">"),
        }
        let _ = write!(
            out,
            "<rect class=\"lane-bg\" x=\"{PLOT_X}\" y=\"{:.1}\" width=\"{PLOT_W}\" height=\"{:.1}\"/>\
             <text class=\"label\" x=\"4\" y=\"{:.1}\"><title>{}</title>{}</text>",
            top + 2.0,
            LANE_H - 4.0,
            mid + 4.0,
            escape(&lane.label),
            escape(&crate::text::one_line(&lane.label, 30))
        );
        for bar in &lane.bars {
            if let Some(late) = &bar.late {
                let _ = write!(
                    out,
                    "<rect class=\"late\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"3\" data-late-ms=\"{}\"/>",
                    late.x,
                    mid - 1.5,
                    late.width,
                    late.ms
                );
            }
            let _ = write!(
                out,
                "<rect class=\"run {}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BAR_H}\" \
                 data-execution=\"{}\" data-state=\"{}\"><title>{}</title></rect>",
                palette::class(bar.state),
                bar.x,
                mid - BAR_H / 2.0,
                bar.width,
                escape(&bar.run_id),
                bar.state.as_str(),
                escape(&bar.title)
            );
            if bar.late.as_ref().is_some_and(|l| l.marked) {
                let _ = write!(
                    out,
                    "<path class=\"late-mark\" d=\"M{:.1} {:.1}l-4 -5h8z\"/>",
                    bar.x,
                    mid - BAR_H / 2.0
                );
            }
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::model::JobView;
    use chrono::TimeZone;

    fn now() -> Timestamp {
        chrono::Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap()
    }

    fn utc() -> Tz {
        Tz::UTC
    }

    fn job(id: &str) -> PageJob {
        PageJob {
            id: id.into(),
            name: format!("job {id}"),
            schedule: "every 1h".into(),
            tz: None,
            zone: crate::schedule::Tz::UTC,
            view: JobView::Active,
            managed: false,
            next_fire: None,
            recent: Vec::new(),
            failures: Default::default(),
        }
    }

    /// A row of `job` slotted `ago` before now, started `late` ms after its
    /// slot, lasting `took` ms (None: still running).
    fn run(id: &str, job: &str, ago: i64, late: i64, took: Option<i64>) -> PageRun {
        let slot = now() - chrono::TimeDelta::seconds(ago);
        let started = slot + chrono::TimeDelta::milliseconds(late);
        PageRun {
            id: id.into(),
            job_id: Some(job.into()),
            job_name: format!("job {job}"),
            orphan: false,
            state: if took.is_some() {
                ExecState::Succeeded
            } else {
                ExecState::Running
            },
            attempt: 1,
            scheduled_for: Some(slot),
            claimed_at: slot,
            started_at: Some(started),
            finished_at: took.map(|ms| started + chrono::TimeDelta::milliseconds(ms)),
            mode: None,
            reason_code: None,
            has_output: false,
            usage: None,
        }
    }

    #[test]
    fn one_lane_per_job_and_one_bar_per_row() {
        let jobs = [job("a"), job("b"), job("c")];
        let runs = [
            run("3", "a", 60, 5, Some(1000)),
            run("2", "b", 3600, 5, Some(1000)),
            run("1", "a", 7200, 5, Some(1000)),
        ];
        let l = layout(&jobs, &runs, now(), utc(), Window::Day);
        let counts: Vec<_> = l.lanes.iter().map(|lane| lane.bars.len()).collect();
        assert_eq!(counts, [2, 1, 0]);
        // Oldest first within a lane.
        assert_eq!(l.lanes[0].bars[0].run_id, "1");
        let text = svg(&l, utc());
        assert_eq!(text.matches("<g class=\"lane\"").count(), 3);
        assert_eq!(text.matches("<rect class=\"run ").count(), 3);
    }

    #[test]
    fn bars_sit_at_their_time_and_are_never_thinner_than_the_minimum() {
        let l = layout(
            &[job("a")],
            &[run("1", "a", 12 * 3600, 0, Some(1))],
            now(),
            utc(),
            Window::Day,
        );
        let bar = &l.lanes[0].bars[0];
        assert!((bar.x - (PLOT_X + PLOT_W / 2.0)).abs() < 0.01, "{}", bar.x);
        assert_eq!(bar.width, MIN_BAR);
        // Six hours long, ending now.
        let l = layout(
            &[job("a")],
            &[run("1", "a", 6 * 3600, 0, None)],
            now(),
            utc(),
            Window::Day,
        );
        let bar = &l.lanes[0].bars[0];
        assert!((bar.width - PLOT_W / 4.0).abs() < 0.01, "{}", bar.width);
        assert_eq!(bar.state, ExecState::Running);
    }

    #[test]
    fn a_zoomed_window_spreads_the_plot_over_its_span() {
        let runs = [run("1", "a", 30 * 60, 0, Some(1))];
        let hour = layout(&[job("a")], &runs, now(), utc(), Window::Hour);
        let bar = &hour.lanes[0].bars[0];
        assert!((bar.x - (PLOT_X + PLOT_W / 2.0)).abs() < 0.01, "{}", bar.x);
        let week = layout(&[job("a")], &runs, now(), utc(), Window::Week);
        let x = week.lanes[0].bars[0].x;
        assert!(
            x > PLOT_X + PLOT_W * 0.99,
            "half an hour of a week is at the end: {x}"
        );
    }

    #[test]
    fn rows_before_the_window_are_not_drawn_and_long_ones_are_clipped() {
        let old = run("1", "a", 30 * 3600, 0, Some(1000));
        let long = run("2", "a", 30 * 3600, 0, Some(10 * 3600 * 1000));
        let l = layout(&[job("a")], &[old, long], now(), utc(), Window::Day);
        assert_eq!(l.lanes[0].bars.len(), 1);
        assert_eq!(l.lanes[0].bars[0].x, PLOT_X);
    }

    #[test]
    fn lateness_is_a_whisker_and_a_mark_from_a_second() {
        let l = layout(
            &[job("a")],
            &[
                run("1", "a", 3600, 90_000, Some(1000)),
                run("2", "a", 60, 20, Some(1)),
            ],
            now(),
            utc(),
            Window::Day,
        );
        let bars = &l.lanes[0].bars;
        let late = bars[1].late.as_ref().unwrap();
        assert_eq!((late.ms, late.marked), (90_000, true));
        assert!(late.width >= 1.0);
        let slight = bars[0].late.as_ref().unwrap();
        assert_eq!((slight.ms, slight.marked), (20, false));
        let text = svg(&l, utc());
        assert_eq!(text.matches("class=\"late-mark\"").count(), 1);
        assert!(text.contains("(1m30s late)"), "{text}");
    }

    #[test]
    fn rows_of_no_listed_job_get_their_own_lane_and_capped_jobs_none() {
        let mut spawned = run("1", "gone", 60, 0, Some(1));
        spawned.orphan = true;
        let capped = run("2", "z", 60, 0, Some(1));
        let l = layout(&[job("a")], &[spawned, capped], now(), utc(), Window::Day);
        assert_eq!(l.lanes.len(), 2);
        assert_eq!(l.lanes[1].job_id, None);
        assert_eq!(l.lanes[1].bars.len(), 1);
        assert!(svg(&l, utc()).contains("data-lane=\"other\""));
    }

    #[test]
    fn names_are_escaped_in_labels_and_titles() {
        let mut j = job("a");
        j.name = "<script>x</script>".into();
        let mut r = run("1", "a", 60, 0, Some(1));
        r.job_name = j.name.clone();
        let text = svg(&layout(&[j], &[r], now(), utc(), Window::Day), utc());
        assert!(!text.contains("<script>"), "{text}");
        assert!(text.contains("&lt;script&gt;"));
    }

    #[test]
    fn the_axis_labels_the_zone_s_hours() {
        let berlin = Tz::Europe__Berlin;
        let text = svg(&layout(&[], &[], now(), berlin, Window::Day), berlin);
        // 12:00 UTC is 14:00 in Berlin in June: the last label is 12:00 local.
        assert!(text.contains(">12:00</text>"), "{text}");
        assert!(text.contains(">15:00</text>"), "{text}");
        assert!(!text.contains(">13:00</text>"), "{text}");
        assert!(text.contains("no jobs yet"));
    }
}
