//! Settling the run of a worker this gateway reaped. A worker writes its own
//! terminal row before it exits, so normally there is nothing to do. When it
//! did not:
//! - the row is still `claimed` by us: the worker ended before adopting it,
//!   the command never started: `failed` (see `sweep::unadopted`);
//! - the row is `running` and its worker is gone: `unknown`, as the dead
//!   owner check says (side effects may have happened).

use crate::db::Db;
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState, Execution, LedgerError, Outcome};
use crate::process::Owner;
use crate::schedule::Instant;
use crate::sweep::{
    ProcLiveness, WORKER_EXITED, describe_wait_status, judge_active, resolve_unadopted,
};

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

fn sql(id: &ExecutionId) -> impl FnOnce(rusqlite::Error) -> LedgerError + '_ {
    move |source| LedgerError::Sql {
        id: id.to_string(),
        source,
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
    let how = describe_wait_status(status);
    if let Some((row, reason)) = resolve_unadopted(db, id, &us.to_string(), pid, &how, now)? {
        return Ok(Settled::Resolved {
            row,
            state: ExecState::Failed,
            code: WORKER_EXITED,
            reason,
        });
    }
    let Some((row, _)) = ledger::get_execution(db.conn(), id).map_err(sql(id))? else {
        return Ok(Settled::Untouched);
    };
    if row.state.is_terminal() {
        return Ok(Settled::Finished(row));
    }
    let Some((code, reason)) = judge_active(&row, &ProcLiveness::default()) else {
        return Ok(Settled::Untouched);
    };
    let outcome = Outcome::with_reason(ExecState::Unknown, code, reason.clone(), now);
    if !ledger::resolve(db.conn(), id, row.state, row.owner.as_deref(), &outcome)? {
        return Ok(Settled::Untouched);
    }
    Ok(Settled::Resolved {
        row,
        state: ExecState::Unknown,
        code,
        reason,
    })
}
