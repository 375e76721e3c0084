//! Retention of ledger rows: keep the newest `cron.ledger_retention` terminal
//! rows per job (spawned runs count per name). Active rows are never touched.
//! The alert outbox keeps as many finished deliveries per job (delivered or
//! given up; their attempts go with them); owed ones are never touched.

use crate::db::{Db, SqlResult};

/// Delete the terminal rows beyond the newest `keep` of each job; returns how many.
pub(crate) fn prune_rows(db: &mut Db, keep: u32) -> SqlResult<u64> {
    let tx = db.immediate()?;
    let deleted = tx.execute(
        "DELETE FROM executions WHERE id IN (
             SELECT id FROM (
                 SELECT id, ROW_NUMBER() OVER (
                     PARTITION BY COALESCE(job_id, 'spawn:' || job_name) ORDER BY id DESC) AS rn
                 FROM executions WHERE state NOT IN ('claimed', 'staged', 'running')
             ) AS ranked WHERE rn > ?1)",
        crate::params![i64::from(keep)],
    )? as u64;
    tx.execute(
        "DELETE FROM alert_deliveries WHERE id IN (
             SELECT id FROM (
                 SELECT id, ROW_NUMBER() OVER (PARTITION BY job_name ORDER BY id DESC) AS rn
                 FROM alert_deliveries WHERE state IN ('delivered', 'failed')
             ) AS ranked WHERE rn > ?1)",
        crate::params![i64::from(keep)],
    )?;
    tx.commit()?;
    Ok(deleted)
}
