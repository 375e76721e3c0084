//! Waiting: [`wait_for`] polls a condition until it holds or a deadline
//! passes, and the panic names what was awaited ([`wait_for_or`] adds the
//! diagnostics of the caller's choice, e.g. the ledger and the gateway logs;
//! [`poll`] is the loop under both, for a caller to whom the deadline is an
//! outcome, not a failure).
//! No test sleeps and hopes: every wait in the suite is one of these, with
//! one of the deadlines below or its own.

use hermes_cron::clock::{elapsed, monotonic};
use std::time::Duration;

/// Generous upper bound for something that takes milliseconds on a healthy machine.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// Upper bound for workers to write their terminal rows, and for a step of a
/// crash scene (a healthy one takes a second or two), on a loaded machine.
pub(crate) const SETTLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The first pause between two looks; it doubles up to [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(10);

/// The longest pause between two looks.
const MAX_POLL: Duration = Duration::from_millis(100);

/// Poll `condition` until it yields a value, at most `timeout`; panics naming
/// `what` on timeout.
#[track_caller]
pub(crate) fn wait_for<T>(
    what: &str,
    timeout: Duration,
    condition: impl FnMut() -> Option<T>,
) -> T {
    wait_for_or(what, timeout, condition, String::new)
}

/// Like [`wait_for`], with `diag()` (evaluated only on timeout) appended to
/// the panic message.
#[track_caller]
pub(crate) fn wait_for_or<T>(
    what: &str,
    timeout: Duration,
    condition: impl FnMut() -> Option<T>,
    diag: impl FnOnce() -> String,
) -> T {
    if let Some(v) = poll(timeout, condition) {
        return v;
    }
    let diag = diag();
    if diag.is_empty() {
        panic!("timed out after {timeout:?} waiting for {what}");
    }
    panic!("timed out after {timeout:?} waiting for {what}\n{diag}");
}

/// Poll `condition` until it yields a value, at most `timeout`; `None` when
/// it did not (for a test to whom that is an outcome, not a failure).
pub(crate) fn poll<T>(timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> Option<T> {
    let start = monotonic();
    let mut pause = FIRST_POLL;
    loop {
        if let Some(v) = condition() {
            return Some(v);
        }
        if elapsed(start) > timeout {
            return None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// The real wall clock, for tests that drive a program which reads it (the
/// real Hermes Agent's instants cannot be frozen with `HERMES_CRON_NOW`).
#[allow(clippy::disallowed_methods)]
pub(crate) fn wall_clock() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}
