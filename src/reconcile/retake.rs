//! Retaking a claim whose command never started ([`Judgement::Retake`]): its
//! claimer died, or the live gateway lost track of it while the ledger was
//! out of reach, and no worker adopted it. The occurrence is owed a run: the
//! gateway (or a `tick`) that judged it takes the claim over, by
//! compare-and-set on the claimer it read (`take_over`, as a survivor takes a
//! lost host's claims), and launches it; or records it `missed`
//! (`claimer_died`) when the job's catch-up policy would not run a slot that
//! late (`hermes_cron_core::reconcile::retake_fate`).
//!
//! [`Judgement::Retake`]: hermes_cron_core::reconcile::Judgement::Retake

use crate::db::Db;
use crate::home::Home;
use crate::ledger::{self, Execution, LedgerError, RunSpec};
use crate::process::Owner;
use crate::schedule::{Timestamp, Tz, ZoneTable};
use crate::store;
use hermes_cron_core::reconcile::{RetakeFate, RetakeJob, retake_fate};

/// Who retakes, and what it needs to judge the job's catch-up policy.
pub struct Retaker<'a> {
    pub home: &'a Home,
    /// The retaking process: the row's new owner.
    pub owner: Owner,
    /// This host's name.
    pub host: &'a str,
    /// `cron.catch_up_missed`.
    pub catch_up_missed: bool,
    pub zones: &'a ZoneTable,
    /// The zone of a job without one.
    pub fallback: Tz,
}

/// What became of one retaken claim.
#[derive(Debug)]
pub enum Retaken {
    /// Taken over: launch it (the row as read after the move, its spec).
    Run(Box<(Execution, RunSpec)>),
    /// Recorded `missed`.
    Missed(Box<Execution>, String),
    /// Moved on meanwhile (another process judged it first): nothing to do.
    Lost,
}

fn read_err(what: &'static str) -> impl FnOnce(crate::db::SqlError) -> LedgerError {
    move |source| LedgerError::Read { what, source }
}

/// Retake `row` (judged so for `why`) at `now`.
pub fn retake(
    db: &Db,
    r: &Retaker<'_>,
    row: &Execution,
    why: &str,
    now: Timestamp,
) -> Result<Retaken, LedgerError> {
    let conn = db.conn();
    // A job whose stored schedule no longer parses is as good as gone.
    let job = match &row.job_id {
        Some(id) => match store::get_job(conn, id) {
            Ok(job) => job,
            Err(store::StoreError::Sql(source)) => {
                return Err(read_err("the job of a retaken claim")(source));
            }
            Err(store::StoreError::Corrupt { .. }) => None,
        },
        None => None,
    };
    let wants = job.as_ref().map(|job| {
        let zone = r.zones.zone_or(job.tz.as_deref(), r.fallback);
        let slot = row.scheduled_for.unwrap_or(row.claimed_at);
        RetakeJob::of(job, r.catch_up_missed, zone, slot)
    });
    let fate = retake_fate(row, wants, why, now);
    crate::crash::point("sweep_before_resolve");
    match fate {
        RetakeFate::Missed { reason } => {
            Ok(if ledger::never_started(conn, row, reason.clone(), now)? {
                Retaken::Missed(Box::new(row.clone()), reason)
            } else {
                Retaken::Lost
            })
        }
        RetakeFate::Run => {
            let output = row.job_id.as_ref().map(|job| {
                r.home
                    .output_file(job.as_str(), row.id.as_str())
                    .to_string_lossy()
                    .into_owned()
            });
            if !ledger::take_over(conn, row, &r.owner, r.host, output.as_deref())? {
                return Ok(Retaken::Lost);
            }
            match ledger::get_execution(conn, &row.id).map_err(read_err("a retaken row"))? {
                Some(found) => Ok(Retaken::Run(Box::new(found))),
                None => Ok(Retaken::Lost),
            }
        }
    }
}
