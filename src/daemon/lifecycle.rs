//! `state/lifecycle.jsonl`: one line per gateway start and exit, with the
//! reason (`signal`, `loop_liveness_watchdog`, `fatal: ...`).

use crate::home::Home;
use crate::schedule::Instant;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

/// One lifecycle event.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LifecycleLine {
    pub event: String,
    pub at: Instant,
    pub pid: u32,
    pub start_time: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub version: String,
}

/// Append one line (best effort: a full disk must not stop an exit).
pub fn record(home: &Home, event: &str, at: Instant, reason: Option<&str>, exit_code: Option<i32>) {
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
    let Ok(mut text) = serde_json::to_string(&line) else {
        return;
    };
    text.push('\n');
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(home.lifecycle_file());
    if let Ok(mut f) = file {
        let _ = f.write_all(text.as_bytes());
        let _ = f.sync_data();
    }
}

/// Every line of the record (for tests and `status`).
pub fn read_all(home: &Home) -> Vec<LifecycleLine> {
    std::fs::read_to_string(home.lifecycle_file())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
