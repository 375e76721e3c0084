//! Ending the gateway from a thread other than the loop's (the loop watchdog,
//! or the signal thread when the loop does not stop in time): claim the exit,
//! so exactly one exit line reaches the lifecycle record, record it, say why
//! without risking a blocked stderr, and exit.
//!
//! ## Locking
//! Nothing here may wait on the loop: the loop may be wedged anywhere,
//! including inside a write to stderr while holding its lock (a full pipe, a
//! stuck journald). So the lifecycle line and the dump (the durable record)
//! are written first, and anything for stderr is written by a throwaway
//! thread that is given a short while and then abandoned.

use super::lifecycle;
use crate::clock::Clock;
use crate::daemon::state::Shared;
use crate::home::Home;
use std::sync::mpsc;
use std::time::Duration;

/// How long a message for stderr is given before the process exits anyway.
const SAY_WAIT: Duration = Duration::from_millis(500);

/// Log `msg` at warn level from a throwaway thread; wait at most `wait` for it.
/// A wedged stderr costs one parked thread, never the caller.
pub(crate) fn say_bounded(msg: String, wait: Duration) {
    let (tx, rx) = mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("say".into())
        .spawn(move || {
            tracing::warn!("{msg}");
            let _ = tx.send(());
        });
    if spawned.is_ok() {
        let _ = rx.recv_timeout(wait);
    }
}

/// End the process with `code`: if no other thread is already exiting, run
/// `last` (forensics; returns the message for stderr), record `reason` in the
/// lifecycle, log the message (bounded), and exit. If another thread claimed
/// the exit first, park: it is about to end the process.
pub(crate) fn exit_now(
    home: &Home,
    shared: &Shared,
    clock: &dyn Clock,
    reason: &str,
    code: i32,
    last: impl FnOnce() -> String,
) -> ! {
    if !shared.claim_exit() {
        park_forever()
    }
    let msg = last();
    lifecycle::record(home, "exit", clock.now(), Some(reason), Some(code));
    say_bounded(msg, SAY_WAIT);
    std::process::exit(code)
}

/// Wait for the thread that claimed the exit to end the process.
pub(crate) fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}
