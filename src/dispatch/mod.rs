//! Dispatch: from a claimed row to a running worker (scoped, degraded or
//! in-process), or a refusal.

mod decide;
mod held;
mod launcher;
mod worker_bin;

pub use decide::{Cause, Requirement, Verdict, decide, fix_text, mode_of, personalize, with_fix};
pub use held::{Attach, HeldWorker, WorkerCall};
pub use launcher::{
    DBUS_TIMEOUT_ENV, DispatchError, Dispatched, Launcher, UNAVAILABLE_RETRY, cause_of,
    degraded_warned, session_manager,
};
pub use worker_bin::{WORKER_ENV, WorkerNotFound, locate_worker};
