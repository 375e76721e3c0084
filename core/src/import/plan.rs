//! What an import produces: [`ImportPlan`] (the jobs to create, the entries
//! that are not imported and why, and notes about what changed on the way
//! in) and [`ImportError`] (the file as a whole is malformed; nothing is
//! imported).
//!
//! Invariants: every [`ImportedJob::schedule`] was accepted by
//! `Schedule::parse` in the job's zone at the import's `now`, and its
//! [`ImportedJob::next`] was computed from that parse; job names are unique
//! within one plan, pass `job::validate_name`, and are none of the names of
//! the jobs the caller said exist ([`ImportContext::existing`]).

use crate::job::{Env, JobInput};
use crate::schedule::Fire;
use std::path::PathBuf;

#[cfg(doc)]
use super::ImportContext;

/// One job to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedJob {
    /// Unique within the plan.
    pub name: String,
    /// Text accepted by `Schedule::parse` (`0 8 * * *`, `@daily`, `every 30m`,
    /// `2026-12-01T08:00:00Z`).
    pub schedule: String,
    /// IANA zone for the schedule; `None` means the config or system zone.
    pub tz: Option<String>,
    /// The command. With `shell`, a single shell line for `sh -c`.
    pub argv: Vec<String>,
    /// Whether `argv[0]` is a shell line run through `sh -c`.
    pub shell: bool,
    /// The job's environment, in definition order (`Debug` hides values).
    pub env: Env,
    /// Absolute working directory, if the source named one.
    pub workdir: Option<PathBuf>,
    /// False for jobs that were paused or disabled in the source.
    pub enabled: bool,
    /// Why the job is paused, when `enabled` is false: Hermes's
    /// `paused_reason` as it is, else what paused it.
    pub pause_reason: Option<String>,
    /// The id of the Hermes job it came from (`jobs.json` only).
    pub hermes_id: Option<String>,
    /// Where it came from: `crontab line 7`, `jobs.json job 3f2a9c01b7de`.
    pub origin: String,
    /// The first fire after the import's `now` (anchored at `now` for
    /// intervals); `None` for `@reboot`.
    pub next: Option<Fire>,
}

/// An entry of the source that is deliberately not imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotImported {
    /// Where it is: `crontab line 9`, `jobs.json job 3f2a9c01b7de`.
    pub origin: String,
    /// Why, as a lowercase fragment naming the offending part.
    pub reason: String,
    /// The kind of reason.
    pub code: SkipCode,
}

/// Why an entry is not imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipCode {
    /// A `jobs.json` record that does not fit the schema (a missing or
    /// mistyped field, an invalid expression, zone or workdir): skipped
    /// alone, the rest of the file is imported.
    Malformed,
    /// A Hermes agent job (a prompt or skills): hermes-cron runs commands.
    AgentJob,
    /// Nothing to run (no script, prompt or skills).
    NothingToRun,
    /// Finished in Hermes (completed, repeat limit reached, a one-shot that
    /// ran or is past).
    Finished,
    /// A Hermes job imported before (a job has its Hermes id).
    AlreadyImported,
    /// A crontab command with cron's `%` stdin.
    CronStdin,
}

crate::text_enum_impls!(SkipCode, "skip code", {
    Malformed => "malformed", AgentJob => "agent_job", NothingToRun => "nothing_to_run",
    Finished => "finished", AlreadyImported => "already_imported", CronStdin => "cron_stdin",
});

/// Something that was dropped or changed on the way in, or that the user
/// must know (MAILTO, delivery targets, repeat limits, a rename, a missing
/// script, the Hermes originals still firing); the jobs it concerns are
/// still imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportNote {
    /// Where the setting is, or the file for a note about all of it.
    pub origin: String,
    /// What happened to it.
    pub message: String,
    /// The kind of note.
    pub code: NoteCode,
}

/// The kind of an [`ImportNote`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoteCode {
    /// A setting with no equivalent was dropped (MAILTO, `deliver`, a repeat
    /// limit, a system crontab's user field).
    Dropped,
    /// The job runs differently than it did (another interpreter, shell or
    /// working directory).
    RunsDifferently,
    /// The job got another name than the source's (taken by an existing job
    /// or an earlier entry, or not a valid name).
    Renamed,
    /// The job's script is not where the job will look for it.
    ScriptMissing,
    /// Two records of the file have the same Hermes id.
    DuplicateHermesId,
    /// The file keeps its jobs in an object keyed by id.
    KeyedById,
    /// Hermes keeps firing the jobs that were imported: each runs twice.
    RunsTwice,
}

crate::text_enum_impls!(NoteCode, "note code", {
    Dropped => "dropped", RunsDifferently => "runs_differently", Renamed => "renamed",
    ScriptMissing => "script_missing", DuplicateHermesId => "duplicate_hermes_id",
    KeyedById => "keyed_by_id", RunsTwice => "runs_twice",
});

impl NoteCode {
    /// Whether the note is a warning (printed as `warning:`, not `note:`).
    pub fn is_warning(self) -> bool {
        matches!(self, NoteCode::RunsTwice | NoteCode::ScriptMissing)
    }
}

/// The result of reading a crontab or a Hermes `jobs.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportPlan {
    /// Jobs to create, in source order.
    pub jobs: Vec<ImportedJob>,
    /// Entries that are not imported, with the reason.
    pub skipped: Vec<NotImported>,
    /// Dropped or changed settings, renames, missing scripts, warnings.
    pub notes: Vec<ImportNote>,
}

/// The input is malformed: nothing may be imported. Every variant names the
/// file and the place, and the token that failed where there is one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A crontab line.
    #[error("{file} line {line}: {message}")]
    Line {
        /// The file, as the caller named it.
        file: String,
        /// 1-based.
        line: usize,
        /// The token that failed.
        token: String,
        /// What is wrong with it.
        message: String,
    },
    /// `jobs.json` is not JSON.
    #[error("{file} line {line} column {column}: invalid JSON: {message}")]
    Json {
        /// The file, as the caller named it.
        file: String,
        /// 1-based.
        line: usize,
        /// 1-based.
        column: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// `jobs.json`'s top level is not a job list (nor jobs keyed by id).
    #[error("{file}: {message}")]
    Shape {
        /// The file, as the caller named it.
        file: String,
        /// What the top level is instead.
        message: String,
    },
}

impl ImportError {
    /// The token that failed, when the error has one.
    pub fn token(&self) -> Option<&str> {
        match self {
            ImportError::Line { token, .. } => Some(token),
            ImportError::Json { .. } | ImportError::Shape { .. } => None,
        }
    }
}

impl ImportedJob {
    /// The job as `add`'s flags. `enabled`, `pause_reason` and `hermes_id`
    /// have no flag: the caller sets them on the job it builds.
    pub fn to_job_input(&self) -> JobInput {
        JobInput {
            name: Some(self.name.clone()),
            schedule: Some(self.schedule.clone()),
            tz: self.tz.clone(),
            env: Some(self.env.0.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            workdir: self.workdir.clone(),
            shell: Some(self.shell),
            argv: Some(self.argv.clone()),
            ..JobInput::default()
        }
    }
}
