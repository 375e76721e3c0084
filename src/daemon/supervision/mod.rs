//! The gateway watching itself, on threads of their own so that a wedged
//! event loop cannot silence them: the loop watchdog and its dump, the
//! dead-man ping, the exit path, the stop signals, the heartbeat, the
//! lifecycle record, the instance lock and `sd_notify`, a file each.

pub(super) mod deadman;
pub(super) mod dump;
pub(super) mod farewell;
pub(super) mod heartbeat;
pub(super) mod instance;
pub(super) mod lifecycle;
pub(super) mod notify;
pub(super) mod stop_signals;
pub(super) mod watchdog;
