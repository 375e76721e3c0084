//! Noticing that another process changed the database (a job added, edited,
//! paused or removed; a worker adopting or finishing its row): inotify on the
//! cron directory, for writes to `cron.db` and its WAL, and to Hermes's
//! `jobs.json` (replaced atomically) and the provider plugin's poke file. The gateway's loop
//! and the CLI's waits (`run`, `run --wait`, overlap `replace`) use it instead
//! of polling. Events only prompt a look (one indexed query); they carry no
//! meaning of their own, so a burst of them costs one look. Where inotify is
//! unavailable the watcher never fires and callers look again on their own
//! period.

use crate::home::{HERMES_JOBS_FILE, POKE_FILE};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::Path;
use std::time::Duration;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// After a change notification, look at the database once more this much
/// later: the notification (a WAL append) can precede the commit it announces.
pub(crate) const RECHECK_AFTER_CHANGE: Duration = Duration::from_millis(50);

/// The inotify instance, as a raw descriptor tokio can register.
struct Watch(Inotify);

impl AsRawFd for Watch {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

fn is_hermes_jobs(name: &str) -> bool {
    name == HERMES_JOBS_FILE || name == POKE_FILE
}

/// Whether an event names a file `wanted` picks.
fn touches(events: &[InotifyEvent], wanted: impl Fn(&str) -> bool) -> bool {
    events.iter().any(|e| {
        e.name
            .as_ref()
            .and_then(|n| n.to_str())
            .is_some_and(&wanted)
    })
}

/// A source of "the database may have changed" wake-ups.
pub struct DbWatcher {
    inner: Option<AsyncFd<Watch>>,
    /// Hermes's `jobs.json` or the provider plugin's poke file changed
    /// since [`take_hermes_jobs_changed`](Self::take_hermes_jobs_changed).
    hermes_jobs: bool,
    /// The last [`next_look`](Self::next_look) ended on a change.
    woken_by_change: bool,
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
        Ok(DbWatcher {
            inner: Some(fd),
            hermes_jobs: false,
            woken_by_change: false,
        })
    }

    /// A watcher that never fires.
    pub fn disabled() -> DbWatcher {
        DbWatcher {
            inner: None,
            hermes_jobs: false,
            woken_by_change: false,
        }
    }

    /// Until the caller should look at the database again: a change, or
    /// `limit` passed (for what no write announces, such as a process that
    /// died). Right after a change, at most [`RECHECK_AFTER_CHANGE`]: the
    /// change that woke the last look may not have been visible yet.
    pub async fn next_look(&mut self, limit: Duration) {
        let limit = if self.woken_by_change {
            limit.min(RECHECK_AFTER_CHANGE)
        } else {
            limit
        };
        self.woken_by_change = tokio::time::timeout(limit, self.changed()).await.is_ok();
    }

    /// Whether Hermes's `jobs.json` (or the plugin's poke file) changed
    /// since the last call.
    pub fn take_hermes_jobs_changed(&mut self) -> bool {
        std::mem::take(&mut self.hermes_jobs)
    }

    /// Wait for a change to the database files (or to Hermes's jobs), then
    /// drain what is pending.
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
                    let hermes = touches(&events, is_hermes_jobs);
                    if hermes || touches(&events, |n| n.starts_with("cron.db")) {
                        self.hermes_jobs |= hermes;
                        // Drain anything else queued so a burst wakes us once.
                        while let Ok(more) = guard.get_inner().0.read_events() {
                            self.hermes_jobs |= touches(&more, is_hermes_jobs);
                        }
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
