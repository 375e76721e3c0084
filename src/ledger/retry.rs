//! Owed retries: `retry_queue` holds one row per failed attempt whose job's
//! policy owes another. [`queue`] is the only writer of new entries (called
//! by `terminal::conclude` as a row becomes `failed` or `timed_out`); a claim
//! [`take`]s each one it turns into a new attempt.

use super::read::{columns_of, execution_from_row};
use crate::db::{Conn, SqlResult};
use crate::db::{from_ms, to_ms};
use crate::ids::ExecutionId;
use crate::params;
use crate::schedule::Timestamp;
use crate::store::HostFilter;
use hermes_cron_core::run::{ExecState, Execution, RunSpec};

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
    tx: &Conn,
    id: &ExecutionId,
    state: ExecState,
    at: Timestamp,
) -> SqlResult<bool> {
    let row: Option<(String, u32)> = tx.query_opt(
        "SELECT spec, attempt FROM executions WHERE id = ?1 AND job_id IS NOT NULL",
        params![id.as_str()],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let Some((spec, attempt)) = row else {
        return Ok(false);
    };
    let Ok(spec) = serde_json::from_str::<RunSpec>(&spec) else {
        return Ok(false);
    };
    let Some(due) = spec.retry_policy().next_attempt_at(state, attempt, at) else {
        return Ok(false);
    };
    tx.execute(
        "INSERT INTO retry_queue (execution_id, job_id, due_at)
             SELECT id, job_id, ?2 FROM executions WHERE id = ?1
         ON CONFLICT DO NOTHING",
        params![id.as_str(), to_ms(due)],
    )?;
    tx.notify_jobs_changed()?;
    Ok(true)
}

/// Take an owed retry off the queue (inside the claim that honours it).
pub fn take(tx: &Conn, failed: &ExecutionId) -> SqlResult<()> {
    tx.execute(
        "DELETE FROM retry_queue WHERE execution_id = ?1",
        params![failed.as_str()],
    )?;
    Ok(())
}

/// Retries whose backoff has passed, oldest first. A paused job's retries
/// wait in the queue until it is resumed.
pub(crate) fn due_retries(
    conn: &Conn,
    now: Timestamp,
    limit: usize,
    host: &HostFilter,
) -> SqlResult<Vec<DueRetry>> {
    conn.query_map(
        &format!(
            "SELECT {}, q.due_at AS due_at FROM retry_queue q
             JOIN executions e ON e.id = q.execution_id
             JOIN jobs j ON j.id = q.job_id AND j.state != 'paused'
             WHERE q.due_at <= ?1 AND {} ORDER BY q.due_at LIMIT ?2",
            columns_of("e"),
            HostFilter::sql("j", 3)
        ),
        params![to_ms(now), limit as i64, host.host, host.labels],
        |row| {
            Ok(DueRetry {
                failed: execution_from_row(row)?,
            })
        },
    )
}

/// When the earliest owed retry is due.
pub(crate) fn next_retry_at(conn: &Conn, host: &HostFilter) -> SqlResult<Option<Timestamp>> {
    let ms: Option<i64> = conn.query_row(
        &format!(
            "SELECT MIN(q.due_at) FROM retry_queue q
             JOIN jobs j ON j.id = q.job_id AND j.state != 'paused'
             WHERE {}",
            HostFilter::sql("j", 1)
        ),
        params![host.host, host.labels],
        |r| r.get(0),
    )?;
    Ok(ms.map(from_ms))
}
