//! The gateway's change feed: what tells the loop that another process
//! changed the ledger or the jobs (inotify on `cron/`; on PostgreSQL, the
//! ledger channel's `NOTIFY`). A change only prompts a look; a write seen by
//! inotify may not be committed yet (a WAL append comes before its commit),
//! so it is looked at once more [`RECHECK_AFTER_CHANGE`] later.

use crate::db::{DbWatcher, PgListener, RECHECK_AFTER_CHANGE};

/// What changed.
pub(crate) enum Change {
    /// The ledger, as far as anyone can tell.
    Ledger,
    /// Hermes's `jobs.json` (or the provider plugin's poke file).
    HermesJobs,
}

pub(crate) struct Feed {
    watcher: DbWatcher,
    listener: Option<PgListener>,
    recheck: Option<tokio::time::Instant>,
}

impl Feed {
    pub(super) fn new(watcher: DbWatcher, listener: Option<PgListener>) -> Feed {
        Feed {
            watcher,
            listener,
            recheck: None,
        }
    }

    pub(super) async fn changed(&mut self) -> Change {
        let Feed {
            watcher, listener, ..
        } = self;
        let listened = async {
            match listener.as_mut() {
                Some(l) => l.changed().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = watcher.changed() => {}
            _ = listened => return Change::Ledger,
        }
        self.recheck = Some(crate::clock::loop_now() + RECHECK_AFTER_CHANGE);
        if self.watcher.take_hermes_jobs_changed() {
            Change::HermesJobs
        } else {
            Change::Ledger
        }
    }

    /// When to look once more after a change.
    pub(super) fn next_wake(&self) -> Option<tokio::time::Instant> {
        self.recheck
    }

    /// Looked once more.
    pub(super) fn rechecked(&mut self) {
        self.recheck = None;
    }
}
