//! Processes on this host: identity by pid and start time, liveness,
//! signals, sessions, and the descriptor limit staging needs.

mod ended;
pub mod fd_limit;
mod identity;
mod session;
mod signal;
mod workers;

pub(crate) use ended::ended_within;
pub use hermes_cron_core::run::{Owner, OwnerRole, ProcessIdentity, signal_name};
pub(crate) use identity::current;
pub use identity::{identity_of, is_alive, owner};
pub use session::signal_session;
pub use signal::signal_pid;
pub(crate) use signal::{signal_group, unblock_all_signals, wait_for_signal};
pub use workers::live_workers;
