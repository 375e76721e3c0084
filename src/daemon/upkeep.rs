//! The gateway's housekeeping, on the monitor period but at its own pace:
//! `state/hermes-cron.prom` rewritten atomically every [`METRICS_EVERY`] (a
//! node-exporter textfile collector reads it), and retention applied at most
//! every [`PRUNE_EVERY`]. Failures are logged and retried next time; they
//! never stop the gateway.

use crate::clock::monotonic;
use crate::config::CronConfig;
use crate::db::Db;
use crate::fsutil::write_atomic;
use crate::home::Home;
use crate::ops::{metrics, prune};
use crate::schedule::Timestamp;
use crate::text::Chain;
use std::time::Duration;

/// How often the metrics file is rewritten.
pub(crate) const METRICS_EVERY: Duration = Duration::from_secs(15);
/// How often retention runs, at most.
pub(crate) const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// How long after start the first prune runs.
pub(crate) const FIRST_PRUNE_AFTER: Duration = Duration::from_secs(60);

/// When each chore is next due (monotonic).
#[derive(Debug, Default)]
pub(crate) struct Upkeep {
    next_metrics: Option<std::time::Instant>,
    next_prune: Option<std::time::Instant>,
}

impl Upkeep {
    pub(super) fn run(
        &mut self,
        db: &mut Db,
        home: &Home,
        host: &str,
        cfg: &CronConfig,
        now: Timestamp,
    ) {
        let mono = monotonic();
        if self.next_metrics.is_none_or(|at| mono >= at) {
            self.next_metrics = Some(mono + METRICS_EVERY);
            let beat = crate::state_files::read_heartbeat(home);
            match metrics::render(db.conn(), host, beat.as_ref(), now) {
                Ok(text) => {
                    if let Err(e) = write_atomic(&home.metrics_file(), text.as_bytes()) {
                        tracing::warn!("cannot write the metrics file: {}", Chain(&e));
                    }
                }
                Err(e) => tracing::warn!("cannot compute metrics: {e}"),
            }
        }
        // The first prune waits a minute after start, so a crash loop does
        // not prune on every start; then at most every PRUNE_EVERY.
        let next_prune = *self.next_prune.get_or_insert(mono + FIRST_PRUNE_AFTER);
        if mono >= next_prune {
            self.next_prune = Some(mono + PRUNE_EVERY);
            match prune::prune(db, home, cfg) {
                Ok(r) => tracing::info!(
                    rows = r.rows_deleted,
                    outputs = r.outputs_deleted,
                    bytes = r.bytes_freed,
                    "retention applied"
                ),
                Err(e) => tracing::warn!("retention failed: {}", Chain(&e)),
            }
        }
    }
}
