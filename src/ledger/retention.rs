//! Retention of ledger rows: keep the newest `cron.ledger_retention` terminal
//! rows per job (spawned runs count per name). Active rows are never touched.
//! The alert outbox keeps as many finished deliveries per job (delivered or
//! given up; their attempts go with them); owed ones are never touched.

use crate::db::{Db, SqlResult};
use hermes_cron_core::run::usage::amounts;
use std::collections::BTreeMap;

/// What one job's deleted rows of one state add to its totals.
#[derive(Default)]
struct Folded {
    runs: i64,
    started: Option<i64>,
    succeeded: Option<i64>,
}

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
/// many. A job's deleted rows are added to its `pruned_run_totals` in the
/// same transaction (spawned runs, which have no job, are not: their names
/// are one per run). The rows are deleted and read back by one statement
/// (`RETURNING`): on PostgreSQL a run that ends meanwhile on another
/// connection would change the ranking between two statements, and a row
/// deleted but never counted.
pub(crate) fn prune_rows(db: &mut Db, keep: u32) -> SqlResult<u64> {
    let tx = db.immediate()?;
    let keep = i64::from(keep);
    let mut deleted = 0u64;
    let mut totals: BTreeMap<(String, String), Folded> = BTreeMap::new();
    let mut usage: BTreeMap<(String, &'static str), f64> = BTreeMap::new();
    tx.for_each(
        &format!(
            "DELETE FROM executions WHERE id IN ({DOOMED})
             RETURNING job_id, state, started_at, finished_at, usage"
        ),
        crate::params![keep],
        |r| {
            deleted += 1;
            let Some(job) = r.get::<_, Option<String>>("job_id")? else {
                return Ok(());
            };
            let reported = r
                .get::<_, Option<String>>("usage")?
                .and_then(|text| serde_json::from_str(&text).ok());
            for (kind, amount) in reported.as_ref().map(amounts).unwrap_or_default() {
                *usage.entry((job.clone(), kind)).or_default() += amount;
            }
            let state: String = r.get("state")?;
            let succeeded = state == "succeeded";
            let t = totals.entry((job, state)).or_default();
            t.runs += 1;
            t.started = t.started.max(r.get::<_, Option<i64>>("started_at")?);
            if succeeded {
                t.succeeded = t.succeeded.max(r.get::<_, Option<i64>>("finished_at")?);
            }
            Ok(())
        },
    )?;
    let fold =
        format!(
        "INSERT INTO pruned_run_totals (job_id, state, runs, last_started_at, last_succeeded_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (job_id, state) DO UPDATE SET
             runs = pruned_run_totals.runs + excluded.runs,
             last_started_at = {},
             last_succeeded_at = {}",
        later("pruned_run_totals.last_started_at", "excluded.last_started_at"),
        later("pruned_run_totals.last_succeeded_at", "excluded.last_succeeded_at"),
    );
    for ((job, state), t) in &totals {
        tx.execute(
            &fold,
            crate::params![job.as_str(), state.as_str(), t.runs, t.started, t.succeeded],
        )?;
    }
    for ((job, kind), amount) in &usage {
        tx.execute(
            "INSERT INTO pruned_usage_totals (job_id, kind, amount) VALUES (?1, ?2, ?3)
             ON CONFLICT (job_id, kind) DO UPDATE SET
                 amount = pruned_usage_totals.amount + excluded.amount",
            crate::params![job.as_str(), *kind, *amount],
        )?;
    }
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
