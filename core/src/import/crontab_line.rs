//! One crontab line, classified: blank, comment, `NAME=value` assignment, or
//! entry (schedule, optional user, command). Pure, text only; the zone and
//! the environment in force are applied by `crontab.rs`.
//!
//! The rules follow Vixie cron / cronie:
//! - Leading and trailing whitespace is ignored; `#` starts a comment only
//!   at the start of a line (a `#` inside a command belongs to the command).
//! - An assignment is `NAME = value`, spaces around `=` optional; the name
//!   and the value may be quoted with `'` or `"`, which are removed; an
//!   unquoted value loses its surrounding whitespace. Nothing is expanded
//!   (`PATH=$HOME/bin` is literal, as in cron). Names are `[A-Za-z_][A-Za-z0-9_]*`
//!   (what `--env` accepts); anything else is read as an entry.
//! - An entry is a macro (`@reboot @yearly @annually @monthly @weekly @daily
//!   @midnight @hourly`) or 5 time fields, then (system crontabs only) the
//!   user, then the command: the rest of the line, its inner spacing kept.
//!   The time fields are checked here by `CronSchedule::parse`, so a refusal
//!   names the field and token (`minute "61" is out of range 0-59`).
//! - `%` in the command: cron turns the first unescaped `%` into the end of
//!   the command and the rest into the job's stdin (further `%` become
//!   newlines); `\%` is a literal `%`. [`unescape_percent`] turns `\%` into
//!   `%` and reports an unescaped `%`; hermes-cron jobs have no stdin, so the
//!   caller skips such an entry with the reason instead of changing it.

use crate::schedule::CronSchedule;

/// What one line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Line<'a> {
    Blank,
    /// The text after the leading `#` marks, trimmed.
    Comment(&'a str),
    Assign {
        name: String,
        value: String,
    },
    Entry(Entry<'a>),
}

/// A job line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entry<'a> {
    /// `@daily` (lowercased) or the 5 fields joined by single spaces.
    pub(super) schedule: String,
    /// The user field of a system crontab.
    pub(super) user: Option<&'a str>,
    /// The command as written (before `%` handling).
    pub(super) command: &'a str,
}

/// Why a line is malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LineError {
    pub(super) token: String,
    pub(super) message: String,
}

impl LineError {
    pub(super) fn new(token: impl Into<String>, message: impl Into<String>) -> Self {
        LineError {
            token: token.into(),
            message: message.into(),
        }
    }
}

const ENTRY_SHAPE: &str = "a crontab entry is 5 time fields (minute hour day-of-month month day-of-week) or a @macro, then the command";

/// Classify `raw`. `system` means the entries carry a user field
/// (`/etc/crontab`, `/etc/cron.d/*`).
pub(super) fn classify(raw: &str, system: bool) -> Result<Line<'_>, LineError> {
    let text = raw.trim();
    if text.is_empty() {
        return Ok(Line::Blank);
    }
    if let Some(comment) = text.strip_prefix('#') {
        return Ok(Line::Comment(comment.trim_start_matches('#').trim()));
    }
    if let Some((name, value)) = assignment(text) {
        return Ok(Line::Assign { name, value });
    }
    entry(text, system).map(Line::Entry)
}

fn entry(text: &str, system: bool) -> Result<Entry<'_>, LineError> {
    let (schedule, rest) = if text.starts_with('@') {
        let (words, rest) = split_words(text, 1);
        let word = words[0];
        let lower = word.to_ascii_lowercase();
        if lower != "@reboot" {
            CronSchedule::parse(word).map_err(|e| LineError::new(e.token, e.message))?;
        }
        (lower, rest)
    } else {
        let (words, rest) = split_words(text, 5);
        if words.len() < 5 {
            return Err(LineError::new(
                text,
                format!(
                    "{text:?} has {} word{}; {ENTRY_SHAPE}",
                    words.len(),
                    if words.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        let fields = words.join(" ");
        CronSchedule::parse(&fields)
            .map_err(|e| LineError::new(e.token, format!("{} ({ENTRY_SHAPE})", e.message)))?;
        (fields, rest)
    };
    let (user, command) = if system {
        let (words, rest) = split_words(rest, 1);
        match words.first() {
            Some(user) => (Some(*user), rest),
            None => {
                return Err(LineError::new(
                    schedule.clone(),
                    format!(
                        "no user and command after {schedule:?}; a system crontab entry is the schedule, the user, then the command"
                    ),
                ));
            }
        }
    } else {
        (None, rest)
    };
    if command.is_empty() {
        let after = user.unwrap_or(&schedule);
        return Err(LineError::new(
            after,
            format!("no command after {after:?}; {ENTRY_SHAPE}"),
        ));
    }
    Ok(Entry {
        schedule,
        user,
        command,
    })
}

/// The first `n` whitespace-separated words of `text` and the rest, trimmed.
fn split_words(text: &str, n: usize) -> (Vec<&str>, &str) {
    let mut words = Vec::with_capacity(n);
    let mut rest = text.trim_start();
    while words.len() < n && !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        words.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    (words, rest.trim_end())
}

/// `NAME=value`, `NAME = "value"`, `'NAME'=value`; see the module docs.
fn assignment(text: &str) -> Option<(String, String)> {
    let (name, rest) = match text.chars().next()? {
        quote @ ('"' | '\'') => {
            let inner = &text[1..];
            let close = inner.find(quote)?;
            (&inner[..close], &inner[close + 1..])
        }
        _ => {
            let end = text.find(|c: char| c.is_whitespace() || c == '=')?;
            text.split_at(end)
        }
    };
    let value = rest.trim_start().strip_prefix('=')?.trim();
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return None;
    }
    Some((name.to_string(), unquote(value).to_string()))
}

fn unquote(value: &str) -> &str {
    let bytes = value.as_bytes();
    match bytes {
        [first @ (b'"' | b'\''), .., last] if first == last => &value[1..value.len() - 1],
        _ => value,
    }
}

/// `\%` -> `%`; `Err(byte offset)` of the first unescaped `%`.
pub(super) fn unescape_percent(command: &str) -> Result<String, usize> {
    let mut out = String::with_capacity(command.len());
    let mut chars = command.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|(_, next)| *next == '%') => {
                out.push('%');
                chars.next();
            }
            '%' => return Err(at),
            _ => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_of(raw: &str) -> Entry<'_> {
        match classify(raw, false) {
            Ok(Line::Entry(e)) => e,
            other => panic!("{raw:?}: {other:?}"),
        }
    }

    fn assign_of(raw: &str) -> (String, String) {
        match classify(raw, false) {
            Ok(Line::Assign { name, value }) => (name, value),
            other => panic!("{raw:?}: {other:?}"),
        }
    }

    #[test]
    fn blank_and_comment_lines() {
        assert_eq!(classify("", false), Ok(Line::Blank));
        assert_eq!(classify("  \t ", false), Ok(Line::Blank));
        assert_eq!(
            classify("## Backups ##", false),
            Ok(Line::Comment("Backups ##"))
        );
        assert_eq!(
            classify("   # indented", false),
            Ok(Line::Comment("indented"))
        );
    }

    #[test]
    fn assignments_with_quotes_and_spaces() {
        let a = |n: &str, v: &str| (n.to_string(), v.to_string());
        assert_eq!(assign_of("PATH=/usr/bin:/bin"), a("PATH", "/usr/bin:/bin"));
        assert_eq!(
            assign_of("  GREETING = hello world  "),
            a("GREETING", "hello world")
        );
        assert_eq!(
            assign_of("QUOTED=\"  spaced  \""),
            a("QUOTED", "  spaced  ")
        );
        assert_eq!(assign_of("SINGLE='a \"b\"'"), a("SINGLE", "a \"b\""));
        assert_eq!(assign_of("\"NAME\" = x"), a("NAME", "x"));
        assert_eq!(assign_of("EMPTY="), a("EMPTY", ""));
        assert_eq!(assign_of("LITERAL=$HOME/bin"), a("LITERAL", "$HOME/bin"));
        assert_eq!(assign_of("MIXED=\"a'"), a("MIXED", "\"a'"));
    }

    #[test]
    fn entries_keep_the_command_verbatim() {
        let e = entry_of("*/5  9-17 * * mon-fri   /usr/bin/poll --url 'a  b' # not a comment");
        assert_eq!(e.schedule, "*/5 9-17 * * mon-fri");
        assert_eq!(e.command, "/usr/bin/poll --url 'a  b' # not a comment");
        assert_eq!(e.user, None);
        // An `=` inside a command does not make the line an assignment.
        let e = entry_of("0 * * * * FOO=bar /bin/run");
        assert_eq!(e.command, "FOO=bar /bin/run");
        let e = entry_of("@Daily   /bin/rotate");
        assert_eq!(e.schedule, "@daily");
        assert_eq!(e.command, "/bin/rotate");
        assert_eq!(entry_of("@reboot sleep 1").schedule, "@reboot");
    }

    #[test]
    fn system_entries_carry_a_user() {
        let Ok(Line::Entry(e)) =
            classify("17 * * * * root  cd / && run-parts /etc/cron.hourly", true)
        else {
            panic!()
        };
        assert_eq!(e.user, Some("root"));
        assert_eq!(e.command, "cd / && run-parts /etc/cron.hourly");
        let err = classify("17 * * * * root", true).unwrap_err();
        assert_eq!(err.token, "root");
        let err = classify("17 * * * *", true).unwrap_err();
        assert_eq!(err.token, "17 * * * *");
    }

    #[test]
    fn malformed_entries_name_the_token() {
        let cases = [
            ("61 * * * * echo", "61"),
            ("0 25 * * * echo", "25"),
            ("0 8 * * funday echo", "funday"),
            ("@fortnightly echo", "@fortnightly"),
            ("0 8 * *", "0 8 * *"),
            ("0 8 * * *", "0 8 * * *"),
            ("@daily", "@daily"),
            ("echo hello", "echo hello"),
        ];
        for (raw, token) in cases {
            let err = classify(raw, false).expect_err(raw);
            assert_eq!(err.token, token, "{raw:?}: {}", err.message);
            assert!(
                err.message.contains(&format!("{token:?}")),
                "{raw:?}: {}",
                err.message
            );
        }
    }

    #[test]
    fn percent_signs() {
        assert_eq!(unescape_percent("date +\\%F").as_deref(), Ok("date +%F"));
        assert_eq!(unescape_percent("a \\\\ b").as_deref(), Ok("a \\\\ b"));
        assert_eq!(unescape_percent("mail -s hi%body"), Err(10));
        assert_eq!(unescape_percent("é%"), Err(2));
    }
}
