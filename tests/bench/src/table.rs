//! The one table the benchmark prints.

use std::fmt::Write;

/// Whether a row meets its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Met {
    Yes,
    No,
    /// No target: the row is there for context.
    Info,
}

impl Met {
    pub(crate) fn of(ok: bool) -> Met {
        if ok { Met::Yes } else { Met::No }
    }

    fn text(self) -> &'static str {
        match self {
            Met::Yes => "yes",
            Met::No => "**no**",
            Met::Info => "-",
        }
    }
}

/// One line of the table.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    /// `1a`, `3b`...
    pub id: &'static str,
    pub measure: String,
    pub ours: String,
    /// The peer's name and figure, measured in the same run.
    pub peer: String,
    /// Ours over the peer's.
    pub ratio: String,
    pub target: String,
    pub met: Met,
}

impl Row {
    /// A row for a measurement that could not be made (the error is the figure).
    pub(crate) fn failed(id: &'static str, measure: &str, error: &str) -> Row {
        Row {
            id,
            measure: measure.to_string(),
            ours: format!("failed: {}", error.replace('|', "/")),
            peer: "-".into(),
            ratio: "-".into(),
            target: "-".into(),
            met: Met::No,
        }
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The markdown table of `rows`.
pub(crate) fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str("| # | measure | hermes-cron | peer (same run) | ratio | target | met |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.id,
            cell(&r.measure),
            cell(&r.ours),
            cell(&r.peer),
            cell(&r.ratio),
            cell(&r.target),
            r.met.text()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_one_line_per_row_and_escapes_pipes() {
        let rows = vec![Row {
            id: "1a",
            measure: "a|b".into(),
            ours: "1 ms".into(),
            peer: "2 ms".into(),
            ratio: "0.50x".into(),
            target: "<= 2 ms".into(),
            met: Met::Yes,
        }];
        let text = render(&rows);
        assert_eq!(text.lines().count(), 3);
        assert!(text.contains("a\\|b"), "{text}");
        assert!(text.ends_with("| yes |\n"), "{text}");
    }
}
