//! Waiting for a process that is not our child to end: a pidfd
//! (`pidfd_open(2)`) becomes readable when its process terminates, so the
//! wait is woken by the exit itself. Where a pidfd cannot be had (an old
//! kernel, a permission), the process is looked at on a short period.

use super::identity::is_alive;
use hermes_cron_core::run::ProcessIdentity;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// How often a process without a pidfd is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// A pidfd for `p`, or None when `p` is gone (its pid may be another
/// process's by now) or no pidfd can be had (`Err`).
fn pidfd_of(p: &ProcessIdentity) -> Result<Option<OwnedFd>, ()> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p.pid as libc::pid_t, 0) };
    if fd < 0 {
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => Ok(None),
            _ => Err(()),
        };
    }
    // SAFETY: the descriptor was just returned to us and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // Opened by pid: make sure it is still the same process.
    Ok(is_alive(p).then_some(fd))
}

/// Wait until `p` has ended, at most `limit`; true when it has.
pub(crate) async fn ended_within(p: &ProcessIdentity, limit: Duration) -> bool {
    let watch = async {
        match pidfd_of(p) {
            Ok(None) => {}
            // SAFETY: the pidfd is owned by the AsyncFd and stays open
            // while it is registered.
            Ok(Some(fd)) => {
                match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
                    Ok(fd) => {
                        let _ = fd.readable().await;
                    }
                    Err(_) => look_until_gone(p).await,
                }
            }
            Err(()) => look_until_gone(p).await,
        }
    };
    tokio::time::timeout(limit, watch).await.is_ok()
}

async fn look_until_gone(p: &ProcessIdentity) {
    while is_alive(p) {
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::identity_of;

    #[tokio::test]
    async fn wakes_when_the_process_exits_and_times_out_while_it_lives() {
        let mut child = std::process::Command::new("sleep")
            .arg("0.3")
            .spawn()
            .unwrap();
        let who = identity_of(child.id()).unwrap();
        assert!(!ended_within(&who, Duration::from_millis(50)).await);
        // Reaped by a thread of its own, as the gateway's reaper would.
        let reaper = std::thread::spawn(move || child.wait());
        assert!(ended_within(&who, Duration::from_secs(30)).await);
        reaper.join().unwrap().unwrap();
        assert!(ended_within(&who, Duration::ZERO).await, "gone: at once");
    }
}
