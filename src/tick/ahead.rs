//! The claim made ahead of an instant, for staging.
//!
//! ## Locking
//! As `claim.rs`: `cron/.hermes-cron.tick.lock` (non-blocking), then one
//! `BEGIN IMMEDIATE` transaction that claims the chosen instants' jobs and
//! advances them, commit, unlock.
//!
//! Each job due at a chosen instant is planned exactly as the claim at the
//! instant would plan it (`plan_job` with `now` = the instant: one on-time
//! slot that runs), except overlap, which is decided at the instant by the
//! gateway before it releases the run. A job with a run claimed ahead and
//! not yet started is left alone (one staged run per job at a time), and so
//! is a job whose plan would not simply run its slot.

use super::claim::{ClaimContext, ClaimError, begin_claim};
use crate::db::Db;
use crate::ids::{ExecutionId, JobId};
use crate::job::{CatchUp, JobState};
use crate::ledger::{self, ClaimedRun, NewClaim, Occurrence, RunSpec, Source, StagedClaim};
use crate::schedule::Timestamp;
use crate::store;
use hermes_cron_core::plan::{PlanInput, SlotFate, plan_job};
use std::collections::HashSet;

/// A run claimed ahead of its instant, and what its claim did to its job.
#[derive(Clone, Debug)]
pub struct ClaimedAhead {
    pub run: ClaimedRun,
    /// The instant it is due at (its slot).
    pub at: Timestamp,
    pub claim: StagedClaim,
    /// The job's overlap policy at the claim.
    pub overlap: crate::job::Overlap,
}

/// Claim, for staging, up to `limit` jobs due at `instants` (each after
/// `ctx.now`), leaving out the (job, slot) pairs in `skip`. `Ok(None)`
/// means another process holds the tick lock.
pub fn claim_ahead(
    db: &mut Db,
    ctx: &ClaimContext<'_>,
    instants: &[Timestamp],
    limit: usize,
    skip: &HashSet<(JobId, Timestamp)>,
) -> Result<Option<Vec<ClaimedAhead>>, ClaimError> {
    if limit == 0 || instants.is_empty() {
        return Ok(Some(Vec::new()));
    }
    // The tick lock and transaction, as a claim pass takes them.
    let Some((lock, tx)) = begin_claim(db, ctx.home)? else {
        return Ok(None);
    };
    let host = ctx.host.filter();
    let mut out = Vec::new();
    for &at in instants.iter().filter(|at| **at > ctx.now) {
        let left = limit.saturating_sub(out.len());
        if left == 0 {
            break;
        }
        for job in store::stageable_jobs_at(&tx, at, left, &host)? {
            if skip.contains(&(job.id.clone(), at)) {
                continue;
            }
            let zone = super::claim::zone_of(&job, ctx);
            let catch_up = job
                .catch_up
                .unwrap_or(CatchUp::default_for(ctx.config.cron.catch_up_missed));
            let plan = plan_job(&PlanInput {
                job: &job,
                zone,
                now: at,
                catch_up,
                has_active: false,
            });
            let simple = matches!(
                plan.slots.as_slice(),
                [slot] if slot.scheduled_for == at && slot.fate == SlotFate::Run { source: Source::Schedule }
            );
            if !simple {
                continue;
            }
            let id = ExecutionId::generate();
            let spec = RunSpec::of_job(&job, &ctx.config.cron);
            let output_path = ctx
                .home
                .output_file(job.id.as_str(), id.as_str())
                .to_string_lossy()
                .into_owned();
            let claim = NewClaim {
                occurrence: Occurrence {
                    id: &id,
                    job_id: Some(&job.id),
                    job_name: &job.name,
                    scheduled_for: Some(at),
                    attempt: 1,
                    source: Source::Schedule,
                    spec: &spec,
                    at: ctx.now,
                    host: &ctx.host.name,
                },
                owner: ctx.owner,
                output_path: Some(output_path),
            };
            let staged = StagedClaim {
                job_id: job.id.clone(),
                slot: at,
                next_run_at: plan.next_run_at,
                anchor: plan.anchor,
                completed: plan.state == JobState::Completed,
                job_updated_at: job.updated_at,
            };
            if !ledger::claim_ahead(&tx, &claim, &staged)? {
                continue;
            }
            store::update_job_schedule_state(
                &tx,
                &job.id,
                plan.next_run_at,
                plan.anchor,
                &plan.state,
            )?;
            out.push(ClaimedAhead {
                run: ClaimedRun {
                    id,
                    job_id: Some(job.id.clone()),
                    job_name: job.name.clone(),
                    scheduled_for: Some(at),
                    attempt: 1,
                    source: Source::Schedule,
                    spec,
                    owner: ctx.owner,
                    replace: Vec::new(),
                },
                at,
                claim: staged,
                overlap: job.overlap,
            });
        }
    }
    tx.commit()?;
    drop(lock);
    crate::crash::point("after_stage_claim");
    Ok(Some(out))
}
