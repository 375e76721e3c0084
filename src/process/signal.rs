//! Signals to processes and process groups, and the escalating stop
//! (SIGTERM, grace, SIGKILL) used by the worker's timeout, the gateway's
//! stall killer and overlap `replace`.

use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, kill, killpg};
use nix::unistd::Pid;

/// Send `sig` to every process in group `pgid`. A vanished group is not an error.
pub(crate) fn signal_group(pgid: u32, sig: Signal) -> Result<(), Errno> {
    if pgid <= 1 {
        return Err(Errno::EINVAL);
    }
    match killpg(Pid::from_raw(pgid as i32), sig) {
        Ok(()) | Err(Errno::ESRCH) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Send `sig` to one process. A vanished process is not an error.
pub fn signal_pid(pid: u32, sig: Signal) -> Result<(), Errno> {
    if pid <= 1 {
        return Err(Errno::EINVAL);
    }
    match kill(Pid::from_raw(pid as i32), sig) {
        Ok(()) | Err(Errno::ESRCH) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Wait up to `timeout` for one of the signals in `set` (which the calling
/// thread has blocked) and take it: synchronous signal handling, no
/// handlers, no races (`sigtimedwait`). None when the time passed (or the
/// wait was interrupted).
pub(crate) fn wait_for_signal(set: &SigSet, timeout: std::time::Duration) -> Option<Signal> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `set` is a valid sigset_t; `info` is written by the kernel.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let sig = unsafe { libc::sigtimedwait(set.as_ref(), &mut info, &ts) };
    (sig > 0).then(|| Signal::try_from(sig).ok()).flatten()
}

/// Unblock every signal in the calling thread. For `Command::pre_exec`: a
/// child inherits its parent's signal mask across `exec` (and `Command` does
/// not reset it), so a worker that blocks SIGTERM to wait for it
/// synchronously would otherwise start jobs deaf to SIGTERM.
/// Async-signal-safe: one `pthread_sigmask` call.
pub(crate) fn unblock_all_signals() -> std::io::Result<()> {
    // SAFETY: sigemptyset initializes the set; pthread_sigmask reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        match libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) {
            0 => Ok(()),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_init() {
        assert_eq!(signal_group(1, Signal::SIGTERM), Err(Errno::EINVAL));
        assert_eq!(signal_pid(0, Signal::SIGTERM), Err(Errno::EINVAL));
    }
}
