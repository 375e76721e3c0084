//! SIGTERM and SIGINT, taken by an OS thread of their own so that a wedged
//! event loop cannot make the gateway deaf to `systemctl stop`.
//!
//! [`block`] blocks both in the calling thread; the gateway calls it first,
//! before any other thread exists, so every thread inherits the mask (a
//! spawned worker gets a clean mask from `Command`). The signal thread takes
//! them with `sigtimedwait`: the first asks the loop to stop (a flag a
//! dispatch batch checks between runs, and a message the runtime wakes on); if the loop has not finished after [`STOP_GRACE`]
//! (wedged), or a second signal comes, the thread records the exit itself
//! (reason `signal`) and ends the process with 0. SIGCHLD stays with the
//! runtime.

use super::farewell;
use super::state::Shared;
use crate::clock::{Clock, monotonic};
use crate::home::Home;
use nix::sys::signal::{SigSet, Signal};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long the loop is given to stop after SIGTERM before the signal thread
/// ends the process without it.
/// Longer than one dispatch can take (the 15 s bound on a scope start), so a
/// dispatch in flight finishes; shorter than the unit's `TimeoutStopSec`.
pub const STOP_GRACE: Duration = Duration::from_secs(20);

/// The stop request the loop receives: the signal's name.
pub type StopRequests = mpsc::UnboundedReceiver<&'static str>;

fn stop_set() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGINT);
    set
}

/// Block SIGTERM and SIGINT in the calling thread (and so in every thread it
/// starts afterwards).
pub fn block() -> nix::Result<()> {
    stop_set().thread_block()
}

/// The next stop signal within `timeout`, by name.
fn next_signal(set: &SigSet, timeout: Duration) -> Option<&'static str> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `set` is a valid sigset_t; `info` is written by the kernel.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let sig = unsafe { libc::sigtimedwait(set.as_ref(), &mut info, &ts) };
    match sig {
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGINT => Some("SIGINT"),
        _ => None,
    }
}

/// Start the signal thread; the loop reads the returned stop requests.
pub fn spawn(
    home: Home,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
    grace: Duration,
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
            let deadline = monotonic() + grace;
            let why = loop {
                let left = deadline.saturating_duration_since(monotonic());
                if left.is_zero() {
                    break format!(
                        "the event loop did not stop within {grace:?} of {first} (wedged?); exiting without it"
                    );
                }
                if let Some(second) = next_signal(&set, left) {
                    break format!("{second} after {first}: exiting now");
                }
            };
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
