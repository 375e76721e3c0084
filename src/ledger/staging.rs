//! The moves of a run prepared ahead of its instant (staging), each a
//! compare-and-set like every other move (see `moves.rs`):
//!
//! | move | from | to | by |
//! |---|---|---|---|
//! | [`claim_ahead`] | (none) | claimed, and its [`StagedClaim`] | the gateway, a lead time before the slot |
//! | [`stage`] | claimed | staged | the worker, on its stage line: it holds the row, the command not started |
//! | [`start`] | staged | running | the worker, released, right after forking the command |
//! | [`overlapped`] | claimed, staged | skipped (`overlap`) | the gateway, at the instant, when a previous run of the job is still going (overlap `skip`) |
//! | [`withdraw`] | claimed, staged | (row removed) | the gateway (job paused, edited or removed before the instant), the worker (its gateway gone before releasing it), the reconciler (a claim no worker ever held) |
//!
//! `withdraw` takes a run back as if it had never been claimed: the row is
//! deleted, and the job's next slot is set back to the run's slot when the
//! job still has what the claim left on it (its next slot and anchor: no
//! edit or resume rescheduled it since). A paused job keeps its pause; a
//! one-shot the claim completed becomes active again unless it was paused.
//! Without staging the slot would simply not have been claimed yet, so the
//! ledger ends up as it would have: the slot is claimed again (staged again
//! when its lead has not passed, else at its instant through the usual
//! path, with the catch-up policy if it is late).

use super::error::{LedgerError, sql_err};
use super::moves::{Taking, take_claimed};
use super::outbox;
use super::terminal::{Conclusion, conclude};
use super::{NewClaim, claim};
use crate::db::{Conn, SqlResult, from_ms, to_ms};
use crate::ids::{ExecutionId, JobId};
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::run::{ExecState, Execution, Move, Owner, ReasonCode, RowOwner};

/// What a claim made ahead did to its job, kept until the run starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedClaim {
    pub job_id: JobId,
    /// The slot: the job's `next_run_at` before the claim.
    pub slot: Timestamp,
    /// What the claim left on the job.
    pub next_run_at: Option<Timestamp>,
    pub anchor: Timestamp,
    /// The claim completed a one-shot.
    pub completed: bool,
    /// The job's `updated_at` at the claim: an edit, pause or resume since
    /// changes it.
    pub job_updated_at: Timestamp,
}

/// Insert a claimed row for a slot ahead of its instant, with what the
/// claim did to its job. False: the slot already has a row. Called inside
/// the claim transaction (which also advances the job), never on its own.
pub fn claim_ahead(tx: &Conn, c: &NewClaim<'_>, staged: &StagedClaim) -> Result<bool, LedgerError> {
    let id = c.occurrence.id;
    debug_assert!(
        !tx.is_autocommit(),
        "claim_ahead runs inside the claim transaction"
    );
    if !claim(tx, c)? {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO staged_claims (execution_id, job_id, slot, next_run_at, anchor,
             completed, job_updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id.as_str(),
            staged.job_id.as_str(),
            to_ms(staged.slot),
            staged.next_run_at.map(to_ms),
            to_ms(staged.anchor),
            staged.completed,
            to_ms(staged.job_updated_at),
        ],
    )
    .map_err(sql_err(id))?;
    Ok(true)
}

/// The staging claim of row `id`, if it was claimed ahead and has not started.
pub fn staged_claim(conn: &Conn, id: &ExecutionId) -> SqlResult<Option<StagedClaim>> {
    conn.query_opt(
        "SELECT job_id, slot, next_run_at, anchor, completed, job_updated_at
           FROM staged_claims WHERE execution_id = ?1",
        params![id.as_str()],
        |r| {
            Ok(StagedClaim {
                job_id: JobId::from_string(r.get::<_, String>(0)?),
                slot: from_ms(r.get(1)?),
                next_run_at: r.get::<_, Option<i64>>(2)?.map(from_ms),
                anchor: from_ms(r.get(3)?),
                completed: r.get(4)?,
                job_updated_at: from_ms(r.get(5)?),
            })
        },
    )
}

/// `claimed -> staged`: the worker holds row `id`, still claimed by
/// `claimer` (as the worker read it), ahead of its instant.
pub fn stage(
    conn: &Conn,
    id: &ExecutionId,
    claimer: &RowOwner,
    s: &Taking<'_>,
) -> Result<bool, LedgerError> {
    take_claimed(
        conn,
        id,
        claimer,
        "UPDATE executions SET state = 'staged', owner = ?3, pid = ?4, pid_start = ?5,
             dispatch_mode = ?6, dispatch_cause = ?7, unit = ?8, heartbeat_at = ?9
         WHERE id = ?1 AND state = 'claimed' AND owner IS NOT DISTINCT FROM ?2",
        s,
    )
    .map_err(sql_err(id))
}

/// `staged -> running`: the released `worker` forked the command at
/// `started_at`. The staging claim is done with. A job with a ping URL owes
/// its `/start` ping now (as `adopt` owes it), in the same transaction.
pub fn start(
    conn: &Conn,
    id: &ExecutionId,
    worker: &Owner,
    started_at: Timestamp,
) -> Result<bool, LedgerError> {
    conn.savepoint(|tx| {
        let n = tx.execute(
            "UPDATE executions SET state = 'running', started_at = ?3, heartbeat_at = ?3
             WHERE id = ?1 AND state = 'staged' AND owner = ?2",
            params![id.as_str(), worker.to_string(), to_ms(started_at)],
        )?;
        if n == 1 {
            forget_claim(tx, id)?;
            outbox::on_adopt(tx, id, started_at)?;
        }
        Ok(n == 1)
    })
    .map_err(sql_err(id))
}

fn forget_claim(tx: &Conn, id: &ExecutionId) -> SqlResult<()> {
    tx.execute(
        "DELETE FROM staged_claims WHERE execution_id = ?1",
        params![id.as_str()],
    )
    .map(|_| ())
}

/// `claimed | staged -> skipped` (`overlap`): at the instant, a previous
/// run of the job of `row` (as the caller read it) was still going.
pub fn overlapped(conn: &Conn, row: &Execution, at: Timestamp) -> Result<bool, LedgerError> {
    let owner = row.owner.as_ref().map(|o| o.as_stored());
    let reason = "the previous run of this job is still going (overlap skip)".to_string();
    let c = Conclusion::new(
        Move::Overlapped,
        &row.id,
        row.state,
        owner,
        ExecState::Skipped,
        at,
    )
    .because(ReasonCode::Overlap, reason);
    let moved = conclude(conn, &c)?;
    if moved {
        // Bookkeeping only: a leftover entry of a terminal row means nothing.
        forget_claim(conn, &row.id).map_err(sql_err(&row.id))?;
    }
    Ok(moved)
}

/// Take back row `id`, last seen `state` under `owner` (as stored): a run
/// claimed ahead that never started. Removes the row and restores its job's
/// slot (see the module documentation). False when the row moved on, or was
/// not claimed ahead.
pub fn withdraw(
    conn: &Conn,
    id: &ExecutionId,
    state: ExecState,
    owner: Option<&str>,
) -> Result<bool, LedgerError> {
    if !Move::Withdraw.from().contains(&state) {
        return Err(LedgerError::NotAllowed {
            id: id.clone(),
            mv: Move::Withdraw,
            from: state,
            to: state,
        });
    }
    conn.savepoint(|tx| {
        // The compare-and-set first, as a write: the transaction takes the
        // write lock (waiting out the busy timeout) before it reads. A read
        // first would have to upgrade, which fails at once when another
        // connection wrote in between (SQLITE_BUSY_SNAPSHOT).
        let n = tx.execute(
            "UPDATE executions SET state = state
             WHERE id = ?1 AND state = ?2 AND owner IS NOT DISTINCT FROM CAST(?3 AS TEXT)",
            params![id.as_str(), state.as_str(), owner],
        )?;
        if n != 1 {
            return Ok(false);
        }
        let Some(claim) = staged_claim(tx, id)? else {
            return Ok(false);
        };
        tx.execute("DELETE FROM executions WHERE id = ?1", params![id.as_str()])?;
        // The claim's own trace on the job, undone only while it is still there.
        tx.execute(
            "UPDATE jobs SET next_run_at = ?2,
                 state = CASE WHEN CAST(?5 AS BIGINT) = 1 AND state = 'completed'
                              THEN 'active' ELSE state END
             WHERE id = ?1 AND next_run_at IS NOT DISTINCT FROM CAST(?3 AS BIGINT)
               AND anchor = ?4",
            params![
                claim.job_id.as_str(),
                to_ms(claim.slot),
                claim.next_run_at.map(to_ms),
                to_ms(claim.anchor),
                claim.completed,
            ],
        )?;
        tx.notify_jobs_changed()?;
        Ok(true)
    })
    .map_err(sql_err(id))
}

#[cfg(test)]
#[path = "staging_tests.rs"]
mod tests;
