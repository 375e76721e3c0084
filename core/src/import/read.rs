//! The entry points: [`parse_crontab`], [`parse_hermes_jobs`],
//! [`detect_and_parse`], which picks the format and, from the file's path,
//! the crontab flavour and the Hermes home, and [`import_file`], the same
//! with everything else the caller knows ([`ImportContext`]: existing jobs,
//! homes, a file probe). Pure: paths are only looked at as text, never
//! opened (the caller's probe may).
//!
//! Detection: a file whose name ends in `.json`, or whose text starts (after
//! a byte-order mark and whitespace) with `{` or `[`, is a Hermes
//! `jobs.json`, so a broken JSON file gets a JSON error with line and column
//! rather than crontab errors; anything else is a crontab. A crontab named
//! `/etc/crontab` or `/etc/cron.d/<file>` is a system crontab (entries carry a
//! user field); any other is a user crontab. A `jobs.json` at an absolute
//! `<home>/cron/jobs.json` resolves relative scripts under `<home>/scripts/`.
//! Both look at the name as given and at [`ImportContext::path`].

use super::context::ImportContext;
use super::plan::{ImportError, ImportPlan};
use super::{crontab, hermes};
use crate::schedule::{Timestamp, Tz, ZoneTable};
use std::path::Path;

/// Read a user crontab (5 fields or a macro, then the command; no user field).
/// Origins and errors call the file `crontab`.
pub fn parse_crontab(
    text: &str,
    now: Timestamp,
    default_zone: Tz,
    zones: &ZoneTable,
) -> Result<ImportPlan, ImportError> {
    let source = crontab::Source {
        file: "crontab",
        system: false,
    };
    crontab::parse(source, text, &ImportContext::new(now, default_zone, zones))
}

/// Read a Hermes `cron/jobs.json`. Relative scripts are resolved under
/// `${HERMES_HOME:-$HOME/.hermes}/scripts` when the job runs. Origins and
/// errors call the file `jobs.json`.
pub fn parse_hermes_jobs(
    text: &str,
    now: Timestamp,
    default_zone: Tz,
    zones: &ZoneTable,
) -> Result<ImportPlan, ImportError> {
    let source = hermes::Source {
        file: "jobs.json",
        home: None,
    };
    hermes::parse(source, text, &ImportContext::new(now, default_zone, zones))
}

/// Read `text`, the contents of `file_name`, as whichever format it is (see
/// the module docs). Origins and errors use `file_name` as given.
pub fn detect_and_parse(
    file_name: &str,
    text: &str,
    now: Timestamp,
    default_zone: Tz,
    zones: &ZoneTable,
) -> Result<ImportPlan, ImportError> {
    import_file(
        file_name,
        text,
        &ImportContext::new(now, default_zone, zones),
    )
}

/// [`detect_and_parse`] with what the caller knows besides the text: the
/// jobs that exist (their names are taken, their Hermes jobs are not imported
/// again), where the file and homes are, and a probe for missing scripts.
pub fn import_file(
    file_name: &str,
    text: &str,
    cx: &ImportContext<'_>,
) -> Result<ImportPlan, ImportError> {
    let given = Path::new(file_name);
    if is_json(file_name, text) {
        let home = cx.path.and_then(hermes_home).or_else(|| hermes_home(given));
        let source = hermes::Source {
            file: file_name,
            home,
        };
        hermes::parse(source, text, cx)
    } else {
        let system = is_system_crontab(given) || cx.path.is_some_and(is_system_crontab);
        let source = crontab::Source {
            file: file_name,
            system,
        };
        crontab::parse(source, text, cx)
    }
}

fn is_json(file_name: &str, text: &str) -> bool {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    file_name.to_ascii_lowercase().ends_with(".json") || start.starts_with(['{', '['])
}

/// `<home>` for an absolute `<home>/cron/jobs.json`.
fn hermes_home(path: &Path) -> Option<&Path> {
    let cron = path.parent()?;
    let is_store =
        path.is_absolute() && path.file_name()? == "jobs.json" && cron.file_name()? == "cron";
    if is_store { cron.parent() } else { None }
}

fn is_system_crontab(path: &Path) -> bool {
    path == Path::new("/etc/crontab") || path.parent() == Some(Path::new("/etc/cron.d"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_and_flavour_come_from_the_name_and_first_character() {
        assert!(is_json("jobs.json", ""));
        assert!(is_json("backup.JSON", "# not really"));
        assert!(is_json("export", "\u{feff}  \n {\"jobs\": []}"));
        assert!(is_json("export", "[]"));
        assert!(!is_json("crontab.txt", "# m h dom mon dow command"));
        assert!(is_system_crontab(Path::new("/etc/crontab")));
        assert!(is_system_crontab(Path::new("/etc/cron.d/backup")));
        assert!(!is_system_crontab(Path::new(
            "/var/spool/cron/crontabs/ann"
        )));
        assert!(!is_system_crontab(Path::new("crontab")));
        assert_eq!(
            hermes_home(Path::new("/home/ann/.hermes/cron/jobs.json")),
            Some(Path::new("/home/ann/.hermes"))
        );
        assert_eq!(
            hermes_home(Path::new("/home/ann/.hermes/profiles/coder/cron/jobs.json")),
            Some(Path::new("/home/ann/.hermes/profiles/coder"))
        );
        assert_eq!(hermes_home(Path::new("cron/jobs.json")), None);
        assert_eq!(hermes_home(Path::new("/tmp/jobs.json")), None);
        assert_eq!(
            hermes_home(Path::new("/home/ann/.hermes/cron/old.json")),
            None
        );
    }
}
