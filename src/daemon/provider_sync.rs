//! The gateway's side of the Hermes provider: run the sync (`provider::sync`)
//! when the gateway starts, when the watcher saw `cron/jobs.json` or the
//! plugin's poke file change, and on the monitor period when `jobs.json`,
//! `config.yaml` or the plugin's `plugin.json` changed since the last sync
//! (three `stat`s). Says what changed in the log, each activation change and
//! each new set of unreadable records once.

use crate::db::Db;
use crate::home::Home;
use crate::provider::{self, jobs_file_stamp};
use crate::schedule::Timestamp;
use crate::text::Chain;
use std::path::Path;
use std::time::{Duration, SystemTime};

type Stamp = [Option<SystemTime>; 3];

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn stamp(home: &Home) -> Stamp {
    [
        jobs_file_stamp(home),
        modified(&home.config_file()),
        modified(&provider::plugin::plugin_dir(home).join("plugin.json")),
    ]
}

#[derive(Debug, Default)]
pub(crate) struct ProviderSync {
    /// What the files looked like at the last sync that succeeded.
    synced: Option<Stamp>,
    inactive: Option<Option<String>>,
    notes: Vec<String>,
}

impl ProviderSync {
    /// Sync when `forced` or when a file changed since the last sync.
    pub fn run(
        &mut self,
        db: &mut Db,
        home: &Home,
        script_timeout: Duration,
        now: Timestamp,
        forced: bool,
    ) {
        let seen = stamp(home);
        if !forced && self.synced == Some(seen) {
            return;
        }
        match provider::sync(db, home, script_timeout, now) {
            Ok(report) => {
                self.synced = Some(seen);
                if self.inactive.as_ref() != Some(&report.inactive) {
                    match &report.inactive {
                        None => tracing::info!("hermes-cron fires this home's Hermes jobs"),
                        Some(why) => tracing::info!("Hermes fires its own jobs: {why}"),
                    }
                    self.inactive = Some(report.inactive.clone());
                }
                if report.changed() {
                    tracing::info!(
                        added = ?report.added,
                        updated = report.updated.len(),
                        removed = ?report.removed,
                        "Hermes jobs synced"
                    );
                }
                if report.notes != self.notes {
                    for note in &report.notes {
                        tracing::warn!("Hermes job left out: {note}");
                    }
                    self.notes = report.notes;
                }
            }
            Err(e) => tracing::warn!(
                "cannot sync Hermes's jobs (the managed jobs stay as they were; retried on the next change): {}",
                Chain(&e)
            ),
        }
    }
}
