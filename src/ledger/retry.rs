//! Owed retries: `retry_queue` holds one row per failed attempt whose job's
//! policy owes another. [`queue`] is the only writer of new entries (called
//! by `terminal::conclude` as a row becomes `failed` or `timed_out`); a claim
//! [`take`]s each one it turns into a new attempt.

use super::read::{columns_of, execution_from_row};
use crate::db::{from_ms, to_ms};
use crate::ids::ExecutionId;
use crate::schedule::Timestamp;
use hermes_cron_core::run::{ExecState, Execution, RunSpec};
use rusqlite::{Connection, OptionalExtension, params};

/// A retry that is owed now.
#[derive(Clone, Debug)]
pub(crate) struct DueRetry {
    /// The failed attempt.
    pub failed: Execution,
}

/// Queue the retry row `id` is owed after ending in `state` at `at`, if its
/// policy (the spec snapshot on the row) owes one; true when it does.
/// Spawned runs (no job) are never retried.
pub(super) fn queue(
    tx: &Connection,
    id: &ExecutionId,
    state: ExecState,
    at: Timestamp,
) -> rusqlite::Result<bool> {
    let row: Option<(String, u32)> = tx
        .prepare_cached(
            "SELECT spec, attempt FROM executions WHERE id = ?1 AND job_id IS NOT NULL",
        )?
        .query_row([id.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((spec, attempt)) = row else {
        return Ok(false);
    };
    let Ok(spec) = serde_json::from_str::<RunSpec>(&spec) else {
        return Ok(false);
    };
    let Some(due) = spec.retry_policy().next_attempt_at(state, attempt, at) else {
        return Ok(false);
    };
    tx.prepare_cached(
        "INSERT OR IGNORE INTO retry_queue (execution_id, job_id, due_at)
             SELECT id, job_id, ?2 FROM executions WHERE id = ?1",
    )?
    .execute(params![id.as_str(), to_ms(due)])?;
    Ok(true)
}

/// Take an owed retry off the queue (inside the claim that honours it).
pub fn take(tx: &Connection, failed: &ExecutionId) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM retry_queue WHERE execution_id = ?1")?
        .execute([failed.as_str()])?;
    Ok(())
}

/// Retries whose backoff has passed, oldest first. A paused job's retries
/// wait in the queue until it is resumed.
pub(crate) fn due_retries(
    conn: &Connection,
    now: Timestamp,
    limit: usize,
) -> rusqlite::Result<Vec<DueRetry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {}, q.due_at AS due_at FROM retry_queue q
         JOIN executions e ON e.id = q.execution_id
         JOIN jobs j ON j.id = q.job_id AND j.state != 'paused'
         WHERE q.due_at <= ?1 ORDER BY q.due_at LIMIT ?2",
        columns_of("e")
    ))?;
    let rows = stmt.query_map(params![to_ms(now), limit as i64], |row| {
        Ok(DueRetry {
            failed: execution_from_row(row)?,
        })
    })?;
    rows.collect()
}

/// When the earliest owed retry is due.
pub(crate) fn next_retry_at(conn: &Connection) -> rusqlite::Result<Option<Timestamp>> {
    let ms: Option<i64> = conn
        .prepare_cached(
            "SELECT MIN(q.due_at) FROM retry_queue q
             JOIN jobs j ON j.id = q.job_id AND j.state != 'paused'",
        )?
        .query_row([], |r| r.get(0))?;
    Ok(ms.map(from_ms))
}
