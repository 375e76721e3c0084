//! The named moves of a row already in the ledger, one function each, every
//! one a compare-and-set on the state and owner the caller last saw (see
//! `hermes_cron_core::run::Move` for the table of allowed states). A move that
//! returns false lost the compare-and-set: somebody else moved the row first,
//! and the caller backs off.
//!
//! | move | from | to | by |
//! |---|---|---|---|
//! | [`adopt`] | claimed | running | the worker, on its go |
//! | [`heartbeat`] | running | running | the worker, every few seconds |
//! | [`finish`] | running | succeeded, failed, timed_out, cancelled | the worker |
//! | [`refuse`] | claimed | refused (`scope_unavailable`) | the dispatcher |
//! | [`spawn_failed`] | claimed | failed (`spawn_failed`) | the dispatcher |
//! | [`unadopted`] | claimed | failed (`worker_exited`) | the reconciler: the worker ended before adopting |
//! | [`orphaned`] | claimed, running | unknown | the reconciler: the owner died |
//! | [`stalled`] | running | timed_out (`stalled`) | the reconciler: a live worker fell silent |
//! | [`abandoned`] | claimed | missed (`gateway_stopped`) | the gateway, stopping with claims undispatched |
//! | [`take_over`] | claimed (a lost host's) | claimed (the survivor's, on its host) | a surviving gateway, when the claimer's host lost its lease |
//! | [`orphaned`] with `host_lost` | running (a lost host's) | unknown | a surviving gateway, the same |
//!
//! And one write beside a row, not a move of it: [`late_outcome`], the
//! outcome a worker on a host declared lost reports after its row was
//! recorded `unknown` (`host_lost`). The row stays as the survivor decided.

use super::error::{LedgerError, sql_err};
use super::outbox;
use super::terminal::{Conclusion, conclude};
use crate::db::to_ms;
use crate::db::{Conn, SqlResult};
use crate::ids::ExecutionId;
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::placement::CauseCode;
use hermes_cron_core::run::{
    DispatchMode, ExecState, Execution, Finished, Move, Owner, ReasonCode, RowOwner,
};

/// A worker taking over its claimed row (`adopt`, or `stage` ahead of its
/// instant): who it is and how it was placed.
#[derive(Clone, Debug)]
pub struct Taking<'a> {
    pub worker: Owner,
    pub mode: DispatchMode,
    /// Why the mode is not `scoped`.
    pub cause: Option<CauseCode>,
    pub unit: Option<&'a str>,
    /// When: `adopt` records it as the start, `stage` as the first
    /// heartbeat (the run starts at its release).
    pub at: Timestamp,
}

fn stored(row: &Execution) -> Option<&str> {
    row.owner.as_ref().map(|o| o.as_stored())
}

/// `claimed -> running`: the worker adopts row `id`, still claimed by
/// `claimer` (as the worker read it). A job with a ping URL owes its
/// `/start` ping, written in the same transaction.
pub fn adopt(
    conn: &Conn,
    id: &ExecutionId,
    claimer: &RowOwner,
    a: &Taking<'_>,
) -> Result<bool, LedgerError> {
    conn.savepoint(|tx| {
        let adopted = take_claimed(
            tx,
            id,
            claimer,
            "UPDATE executions SET state = 'running', owner = ?3, pid = ?4, pid_start = ?5,
                 dispatch_mode = ?6, dispatch_cause = ?7, unit = ?8, started_at = ?9,
                 heartbeat_at = ?9
             WHERE id = ?1 AND state = 'claimed' AND owner IS NOT DISTINCT FROM ?2",
            a,
        )?;
        if adopted {
            outbox::on_adopt(tx, id, a.at)?;
        }
        Ok(adopted)
    })
    .map_err(sql_err(id))
}

/// The compare-and-set of a worker taking its claimed row: `sql` (`adopt`'s
/// or `stage`'s) with the row as ?1, the claimer as ?2, and `t` as ?3..?9.
pub(super) fn take_claimed(
    conn: &Conn,
    id: &ExecutionId,
    claimer: &RowOwner,
    sql: &str,
    t: &Taking<'_>,
) -> SqlResult<bool> {
    let n = conn.execute(
        sql,
        params![
            id.as_str(),
            claimer.as_stored(),
            t.worker.to_string(),
            t.worker.process.pid,
            t.worker.process.start as i64,
            t.mode.as_str(),
            t.cause.map(|c| c.as_str()),
            t.unit,
            to_ms(t.at),
        ],
    )?;
    Ok(n == 1)
}

/// A running worker's liveness stamp.
pub fn heartbeat(
    conn: &Conn,
    id: &ExecutionId,
    worker: &Owner,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let n = conn
        .execute(
            "UPDATE executions SET heartbeat_at = ?3
             WHERE id = ?1 AND state = 'running' AND owner = ?2",
            params![id.as_str(), worker.to_string(), to_ms(at)],
        )
        .map_err(sql_err(id))?;
    Ok(n == 1)
}

/// `running -> succeeded | failed | timed_out | cancelled`, by the worker
/// that owns the row, at `at`. A retry is queued when the job owes one.
pub fn finish(
    conn: &Conn,
    id: &ExecutionId,
    worker: &Owner,
    f: &Finished,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let owner = worker.to_string();
    let mut c = Conclusion::new(
        Move::Finish,
        id,
        ExecState::Running,
        Some(&owner),
        f.end.state(),
        at,
    );
    c.reason_code = f.end.reason().map(|(code, _)| code);
    c.reason = f.reason_text();
    c.finished = Some(f);
    conclude(conn, &c)
}

/// A claimed row (`id`, claimed by `claimer`) ending by `mv`.
fn conclude_claim(
    conn: &Conn,
    mv: Move,
    id: &ExecutionId,
    claimer: &Owner,
    end: (ExecState, ReasonCode, String),
    at: Timestamp,
    dispatch: (Option<DispatchMode>, Option<CauseCode>),
) -> Result<bool, LedgerError> {
    let owner = claimer.to_string();
    let (state, code, reason) = end;
    let mut c =
        Conclusion::new(mv, id, ExecState::Claimed, Some(&owner), state, at).because(code, reason);
    (c.dispatch_mode, c.dispatch_cause) = dispatch;
    conclude(conn, &c)
}

/// `row` (as its caller read it) ending by `mv`.
fn conclude_row(
    conn: &Conn,
    mv: Move,
    row: &Execution,
    end: (ExecState, ReasonCode, String),
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let (state, code, reason) = end;
    let c = Conclusion::new(mv, &row.id, row.state, stored(row), state, at).because(code, reason);
    conclude(conn, &c)
}

/// `claimed -> refused`: a restart-safe scope was required and none could
/// be made (`cause` is why).
pub fn refuse(
    conn: &Conn,
    id: &ExecutionId,
    claimer: &Owner,
    cause: CauseCode,
    message: String,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let end = (ExecState::Refused, ReasonCode::ScopeUnavailable, message);
    conclude_claim(
        conn,
        Move::Refuse,
        id,
        claimer,
        end,
        at,
        (None, Some(cause)),
    )
}

/// `claimed -> failed`: the worker for `mode` could not be started.
pub(crate) fn spawn_failed(
    conn: &Conn,
    id: &ExecutionId,
    claimer: &Owner,
    mode: DispatchMode,
    message: String,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let end = (ExecState::Failed, ReasonCode::SpawnFailed, message);
    conclude_claim(
        conn,
        Move::SpawnFailed,
        id,
        claimer,
        end,
        at,
        (Some(mode), None),
    )
}

/// `claimed -> failed`: the worker ended before adopting `row`, so the
/// command never started; retried per the job's policy.
pub(crate) fn unadopted(
    conn: &Conn,
    row: &Execution,
    message: String,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let end = (ExecState::Failed, ReasonCode::WorkerExited, message);
    conclude_row(conn, Move::Unadopted, row, end, at)
}

/// `claimed | running -> unknown`: the owner of `row` died without a
/// terminal state. `code` says which owner (`claimer_died`, `worker_died`,
/// `gateway_restart`, `no_owner`). Never retried.
pub fn orphaned(
    conn: &Conn,
    row: &Execution,
    code: ReasonCode,
    message: String,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    debug_assert!(matches!(
        code,
        ReasonCode::ClaimerDied
            | ReasonCode::WorkerDied
            | ReasonCode::GatewayRestart
            | ReasonCode::NoOwner
            | ReasonCode::HostLost
    ));
    conclude_row(
        conn,
        Move::Orphaned,
        row,
        (ExecState::Unknown, code, message),
        at,
    )
}

/// `running -> timed_out`: the live worker of `row` stopped stamping its
/// heartbeat (the caller then stops it); retried per the job's policy.
pub fn stalled(
    conn: &Conn,
    row: &Execution,
    message: String,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let end = (ExecState::TimedOut, ReasonCode::Stalled, message);
    conclude_row(conn, Move::Stalled, row, end, at)
}

/// `claimed -> missed`: the claimer of `row` died (or lost track of it)
/// before a worker adopted it, so it never ran, and its catch-up policy
/// does not run it now (`claimer_died`).
pub(crate) fn never_started(
    conn: &Conn,
    row: &Execution,
    message: String,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let end = (ExecState::Missed, ReasonCode::ClaimerDied, message);
    conclude_row(conn, Move::Abandoned, row, end, at)
}

/// `claimed -> missed`: the gateway is stopping and never dispatched it.
pub fn abandoned(
    conn: &Conn,
    id: &ExecutionId,
    claimer: &Owner,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let why = "the gateway stopped before dispatching it; it never ran".to_string();
    let end = (ExecState::Missed, ReasonCode::GatewayStopped, why);
    conclude_claim(conn, Move::Abandoned, id, claimer, end, at, (None, None))
}

/// `claimed -> claimed`: the surviving gateway `to` (on host `host`) takes
/// over `row`, claimed on a host whose lease expired, compare-and-setting on
/// the lost claimer: from this commit on, a worker the lost host released
/// for it fails its adoption and runs nothing. Its output goes to
/// `output_path` (a file of the survivor's home) from then on.
pub fn take_over(
    conn: &Conn,
    row: &Execution,
    to: &Owner,
    host: &str,
    output_path: Option<&str>,
) -> Result<bool, LedgerError> {
    super::error::check(&row.id, Move::TakeOver, Some(row.state), ExecState::Claimed)?;
    let n = conn
        .execute(
            "UPDATE executions SET owner = ?3, claimed_by = ?3, host = ?4,
                 output_path = COALESCE(?5, output_path)
             WHERE id = ?1 AND state = 'claimed' AND owner IS NOT DISTINCT FROM ?2",
            params![
                row.id.as_str(),
                stored(row),
                to.to_string(),
                host,
                output_path
            ],
        )
        .map_err(sql_err(&row.id))?;
    Ok(n == 1)
}

/// A late outcome: what the worker `worker` (on `host`) measured after its
/// row `id` was recorded `unknown` (`host_lost`) by a survivor. Written once
/// (a second report is ignored), and only when the row is still that
/// worker's `host_lost` row.
pub fn late_outcome(
    conn: &Conn,
    id: &ExecutionId,
    worker: &Owner,
    host: &str,
    f: &Finished,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let (exit_code, signal) = match f.exit {
        Some(hermes_cron_core::run::Exit::Code(code)) => (Some(code), None),
        Some(hermes_cron_core::run::Exit::Signal(sig)) => (None, Some(sig)),
        None => (None, None),
    };
    let n = conn
        .execute(
            "INSERT INTO late_outcomes (execution_id, host, state, reason_code, reason, exit_code,
                 signal, duration_ms, finished_at)
             SELECT id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 FROM executions
             WHERE id = ?1 AND state = 'unknown' AND reason_code = 'host_lost' AND owner = ?2
             ON CONFLICT DO NOTHING",
            params![
                id.as_str(),
                worker.to_string(),
                host,
                f.end.state().as_str(),
                f.end.reason().map(|(code, _)| code.as_str()),
                f.reason_text(),
                exit_code,
                signal,
                f.duration_ms.map(|v| v as i64),
                to_ms(at),
            ],
        )
        .map_err(sql_err(id))?;
    Ok(n == 1)
}
