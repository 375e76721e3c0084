//! Each job's newest runs: state, start (in the job's zone), how long it
//! took, how late it started, and a link to its captured output (the
//! endpoint's `runs/ID/output`, relative, behind the same token as the
//! page). Failed runs are marked; the job's heading says how many failed in
//! the last 24 hours and 7 days.

use super::escape::escape;
use super::jobs_table::short_span;
use super::model::{PageJob, PageRun};
use super::palette;
use super::timeline::LATE_MARK_MS;
use crate::text::local_time;
use std::fmt::Write as _;

/// The path of a run's output, relative to the page.
pub fn output_link(run_id: &str) -> String {
    format!("runs/{}/output", escape(run_id))
}

fn run_item(out: &mut String, run: &PageRun, job: &PageJob, now: crate::schedule::Timestamp) {
    let class = if run.failed() {
        " class=\"failure\""
    } else {
        ""
    };
    let _ = write!(
        out,
        "<li{class}><span class=\"badge {}\">{}</span> ",
        palette::class(run.state),
        run.state.as_str().replace('_', " ")
    );
    match run.started_at {
        Some(started) => {
            let _ = write!(out, "started {}", local_time(started, job.zone));
            let end = run.finished_at.unwrap_or(now);
            let took = short_span((end - started).num_milliseconds().max(0));
            let verb = if run.finished_at.is_some() {
                "took"
            } else {
                "running for"
            };
            let _ = write!(out, " · {verb} {took}");
        }
        None => {
            let at = run.scheduled_for.unwrap_or(run.claimed_at);
            let _ = write!(out, "for {}", local_time(at, job.zone));
        }
    }
    if let Some(late) = run.lateness_ms().filter(|ms| *ms >= LATE_MARK_MS) {
        let _ = write!(
            out,
            " · <span class=\"late-note\">{} late</span>",
            short_span(late)
        );
    }
    if let Some(code) = &run.reason_code {
        let _ = write!(out, " · <span class=\"muted\">{}</span>", escape(code));
    }
    if let Some((tokens, cost)) = run.usage {
        let _ = write!(out, " · <span class=\"usage\">{tokens} tokens");
        if let Some(cost) = cost {
            let _ = write!(out, ", ${cost:.4}");
        }
        out.push_str("</span>");
    }
    if run.has_output {
        let _ = write!(out, " · <a href=\"{}\">output</a>", output_link(&run.id));
    }
    out.push_str("</li>");
}

/// The section: one list per job that has runs, in the jobs' order.
pub fn render(jobs: &[PageJob], now: crate::schedule::Timestamp) -> String {
    let mut out = String::from("<section id=\"recent\"><h2>Recent runs</h2>");
    let mut any = false;
    for job in jobs.iter().filter(|j| !j.recent.is_empty()) {
        any = true;
        let f = job.failures;
        let counts = if f.week > 0 {
            format!(
                "<span class=\"failures\">{} failed in 24 h, {} in 7 d</span>",
                f.day, f.week
            )
        } else {
            "<span class=\"muted\">no failures in 7 d</span>".to_string()
        };
        let _ = write!(
            out,
            "<h3 data-job=\"{}\">{} {counts}</h3><ol class=\"runs\">",
            escape(&job.id),
            escape(&job.name)
        );
        for run in &job.recent {
            run_item(&mut out, run, job, now);
        }
        out.push_str("</ol>");
    }
    if !any {
        out.push_str("<p class=\"muted\">no runs yet</p>");
    }
    out.push_str("</section>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::model::{Failures, JobView};
    use crate::run::ExecState;
    use chrono::TimeZone;

    fn run(id: &str, state: ExecState, started: i64, took: i64, output: bool) -> PageRun {
        let now = chrono::Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap();
        let slot = now - chrono::TimeDelta::seconds(started);
        PageRun {
            id: id.into(),
            job_id: Some("j1".into()),
            job_name: "brief".into(),
            orphan: false,
            state,
            attempt: 1,
            scheduled_for: Some(slot),
            claimed_at: slot,
            started_at: Some(slot + chrono::TimeDelta::seconds(2)),
            finished_at: Some(slot + chrono::TimeDelta::seconds(2 + took)),
            mode: None,
            reason_code: None,
            has_output: output,
            usage: None,
        }
    }

    #[test]
    fn runs_show_their_start_in_the_job_s_zone_and_failures_are_marked() {
        let now = chrono::Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap();
        let tokyo = crate::schedule::ZoneTable::compiled_in_only()
            .parse("Asia/Tokyo")
            .unwrap();
        let job = PageJob {
            id: "j1".into(),
            name: "brief".into(),
            schedule: "daily at 8am".into(),
            tz: Some("Asia/Tokyo".into()),
            zone: tokyo,
            view: JobView::Active,
            managed: false,
            next_fire: None,
            recent: vec![
                run("e2", ExecState::Failed, 600, 75, true),
                run("e1", ExecState::Succeeded, 3600, 5, false),
            ],
            failures: Failures { day: 1, week: 2 },
        };
        let html = render(&[job], now);
        assert!(html.contains("1 failed in 24 h, 2 in 7 d"), "{html}");
        assert!(
            html.contains("<li class=\"failure\"><span class=\"badge s-failed\">failed</span> started 2026-06-01 20:50:02 JST · took 1m"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"runs/e2/output\">output</a>"),
            "{html}"
        );
        assert_eq!(
            html.matches("href=").count(),
            1,
            "no output, no link: {html}"
        );
        assert!(
            html.contains("<li><span class=\"badge s-succeeded\">succeeded</span>"),
            "{html}"
        );
    }

    #[test]
    fn a_run_that_reported_usage_shows_its_tokens_and_known_cost() {
        let now = chrono::Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap();
        let job = |recent| PageJob {
            id: "j1".into(),
            name: "brief".into(),
            schedule: "daily at 8am".into(),
            tz: None,
            zone: crate::schedule::ZoneTable::compiled_in_only()
                .parse("UTC")
                .unwrap(),
            view: JobView::Active,
            managed: true,
            next_fire: None,
            recent,
            failures: Failures::default(),
        };
        let priced = PageRun {
            usage: Some((1190, Some(0.0071))),
            ..run("e1", ExecState::Succeeded, 60, 5, false)
        };
        let unpriced = PageRun {
            usage: Some((1190, None)),
            ..run("e2", ExecState::Succeeded, 30, 5, false)
        };
        let html = render(&[job(vec![priced, unpriced])], now);
        assert!(
            html.contains("<span class=\"usage\">1190 tokens, $0.0071</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"usage\">1190 tokens</span>"),
            "{html}"
        );
        let none = render(
            &[job(vec![run("e3", ExecState::Succeeded, 30, 5, false)])],
            now,
        );
        assert!(!none.contains("tokens"), "{none}");
    }
}
