//! The gateway watching itself, on threads of their own so that a wedged
//! event loop cannot silence them:
//!
//! | file | owns |
//! |---|---|
//! | `watchdog.rs` | the loop watchdog (an OS thread probing the runtime; exit 75 after the strikes) |
//! | `dump.rs` | the forensic dump it writes first |
//! | `deadman.rs` | the dead-man ping: a ping while the gateway is healthy, so a monitor outside notices when they stop |
//! | `farewell.rs` | ending the process from another thread: one exit, one lifecycle line |
//! | `stop_signals.rs` | SIGTERM and SIGINT, taken by a thread of their own |
//! | `heartbeat.rs` | the heartbeat thread (the file's format is `hermes_cron_core::health`) |
//! | `lifecycle.rs` | the start and exit lines of the lifecycle record |
//! | `instance.rs` | one gateway per home; a home fit to run from |
//! | `notify.rs` | systemd's notify protocol (`READY=1`, `WATCHDOG=1`, `STATUS=`) |

pub(super) mod deadman;
pub(super) mod dump;
pub(super) mod farewell;
pub(super) mod heartbeat;
pub(super) mod instance;
pub(super) mod lifecycle;
pub(super) mod notify;
pub(super) mod stop_signals;
pub(super) mod watchdog;
