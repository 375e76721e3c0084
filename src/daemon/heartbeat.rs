//! `state/gateway.heartbeat`: a JSON snapshot rewritten atomically by its own
//! thread on a fixed period. It carries the loop's own progress counter and
//! when that counter last moved, so a frozen loop shows as a stale counter
//! even while the file itself keeps being rewritten.

use super::state::{Capability, Shared, TickSummary};
use crate::clock::Clock;
use crate::fsutil::write_atomic;
use crate::home::Home;
use crate::schedule::Instant;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the heartbeat is written (default).
pub const HEARTBEAT_PERIOD: Duration = Duration::from_secs(5);
/// Test knob: the period in milliseconds.
pub const HEARTBEAT_PERIOD_ENV: &str = "HERMES_CRON_HEARTBEAT_PERIOD_MS";
/// A loop counter that has not moved for this many periods means STALLED.
pub const STALL_PERIODS: u32 = 3;

/// The heartbeat file's contents.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Heartbeat {
    pub pid: u32,
    pub start_time: u64,
    pub started_at: Instant,
    pub updated_at: Instant,
    pub period_ms: u64,
    pub loop_counter: u64,
    /// When the heartbeat thread last saw `loop_counter` change.
    pub loop_counter_changed_at: Instant,
    pub last_tick: TickSummary,
    pub capability: Capability,
    pub active_runs: u64,
    pub version: String,
}

impl Heartbeat {
    /// Whether the loop counter has been still for [`STALL_PERIODS`] periods at `now`.
    pub fn loop_stalled(&self, now: Instant) -> bool {
        let still = (now - self.loop_counter_changed_at)
            .to_std()
            .unwrap_or_default();
        still > Duration::from_millis(self.period_ms) * STALL_PERIODS
    }

    /// Whether the file itself is older than [`STALL_PERIODS`] periods at `now`.
    pub fn file_stale(&self, now: Instant) -> bool {
        let age = (now - self.updated_at).to_std().unwrap_or_default();
        age > Duration::from_millis(self.period_ms) * STALL_PERIODS
    }
}

/// The configured period.
pub fn period() -> Duration {
    std::env::var(HEARTBEAT_PERIOD_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (10..=600_000).contains(ms))
        .map(Duration::from_millis)
        .unwrap_or(HEARTBEAT_PERIOD)
}

/// Read the heartbeat file of `home`.
pub fn read(home: &Home) -> Option<Heartbeat> {
    serde_json::from_slice(&std::fs::read(home.heartbeat_file()).ok()?).ok()
}

/// Start the heartbeat thread; it stops when `stop` is set.
pub fn spawn(
    home: Home,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let period = period();
    std::thread::Builder::new()
        .name("heartbeat".into())
        .spawn(move || {
            let me = crate::process::current();
            let started_at = clock.now();
            let mut last_counter = u64::MAX;
            let mut changed_at = started_at;
            while !stop.load(Ordering::Relaxed) {
                let now = clock.now();
                let counter = shared.counter();
                if counter != last_counter {
                    last_counter = counter;
                    changed_at = now;
                }
                let beat = Heartbeat {
                    pid: me.pid,
                    start_time: me.start,
                    started_at,
                    updated_at: now,
                    period_ms: period.as_millis() as u64,
                    loop_counter: counter,
                    loop_counter_changed_at: changed_at,
                    last_tick: shared.tick(),
                    capability: shared.capability(),
                    active_runs: shared.active_runs.load(Ordering::Relaxed),
                    version: env!("CARGO_PKG_VERSION").into(),
                };
                if let Ok(json) = serde_json::to_vec_pretty(&beat) {
                    // A full disk leaves the old file (its age tells the truth).
                    let _ = write_atomic(&home.heartbeat_file(), &json);
                }
                std::thread::sleep(period);
            }
        })
}
