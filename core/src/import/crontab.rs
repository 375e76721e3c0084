//! A crontab, line by line, into an [`ImportPlan`]. Pure: `now` and the
//! default zone are arguments. Lines are classified by `crontab_line.rs`;
//! this file owns what is in force for the entries below a line.
//!
//! - Assignments apply to the entries *below* them, in file order, as in
//!   cron; a later assignment of the same name replaces the earlier one.
//!   Each job gets the environment in force at its line.
//! - `CRON_TZ=zone` sets the zone of the entries below (validated; an empty
//!   value returns to the default zone). `TZ=zone` does the same and is also
//!   passed to the job's environment (by its canonical IANA name). Neither
//!   leaves the zone of entries above.
//! - `MAILTO=`/`MAILFROM=` are not supported (hermes-cron keeps output under
//!   `cron/output/`, it sends no mail): a non-empty value becomes a note and is
//!   not passed on. `RANDOM_DELAY=` likewise (jobs start on time).
//! - `SHELL=`: cron runs each command as `$SHELL -c command`. With no SHELL,
//!   or an `sh` one, the job is a shell job (`sh -c`, `shell = true`). With
//!   another shell the job's argv is `[shell, "-c", command]` (no extra
//!   shell), so bash syntax keeps working; a note says so. SHELL is also
//!   passed to the environment, as cron does.
//! - `PATH=`, `HOME=` and every other name are passed to the environment.
//! - Commands: `\%` becomes `%`; an entry with an unescaped `%` is skipped
//!   (see `crontab_line.rs`), not imported half-right.
//! - Names: see `names.rs`; the comment must be on the line directly above
//!   the entry. Derived names end in the line number (`backup-7`). A name
//!   taken by an existing job or an entry above gets `-<line>` and a note.
//! - System crontabs (`/etc/crontab`, `/etc/cron.d/*`, chosen by the caller
//!   from the path) have a user field: it is dropped with one note per user,
//!   because hermes-cron runs jobs as the user running the gateway.
//!
//! A malformed line (bad field, unknown macro, missing command, unknown zone)
//! is an [`ImportError::Line`] and nothing is imported.

use super::checked;
use super::context::ImportContext;
use super::crontab_line::{self, Entry, Line, LineError};
use super::names::{self, NameBook};
use super::plan::{
    ImportError, ImportNote, ImportPlan, ImportedJob, NotImported, NoteCode, SkipCode,
};
use crate::job::Env;
use crate::schedule::Tz;
use std::collections::HashSet;

/// Which crontab, and its format.
#[derive(Clone, Copy, Debug)]
pub(super) struct Source<'a> {
    /// The name used in origins and errors (`crontab`, `/etc/crontab`).
    pub(super) file: &'a str,
    /// Entries have a user field.
    pub(super) system: bool,
}

/// What is in force for the lines below.
#[derive(Debug, Default)]
struct Scope {
    env: Vec<(String, String)>,
    zone: Option<Tz>,
    shell: Option<String>,
}

impl Scope {
    fn set_env(&mut self, name: &str, value: &str) {
        self.env.retain(|(k, _)| k != name);
        self.env.push((name.to_string(), value.to_string()));
    }

    fn unset_env(&mut self, name: &str) {
        self.env.retain(|(k, _)| k != name);
    }
}

/// Read a crontab.
pub(super) fn parse(
    source: Source<'_>,
    text: &str,
    cx: &ImportContext<'_>,
) -> Result<ImportPlan, ImportError> {
    let mut walk = Walk {
        source,
        cx,
        scope: Scope::default(),
        plan: ImportPlan::default(),
        names: NameBook::with_existing(cx.existing),
        users: HashSet::new(),
    };
    let mut above: Option<&str> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let classified =
            crontab_line::classify(raw, source.system).map_err(|e| walk.error(line, e))?;
        match classified {
            Line::Blank => above = None,
            Line::Comment(text) => above = Some(text),
            Line::Assign { name, value } => {
                walk.assign(line, &name, &value)?;
                above = None;
            }
            Line::Entry(entry) => {
                walk.entry(line, &entry, above.take())?;
            }
        }
    }
    Ok(walk.plan)
}

struct Walk<'a> {
    source: Source<'a>,
    cx: &'a ImportContext<'a>,
    scope: Scope,
    plan: ImportPlan,
    names: NameBook,
    users: HashSet<String>,
}

impl Walk<'_> {
    fn origin(&self, line: usize) -> String {
        format!("{} line {line}", self.source.file)
    }

    fn error(&self, line: usize, e: LineError) -> ImportError {
        ImportError::Line {
            file: self.source.file.to_string(),
            line,
            token: e.token,
            message: e.message,
        }
    }

    fn note(&mut self, line: usize, code: NoteCode, message: String) {
        let origin = self.origin(line);
        self.plan.notes.push(ImportNote {
            origin,
            message,
            code,
        });
    }

    fn assign(&mut self, line: usize, name: &str, value: &str) -> Result<(), ImportError> {
        match name {
            "CRON_TZ" | "TZ" => {
                let zone = if value.is_empty() {
                    None
                } else {
                    let zone = self.cx.zones.parse(value).map_err(|e| {
                        self.error(
                            line,
                            LineError::new(e.token, format!("{name}: {}", e.message)),
                        )
                    })?;
                    Some(zone)
                };
                self.scope.zone = zone;
                if name == "TZ" {
                    match zone {
                        Some(zone) => self.scope.set_env("TZ", zone.name()),
                        None => self.scope.unset_env("TZ"),
                    }
                }
            }
            "MAILTO" | "MAILFROM" | "RANDOM_DELAY" => {
                if !value.is_empty() {
                    let why = if name == "RANDOM_DELAY" {
                        "hermes-cron starts jobs on time"
                    } else {
                        "hermes-cron sends no mail; output is kept under cron/output/ (see `runs` and `logs`)"
                    };
                    self.note(
                        line,
                        NoteCode::Dropped,
                        format!("{name}={value} is not supported and was dropped: {why}"),
                    );
                }
            }
            "SHELL" => {
                self.scope.shell = (!value.is_empty()).then(|| value.to_string());
                self.scope.set_env(name, value);
                if !is_sh(value) {
                    self.note(
                        line,
                        NoteCode::RunsDifferently,
                        format!(
                            "SHELL={value}: the jobs below run as `{value} -c COMMAND`, as cron runs them"
                        ),
                    );
                }
            }
            _ => self.scope.set_env(name, value),
        }
        Ok(())
    }

    fn entry(
        &mut self,
        line: usize,
        entry: &Entry<'_>,
        comment: Option<&str>,
    ) -> Result<(), ImportError> {
        let origin = self.origin(line);
        let command = match crontab_line::unescape_percent(entry.command) {
            Ok(command) => command,
            Err(at) => {
                let reason = format!(
                    "unescaped \"%\" in {:?} (at byte {at}): cron ends the command there and feeds the rest to its stdin, and hermes-cron jobs have no stdin; write \\% for a literal %, or pipe the input inside the command",
                    entry.command
                );
                self.plan.skipped.push(NotImported {
                    origin,
                    reason,
                    code: SkipCode::CronStdin,
                });
                return Ok(());
            }
        };
        if let Some(user) = entry.user
            && self.users.insert(user.to_string())
        {
            self.note(
                line,
                NoteCode::Dropped,
                format!(
                    "entries for user {user:?} will run as the user running hermes-cron; the user field was dropped"
                ),
            );
        }
        let zone = self.scope.zone.unwrap_or(self.cx.default_zone);
        let checked = checked::check(&entry.schedule, self.cx.now, zone)
            .map_err(|e| self.error(line, LineError::new(e.token, e.message)))?;
        let wanted = comment
            .and_then(names::comment_name)
            .unwrap_or_else(|| format!("{}-{line}", names::command_stem(&command)));
        let claimed = self.names.claim(&wanted, &line.to_string(), &origin);
        if let Some(holder) = &claimed.taken_by {
            self.note(
                line,
                NoteCode::Renamed,
                format!(
                    "name {wanted:?} is taken by {holder}: imported as {:?}",
                    claimed.name
                ),
            );
        }
        let name = claimed.name;
        let (argv, shell) = match &self.scope.shell {
            Some(sh) if !is_sh(sh) => (vec![sh.clone(), "-c".to_string(), command], false),
            _ => (vec![command], true),
        };
        self.plan.jobs.push(ImportedJob {
            name,
            schedule: entry.schedule.clone(),
            tz: self.scope.zone.map(|z| z.name().to_string()),
            argv,
            shell,
            env: Env(self.scope.env.clone()),
            workdir: None,
            enabled: true,
            pause_reason: None,
            hermes_id: None,
            origin,
            next: checked.next,
        });
        Ok(())
    }
}

/// Whether `shell` is a plain `sh` (what `shell = true` runs anyway).
fn is_sh(shell: &str) -> bool {
    matches!(shell, "" | "sh" | "/bin/sh" | "/usr/bin/sh")
}
