//! `state/lifecycle.jsonl`: one line per gateway start and exit, with the
//! reason (`signal`, `loop_liveness_watchdog`, `fatal: ...`).

use crate::home::Home;
use crate::schedule::Timestamp;
use crate::state_files;
use hermes_cron_core::health::LifecycleLine;

/// Append one line (best effort: a full disk must not stop an exit).
pub(crate) fn record(
    home: &Home,
    event: &str,
    at: Timestamp,
    reason: Option<&str>,
    exit_code: Option<i32>,
) {
    let me = crate::process::current();
    let line = LifecycleLine {
        event: event.into(),
        at,
        pid: me.pid,
        start_time: me.start,
        reason: reason.map(str::to_string),
        exit_code,
        version: env!("CARGO_PKG_VERSION").into(),
    };
    state_files::append_lifecycle(home, &line);
}
