//! Retention of ledger rows: keep the newest `cron.ledger_retention` terminal
//! rows per job (spawned runs count per name). Active rows are never touched.
//! The alert outbox keeps as many finished deliveries per job (delivered or
//! given up; their attempts go with them); owed ones are never touched.

use crate::db::{Db, SqlResult};

/// The ids of the terminal rows beyond the newest `?1` of each job.
const DOOMED: &str = "SELECT id FROM (
         SELECT id, ROW_NUMBER() OVER (
             PARTITION BY COALESCE(job_id, 'spawn:' || job_name) ORDER BY id DESC) AS rn
         FROM executions WHERE state NOT IN ('claimed', 'staged', 'running')
     ) AS ranked WHERE rn > ?1";

/// The later of two nullable instants (SQLite's two-argument `max` is null
/// when either is; PostgreSQL has `GREATEST`): `{a}`, `{b}` are replaced.
const LATER: &str = "COALESCE(CASE WHEN {a} >= {b} THEN {a} ELSE {b} END, {a}, {b})";

fn later(a: &str, b: &str) -> String {
    LATER.replace("{a}", a).replace("{b}", b)
}

/// Delete the terminal rows beyond the newest `keep` of each job; returns how
/// many. A job's deleted rows are first added to its `pruned_run_totals`
/// (spawned runs, which have no job, are not: their names are one per run).
pub(crate) fn prune_rows(db: &mut Db, keep: u32) -> SqlResult<u64> {
    let tx = db.immediate()?;
    let keep = i64::from(keep);
    tx.execute(
        &format!(
            "INSERT INTO pruned_run_totals (job_id, state, runs, last_started_at, last_succeeded_at)
             SELECT job_id, state, COUNT(*), MAX(started_at),
                    MAX(CASE WHEN state = 'succeeded' THEN finished_at END)
             FROM executions WHERE job_id IS NOT NULL AND id IN ({DOOMED})
             GROUP BY job_id, state
             ON CONFLICT (job_id, state) DO UPDATE SET
                 runs = pruned_run_totals.runs + excluded.runs,
                 last_started_at = {},
                 last_succeeded_at = {}",
            later("pruned_run_totals.last_started_at", "excluded.last_started_at"),
            later("pruned_run_totals.last_succeeded_at", "excluded.last_succeeded_at"),
        ),
        crate::params![keep],
    )?;
    let deleted = tx.execute(
        &format!("DELETE FROM executions WHERE id IN ({DOOMED})"),
        crate::params![keep],
    )? as u64;
    tx.execute(
        "DELETE FROM alert_deliveries WHERE id IN (
             SELECT id FROM (
                 SELECT id, ROW_NUMBER() OVER (PARTITION BY job_name ORDER BY id DESC) AS rn
                 FROM alert_deliveries WHERE state IN ('delivered', 'failed')
             ) AS ranked WHERE rn > ?1)",
        crate::params![keep],
    )?;
    tx.commit()?;
    Ok(deleted)
}
