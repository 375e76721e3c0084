//! The ledger's vocabulary: states, sources, dispatch modes, and a row.

use super::owner::RowOwner;
use super::reason::ReasonCode;
use crate::ids::{ExecutionId, JobId};
use crate::placement::CauseCode;
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
    Schedule,
    CatchUp,
    Manual,
    Retry,
    Spawn,
    Reboot,
}

crate::text_enum_impls!(Source, "source", { Schedule => "schedule", CatchUp => "catch_up", Manual => "manual", Retry => "retry", Spawn => "spawn", Reboot => "reboot" });

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
    pub id: ExecutionId,
    pub job_id: Option<JobId>,
    pub job_name: String,
    pub scheduled_for: Option<Timestamp>,
    pub attempt: u32,
    pub source: Source,
    pub state: ExecState,
    pub reason_code: Option<ReasonCode>,
    pub reason: Option<String>,
    /// Who may move the row on: its claimer, then its worker.
    #[serde(skip)]
    pub owner: Option<RowOwner>,
    /// The process that claimed the row.
    pub claimed_by: Option<RowOwner>,
    pub dispatch_mode: Option<DispatchMode>,
    pub dispatch_cause: Option<CauseCode>,
    pub unit: Option<String>,
    pub pid: Option<u32>,
    pub pid_start: Option<u64>,
    pub claimed_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub heartbeat_at: Option<Timestamp>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: Option<u64>,
    pub max_rss_kb: Option<u64>,
    pub output_path: Option<String>,
    pub output_bytes: Option<u64>,
    pub output_truncated: Option<bool>,
    /// The host whose claimer decided the row; its worker runs there.
    pub host: Option<String>,
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
