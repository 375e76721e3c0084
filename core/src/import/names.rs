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
//! - A name already taken (by a job that exists, or an entry imported before
//!   it) gets `-<suffix>`, then `-2`, `-3`... appended; the caller notes it.

use super::context::ExistingJob;
use crate::job::validate_name;
use std::collections::HashMap;

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

/// The names taken so far in one import, each with who holds it: the jobs
/// that already exist, then the entries imported so far.
#[derive(Debug, Default)]
pub(super) struct NameBook {
    /// name (in [`key`]'s case) -> who holds it, for notes (`an existing
    /// job (01a2…)`, `crontab line 3`).
    taken: HashMap<String, String>,
}

/// A name as the book compares it: in any ASCII case, as `add` refuses a
/// name taken (`store::job_named`, SQL's `lower`).
fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// The name an entry got, and who held the one it wanted when it was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Claimed {
    pub(super) name: String,
    /// Who holds the wanted name, when the entry got another one.
    pub(super) taken_by: Option<String>,
}

/// The job layer's longest name, in bytes (`job::validate_name`; a test
/// keeps the two equal).
const MAX_NAME_BYTES: usize = 1024;

/// The longest suffix taken from an entry's label, in characters.
const MAX_SUFFIX: usize = 64;

impl NameBook {
    /// A book in which the names of `existing` are taken.
    pub(super) fn with_existing(existing: &[ExistingJob]) -> NameBook {
        let mut book = NameBook::default();
        for job in existing {
            book.taken
                .entry(key(&job.name))
                .or_insert_with(|| format!("an existing job ({})", job.id));
        }
        book
    }

    /// Claim `wanted` for `holder`, or `wanted-<suffix>`, or
    /// `wanted-<suffix>-2`... when taken (or when that is not a valid name:
    /// too long, or a UUID). `wanted` must already pass `validate_name`.
    pub(super) fn claim(&mut self, wanted: &str, suffix: &str, holder: &str) -> Claimed {
        let suffix: String = suffix
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_SUFFIX)
            .collect();
        let taken_by = self.taken.get(&key(wanted)).cloned();
        let name = if taken_by.is_none() {
            wanted.to_string()
        } else {
            let free =
                |name: &str| !self.taken.contains_key(&key(name)) && validate_name(name).is_ok();
            let tails = (1..).map(|n| match (suffix.is_empty(), n) {
                (false, 1) => format!("-{suffix}"),
                (false, n) => format!("-{suffix}-{n}"),
                (true, n) => format!("-{}", n + 1),
            });
            let mut candidates = tails.map(|tail| fit(wanted, &tail));
            candidates.find(|c| free(c)).unwrap_or_default()
        };
        self.taken.insert(key(&name), holder.to_string());
        Claimed { name, taken_by }
    }
}

/// `base` + `tail`, `base` cut (at a character boundary) so that the whole
/// fits a name's byte limit.
fn fit(base: &str, tail: &str) -> String {
    let room = MAX_NAME_BYTES.saturating_sub(tail.len());
    let mut end = base.len().min(room);
    while !base.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{tail}", &base[..end])
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
        let name = |c: Claimed| c.name;
        assert_eq!(name(book.claim("backup", "3", "line 3")), "backup");
        let again = book.claim("backup", "7", "line 7");
        assert_eq!(
            again,
            Claimed {
                name: "backup-7".into(),
                taken_by: Some("line 3".into())
            }
        );
        assert_eq!(name(book.claim("backup", "7", "x")), "backup-7-2");
        assert_eq!(name(book.claim("other", "9", "y")), "other");
        assert_eq!(name(book.claim("other", "\0\n", "z")), "other-2");
        // Taken in another case is taken: `add` refuses it too.
        assert_eq!(name(book.claim("Backup", "9", "w")), "Backup-9");
    }

    #[test]
    fn existing_names_are_taken_and_suffixes_stay_valid() {
        let existing = [ExistingJob {
            id: "0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f".into(),
            name: "disk".into(),
            hermes_id: None,
            managed: false,
        }];
        let mut book = NameBook::with_existing(&existing);
        let got = book.claim("disk", "cb937e0bc087", "jobs.json job cb937e0bc087");
        assert_eq!(got.name, "disk-cb937e0bc087");
        assert_eq!(
            got.taken_by.as_deref(),
            Some("an existing job (0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f)")
        );
        // A suffixed name that would read as a UUID is passed over.
        let mut book = NameBook::default();
        book.claim("0190d5e2-8a3b-7c4d-9e5f", "a", "a");
        let got = book.claim("0190d5e2-8a3b-7c4d-9e5f", "0a1b2c3d4e5f", "b");
        assert_eq!(got.name, "0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f-2");
        assert!(validate_name(&"x".repeat(MAX_NAME_BYTES)).is_ok());
        assert!(validate_name(&"x".repeat(MAX_NAME_BYTES + 1)).is_err());
        // A long name is cut to leave room for the suffix.
        let long = "é".repeat(MAX_NAME_BYTES / 2);
        book.claim(&long, "1", "a");
        let got = book.claim(&long, "1", "b").name;
        assert!(got.len() <= MAX_NAME_BYTES && got.ends_with("-1"), "{got}");
        assert!(validate_name(&got).is_ok());
    }
}
