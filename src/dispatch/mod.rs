//! Dispatch: from a claimed row to a running worker (scoped, degraded or
//! in-process), or a refusal. `launcher.rs` is the path of one run, now or
//! staged; the decision itself is pure (`hermes_cron_core::placement`).
//! The other files: ARCHITECTURE.md, "Module map".

mod fix;
mod gate;
mod held;
mod launcher;
mod spawn;
mod stop;
mod worker_bin;

pub use fix::{cause, probe_capability};

pub(crate) use fix::fix_text;
pub use gate::{AtGate, Gate, Gated, Release, gate};
pub use held::{Attach, HeldWorker, WorkerCall};
pub use hermes_cron_core::placement::{Cause, Placement, Requirement, place};
pub use launcher::{DispatchError, Dispatched, Launched, Launcher, Start};
pub use spawn::{SpawnError, SpawnRequest, Spawned, spawn_worker};
pub use stop::{stop_run, stop_runs};
pub use worker_bin::{WORKER_ENV, WorkerNotFound, locate_worker};
