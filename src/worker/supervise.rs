//! Watching the job's process: reaping it, stamping heartbeats, enforcing
//! the timeout (SIGTERM to its group, grace, SIGKILL), forwarding the
//! signals the worker receives, and ending the rest of the run when the
//! command was killed by a signal the worker did not send (`leftovers.rs`).
//!
//! The worker blocks SIGCHLD, SIGTERM, SIGINT and SIGHUP before it starts any
//! thread or the job (`spawn_job` clears the mask again in the job: a blocked
//! mask survives exec and `Command` does not reset it), then waits
//! for them synchronously with `sigtimedwait`: no handlers, no races.

use super::capture::Activity;
use crate::clock::monotonic;
use crate::process::{signal_group, wait_for_signal};
use hermes_cron_core::run::{Ending, Exit, Stopped};
use nix::sys::signal::{SigSet, Signal};
use std::time::{Duration, Instant};

/// The signals the worker handles synchronously.
pub(crate) fn handled_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
    ] {
        set.add(s);
    }
    set
}

/// Timing of the supervision.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Knobs {
    /// None: no timeout (spawned long-running workers).
    pub timeout: Option<Duration>,
    /// None: no idle timeout.
    pub idle: Option<Duration>,
    pub grace: Duration,
    pub heartbeat: Duration,
}

/// How the supervision ended.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Supervised {
    pub ending: Ending,
    pub max_rss_kb: u64,
    pub duration: Duration,
    /// Processes of the run killed because its command was killed from
    /// outside.
    pub rest_killed: usize,
}

/// Whether the job has ended, and by a signal, without reaping it: its pid
/// (and process group id) stays reserved while it is a zombie.
fn ended(pid: i32) -> Option<bool> {
    // SAFETY: siginfo_t is plain old data that waitid fills.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
    // SAFETY: si_pid is set by a waitid that found a child (else it is 0).
    if r != 0 || unsafe { info.si_pid() } != pid {
        return None;
    }
    Some(matches!(info.si_code, libc::CLD_KILLED | libc::CLD_DUMPED))
}

fn reap(pid: i32) -> Option<(Exit, u64)> {
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it and status.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
    if r != pid {
        return None;
    }
    let exit = if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        return None;
    };
    Some((exit, usage.ru_maxrss.max(0) as u64))
}

/// Supervise the job with pid (and process group) `pid` until it exits;
/// `activity` is when it last wrote output (for the idle timeout). When a
/// signal the worker did not send killed it, `end_the_rest` runs before it
/// is reaped.
pub(crate) fn supervise(
    pid: u32,
    knobs: Knobs,
    activity: &Activity,
    mut heartbeat: impl FnMut(),
    end_the_rest: impl FnOnce() -> usize,
) -> Supervised {
    let started = monotonic();
    let set = handled_signals();
    let pgid = pid;
    let deadline = knobs.timeout.map(|t| started + t);
    let mut next_beat = started + knobs.heartbeat;
    let mut kill_at: Option<Instant> = None;
    let mut stopped: Option<Stopped> = None;
    let mut cancelled_by = None;
    let mut end_the_rest = Some(end_the_rest);
    loop {
        if let Some(by_signal) = ended(pid as i32) {
            let outside = by_signal && stopped.is_none() && cancelled_by.is_none();
            let rest_killed = match end_the_rest.take() {
                Some(end) if outside => end(),
                _ => 0,
            };
            if let Some((exit, rss)) = reap(pid as i32) {
                return Supervised {
                    ending: Ending {
                        exit,
                        stopped,
                        cancelled_by,
                    },
                    max_rss_kb: rss,
                    duration: monotonic().saturating_duration_since(started),
                    rest_killed,
                };
            }
        }
        let now = monotonic();
        if now >= next_beat {
            heartbeat();
            next_beat = now + knobs.heartbeat;
        }
        let idle_at = knobs.idle.map(|i| activity.last() + i);
        if stopped.is_none() {
            let why = if deadline.is_some_and(|d| now >= d) {
                Some(Stopped::Timeout)
            } else if idle_at.is_some_and(|at| now >= at) {
                Some(Stopped::Idle)
            } else {
                None
            };
            if let Some(why) = why {
                stopped = Some(why);
                let _ = signal_group(pgid, Signal::SIGTERM);
                kill_at.get_or_insert(now + knobs.grace);
            }
        }
        if kill_at.is_some_and(|at| now >= at) {
            let _ = signal_group(pgid, Signal::SIGKILL);
            kill_at = None;
        }
        let mut wake = next_beat;
        if stopped.is_none() {
            for at in [deadline, idle_at].into_iter().flatten() {
                wake = wake.min(at);
            }
        }
        if let Some(at) = kill_at {
            wake = wake.min(at);
        }
        let wait = wake
            .saturating_duration_since(monotonic())
            .max(Duration::from_millis(1));
        if let Some(sig @ (Signal::SIGTERM | Signal::SIGINT | Signal::SIGHUP)) =
            wait_for_signal(&set, wait)
        {
            let _ = signal_group(pgid, sig);
            if stopped.is_none() {
                cancelled_by.get_or_insert(sig as i32);
            }
            kill_at.get_or_insert(monotonic() + knobs.grace);
        }
    }
}
