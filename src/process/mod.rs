//! Processes on this host: identity by pid and start time, liveness,
//! signals, sessions, the descriptor limit staging needs, and what a job
//! starts with (`start_attrs`).

mod account;
mod cgroup;
mod ended;
pub mod fd_limit;
mod identity;
mod inherit;
mod session;
mod signal;
pub mod start_attrs;
mod workers;

pub use account::account;
pub(crate) use cgroup::own_unit_members;
pub(crate) use ended::ended_within;
pub use hermes_cron_core::run::{Owner, OwnerRole, ProcessIdentity, signal_name};
pub(crate) use identity::{current, pid_lives};
pub use identity::{identity_of, is_alive, owner};
pub(crate) use inherit::only_stdio_on_exec;
pub use session::signal_session;
pub(crate) use session::{group_members, has_live_child, is_stopped, session_members, session_of};
pub use signal::signal_pid;
pub(crate) use signal::{signal_group, unblock_all_signals, wait_for_signal};
pub use workers::live_workers;
