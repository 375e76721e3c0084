//! Resolving rows whose owner is gone: every `claimed` or `running` row
//! either has a live owner or becomes `unknown` with what was checked; a
//! row whose worker ended before adopting it becomes `failed`.

mod dead_owners;
mod startup;
mod unadopted;

pub use dead_owners::{Liveness, ProcLiveness, Resolved, judge_active, resolve_dead_owners};
pub use startup::{SweepReport, Verdict, startup_sweep};
pub use unadopted::{WORKER_EXITED, describe_wait_status, resolve_unadopted};
