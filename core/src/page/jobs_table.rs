//! The jobs table: name, schedule, next fire (or why there is none), the
//! last run's outcome and when, and the mode it ran in. No command, no
//! environment: what a job runs stays with `hermes-cron show`.

use super::escape::escape;
use super::model::{JobView, PageJob};
use super::palette;
use super::timeline::LATE_MARK_MS;
use crate::schedule::Timestamp;
use std::fmt::Write as _;

/// A span of time, short: `45s`, `12m`, `3h05m`, `2d04h`.
pub fn short_span(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

fn next_fire(job: &PageJob, now: Timestamp) -> String {
    match &job.view {
        JobView::Paused { reason } => {
            let why = reason
                .as_deref()
                .map(|r| format!(": {}", escape(&crate::text::one_line(r, 80))))
                .unwrap_or_default();
            format!("<span class=\"muted\">paused{why}</span>")
        }
        JobView::Completed => "<span class=\"muted\">completed</span>".into(),
        JobView::Active => match job.next_fire {
            Some(at) => {
                let when = crate::text::local_time(at, job.zone);
                let rel = if at >= now {
                    format!("in {}", short_span((at - now).num_milliseconds()))
                } else {
                    format!("due {} ago", short_span((now - at).num_milliseconds()))
                };
                format!("{when} <span class=\"muted\">({rel})</span>")
            }
            None => "<span class=\"muted\">none</span>".into(),
        },
    }
}

fn last_run(job: &PageJob, now: Timestamp) -> (String, String) {
    let Some(run) = job.last() else {
        return ("<span class=\"muted\">never ran</span>".into(), "—".into());
    };
    let at = run.finished_at.or(run.started_at).unwrap_or(run.claimed_at);
    let mut cell = format!(
        "<span class=\"badge {}\">{}</span> {} ago",
        palette::class(run.state),
        run.state.as_str().replace('_', " "),
        short_span((now - at).num_milliseconds())
    );
    if let Some(code) = &run.reason_code {
        let _ = write!(cell, " <span class=\"muted\">{}</span>", escape(code));
    }
    if let Some(late) = run.lateness_ms().filter(|ms| *ms >= LATE_MARK_MS) {
        let _ = write!(
            cell,
            " <span class=\"late-note\">started {} late</span>",
            short_span(late)
        );
    }
    let mode = run.mode.map_or("—", |m| m.as_str()).to_string();
    (cell, mode)
}

/// The job's failure counts, marked when there are any.
fn failures(job: &PageJob) -> String {
    let f = job.failures;
    let text = format!("{} · {}", f.day, f.week);
    if f.week > 0 {
        format!("<span class=\"failures\">{text}</span>")
    } else {
        format!("<span class=\"muted\">{text}</span>")
    }
}

/// The table of `jobs`.
pub fn render(jobs: &[PageJob], now: Timestamp) -> String {
    let mut out = String::from(
        "<table class=\"jobs\"><thead><tr><th>job</th><th>schedule</th><th>next fire</th>\
         <th>last run</th><th>mode</th><th>failures 24 h · 7 d</th></tr></thead><tbody>",
    );
    for job in jobs {
        let (last, mode) = last_run(job, now);
        let managed = if job.managed {
            " <span class=\"muted\">(Hermes)</span>"
        } else {
            ""
        };
        let tz = job
            .tz
            .as_deref()
            .map(|z| format!(" <span class=\"muted\">{}</span>", escape(z)))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr data-job=\"{}\"><td title=\"{}\">{}{managed}</td><td>{}{tz}</td><td>{}</td>\
             <td>{last}</td><td>{mode}</td><td>{}</td></tr>",
            escape(&job.id),
            escape(&job.id),
            escape(&job.name),
            escape(&job.schedule),
            next_fire(job, now),
            failures(job),
        );
    }
    out.push_str("</tbody></table>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::model::PageRun;
    use crate::run::{DispatchMode, ExecState};
    use chrono::TimeZone;

    #[test]
    fn spans_are_short() {
        assert_eq!(short_span(45_000), "45s");
        assert_eq!(short_span(12 * 60_000 + 5), "12m");
        assert_eq!(short_span(3 * 3_600_000 + 5 * 60_000), "3h05m");
        assert_eq!(short_span(2 * 86_400_000 + 4 * 3_600_000), "2d04h");
    }

    #[test]
    fn rows_show_next_fire_last_outcome_and_mode() {
        let now = chrono::Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap();
        let paris = crate::schedule::ZoneTable::compiled_in_only()
            .parse("Europe/Paris")
            .unwrap();
        let slot = now - chrono::TimeDelta::minutes(10);
        let job = PageJob {
            id: "j1".into(),
            name: "brief".into(),
            schedule: "daily at 8am".into(),
            tz: Some("Europe/Paris".into()),
            zone: paris,
            view: JobView::Active,
            managed: false,
            next_fire: Some(now + chrono::TimeDelta::hours(2)),
            failures: crate::page::model::Failures { day: 1, week: 3 },
            recent: vec![PageRun {
                id: "e1".into(),
                job_id: Some("j1".into()),
                job_name: "brief".into(),
                orphan: false,
                state: ExecState::TimedOut,
                attempt: 1,
                scheduled_for: Some(slot),
                claimed_at: slot,
                started_at: Some(slot + chrono::TimeDelta::seconds(3)),
                finished_at: Some(now - chrono::TimeDelta::minutes(5)),
                mode: Some(DispatchMode::Scoped),
                reason_code: Some("idle".into()),
                has_output: true,
                usage: None,
            }],
        };
        let mut paused = job.clone();
        paused.view = JobView::Paused {
            reason: Some("<b>".into()),
        };
        paused.recent.clear();
        paused.failures = Default::default();
        let html = render(&[job, paused], now);
        // In the job's zone, not the page's.
        assert!(
            html.contains("2026-06-01 16:00:00 CEST <span class=\"muted\">(in 2h00m)</span>"),
            "{html}"
        );
        assert!(
            html.contains("s-timed_out\">timed out</span> 5m ago"),
            "{html}"
        );
        assert!(
            html.contains("idle") && html.contains("started 3s late"),
            "{html}"
        );
        assert!(html.contains("<td>scoped</td>"), "{html}");
        assert!(
            html.contains("<span class=\"failures\">1 · 3</span>")
                && html.contains("<span class=\"muted\">0 · 0</span>"),
            "{html}"
        );
        assert!(
            html.contains("paused: &lt;b&gt;") && html.contains("never ran"),
            "{html}"
        );
    }
}
