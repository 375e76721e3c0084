//! A claimed occurrence, ready to launch: what a claim hands the launcher.

use super::owner::Owner;
use super::snapshot::RunSpec;
use super::state::{Execution, Source};
use crate::ids::{ExecutionId, JobId};
use crate::schedule::Timestamp;

/// A claimed occurrence, ready to launch.
#[derive(Clone, Debug)]
pub struct ClaimedRun {
    /// The row's id.
    pub id: ExecutionId,
    /// The job it runs for (None: a run of no job).
    pub job_id: Option<JobId>,
    /// The job's name at the claim.
    pub job_name: String,
    /// The slot it is for (None: no slot).
    pub scheduled_for: Option<Timestamp>,
    /// Which attempt at the slot, 1 first.
    pub attempt: u32,
    /// Why the row exists.
    pub source: Source,
    /// What the worker runs, as claimed.
    pub spec: RunSpec,
    /// The claimer, which the worker must find as the row's owner.
    pub owner: Owner,
    /// Runs to stop before this one starts (overlap `replace`).
    pub replace: Vec<Execution>,
}

impl ClaimedRun {
    /// A claimed run of no job (`spawn`, a command alert).
    pub fn spawned(id: ExecutionId, job_name: String, spec: RunSpec, owner: Owner) -> ClaimedRun {
        ClaimedRun {
            id,
            job_id: None,
            job_name,
            scheduled_for: None,
            attempt: 1,
            source: Source::Spawn,
            spec,
            owner,
            replace: Vec::new(),
        }
    }

    /// The claimed `row` (with its `spec`), taken over by `owner`: a lost
    /// host's claim, or one of this host's that never started.
    pub fn taken_over(row: Execution, spec: RunSpec, owner: Owner) -> ClaimedRun {
        ClaimedRun {
            id: row.id,
            job_id: row.job_id,
            job_name: row.job_name,
            scheduled_for: row.scheduled_for,
            attempt: row.attempt,
            source: row.source,
            spec,
            owner,
            replace: Vec::new(),
        }
    }
}
