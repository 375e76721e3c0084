//! Job names for imported jobs: a comment used as a name, a name derived
//! from a command, and [`NameBook`], which keeps names unique within one
//! import. Pure.
//!
//! - A comment names the job below it when it reads like a title: at most
//!   [`MAX_COMMENT_NAME`] characters, some letter or digit, and not a
//!   commented-out crontab entry (`# 0 3 * * * old-job`, `# PATH=...`,
//!   `# @daily ...`) nor the `# m h dom mon dow command` header.
//! - A derived name is the basename of the command's first word without its
//!   extension (`/usr/local/bin/backup.sh --full` -> `backup`), skipping
//!   leading `VAR=value` words, plus a suffix the caller picks (the line).
//! - A name already taken gets `-<suffix>`, then `-2`, `-3`... appended.

use crate::job::validate_name;
use std::collections::HashSet;

/// The longest comment taken as a name, in characters.
pub(super) const MAX_COMMENT_NAME: usize = 60;

/// The comment's text as a name, if it reads like one. `text` has its `#`
/// marks removed already.
pub(super) fn comment_name(text: &str) -> Option<String> {
    let name = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = name.to_ascii_lowercase();
    let first = name.split_whitespace().next()?;
    let looks_like_entry = first.starts_with(['@', '*'])
        || (first.starts_with(|c: char| c.is_ascii_digit())
            && name.split_whitespace().count() >= 6)
        || is_assignment(&name);
    let is_header = lower.contains("dom") && lower.contains("dow");
    let usable = name.chars().count() <= MAX_COMMENT_NAME
        && name.chars().any(char::is_alphanumeric)
        && !looks_like_entry
        && !is_header
        && validate_name(&name).is_ok();
    usable.then_some(name)
}

/// `NAME=...` or `NAME = ...` with a shell-style name.
fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        let name = name.trim_end();
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A short name for a command: the basename of its program, without extension.
pub(super) fn command_stem(command: &str) -> String {
    let program = command
        .split_whitespace()
        .find(|word| !is_assignment(word))
        .unwrap_or("")
        .trim_matches(['"', '\'']);
    path_stem(program)
}

/// The last path segment of `path` without its extension, reduced to
/// `[A-Za-z0-9._-]`; `job` when nothing is left.
pub(super) fn path_stem(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    let stem = match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => base,
    };
    let clean: String = stem
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .collect();
    if clean.is_empty() {
        "job".to_string()
    } else {
        clean
    }
}

/// The names given so far in one import.
#[derive(Debug, Default)]
pub(super) struct NameBook {
    taken: HashSet<String>,
}

impl NameBook {
    /// Claim `wanted`, or `wanted-<suffix>`, or `wanted-<suffix>-2`... when
    /// taken. `wanted` must already pass `validate_name`.
    pub(super) fn claim(&mut self, wanted: &str, suffix: &str) -> String {
        let mut name = wanted.to_string();
        if self.taken.contains(&name) {
            name = format!("{wanted}-{suffix}");
        }
        let base = name.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_that_read_like_titles_become_names() {
        assert_eq!(
            comment_name("  Nightly   backup ").as_deref(),
            Some("Nightly backup")
        );
        assert_eq!(
            comment_name("rotate logs: keep 7").as_deref(),
            Some("rotate logs: keep 7")
        );
        for refused in [
            "0 3 * * * /usr/bin/old-job --flag",
            "*/5 * * * * poll",
            "@daily cleanup",
            "PATH=/usr/bin:/bin",
            "MAILTO = ops@example.com",
            "m h  dom mon dow   command",
            "------------",
            "",
            &"x".repeat(MAX_COMMENT_NAME + 1),
            "0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f",
        ] {
            assert_eq!(comment_name(refused), None, "{refused:?}");
        }
        // A title that merely starts with a number is still a title.
        assert_eq!(
            comment_name("2 backups a day").as_deref(),
            Some("2 backups a day")
        );
    }

    #[test]
    fn command_stems() {
        assert_eq!(command_stem("/usr/local/bin/backup.sh --full"), "backup");
        assert_eq!(command_stem("LANG=C FOO=1 /opt/x/report.py"), "report");
        assert_eq!(command_stem("\"/opt/my tools/run\" a"), "my");
        assert_eq!(command_stem("cd /srv && make"), "cd");
        assert_eq!(command_stem(".hidden"), ".hidden");
        assert_eq!(command_stem("%%%"), "job");
        assert_eq!(path_stem("reports/daily.v2.py"), "daily.v2");
    }

    #[test]
    fn taken_names_get_the_suffix_then_a_counter() {
        let mut book = NameBook::default();
        assert_eq!(book.claim("backup", "3"), "backup");
        assert_eq!(book.claim("backup", "7"), "backup-7");
        assert_eq!(book.claim("backup", "7"), "backup-7-2");
        assert_eq!(book.claim("other", "9"), "other");
    }
}
