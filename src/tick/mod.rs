//! One claim pass: under `cron/.tick.lock`, find due occurrences and insert
//! their rows in one transaction; dispatch happens after the lock is released.

mod claim;
mod lock;
mod plan;

pub use claim::{
    ClaimContext, ClaimError, ClaimReport, ClaimedRun, NotRun, claim_due, claim_manual,
    claim_reboot,
};
pub use lock::{LockError, TickLock, TryLock};
pub use plan::{
    Decision, JobPlan, MAX_SLOTS_PER_PASS, ON_TIME, PlanInput, PlannedSlot, misfire_grace, plan_job,
};
