//! Resolving rows whose owner is gone: every `claimed` or `running` row
//! either has a live owner or becomes `unknown` with what was checked.

mod dead_owners;
mod startup;

pub use dead_owners::{Liveness, ProcLiveness, Resolved, judge_active, resolve_dead_owners};
pub use startup::{SweepReport, Verdict, startup_sweep};
