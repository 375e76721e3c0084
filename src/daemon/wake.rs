//! Waking the loop when another process changes the database (a job added,
//! edited, paused or removed; a worker finishing): inotify on the cron
//! directory, for writes to `cron.db` and its WAL. Events only prompt the loop
//! to look again (one indexed query); they carry no meaning of their own, so a
//! burst of them costs one look. Where inotify is unavailable the loop still
//! looks again on its monitor period.

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::Path;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The inotify instance, as a raw descriptor tokio can register.
struct Watch(Inotify);

impl AsRawFd for Watch {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// A source of "the database may have changed" wake-ups.
pub struct DbWatcher {
    inner: Option<AsyncFd<Watch>>,
}

impl DbWatcher {
    /// Watch `cron_dir`. Failure leaves a watcher that never fires (logged by the caller).
    pub fn new(cron_dir: &Path) -> Result<DbWatcher, nix::Error> {
        let ino = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        ino.add_watch(
            cron_dir,
            AddWatchFlags::IN_MODIFY
                | AddWatchFlags::IN_CLOSE_WRITE
                | AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_CREATE,
        )?;
        // SAFETY: `Watch` owns the inotify descriptor and always returns that
        // same open descriptor until the AsyncFd (which owns it) is dropped.
        let fd = unsafe { AsyncFd::register_with_interest(Watch(ino), Interest::READABLE) }
            .map_err(|e| {
                nix::Error::from_raw(e.into_parts().1.raw_os_error().unwrap_or(libc::EIO))
            })?;
        Ok(DbWatcher { inner: Some(fd) })
    }

    /// A watcher that never fires.
    pub fn disabled() -> DbWatcher {
        DbWatcher { inner: None }
    }

    /// Wait for a change to the database files, then drain what is pending.
    pub async fn changed(&mut self) {
        let Some(fd) = self.inner.as_mut() else {
            return std::future::pending().await;
        };
        loop {
            let Ok(mut guard) = fd.readable_mut().await else {
                return std::future::pending().await;
            };
            match guard.get_inner().0.read_events() {
                Ok(events) => {
                    let relevant = events.iter().any(|e| {
                        e.name
                            .as_ref()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("cron.db"))
                    });
                    if relevant {
                        // Drain anything else queued so a burst wakes us once.
                        while guard.get_inner().0.read_events().is_ok() {}
                        guard.clear_ready();
                        return;
                    }
                }
                Err(nix::errno::Errno::EAGAIN) => guard.clear_ready(),
                Err(_) => return std::future::pending().await,
            }
        }
    }
}
