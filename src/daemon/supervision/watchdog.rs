//! The loop watchdog: an OS thread (not a task, so a wedged runtime cannot
//! wedge it) that every probe interval posts a probe into the runtime and
//! waits for the loop to answer. A handled probe resets the strikes; after
//! `max_strikes` consecutive misses it writes the forensic dump, appends
//! `reason=loop_liveness_watchdog` to the lifecycle record, and exits 75 so
//! systemd restarts the gateway.
//!
//! ## Locking
//! The watchdog never waits on anything the loop may hold: it reads shared
//! state with `try_lock` only, and its messages for stderr go through
//! [`farewell::say_bounded`] (a loop wedged inside a write to stderr holds
//! the stderr lock; a `tracing` call from here would wedge the watchdog too).

use super::dump;
use super::farewell;
use crate::clock::Clock;
use crate::daemon::state::Shared;
use crate::home::Home;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

/// Timing read from config at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WatchdogTiming {
    pub interval: Duration,
    pub timeout: Duration,
    pub max_strikes: u32,
}

/// The reason recorded when the watchdog fires.
pub(crate) const WATCHDOG_REASON: &str = "loop_liveness_watchdog";

/// Start the watchdog. `probe` asks the runtime to run the given closure; the
/// loop's answer is the closure running at all.
pub(crate) fn spawn(
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
                if shared.exiting() {
                    return;
                }
                let (tx, rx) = mpsc::channel::<()>();
                let answered = shared.clone();
                // Counted apart from the loop's progress counter: the probe
                // proves the runtime turns, not that the loop does.
                probe(Box::new(move || {
                    answered.probes_answered.fetch_add(1, Ordering::Relaxed);
                    let _ = tx.send(());
                }));
                match rx.recv_timeout(timing.timeout) {
                    Ok(()) => strikes = 0,
                    Err(_) => {
                        strikes += 1;
                        if strikes >= timing.max_strikes {
                            fire(&home, &shared, clock.as_ref(), strikes);
                        }
                        farewell::say_bounded(
                            format!(
                                "the event loop did not answer a liveness probe within {:?} (strike {strikes} of {})",
                                timing.timeout, timing.max_strikes
                            ),
                            Duration::ZERO,
                        );
                    }
                }
            }
        })
}

fn fire(home: &Home, shared: &Shared, clock: &dyn Clock, strikes: u32) -> ! {
    farewell::exit_now(
        home,
        shared,
        clock,
        WATCHDOG_REASON,
        crate::exit::RESTART,
        || {
            let reason = format!("{strikes} consecutive liveness probes unanswered");
            let path = dump::write(home, &reason, &shared.try_doing(), clock.now());
            format!(
                "event loop wedged ({reason}); dump at {}; exiting {} for a restart",
                path.map_or("(not written)".into(), |p| p.display().to_string()),
                crate::exit::RESTART
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;

    /// Regression: an answered probe used to bump the loop's progress
    /// counter, so a loop stuck in an await (the runtime still turning)
    /// looked alive in the heartbeat file.
    #[test]
    fn answered_probes_do_not_count_as_loop_progress() {
        let tmp = tempfile::tempdir().unwrap();
        let shared = Arc::new(Shared::default());
        let timing = WatchdogTiming {
            interval: Duration::from_millis(10),
            timeout: Duration::from_secs(5),
            max_strikes: 1000,
        };
        spawn(
            Home::at(tmp.path()),
            shared.clone(),
            Arc::new(SystemClock::real()),
            timing,
            |answer| answer(),
        )
        .unwrap();
        let start = crate::clock::monotonic();
        while shared.probes_answered.load(Ordering::Relaxed) < 3 {
            assert!(crate::clock::elapsed(start) < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(shared.counter(), 0);
        shared.claim_exit();
    }
}
