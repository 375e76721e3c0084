//! Writing the ledger: inserting rows and moving them on.
//!
//! Every update is a compare-and-set: `WHERE id = ? AND state = ? AND owner = ?`
//! with the state and owner the caller last saw. A lost compare-and-set means
//! somebody else moved the row first, and the caller backs off. Terminal rows
//! are also frozen by a trigger (see `db::migrations`).

use crate::db::to_ms;
use crate::ids::{ExecutionId, JobId};
use crate::process::Owner;
use crate::schedule::Instant;
use hermes_cron_core::run::{DispatchMode, ExecState, RunSpec, Source};
use rusqlite::{Connection, params};

/// Failed to write the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("ledger write failed for execution {id}")]
    Sql {
        id: String,
        #[source]
        source: rusqlite::Error,
    },
}

fn sql_err(id: &ExecutionId) -> impl FnOnce(rusqlite::Error) -> LedgerError + '_ {
    move |source| LedgerError::Sql {
        id: id.to_string(),
        source,
    }
}

/// A row to insert: a claim, or a never-ran record.
#[derive(Clone, Debug)]
pub struct NewRow<'a> {
    pub id: ExecutionId,
    pub job_id: Option<&'a JobId>,
    pub job_name: &'a str,
    pub scheduled_for: Option<Instant>,
    pub attempt: u32,
    pub source: Source,
    /// `Claimed`, or one of `Skipped`, `Missed`, `Refused`.
    pub state: ExecState,
    pub reason_code: Option<&'a str>,
    pub reason: Option<String>,
    pub spec: &'a RunSpec,
    /// The claimer; None for never-ran rows.
    pub owner: Option<Owner>,
    pub dispatch_mode: Option<DispatchMode>,
    pub dispatch_cause: Option<&'a str>,
    pub output_path: Option<String>,
    pub now: Instant,
}

/// Insert a row. Returns false when the occurrence already has a row
/// (`UNIQUE(job_id, scheduled_for, attempt)`): somebody claimed it first.
pub fn insert_row(conn: &Connection, row: &NewRow<'_>) -> Result<bool, LedgerError> {
    let finished = row.state.is_terminal().then(|| to_ms(row.now));
    let n = conn
        .prepare_cached(
            "INSERT INTO executions (id, job_id, job_name, scheduled_for, attempt, source, state,
                 reason_code, reason, spec, owner, claimed_by, dispatch_mode, dispatch_cause,
                 claimed_at, finished_at, output_path)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14, ?15, ?16)
             ON CONFLICT (job_id, scheduled_for, attempt) DO NOTHING",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                row.id.as_str(),
                row.job_id.map(|j| j.as_str()),
                row.job_name,
                row.scheduled_for.map(to_ms),
                row.attempt,
                row.source.as_str(),
                row.state.as_str(),
                row.reason_code,
                row.reason,
                row.spec.to_json(),
                row.owner.map(|o| o.to_string()),
                row.dispatch_mode.map(|m| m.as_str()),
                row.dispatch_cause,
                to_ms(row.now),
                finished,
                row.output_path,
            ])
        })
        .map_err(sql_err(&row.id))?;
    Ok(n == 1)
}

/// A worker taking over its claimed row.
#[derive(Clone, Debug)]
pub struct Adoption<'a> {
    pub worker: Owner,
    pub mode: DispatchMode,
    pub cause: Option<&'a str>,
    pub unit: Option<&'a str>,
    pub started_at: Instant,
}

/// `claimed -> running`, if the row is still claimed by `expected_owner`.
pub fn adopt(
    conn: &Connection,
    id: &ExecutionId,
    expected_owner: &str,
    a: &Adoption<'_>,
) -> Result<bool, LedgerError> {
    let n = conn
        .prepare_cached(
            "UPDATE executions SET state = 'running', owner = ?3, pid = ?4, pid_start = ?5,
                 dispatch_mode = ?6, dispatch_cause = ?7, unit = ?8, started_at = ?9,
                 heartbeat_at = ?9
             WHERE id = ?1 AND state = 'claimed' AND owner = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                id.as_str(),
                expected_owner,
                a.worker.to_string(),
                a.worker.process.pid,
                a.worker.process.start as i64,
                a.mode.as_str(),
                a.cause,
                a.unit,
                to_ms(a.started_at),
            ])
        })
        .map_err(sql_err(id))?;
    Ok(n == 1)
}

/// A running worker's liveness stamp.
pub fn heartbeat(
    conn: &Connection,
    id: &ExecutionId,
    owner: &Owner,
    at: Instant,
) -> Result<bool, LedgerError> {
    let n = conn
        .prepare_cached(
            "UPDATE executions SET heartbeat_at = ?3
             WHERE id = ?1 AND state = 'running' AND owner = ?2",
        )
        .and_then(|mut stmt| stmt.execute(params![id.as_str(), owner.to_string(), to_ms(at)]))
        .map_err(sql_err(id))?;
    Ok(n == 1)
}

/// How a row ends.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub state: Option<ExecState>,
    pub reason_code: Option<String>,
    pub reason: Option<String>,
    pub finished_at: Option<Instant>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: Option<u64>,
    pub max_rss_kb: Option<u64>,
    pub output_bytes: Option<u64>,
    pub output_truncated: Option<bool>,
    pub dispatch_mode: Option<DispatchMode>,
    pub dispatch_cause: Option<String>,
    /// When set, a retry of this occurrence is owed at this instant.
    pub retry_at: Option<Instant>,
}

impl Outcome {
    /// An outcome in `state` with a reason, finished at `at`.
    pub fn with_reason(
        state: ExecState,
        code: &str,
        reason: impl Into<String>,
        at: Instant,
    ) -> Outcome {
        Outcome {
            state: Some(state),
            reason_code: Some(code.to_string()),
            reason: Some(reason.into()),
            finished_at: Some(at),
            ..Outcome::default()
        }
    }
}

/// `running -> terminal` by the worker that owns it; queues a retry when owed.
/// One transaction, so a retry is owed exactly when the failure is recorded.
pub fn finish(
    conn: &Connection,
    id: &ExecutionId,
    owner: &Owner,
    outcome: &Outcome,
) -> Result<bool, LedgerError> {
    resolve(
        conn,
        id,
        ExecState::Running,
        Some(&owner.to_string()),
        outcome,
    )
}

/// Move a `from` row (claimed or running) owned by `expected_owner` to the
/// outcome's terminal state. Used by workers, sweeps, refusals and stall kills.
pub fn resolve(
    conn: &Connection,
    id: &ExecutionId,
    from: ExecState,
    expected_owner: Option<&str>,
    outcome: &Outcome,
) -> Result<bool, LedgerError> {
    let state = outcome.state.unwrap_or(ExecState::Unknown);
    debug_assert!(state.is_terminal() && !from.is_terminal());
    in_savepoint(conn, |tx| {
        resolve_in(tx, id, from, expected_owner, state, outcome)
    })
    .map_err(sql_err(id))
}

/// Run `f` inside a savepoint: a transaction of its own in autocommit mode,
/// or a nested one inside the caller's transaction.
///
/// On any failure the connection is left as it was found. In autocommit mode
/// the final `RELEASE` is the commit, and a commit that fails (a full disk, a
/// lock held past the busy timeout) leaves the transaction open: every later
/// write on the connection would silently join it and never be committed,
/// and every later `BEGIN` would fail. So the whole transaction is rolled back.
fn in_savepoint<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let outermost = conn.is_autocommit();
    conn.execute_batch("SAVEPOINT ledger_write")?;
    let result = f(conn).and_then(|v| conn.execute_batch("RELEASE ledger_write").map(|()| v));
    if result.is_err() {
        let undo = if outermost {
            "ROLLBACK"
        } else {
            "ROLLBACK TO ledger_write; RELEASE ledger_write"
        };
        let _ = conn.execute_batch(undo);
    }
    result
}

fn resolve_in(
    tx: &Connection,
    id: &ExecutionId,
    from: ExecState,
    expected_owner: Option<&str>,
    state: ExecState,
    outcome: &Outcome,
) -> rusqlite::Result<bool> {
    let n = tx
        .prepare_cached(
            "UPDATE executions SET state = ?4, reason_code = ?5, reason = ?6, finished_at = ?7,
                 exit_code = ?8, signal = ?9, duration_ms = ?10, max_rss_kb = ?11,
                 output_bytes = ?12, output_truncated = ?13,
                 dispatch_mode = COALESCE(?14, dispatch_mode),
                 dispatch_cause = COALESCE(?15, dispatch_cause)
             WHERE id = ?1 AND state = ?2 AND owner IS ?3",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                id.as_str(),
                from.as_str(),
                expected_owner,
                state.as_str(),
                outcome.reason_code,
                outcome.reason,
                outcome.finished_at.map(to_ms),
                outcome.exit_code,
                outcome.signal,
                outcome.duration_ms.map(|v| v as i64),
                outcome.max_rss_kb.map(|v| v as i64),
                outcome.output_bytes.map(|v| v as i64),
                outcome.output_truncated,
                outcome.dispatch_mode.map(|m| m.as_str()),
                outcome.dispatch_cause,
            ])
        })?;
    if n == 1
        && let (Some(at), true) = (outcome.retry_at, state.is_retryable())
    {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO retry_queue (execution_id, job_id, due_at)
                 SELECT id, job_id, ?2 FROM executions WHERE id = ?1 AND job_id IS NOT NULL",
        )?
        .execute(params![id.as_str(), to_ms(at)])?;
    }
    Ok(n == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn regression_a_failed_commit_does_not_leave_the_connection_in_a_transaction() {
        // Rollback journal: a commit needs the EXCLUSIVE lock, which a reader
        // holding SHARED denies; the RELEASE that commits then fails BUSY.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t (x INTEGER);")
            .unwrap();
        writer.busy_timeout(Duration::from_millis(50)).unwrap();
        let reader = Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM t;")
            .unwrap();

        let failed = in_savepoint(&writer, |c| c.execute("INSERT INTO t VALUES (1)", []));
        assert!(failed.is_err(), "the commit should meet the reader's lock");
        assert!(
            writer.is_autocommit(),
            "a failed commit left the writer inside an open transaction"
        );

        reader.execute_batch("COMMIT").unwrap();
        in_savepoint(&writer, |c| c.execute("INSERT INTO t VALUES (2)", [])).unwrap();
        drop(writer);
        let n: i64 = reader
            .query_row("SELECT count(*) FROM t WHERE x = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "the later write was committed");
    }
}
