//! Reading the ledger: one row, filtered lists newest first, and the active
//! rows the claim and the reconciler look at.

use crate::db::{Conn, Params, Row, SqlError, SqlResult};
use crate::db::{from_ms, to_ms};
use crate::ids::{ExecutionId, JobId};
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::run::{
    DispatchMode, ExecState, Execution, ReasonCode, RowOwner, RunSpec, Source,
};
use hermes_cron_core::text_enum::UnknownWord;

const COLUMNS: &str = "id, job_id, job_name, scheduled_for, attempt, source, state, reason_code,
    reason, owner, claimed_by, dispatch_mode, dispatch_cause, unit, pid, pid_start, claimed_at, started_at,
    finished_at, heartbeat_at, exit_code, signal, duration_ms, max_rss_kb, output_path,
    output_bytes, output_truncated, host, usage";

/// The row's columns as `e.<column>`, for queries that join.
pub(super) fn columns_of(table: &str) -> String {
    COLUMNS
        .split(',')
        .map(|c| format!("{table}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_col<T>(row: &Row, col: &str) -> SqlResult<T>
where
    T: std::str::FromStr<Err = UnknownWord>,
{
    let text: String = row.get(col)?;
    text.parse()
        .map_err(|e: UnknownWord| SqlError::Column(format!("{col}: {e}")))
}

pub(super) fn execution_from_row(row: &Row) -> SqlResult<Execution> {
    let ms = |col: &str| -> SqlResult<Option<Timestamp>> {
        Ok(row.get::<_, Option<i64>>(col)?.map(from_ms))
    };
    let unsigned = |col: &str| -> SqlResult<Option<u64>> {
        Ok(row.get::<_, Option<i64>>(col)?.map(|v| v.max(0) as u64))
    };
    let mode: Option<String> = row.get("dispatch_mode")?;
    Ok(Execution {
        id: ExecutionId::from_string(row.get::<_, String>("id")?),
        job_id: row
            .get::<_, Option<String>>("job_id")?
            .map(JobId::from_string),
        job_name: row.get("job_name")?,
        scheduled_for: ms("scheduled_for")?,
        attempt: row.get("attempt")?,
        source: parse_col::<Source>(row, "source")?,
        state: parse_col::<ExecState>(row, "state")?,
        // A code this version does not know (a newer writer) reads as none;
        // the reason text still says why.
        reason_code: row
            .get::<_, Option<String>>("reason_code")?
            .and_then(|c| c.parse::<ReasonCode>().ok()),
        reason: row.get("reason")?,
        owner: row.get::<_, Option<String>>("owner")?.map(RowOwner::stored),
        claimed_by: row
            .get::<_, Option<String>>("claimed_by")?
            .map(RowOwner::stored),
        dispatch_mode: mode.and_then(|m| m.parse::<DispatchMode>().ok()),
        dispatch_cause: row
            .get::<_, Option<String>>("dispatch_cause")?
            .and_then(|c| c.parse().ok()),
        unit: row.get("unit")?,
        pid: row.get("pid")?,
        pid_start: unsigned("pid_start")?,
        claimed_at: from_ms(row.get("claimed_at")?),
        started_at: ms("started_at")?,
        finished_at: ms("finished_at")?,
        heartbeat_at: ms("heartbeat_at")?,
        exit_code: row.get("exit_code")?,
        signal: row.get("signal")?,
        duration_ms: unsigned("duration_ms")?,
        max_rss_kb: unsigned("max_rss_kb")?,
        output_path: row.get("output_path")?,
        output_bytes: unsigned("output_bytes")?,
        output_truncated: row.get("output_truncated")?,
        host: row.get("host")?,
        // Written by this module's writer as a JSON object; anything else
        // (an older writer, a hand edit) reads as none.
        usage: row
            .get::<_, Option<String>>("usage")?
            .and_then(|text| serde_json::from_str(&text).ok()),
    })
}

fn collect(conn: &Conn, sql: &str, params: Params<'_>) -> SqlResult<Vec<Execution>> {
    conn.query_map(sql, params, execution_from_row)
}

/// One row and its run spec.
pub fn get_execution(conn: &Conn, id: &ExecutionId) -> SqlResult<Option<(Execution, RunSpec)>> {
    conn.query_opt(
        &format!("SELECT {COLUMNS}, spec FROM executions WHERE id = ?1"),
        params![id.as_str()],
        |row| {
            let exec = execution_from_row(row)?;
            let spec: String = row.get("spec")?;
            let spec: RunSpec =
                serde_json::from_str(&spec).map_err(|e| SqlError::Column(format!("spec: {e}")))?;
            Ok((exec, spec))
        },
    )
}

/// The shortest part of an id [`executions_matching`] looks for.
pub const MIN_ID_PART: usize = 4;

/// The rows (newest first, at most `limit`) whose id begins or ends with
/// `part` (hex digits and dashes, in any case, at least [`MIN_ID_PART`]
/// long): how a user gives an id by the part of it they copied. UUIDv7 ids
/// made in the same minute share their first characters, so the end is
/// usually the part that tells runs apart. None when `part` cannot be one.
pub fn executions_matching(conn: &Conn, part: &str, limit: usize) -> SqlResult<Vec<ExecutionId>> {
    let part = part.trim().to_ascii_lowercase();
    if part.len() < MIN_ID_PART || !part.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
        return Ok(Vec::new());
    }
    conn.query_map(
        "SELECT id FROM executions WHERE id LIKE ?1 || '%' OR id LIKE '%' || ?1
         ORDER BY id DESC LIMIT ?2",
        params![part, limit as i64],
        |row| Ok(ExecutionId::from_string(row.get::<_, String>("id")?)),
    )
}

/// Which rows `runs` lists.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    /// Rows of this job id, or (for spawned runs) with this job name.
    pub job: Option<(Option<JobId>, String)>,
    pub state: Option<ExecState>,
    /// Rows claimed at or after this instant.
    pub since: Option<Timestamp>,
    pub limit: usize,
}

/// Rows newest first.
pub fn list_executions(conn: &Conn, f: &RunFilter) -> SqlResult<Vec<Execution>> {
    let (job_id, job_name) = match &f.job {
        Some((id, name)) => (id.clone(), Some(name.clone())),
        None => (None, None),
    };
    collect(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM executions
             WHERE (CAST(?2 AS TEXT) IS NULL OR job_id = ?1
                    OR (CAST(?1 AS TEXT) IS NULL AND job_name = ?2)
                    OR (job_id IS NULL AND job_name = ?2))
               AND (CAST(?3 AS TEXT) IS NULL OR state = ?3)
               AND (CAST(?4 AS BIGINT) IS NULL OR claimed_at >= ?4)
             ORDER BY id DESC LIMIT ?5"
        ),
        params![
            job_id.as_ref().map(JobId::as_str),
            job_name,
            f.state.map(|s| s.as_str()),
            f.since.map(to_ms),
            f.limit as i64
        ],
    )
}

/// Every claimed, staged or running row.
pub fn active_runs(conn: &Conn) -> SqlResult<Vec<Execution>> {
    collect(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM executions WHERE state IN ('claimed', 'staged', 'running') ORDER BY id"
        ),
        params![],
    )
}

/// Claimed, staged or running rows claimed on `host` (and rows that name no host:
/// written before hosts were recorded, so by this one).
pub fn active_runs_on(conn: &Conn, host: &str) -> SqlResult<Vec<Execution>> {
    collect(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM executions
             WHERE state IN ('claimed', 'staged', 'running') AND (host = ?1 OR host IS NULL)
             ORDER BY id"
        ),
        params![host],
    )
}

/// Claimed, staged or running rows that name `host` (exactly).
pub(crate) fn active_runs_claimed_on(conn: &Conn, host: &str) -> SqlResult<Vec<Execution>> {
    collect(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM executions
             WHERE state IN ('claimed', 'staged', 'running') AND host = ?1 ORDER BY id"
        ),
        params![host],
    )
}

/// Claimed, staged or running rows of one job.
pub(crate) fn active_runs_for_job(conn: &Conn, job: &JobId) -> SqlResult<Vec<Execution>> {
    collect(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM executions
             WHERE state IN ('claimed', 'staged', 'running') AND job_id = ?1 ORDER BY id"
        ),
        params![job.as_str()],
    )
}

/// The newest slot of `job` from `at` on that has a row (any state, any
/// attempt), if one has.
pub(crate) fn latest_slot_from(
    conn: &Conn,
    job: &JobId,
    at: Timestamp,
) -> SqlResult<Option<Timestamp>> {
    let ms: Option<i64> = conn.query_row(
        "SELECT MAX(scheduled_for) FROM executions WHERE job_id = ?1 AND scheduled_for >= ?2",
        params![job.as_str(), to_ms(at)],
        |r| r.get(0),
    )?;
    Ok(ms.map(from_ms))
}

/// The ids of the rows recorded from Hermes's own runs (source `hermes`)
/// claimed at or after `since`.
pub(crate) fn hermes_run_ids_since(
    conn: &Conn,
    since: Timestamp,
) -> SqlResult<std::collections::HashSet<String>> {
    let ids = conn.query_map(
        "SELECT id FROM executions WHERE source = 'hermes' AND claimed_at >= ?1",
        params![to_ms(since)],
        |r| r.get::<_, String>(0),
    )?;
    Ok(ids.into_iter().collect())
}

/// The late outcome of row `id` (see `moves::late_outcome`), if one was
/// reported.
pub fn late_outcome_of(
    conn: &Conn,
    id: &ExecutionId,
) -> SqlResult<Option<hermes_cron_core::cluster::LateOutcome>> {
    conn.query_opt(
        "SELECT host, state, reason_code, reason, exit_code, signal, duration_ms, finished_at
         FROM late_outcomes WHERE execution_id = ?1",
        params![id.as_str()],
        |r| {
            Ok(hermes_cron_core::cluster::LateOutcome {
                host: r.get("host")?,
                state: r.get("state")?,
                reason_code: r.get("reason_code")?,
                reason: r.get("reason")?,
                exit_code: r.get("exit_code")?,
                signal: r.get("signal")?,
                duration_ms: r
                    .get::<_, Option<i64>>("duration_ms")?
                    .map(|v| v.max(0) as u64),
                finished_at: from_ms(r.get("finished_at")?),
            })
        },
    )
}
