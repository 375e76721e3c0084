//! A worker that ended before adopting its row: the row is still `claimed`
//! by the live process that launched it, so the dead-owner check (which
//! looks at the claimer) would never settle it, and overlap `skip` would skip
//! every later slot of the job. The worker adopts (compare-and-set `claimed
//! -> running`) before it starts the command, so the command never started:
//! the row becomes `failed` (`worker_exited`), retried per the job's policy.
//! Called by whoever launched and reaped the worker (the gateway, `run
//! --wait`).

use crate::db::Db;
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState, Execution, LedgerError, Outcome};
use crate::process::signal_name;
use crate::schedule::Instant;
use crate::worker::retry_under;

/// The reason code of a row whose worker ended before adopting it.
pub const WORKER_EXITED: &str = "worker_exited";

/// A wait status in words: `exit 3`, `SIGKILL`.
pub fn describe_wait_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        signal_name(libc::WTERMSIG(status))
    } else {
        format!("wait status {status}")
    }
}

/// If row `id` is still `claimed` by `launcher` (its worker, pid
/// `worker_pid`, has been reaped, having ended `how`), resolve it `failed`
/// with the retry the job owes. Returns the row as it was and the reason.
pub fn resolve_unadopted(
    db: &Db,
    id: &ExecutionId,
    launcher: &str,
    worker_pid: u32,
    how: &str,
    now: Instant,
) -> Result<Option<(Execution, String)>, LedgerError> {
    let found = ledger::get_execution(db.conn(), id).map_err(|source| LedgerError::Sql {
        id: id.to_string(),
        source,
    })?;
    let Some((row, spec)) = found else {
        return Ok(None);
    };
    if row.state != ExecState::Claimed || row.owner.as_deref() != Some(launcher) {
        return Ok(None);
    }
    let reason = format!(
        "worker pid {worker_pid} ended ({how}) before adopting the row; the command never started"
    );
    let mut outcome = Outcome::with_reason(ExecState::Failed, WORKER_EXITED, reason.clone(), now);
    outcome.retry_at = retry_under(&spec, ExecState::Failed, row.attempt, now);
    if !ledger::resolve(db.conn(), id, ExecState::Claimed, Some(launcher), &outcome)? {
        return Ok(None);
    }
    Ok(Some((row, reason)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_exits_and_signals() {
        assert_eq!(describe_wait_status(124 << 8), "exit 124");
        assert_eq!(describe_wait_status(9), "SIGKILL");
    }
}
