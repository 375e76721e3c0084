//! The one way into a terminal state. Every move that ends a row (the
//! worker's `finish`, and `refuse`, `spawn_failed`, `unadopted`, `orphaned`,
//! `stalled`, `abandoned`) and every row inserted terminal (`not_run`,
//! `ran_outside`) passes
//! through here, inside the transaction that makes it terminal:
//!
//! 1. the move is checked against its allowed states ([`Move::allows`]);
//! 2. the row is changed by compare-and-set on the state and owner the
//!    caller last saw (`WHERE id = ? AND state = ? AND owner IS ?`): a lost
//!    compare-and-set means somebody else moved it first, nothing is written,
//!    and the move returns false;
//! 3. a retry is queued when the job's policy owes one (`retry::queue`, the
//!    only place that queues retries);
//! 4. [`entered`] is called: the observation point for whatever must happen,
//!    in the same transaction, whenever a row becomes terminal. It feeds the
//!    alert outbox (`outbox.rs`): the job's incident moves, and the alerts
//!    and pings it owes are written with the row, so none is lost.
//!
//! Terminal rows are also frozen by a trigger (see `db::migrations`).

use super::error::{LedgerError, check, sql_err};
use super::insert::{NewNotRun, NewRanOutside, Occurrence, Ran, insert};
use super::outbox;
use super::retry;
use crate::db::to_ms;
use crate::db::{Conn, SqlResult};
use crate::ids::ExecutionId;
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::placement::CauseCode;
use hermes_cron_core::run::{DispatchMode, ExecState, Finished, Move, ReasonCode};

/// A row that just became terminal, as [`entered`] sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entered<'a> {
    pub id: &'a ExecutionId,
    pub mv: Move,
    pub state: ExecState,
    pub reason_code: Option<ReasonCode>,
    pub at: Timestamp,
    /// A retry of the occurrence was queued in the same transaction.
    pub retry_owed: bool,
}

/// The observation point: called once for every row that becomes terminal,
/// inside the transaction that makes it so (an error rolls the move back).
/// The alert outbox observes it.
fn entered(tx: &Conn, event: &Entered<'_>) -> SqlResult<()> {
    outbox::on_terminal(
        tx,
        &outbox::Ended {
            id: event.id,
            state: event.state,
            reason_code: event.reason_code,
            retry_owed: event.retry_owed,
            at: event.at,
        },
    )?;
    tracing::trace!(
        execution = %event.id,
        state = %event.state,
        by = event.mv.name(),
        reason = event.reason_code.map_or("-", |r| r.as_str()),
        at = %event.at,
        "terminal"
    );
    Ok(())
}

/// How a row ends: the columns a terminal move writes.
#[derive(Clone, Debug)]
pub(super) struct Conclusion<'a> {
    pub mv: Move,
    pub id: &'a ExecutionId,
    /// The state the caller last saw.
    pub from: ExecState,
    /// The owner the caller last saw, as stored (None: the row has none).
    pub owner: Option<&'a str>,
    pub state: ExecState,
    pub reason_code: Option<ReasonCode>,
    pub reason: Option<String>,
    pub at: Timestamp,
    /// What the worker measured (its own `finish` only).
    pub finished: Option<&'a Finished>,
    /// Set when the move knows the dispatch better than the row does.
    pub dispatch_mode: Option<DispatchMode>,
    pub dispatch_cause: Option<CauseCode>,
}

impl<'a> Conclusion<'a> {
    /// Row `id`, last seen in `from` under `owner`, ends in `state` at `at`
    /// by `mv`, with nothing else to say yet.
    pub(super) fn new(
        mv: Move,
        id: &'a ExecutionId,
        from: ExecState,
        owner: Option<&'a str>,
        state: ExecState,
        at: Timestamp,
    ) -> Conclusion<'a> {
        Conclusion {
            mv,
            id,
            from,
            owner,
            state,
            reason_code: None,
            reason: None,
            at,
            finished: None,
            dispatch_mode: None,
            dispatch_cause: None,
        }
    }

    /// With a reason code and text.
    pub(super) fn because(mut self, code: ReasonCode, reason: String) -> Conclusion<'a> {
        self.reason_code = Some(code);
        self.reason = Some(reason);
        self
    }
}

/// Make the row terminal. Returns false when the compare-and-set lost.
pub(super) fn conclude(conn: &Conn, c: &Conclusion<'_>) -> Result<bool, LedgerError> {
    debug_assert!(c.state.is_terminal());
    check(c.id, c.mv, Some(c.from), c.state)?;
    conn.savepoint(|tx| {
        if !update(tx, c)? {
            return Ok(false);
        }
        let retry_owed = c.state.is_retryable() && retry::queue(tx, c.id, c.state, c.at)?;
        entered(
            tx,
            &Entered {
                id: c.id,
                mv: c.mv,
                state: c.state,
                reason_code: c.reason_code,
                at: c.at,
                retry_owed,
            },
        )?;
        Ok(true)
    })
    .map_err(sql_err(c.id))
}

fn update(tx: &Conn, c: &Conclusion<'_>) -> SqlResult<bool> {
    let f = c.finished;
    let (exit_code, signal) = match f.and_then(|f| f.exit) {
        Some(hermes_cron_core::run::Exit::Code(code)) => (Some(code), None),
        Some(hermes_cron_core::run::Exit::Signal(sig)) => (None, Some(sig)),
        None => (None, None),
    };
    let n = tx.execute(
        "UPDATE executions SET state = ?4, reason_code = ?5, reason = ?6, finished_at = ?7,
             exit_code = ?8, signal = ?9, duration_ms = ?10, max_rss_kb = ?11,
             output_bytes = ?12, output_truncated = ?13,
             dispatch_mode = COALESCE(?14, dispatch_mode),
             dispatch_cause = COALESCE(?15, dispatch_cause),
             usage = ?16
         WHERE id = ?1 AND state = ?2 AND owner IS NOT DISTINCT FROM ?3",
        params![
            c.id.as_str(),
            c.from.as_str(),
            c.owner,
            c.state.as_str(),
            c.reason_code.map(|r| r.as_str()),
            c.reason,
            to_ms(c.at),
            exit_code,
            signal,
            f.and_then(|f| f.duration_ms).map(|v| v as i64),
            f.and_then(|f| f.max_rss_kb).map(|v| v as i64),
            f.and_then(|f| f.output_bytes).map(|v| v as i64),
            f.and_then(|f| f.output_truncated),
            c.dispatch_mode.map(|m| m.as_str()),
            c.dispatch_cause.map(|c| c.as_str()),
            f.and_then(|f| f.usage.as_ref()).map(|u| u.to_string()),
        ],
    )?;
    Ok(n == 1)
}

/// Insert a row that will not run. False: the occurrence already has a row.
pub fn not_run(conn: &Conn, r: &NewNotRun<'_>) -> Result<bool, LedgerError> {
    let reason = (r.reason_code, r.reason.as_str());
    insert_terminal(
        conn,
        &r.occurrence,
        Move::NotRun,
        r.state,
        reason,
        Ran::default(),
    )
}

/// Record a run Hermes made by itself. False: it is recorded already.
pub fn ran_outside(conn: &Conn, r: &NewRanOutside<'_>) -> Result<bool, LedgerError> {
    let reason = (ReasonCode::RanOutside, r.reason.as_str());
    insert_terminal(
        conn,
        &r.occurrence,
        Move::RanOutside,
        r.state,
        reason,
        r.ran,
    )
}

/// Insert the occurrence's row terminal by `mv`, through the observation
/// point. False: the occurrence (or the id) already has a row.
fn insert_terminal(
    conn: &Conn,
    o: &Occurrence<'_>,
    mv: Move,
    state: ExecState,
    reason: (ReasonCode, &str),
    ran: Ran,
) -> Result<bool, LedgerError> {
    check(o.id, mv, None, state)?;
    conn.savepoint(|tx| {
        let n = insert(tx, o, state, Some(reason), None, None, ran)?;
        if n == 1 {
            entered(
                tx,
                &Entered {
                    id: o.id,
                    mv,
                    state,
                    reason_code: Some(reason.0),
                    at: ran.finished_at.unwrap_or(o.at),
                    retry_owed: false,
                },
            )?;
        }
        Ok(n == 1)
    })
    .map_err(sql_err(o.id))
}

#[cfg(test)]
mod tests {
    use crate::db::Db;

    /// Terminal rows are frozen by a trigger too (`db::migrations`), not
    /// only by the moves' compare-and-set.
    #[test]
    fn terminal_rows_are_frozen_by_trigger() {
        let db = Db::open_in_memory().unwrap();
        db.conn()
            .execute(
                "INSERT INTO executions (id, job_id, job_name, source, state, spec, claimed_at)
                 VALUES ('e1', 'j1', 'n', 'manual', 'succeeded', '{}', 0)",
                crate::params![],
            )
            .unwrap();
        let err = db
            .conn()
            .execute(
                "UPDATE executions SET state = 'failed' WHERE id = 'e1'",
                crate::params![],
            )
            .unwrap_err();
        assert!(err.to_string().contains("never change"), "{err}");
    }
}
