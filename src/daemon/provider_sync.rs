//! The gateway's side of the Hermes provider: run the sync (`provider::sync`)
//! when the gateway starts, when the watcher saw `cron/jobs.json` or the
//! plugin's poke file change, on the monitor period and before each claim
//! pass when `jobs.json`, `config.yaml`, the home's `.env`, the plugin's
//! `plugin.json` or Hermes's `cron/ticker_heartbeat` changed since the last
//! sync (five `stat`s: Hermes's limits on a fire follow its settings), and
//! at least every [`RESYNC_EVERY`] (a built-in ticker that stopped stamping
//! its heartbeat changes no file), and on the loop's next turn after a claim
//! pass or a recorded launch while it follows Hermes's jobs
//! ([`ProviderSync::owe`]: a slot that never reaches Hermes, refused, skipped
//! or failed before Hermes's claim, changes no file either, and the job's
//! next slot is set then). Says what changed in the log, each activation change and each
//! new set of unreadable records once.

use crate::clock::monotonic;
use crate::db::Db;
use crate::home::Home;
use crate::provider::{self, jobs_file_stamp};
use crate::text::Chain;
use hermes_cron_core::health::HermesSide;
use hermes_cron_core::job::Env;
use hermes_cron_core::provider::SyncAt;
use std::path::Path;
use std::time::{Duration, SystemTime};

type Stamp = [Option<SystemTime>; 7];

/// The longest time between two syncs.
pub(crate) const RESYNC_EVERY: Duration = Duration::from_secs(60);

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn stamp(home: &Home) -> Stamp {
    [
        jobs_file_stamp(home),
        modified(&home.config_file()),
        modified(&provider::limits::dotenv_file(home)),
        modified(&provider::plugin::plugin_dir(home).join("plugin.json")),
        modified(&home.cron_dir().join("ticker_heartbeat")),
        modified(&home.hermes_executions_file()),
        modified(&provider::outside::wal_of(&home.hermes_executions_file())),
    ]
}

#[derive(Debug, Default)]
pub(crate) struct ProviderSync {
    /// What the files looked like at the last sync that succeeded, and when.
    synced: Option<(Stamp, std::time::Instant)>,
    inactive: Option<Option<String>>,
    /// Whether the home was a Hermes home when `inactive` was last said.
    said_on_hermes_home: bool,
    notes: Vec<String>,
    /// Why Hermes's own runs could not be recorded, as last said.
    outside_error: Option<String>,
    /// Why `jobs.json` could not be read at the last sync (None: it was).
    unreadable: Option<String>,
    /// Rows were written since the last sync.
    owed: bool,
}

impl ProviderSync {
    /// Rows were written (a claim pass, a recorded launch): while
    /// hermes-cron fires this home's Hermes jobs, the loop's next turn syncs.
    pub(super) fn owe(&mut self) {
        self.owed |= self.inactive == Some(None);
    }

    /// Whether a sync is owed since rows were written.
    pub(super) fn owed(&self) -> bool {
        self.owed
    }

    /// Sync when `forced` or when a file changed since the last sync.
    pub(super) fn run(
        &mut self,
        db: &mut Db,
        home: &Home,
        host: &str,
        config_env: &Env,
        when: SyncAt,
        forced: bool,
    ) {
        let seen = stamp(home);
        let mono = monotonic();
        let fresh = self
            .synced
            .is_some_and(|(s, at)| s == seen && mono.duration_since(at) < RESYNC_EVERY);
        if !forced && fresh {
            return;
        }
        self.owed = false;
        match provider::sync(db, home, host, config_env, when) {
            Ok(report) => {
                self.synced = Some((seen, mono));
                self.unreadable = None;
                let hermes_home = provider::is_hermes_home(home);
                if self.inactive.as_ref() != Some(&report.inactive)
                    || self.said_on_hermes_home != hermes_home
                {
                    match &report.inactive {
                        None => tracing::info!("hermes-cron fires this home's Hermes jobs"),
                        // Only news where Hermes is: a home of hermes-cron
                        // alone has no Hermes jobs for anyone to fire.
                        Some(why) if hermes_home => {
                            tracing::info!("Hermes fires its own jobs: {why}")
                        }
                        Some(why) => tracing::debug!("no Hermes jobs to fire: {why}"),
                    }
                    self.inactive = Some(report.inactive.clone());
                    self.said_on_hermes_home = hermes_home;
                }
                if report.changed() {
                    tracing::info!(
                        added = ?report.added,
                        updated = report.updated.len(),
                        removed = ?report.removed,
                        "Hermes jobs synced"
                    );
                }
                if !report.ran_outside.is_empty() {
                    tracing::info!(
                        jobs = ?report.ran_outside,
                        "recorded runs Hermes made by itself, outside hermes-cron"
                    );
                }
                if report.outside_error != self.outside_error {
                    if let Some(e) = &report.outside_error {
                        tracing::warn!("runs Hermes made by itself are not recorded yet: {e}");
                    }
                    self.outside_error = report.outside_error.clone();
                }
                if report.notes != self.notes {
                    for note in &report.notes {
                        tracing::warn!("Hermes job left out: {note}");
                    }
                    self.notes = report.notes;
                }
            }
            Err(e) => {
                tracing::warn!(
                    "cannot sync Hermes's jobs (the managed jobs stay as they were; retried on the next change): {}",
                    Chain(&e)
                );
                if e.is_hermes_file() {
                    self.unreadable = Some(Chain(&e).to_string());
                }
            }
        }
    }

    /// What the last syncs saw going wrong on the Hermes side, while
    /// hermes-cron fires this home's Hermes jobs (for `status`).
    pub(super) fn side(&self) -> Option<HermesSide> {
        // A jobs.json that cannot be read is only read while hermes-cron fires.
        let active = self.inactive == Some(None) || self.unreadable.is_some();
        active.then(|| HermesSide {
            jobs_unreadable: self.unreadable.clone(),
            left_out: self.notes.clone(),
            outside_unrecorded: self.outside_error.clone(),
        })
    }
}
