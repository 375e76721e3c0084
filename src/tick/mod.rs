//! One claim pass: under `cron/.tick.lock`, find due occurrences and insert
//! their rows in one transaction; dispatch happens after the lock is released.
//! The planning is pure (`hermes_cron_core::plan`).

mod ahead;
mod claim;
mod lock;

pub use ahead::{ClaimedAhead, claim_ahead};
pub use claim::{ClaimContext, ClaimError, ClaimReport, NotRun, claim_due, claim_manual};

pub(crate) use claim::claim_reboot;
pub use hermes_cron_core::plan::{
    JobPlan, MAX_SLOTS_PER_PASS, ON_TIME, PlanInput, PlannedSlot, SlotFate, misfire_grace, plan_job,
};
pub use lock::LockError;
