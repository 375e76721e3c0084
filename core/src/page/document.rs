//! The whole page: the gateway's facts, the timeline with its legend, and
//! the jobs table. It refreshes itself every minute (a `<meta>` refresh, not
//! a script) and links `/metrics` and `/healthz` relatively, so it works
//! behind a proxy that serves it under a prefix.

use super::escape::escape;
use super::jobs_table;
use super::model::PageData;
use super::palette;
use super::recent;
use super::timeline;
use super::window::Window;
use std::fmt::Write as _;

/// The zoom links: each window, relative to the page, the shown one marked.
fn zoom(shown: Window) -> String {
    let mut out = String::from("<p class=\"zoom\">zoom:");
    for w in Window::ALL {
        if w == shown {
            let _ = write!(out, " <strong>{}</strong>", w.key());
        } else {
            let _ = write!(out, " <a href=\"?window={0}\">{0}</a>", w.key());
        }
    }
    out.push_str("</p>");
    out
}

/// The page, as HTML text.
pub fn render(data: &PageData) -> String {
    let h = &data.header;
    let host = escape(&h.host);
    let mut out = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"refresh\" content=\"60\">\
         <title>hermes-cron · {host}</title><style>{}</style></head><body>",
        palette::style()
    );
    let (dot, word) = if h.healthy {
        ("healthy", "healthy")
    } else {
        ("unhealthy", "NOT HEALTHY")
    };
    let _ = write!(
        out,
        "<header><h1><span class=\"dot {dot}\"></span>hermes-cron on {host} \
         <span class=\"muted\">{word}</span></h1><dl class=\"facts\">"
    );
    for (label, value) in &h.facts {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", escape(label), escape(value));
    }
    out.push_str("</dl></header><main>");

    let layout = timeline::layout(&data.jobs, &data.runs, data.now, data.zone, data.window);
    let _ = write!(
        out,
        "<section id=\"timeline\"><h2>{} <span class=\"muted\">({})</span></h2>{}{}{}",
        data.window.heading(),
        escape(data.zone.name()),
        zoom(data.window),
        timeline::svg(&layout, data.zone),
        palette::legend()
    );
    if data.runs_capped {
        let _ = write!(
            out,
            "<p class=\"note\">Only the newest {} runs of the window are drawn; \
             `hermes-cron runs` lists them all.</p>",
            data.runs.len()
        );
    }
    out.push_str("</section>");

    let _ = write!(
        out,
        "<section id=\"jobs\"><h2>Jobs <span class=\"muted\">({})</span></h2>\
         <div class=\"scroll\">{}</div>",
        data.jobs_total,
        jobs_table::render(&data.jobs, data.now)
    );
    if data.jobs_total > data.jobs.len() {
        let _ = write!(
            out,
            "<p class=\"note\">{} more jobs are not shown (the ones that ran come first); \
             `hermes-cron list --all` lists every job.</p>",
            data.jobs_total - data.jobs.len()
        );
    }
    out.push_str("</section>");
    out.push_str(&recent::render(&data.jobs, data.now));
    let _ = writeln!(
        out,
        "</main><footer><p class=\"muted\">Read-only. Generated {} · \
         <a href=\"metrics\">metrics</a> · <a href=\"healthz\">healthz</a></p></footer>\
         </body></html>",
        crate::text::local_time(data.now, data.zone)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::model::{PageData, PageHeader};
    use chrono::TimeZone;

    #[test]
    fn a_page_has_no_script_and_no_form() {
        let data = PageData {
            header: PageHeader {
                host: "box<1>".into(),
                healthy: false,
                facts: vec![("gateway".into(), "not running".into())],
            },
            jobs: Vec::new(),
            jobs_total: 0,
            runs: Vec::new(),
            runs_capped: false,
            zone: crate::schedule::Tz::UTC,
            window: Window::Week,
            now: chrono::Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap(),
        };
        let html = render(&data);
        assert!(html.starts_with("<!doctype html>"));
        for banned in [
            "<script",
            "<form",
            "<iframe",
            "javascript:",
            "method=\"post\"",
        ] {
            assert!(!html.to_lowercase().contains(banned), "{banned}");
        }
        assert!(html.contains("box&lt;1&gt;") && html.contains("NOT HEALTHY"));
        assert!(html.contains("<svg class=\"timeline\""));
        // The zoom: the shown window marked, the others linked relatively.
        assert!(html.contains("<h2>Last 7 days"), "{html}");
        assert!(
            html.contains(
                "<a href=\"?window=1h\">1h</a> <a href=\"?window=24h\">24h</a> <strong>7d</strong>"
            ),
            "{html}"
        );
    }
}
