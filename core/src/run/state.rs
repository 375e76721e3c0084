//! The ledger's vocabulary: states, sources, dispatch modes, and a row.

use super::cause::CauseCode;
use super::owner::RowOwner;
use super::reason::ReasonCode;
use crate::ids::{ExecutionId, JobId};
use crate::schedule::Timestamp;

/// Where a row is in its life. `claimed -> running -> terminal`, or
/// `claimed -> staged -> running -> terminal` for a run prepared ahead of
/// its instant, or straight to one of the never-ran states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecState {
    /// Inserted by a claim; not yet adopted by a worker.
    Claimed,
    /// Adopted by its worker ahead of its instant (the worker spawned, its
    /// scope made, the ledger open), held: the command has not started.
    Staged,
    /// Adopted by its worker, which is running the command.
    Running,
    /// The command exited 0.
    Succeeded,
    /// The command exited non-zero (or could not be started).
    Failed,
    /// The timeout, or a stalled worker, stopped it.
    TimedOut,
    /// Stopped by a signal from outside (an operator, `replace`).
    Cancelled,
    /// The owner died before a terminal state; never retried.
    Unknown,
    /// Not started: the previous run was still going.
    Skipped,
    /// Not started: the slot passed while nothing was claiming.
    Missed,
    /// Not started: a restart-safe scope was required and unavailable.
    Refused,
}

crate::text_enum_impls!(ExecState, "state", { Claimed => "claimed", Staged => "staged", Running => "running", Succeeded => "succeeded", Failed => "failed", TimedOut => "timed_out", Cancelled => "cancelled", Unknown => "unknown", Skipped => "skipped", Missed => "missed", Refused => "refused" });

impl ExecState {
    /// Whether the row is done: none of `claimed`, `staged`, `running`.
    pub fn is_terminal(self) -> bool {
        !matches!(
            self,
            ExecState::Claimed | ExecState::Staged | ExecState::Running
        )
    }
    /// Whether a retry may follow (side effects are known not to be complete).
    pub fn is_retryable(self) -> bool {
        matches!(self, ExecState::Failed | ExecState::TimedOut)
    }
}

/// Why a row exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A slot of the job's schedule.
    Schedule,
    /// A missed slot, run late by the catch-up policy.
    CatchUp,
    /// Started by hand (`run`), outside the schedule.
    Manual,
    /// A later attempt of a failed or timed-out run.
    Retry,
    /// A run of no job (`spawn`, a command alert).
    Spawn,
    /// An `@reboot` job's run, once per gateway start.
    Reboot,
    /// A Hermes job's run that Hermes made by itself, outside hermes-cron
    /// (`hermes cron run`, Hermes's built-in ticker): recorded from Hermes's
    /// own `cron/executions.db`, with no slot, scope or output of ours.
    Hermes,
}

crate::text_enum_impls!(Source, "source", { Schedule => "schedule", CatchUp => "catch_up", Manual => "manual", Retry => "retry", Spawn => "spawn", Reboot => "reboot", Hermes => "hermes" });

/// How a worker was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DispatchMode {
    /// Inside its own transient systemd user scope: survives the gateway.
    Scoped,
    /// A detached process (`setsid`), no cgroup of its own.
    Degraded,
    /// A plain child of the CLI (`run --foreground`).
    InProcess,
}

crate::text_enum_impls!(DispatchMode, "dispatch mode", { Scoped => "scoped", Degraded => "degraded", InProcess => "in_process" });

/// One ledger row.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Execution {
    /// The row's id (a UUIDv7: ids order rows by when they were written).
    pub id: ExecutionId,
    /// The job it ran for (None: a run of no job, `spawn` or a command alert).
    pub job_id: Option<JobId>,
    /// The job's name when the row was claimed (kept after the job is gone).
    pub job_name: String,
    /// The slot it is for (None: no slot, a spawned run).
    pub scheduled_for: Option<Timestamp>,
    /// Which attempt at the slot, 1 first.
    pub attempt: u32,
    /// Why the row exists.
    pub source: Source,
    /// Where the row is in its life.
    pub state: ExecState,
    /// Why the row is in its state, as a code (None: no code, or one this version does not know).
    pub reason_code: Option<ReasonCode>,
    /// Why the row is in its state, in words.
    pub reason: Option<String>,
    /// Who may move the row on: its claimer, then its worker.
    #[serde(skip)]
    pub owner: Option<RowOwner>,
    /// The process that claimed the row.
    pub claimed_by: Option<RowOwner>,
    /// How the worker was started (None: not yet started).
    pub dispatch_mode: Option<DispatchMode>,
    /// Why the run was not in a scope (None: scoped, or not yet placed).
    pub dispatch_cause: Option<CauseCode>,
    /// The scope's unit name (None: not scoped); always read from the row, never rebuilt.
    pub unit: Option<String>,
    /// The worker's pid (None: no worker has adopted it yet).
    pub pid: Option<u32>,
    /// The worker's start time, in clock ticks after boot (with `pid`, its identity).
    pub pid_start: Option<u64>,
    /// When it was claimed.
    pub claimed_at: Timestamp,
    /// When the worker adopted it (None: not yet, or never).
    pub started_at: Option<Timestamp>,
    /// When it reached a terminal state (None: not yet).
    pub finished_at: Option<Timestamp>,
    /// The worker's last heartbeat (None: none yet).
    pub heartbeat_at: Option<Timestamp>,
    /// The command's exit status (None: not ended, or killed by a signal).
    pub exit_code: Option<i32>,
    /// The signal that killed the command (None: not ended, or it exited).
    pub signal: Option<i32>,
    /// How long the command ran, in milliseconds.
    pub duration_ms: Option<u64>,
    /// The command's peak resident set, in KiB.
    pub max_rss_kb: Option<u64>,
    /// The file its output is captured in.
    pub output_path: Option<String>,
    /// Output bytes stored in that file.
    pub output_bytes: Option<u64>,
    /// Whether output was dropped (past `output_max_bytes`, or cut for a full disk).
    pub output_truncated: Option<bool>,
    /// The host whose claimer decided the row; its worker runs there.
    pub host: Option<String>,
    /// The model usage the run reported (tokens, API calls, model, cost; a
    /// Hermes agent job's, from Hermes's own records); None when it
    /// reported none (script and plain command jobs).
    pub usage: Option<serde_json::Value>,
}

impl Execution {
    /// A claimed manual row with every optional field empty, for tests
    /// (feature `testing`).
    #[cfg(any(test, feature = "testing"))]
    pub fn sample() -> Execution {
        Execution {
            id: ExecutionId::generate(),
            job_id: None,
            job_name: "sample".into(),
            scheduled_for: None,
            attempt: 1,
            source: Source::Manual,
            state: ExecState::Claimed,
            reason_code: None,
            reason: None,
            owner: None,
            claimed_by: None,
            dispatch_mode: None,
            dispatch_cause: None,
            unit: None,
            pid: None,
            pid_start: None,
            claimed_at: chrono::DateTime::UNIX_EPOCH,
            started_at: None,
            finished_at: None,
            heartbeat_at: None,
            exit_code: None,
            signal: None,
            duration_ms: None,
            max_rss_kb: None,
            output_path: None,
            output_bytes: None,
            output_truncated: None,
            host: None,
            usage: None,
        }
    }

    /// Scheduled slot -> worker started, for scheduled rows that started.
    pub fn start_lateness_ms(&self) -> Option<i64> {
        Some((self.started_at? - self.scheduled_for?).num_milliseconds())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_states() {
        let terminal: Vec<_> = ExecState::ALL.iter().filter(|s| s.is_terminal()).collect();
        assert_eq!(terminal.len(), 8);
        assert!(!ExecState::Unknown.is_retryable());
        assert!(ExecState::TimedOut.is_retryable());
        assert_eq!(
            "timed_out".parse::<ExecState>().unwrap(),
            ExecState::TimedOut
        );
    }
}
