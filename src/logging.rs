//! Logging: one line per event on stderr, readable under journald.
//!
//! `HERMES_CRON_LOG` sets the filter (default `info`). Under journald
//! (`JOURNAL_STREAM` set) lines carry no timestamp or colour; journald adds its own.

use tracing_subscriber::EnvFilter;

/// The environment variable holding the log filter.
pub const LOG_ENV: &str = "HERMES_CRON_LOG";

/// Install the global subscriber once; later calls do nothing.
pub fn init() {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let journald = std::env::var_os("JOURNAL_STREAM").is_some();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false);
    let _ = if journald {
        builder.without_time().try_init()
    } else {
        builder.try_init()
    };
}
