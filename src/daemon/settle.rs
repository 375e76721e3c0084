//! Settling the run of a worker this gateway reaped. A worker writes its own
//! terminal row before it exits, so normally there is nothing to do. When it
//! did not:
//! - the row is still `claimed` by us: the worker exited before adopting it
//!   (it could not open the ledger, did not understand its arguments after
//!   an upgrade, crashed on start...), so the command never started. The row
//!   becomes `failed` (`worker_exited`), retried per the job's policy;
//!   without this it would stay `claimed` by a live gateway forever, and
//!   overlap `skip` would skip every later slot of the job.
//! - the row is `running` and its worker is gone: `unknown`, as the dead
//!   owner check says (side effects may have happened).

use crate::db::Db;
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState, Execution, LedgerError, Outcome};
use crate::process::{Owner, signal_name};
use crate::schedule::Instant;
use crate::sweep::{ProcLiveness, judge_active};
use crate::worker::retry_at;
use std::time::Duration;

/// What became of a reaped worker's run.
#[derive(Debug)]
pub enum Settled {
    /// The worker recorded its outcome.
    Finished(Execution),
    /// We recorded it: the worker did not.
    Resolved {
        row: Execution,
        state: ExecState,
        code: &'static str,
        reason: String,
    },
    /// Nothing to do (the row is gone, or moved on by someone else).
    Untouched,
}

/// A wait status in words: `exit 3`, `SIGKILL`.
pub fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        signal_name(libc::WTERMSIG(status))
    } else {
        format!("wait status {status}")
    }
}

/// Settle the run `id` of worker `pid`, reaped with wait status `status`.
pub fn settle_reaped(
    db: &Db,
    id: &ExecutionId,
    pid: u32,
    status: i32,
    us: &Owner,
    now: Instant,
) -> Result<Settled, LedgerError> {
    let found = ledger::get_execution(db.conn(), id).map_err(|source| LedgerError::Sql {
        id: id.to_string(),
        source,
    })?;
    let Some((row, spec)) = found else {
        return Ok(Settled::Untouched);
    };
    if row.state.is_terminal() {
        return Ok(Settled::Finished(row));
    }
    let ours = us.to_string();
    let (state, code, reason, retry) =
        if row.state == ExecState::Claimed && row.owner.as_deref() == Some(ours.as_str()) {
            let reason = format!(
                "worker pid {pid} ended ({}) before adopting the row; the command never started",
                describe_status(status)
            );
            let retry = retry_at(
                ExecState::Failed,
                row.attempt,
                spec.retries,
                Duration::from_secs(spec.retry_backoff_s),
                now,
            );
            (ExecState::Failed, "worker_exited", reason, retry)
        } else {
            match judge_active(&row, &ProcLiveness) {
                Some((code, reason)) => (ExecState::Unknown, code, reason, None),
                None => return Ok(Settled::Untouched),
            }
        };
    let mut outcome = Outcome::with_reason(state, code, reason.clone(), now);
    outcome.retry_at = retry;
    if !ledger::resolve(db.conn(), id, row.state, row.owner.as_deref(), &outcome)? {
        return Ok(Settled::Untouched);
    }
    Ok(Settled::Resolved {
        row,
        state,
        code,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_exits_and_signals() {
        assert_eq!(describe_status(124 << 8), "exit 124");
        assert_eq!(describe_status(9), "SIGKILL");
    }
}
