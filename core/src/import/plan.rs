//! What an import produces: [`ImportPlan`] (the jobs to create, the entries
//! that cannot be imported and why, and notes about settings that have no
//! equivalent) and [`ImportError`] (the input is malformed; nothing is
//! imported).
//!
//! Invariants: every [`ImportedJob::schedule`] was accepted by
//! `Schedule::parse` in the job's zone at the import's `now`, and its
//! [`ImportedJob::next`] was computed from that parse; job names are unique
//! within one plan and pass `job::validate_name`.

use crate::job::{Env, JobInput};
use crate::schedule::Fire;
use std::path::PathBuf;

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
}

/// A setting that was dropped or changed on the way in (MAILTO, delivery
/// targets, repeat limits); the jobs it concerns are still imported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportNote {
    /// Where the setting is.
    pub origin: String,
    /// What happened to it.
    pub message: String,
}

/// The result of reading a crontab or a Hermes `jobs.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportPlan {
    /// Jobs to create, in source order.
    pub jobs: Vec<ImportedJob>,
    /// Entries that are not importable, with the reason.
    pub skipped: Vec<NotImported>,
    /// Dropped or changed settings.
    pub notes: Vec<ImportNote>,
}

/// The input is malformed: nothing may be imported. Every variant names the
/// file and the place, and the token that failed where there is one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// A crontab line.
    #[error("{file} line {line}: {message}")]
    Line {
        file: String,
        /// 1-based.
        line: usize,
        token: String,
        message: String,
    },
    /// `jobs.json` is not JSON.
    #[error("{file} line {line} column {column}: invalid JSON: {message}")]
    Json {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A job in `jobs.json` does not fit the schema (a missing or mistyped
    /// field, an invalid expression or zone).
    #[error("{file} job {job}: {field}: {message}")]
    Job {
        file: String,
        /// The job's `id`, or `#N` (1-based position) without one.
        job: String,
        /// The field, dotted: `schedule.expr`.
        field: String,
        token: String,
        message: String,
    },
    /// `jobs.json`'s top level is not a job list.
    #[error("{file}: {message}")]
    Shape { file: String, message: String },
}

impl ImportError {
    /// The token that failed, when the error has one.
    pub fn token(&self) -> Option<&str> {
        match self {
            ImportError::Line { token, .. } | ImportError::Job { token, .. } => Some(token),
            ImportError::Json { .. } | ImportError::Shape { .. } => None,
        }
    }
}

impl ImportedJob {
    /// The job as `add`'s flags. `enabled` has no flag: the caller pauses
    /// the job after creating it when `enabled` is false.
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
