//! Processes on this host: identity by pid and start time, liveness,
//! signals, sessions.

mod identity;
mod session;
mod signal;
mod workers;

pub use hermes_cron_core::run::{Owner, OwnerRole, ProcessIdentity, signal_name};
pub use identity::{current, identity_of, is_alive, owner};
pub use session::{session_members, signal_session};
pub use signal::{
    KILL_GRACE, KILL_GRACE_ENV, kill_grace, signal_group, signal_pid, unblock_all_signals,
    wait_for_signal,
};
pub use workers::live_workers;
