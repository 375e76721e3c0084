//! A stored job: its command, schedule, zone, policies and state.

use super::policy::{CatchUp, Overlap};
use super::redact::redacted_env;
use crate::ids::JobId;
use crate::schedule::{Schedule, Timestamp};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Environment given to a job. `Debug` shows names only, never values.
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Env(pub Vec<(String, String)>);

impl Env {
    /// Whether no variable is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(
                redacted_env(&self.0)
                    .iter()
                    .map(|(k, v)| format!("{k}={v}")),
            )
            .finish()
    }
}

/// Resource limits that become scope properties.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Resources {
    /// `MemoryMax=` in bytes.
    pub memory_max: Option<u64>,
    /// `CPUWeight=` (1..10000).
    pub cpu_weight: Option<u64>,
    /// `TasksMax=`.
    pub tasks_max: Option<u64>,
}

/// Whether the scheduler considers the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Claimed when due.
    Active,
    /// Not claimed until resumed.
    Paused {
        /// Why, when one was given.
        reason: Option<String>,
    },
    /// A one-shot that has fired; kept for its history.
    Completed,
}

impl JobState {
    /// The stored word: `active`, `paused`, `completed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            JobState::Active => "active",
            JobState::Paused { .. } => "paused",
            JobState::Completed => "completed",
        }
    }
}

/// A job definition as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The job's id.
    pub id: JobId,
    /// Its name; two jobs may share one (naming such a job is ambiguous).
    pub name: String,
    /// The schedule as the user typed it.
    pub schedule_text: String,
    /// The schedule, parsed.
    pub schedule: Schedule,
    /// The job's own zone (`--tz`); None means the config zone, else the system zone.
    pub tz: Option<String>,
    /// The command: a program and its arguments, or (with `shell`) the words of a shell line.
    pub argv: Vec<String>,
    /// Run through `sh -c` (the argv joined by spaces).
    pub shell: bool,
    /// Its `--env`, in order (a later name wins).
    pub env: Env,
    /// Files of `KEY=VALUE` lines read by the worker when the job runs
    /// (`--env-file`); their values override `cron.env`, `--env` overrides them.
    pub env_files: Vec<PathBuf>,
    /// Variables passed through from the process that starts the run
    /// (`--pass-env NAME`): nothing else of the caller's environment is.
    pub pass_env: Vec<String>,
    /// The command's working directory (None: the worker's own).
    pub workdir: Option<PathBuf>,
    /// None means `cron.script_timeout_seconds`.
    pub timeout: Option<Duration>,
    /// No output for this long means the run is stuck: it is stopped and
    /// recorded `timed_out` (`idle`). None: no idle timeout.
    pub idle_timeout: Option<Duration>,
    /// What a slot does while the previous run still goes.
    pub overlap: Overlap,
    /// None means the config default (`cron.catch_up_missed`).
    pub catch_up: Option<CatchUp>,
    /// Attempts after a failed or timed-out first one.
    pub retries: u32,
    /// The first retry's delay; it doubles with each attempt.
    pub retry_backoff: Duration,
    /// The limits its scope gets.
    pub resources: Resources,
    /// Never run this job outside a restart-safe scope.
    pub require_scope: bool,
    /// The Hermes job (its id in `cron/jobs.json`) this one came from.
    pub hermes_id: Option<String>,
    /// Kept by the Hermes provider sync: the Hermes job `hermes_id` is its
    /// source of truth, so `edit`, `rm`, `pause` and `resume` refuse it.
    pub managed: bool,
    /// Run only on this host, or on hosts with this label (`--on`); None:
    /// any host of the cluster.
    pub run_on: Option<String>,
    /// Its own alert rules and destinations (`--alert-on`, `--alert-after`,
    /// `--on-alert`, `--alert-webhook`, `--alert-ping`); unset ones are the config's.
    pub alerts: crate::alert::JobAlerts,
    /// Active, paused or completed.
    pub state: JobState,
    /// Origin of `every` periods; moved by catch-up `skip`.
    pub anchor: Timestamp,
    /// Its next slot (None: none, as for a fired one-shot or a paused Hermes job).
    pub next_run_at: Option<Timestamp>,
    /// When it was added.
    pub created_at: Timestamp,
    /// When it was last changed.
    pub updated_at: Timestamp,
}

impl Job {
    /// A new active job with every policy at its default, made at `now`.
    pub fn new(
        id: JobId,
        name: String,
        schedule_text: String,
        schedule: Schedule,
        argv: Vec<String>,
        now: Timestamp,
    ) -> Job {
        Job {
            id,
            name,
            schedule_text,
            schedule,
            tz: None,
            argv,
            shell: false,
            env: Env::default(),
            env_files: Vec::new(),
            pass_env: Vec::new(),
            workdir: None,
            timeout: None,
            idle_timeout: None,
            overlap: Overlap::default(),
            catch_up: None,
            retries: 0,
            retry_backoff: Duration::from_secs(30),
            resources: Resources::default(),
            alerts: crate::alert::JobAlerts::default(),
            require_scope: false,
            hermes_id: None,
            managed: false,
            run_on: None,
            state: JobState::Active,
            anchor: now,
            next_run_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// The command line for display: argv, or `sh -c '...'` for shell jobs.
    pub fn command_display(&self) -> String {
        let joined = self.argv.join(" ");
        if self.shell {
            format!("sh -c {joined:?}")
        } else {
            joined
        }
    }
}
