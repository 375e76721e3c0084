//! Dispatch: from a claimed row to a running worker (scoped, degraded or
//! in-process), or a refusal. The decision itself is pure
//! (`hermes_cron_core::placement`).

mod fix;
mod held;
mod launcher;
mod worker_bin;

pub use fix::{capability_detail, cause, cause_of, fix_text, personalize};
pub use held::{Attach, HeldWorker, WorkerCall};
pub use hermes_cron_core::placement::{Cause, Placement, Requirement, place};
pub use launcher::{
    DBUS_TIMEOUT_ENV, DispatchError, Dispatched, Launcher, UNAVAILABLE_RETRY, degraded_warned,
    session_manager,
};
pub use worker_bin::{WORKER_ENV, WorkerNotFound, locate_worker};
