//! SIGTERM and SIGINT, taken by an OS thread of their own so that a wedged
//! event loop cannot make the gateway deaf to `systemctl stop`.
//!
//! [`block`] blocks both in the calling thread; the gateway calls it first,
//! before any other thread exists, so every thread inherits the mask (the
//! launcher clears it for the workers it spawns: `Command` keeps it). The
//! signal thread takes them with `sigtimedwait`: the first asks the loop to
//! stop (a flag a dispatch batch checks between runs, and a message the
//! runtime wakes on). If the runtime does not even run a probe within
//! [`PROBE_WAIT`] (wedged), or the loop has not finished after
//! [`STOP_GRACE`], or a second signal comes, the thread records the exit
//! itself (reason `signal`) and ends the process with 0. SIGCHLD stays with
//! the runtime.

use super::farewell;
use crate::clock::{Clock, monotonic};
use crate::daemon::state::Shared;
use crate::home::Home;
use crate::process::wait_for_signal;
use nix::sys::signal::{SigSet, Signal};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long the loop is given to stop after SIGTERM before the signal thread
/// ends the process without it.
/// Longer than one dispatch can take (the 15 s bound on a scope start), so a
/// dispatch in flight finishes; shorter than the unit's `TimeoutStopSec`.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(20);

/// How long the runtime has to show it still turns after a stop request.
pub(crate) const PROBE_WAIT: Duration = Duration::from_secs(2);

/// The stop request the loop receives: the signal's name.
pub(crate) type StopRequests = mpsc::UnboundedReceiver<&'static str>;

fn stop_set() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGINT);
    set
}

/// Block SIGTERM and SIGINT in the calling thread (and so in every thread it
/// starts afterwards).
pub(crate) fn block() -> nix::Result<()> {
    stop_set().thread_block()
}

/// The next stop signal within `timeout`, by name.
fn next_signal(set: &SigSet, timeout: Duration) -> Option<&'static str> {
    match wait_for_signal(set, timeout)? {
        Signal::SIGTERM => Some("SIGTERM"),
        Signal::SIGINT => Some("SIGINT"),
        _ => None,
    }
}

/// Start the signal thread; the loop reads the returned stop requests.
/// `probe` asks the runtime to run a closure (as the loop watchdog does): a
/// runtime that does not run it within [`PROBE_WAIT`] is wedged, and waiting
/// out the whole grace for it would only delay the stop.
pub(crate) fn spawn(
    home: Home,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
    grace: Duration,
    probe: impl Fn(Box<dyn FnOnce() + Send>) + Send + 'static,
) -> std::io::Result<StopRequests> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let set = stop_set();
            let first = loop {
                if let Some(name) = next_signal(&set, Duration::from_secs(3600)) {
                    break name;
                }
            };
            shared.request_stop();
            let _ = tx.send(first);
            let why = wait_for_stop(&set, first, grace, &probe);
            farewell::exit_now(
                &home,
                &shared,
                clock.as_ref(),
                "signal",
                crate::exit::OK,
                || why,
            )
        })?;
    Ok(rx)
}

/// After the stop request: returns (for the log) why the signal thread must
/// end the process itself. Returns only when the loop has not done so.
fn wait_for_stop(
    set: &SigSet,
    first: &str,
    grace: Duration,
    probe: &dyn Fn(Box<dyn FnOnce() + Send>),
) -> String {
    let started = monotonic();
    let (answer, answered) = std::sync::mpsc::channel::<()>();
    probe(Box::new(move || {
        let _ = answer.send(());
    }));
    let mut alive = false;
    loop {
        let spent = monotonic().saturating_duration_since(started);
        if !alive && spent >= PROBE_WAIT.min(grace) {
            return format!(
                "the event loop's runtime did not answer within {PROBE_WAIT:?} of {first} (wedged); exiting without it"
            );
        }
        if spent >= grace {
            return format!(
                "the event loop did not stop within {grace:?} of {first}; exiting without it"
            );
        }
        let slice = if alive {
            grace - spent
        } else {
            Duration::from_millis(50)
        };
        if let Some(second) = next_signal(set, slice) {
            return format!("{second} after {first}: exiting now");
        }
        alive = alive || answered.try_recv().is_ok();
    }
}
