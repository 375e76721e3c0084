//! The heartbeat thread: a JSON snapshot (`hermes_cron_core::health::Heartbeat`)
//! rewritten atomically by its own thread on a fixed period. It carries the loop's own progress counter and
//! when that counter last moved, so a frozen loop shows as a stale counter
//! even while the file itself keeps being rewritten.

use crate::clock::Clock;
use crate::daemon::state::Shared;
use crate::home::Home;
use crate::state_files;
use hermes_cron_core::health::Heartbeat;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Start the heartbeat thread, writing every `period`; it stops when `stop`
/// is set. `zone`: the zone the gateway reads jobs without one of their own in.
pub(crate) fn spawn(
    home: Home,
    zone: String,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
    period: Duration,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("heartbeat".into())
        .spawn(move || {
            let me = crate::process::current();
            let started_at = clock.now();
            let mut last_counter = u64::MAX;
            let mut changed_at = started_at;
            // What `run` and `spawn` from a shell give the jobs they start.
            let job_start = crate::process::start_attrs::of_this_process();
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
                    zone: Some(zone.clone()),
                    hermes: shared.hermes(),
                    job_start: Some(job_start.clone()),
                };
                // A full disk leaves the old file (its age tells the truth).
                let _ = state_files::write_heartbeat(&home, &beat);
                std::thread::sleep(period);
            }
        })
}
