//! Logging: one line per event on stderr, readable under journald.
//!
//! `HERMES_CRON_LOG` sets the filter (default `info`). Under journald
//! (`JOURNAL_STREAM` set) lines carry no timestamp or colour; journald adds
//! its own. The worker's stderr is a file (`logs/hermes-cron-worker.log`), so its lines
//! always carry a timestamp ([`init_worker`]).
//!
//! Events about one run happen inside its [`run_span`], so every line says
//! which job and execution it is about (`run{job=brief execution=…}: started`)
//! without repeating the fields at each event.

use crate::ids::ExecutionId;
use tracing_subscriber::EnvFilter;

/// The environment variable holding the log filter.
pub(crate) const LOG_ENV: &str = "HERMES_CRON_LOG";

fn install(timestamps: bool) {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false);
    let _ = if timestamps {
        builder.try_init()
    } else {
        builder.without_time().try_init()
    };
}

/// Install the global subscriber once; later calls do nothing.
pub fn init() {
    install(std::env::var_os("JOURNAL_STREAM").is_none());
}

/// The worker's subscriber: always timestamped (its stderr is a file, even
/// when the gateway that started it logs to journald).
pub fn init_worker() {
    install(true);
}

/// The span of one run: the job and execution every event in it is about.
pub(crate) fn run_span(job: &str, execution: &ExecutionId) -> tracing::Span {
    tracing::info_span!("run", job = %crate::text::one_line(job, 64), execution = %execution)
}
