//! Text for terminals: names made safe for one line of a table or a log,
//! instants as people read them, and errors with their causes.

use crate::schedule::{Timestamp, Tz};

/// An instant as every view for people shows it (`list`, `runs`, `show`,
/// `status`, `doctor`, `alerts`, the status page): `2026-12-01 08:00:00 CET`,
/// in `zone`: the job's where the instant is a job's run and the job has a
/// zone, else the viewer's (config `timezone`, else the system zone). JSON
/// output keeps RFC 3339 UTC.
pub fn local_time(at: Timestamp, zone: Tz) -> String {
    at.with_timezone(&zone)
        .format("%Y-%m-%d %H:%M:%S %Z")
        .to_string()
}

/// Whether `c` changes how the text around it is laid out without being
/// seen: the bidirectional marks, embeddings, overrides and isolates (a
/// right-to-left override makes `gpj.exe` read as `exe.jpg`), and the
/// zero-width characters.
pub fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
    )
}

/// `text` on one line: control characters and invisible layout characters
/// ([`is_invisible_format`]) shown escaped (`\n`, `\u{202e}`), cut to `max`
/// characters with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let clean: String = text
        .chars()
        .flat_map(|c| {
            if c.is_control() || is_invisible_format(c) {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if clean.chars().count() > max {
        let cut: String = clean.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        clean
    }
}

/// An error and every cause under it, `: `-separated (what anyhow's `{:#}`
/// prints), for logs and messages: `failed to open the ledger: disk full`.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'a));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_cuts() {
        assert_eq!(one_line("a\u{202e}gpj.exe", 20), "a\\u{202e}gpj.exe");
        assert_eq!(one_line("x\u{200b}y\u{2066}z", 20), "x\\u{200b}y\\u{2066}z");
        assert_eq!(one_line("a\nb", 10), "a\\nb");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("failed to open the ledger")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn chains_print_every_cause_once() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(
            Chain(&e).to_string(),
            "failed to open the ledger: disk full"
        );
    }
}
