//! The loop watchdog: an OS thread (not a task, so a wedged runtime cannot
//! wedge it) that every probe interval posts a probe into the runtime and
//! waits for the loop to answer. A handled probe resets the strikes; after
//! `max_strikes` consecutive misses it writes the forensic dump, appends
//! `reason=loop_liveness_watchdog` to the lifecycle record, and exits 75 so
//! systemd restarts the gateway.

use super::dump;
use super::lifecycle;
use super::state::Shared;
use crate::clock::Clock;
use crate::home::Home;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

/// Timing read from config at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchdogTiming {
    pub interval: Duration,
    pub timeout: Duration,
    pub max_strikes: u32,
}

/// The reason recorded when the watchdog fires.
pub const WATCHDOG_REASON: &str = "loop_liveness_watchdog";

/// Start the watchdog. `probe` asks the runtime to run the given closure; the
/// loop's answer is the closure running at all.
pub fn spawn(
    home: Home,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
    timing: WatchdogTiming,
    probe: impl Fn(Box<dyn FnOnce() + Send>) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("loop-watchdog".into())
        .spawn(move || {
            let mut strikes = 0u32;
            loop {
                std::thread::sleep(timing.interval);
                let (tx, rx) = mpsc::channel::<()>();
                let answered = shared.clone();
                probe(Box::new(move || {
                    answered.probes_answered.fetch_add(1, Ordering::Relaxed);
                    answered.bump();
                    let _ = tx.send(());
                }));
                match rx.recv_timeout(timing.timeout) {
                    Ok(()) => strikes = 0,
                    Err(_) => {
                        strikes += 1;
                        tracing::warn!(
                            strikes,
                            max = timing.max_strikes,
                            "the event loop did not answer a liveness probe within {:?}",
                            timing.timeout
                        );
                        if strikes >= timing.max_strikes {
                            fire(&home, &shared, clock.as_ref(), strikes);
                        }
                    }
                }
            }
        })
}

fn fire(home: &Home, shared: &Shared, clock: &dyn Clock, strikes: u32) -> ! {
    let now = clock.now();
    let reason = format!("{strikes} consecutive liveness probes unanswered");
    let path = dump::write(home, &reason, &shared.try_doing(), now);
    lifecycle::record(
        home,
        "exit",
        now,
        Some(WATCHDOG_REASON),
        Some(crate::exit::RESTART),
    );
    eprintln!(
        "hermes-cron gateway: event loop wedged ({reason}); dump at {}; exiting {} for a restart",
        path.map_or("(not written)".into(), |p| p.display().to_string()),
        crate::exit::RESTART
    );
    std::process::exit(crate::exit::RESTART);
}
