//! Dispatch: from a claimed row to a running worker (scoped, degraded or
//! in-process), or a refusal. `launcher.rs` is the path of one run; the
//! decision itself is pure (`hermes_cron_core::placement`); `held.rs` the
//! worker held at its gate; `stage.rs` the same path ahead of the instant,
//! ending with the stage line (the worker then holds its row until its
//! release); `replace.rs` overlap `replace`; `fix.rs` the causes and their
//! fix; `spawn.rs` the `spawn` command's runs (kanban workers), also as a
//! library call.

mod fix;
mod held;
mod launcher;
mod replace;
mod spawn;
mod stage;
mod worker_bin;

pub use fix::{cause, probe_capability};

pub(crate) use fix::fix_text;
pub use held::{Attach, DETACH_ARG, HeldWorker, WorkerCall};
pub use hermes_cron_core::placement::{Cause, Placement, Requirement, place};
pub use launcher::{DispatchError, Dispatched, Launcher, session_manager};
pub(crate) use replace::stop_previous;
pub use spawn::{SpawnError, SpawnRequest, Spawned, spawn_worker};
pub use stage::{Staged, StagedWorker};
pub use worker_bin::{WORKER_ENV, WorkerNotFound};
