//! The lateness watch: every [`CHECK_EVERY`], each active job that alerts
//! anywhere and has a period is checked against
//! `hermes_cron_core::alert::late_deadline`, counting from its last start
//! or the gateway's start, whichever is later (so only lateness while the
//! gateway is up alerts). The ledger's incident keeps it to one `late`
//! alert per incident.

use crate::clock::monotonic;
use crate::config::Config;
use crate::db::Db;
use crate::ledger;
use crate::schedule::{Timestamp, Tz};
use crate::store;
use crate::text::Chain;
use hermes_cron_core::alert::{AlertKind, AlertSpec, late_deadline};
use std::time::{Duration, Instant};

/// How often lateness is checked.
const CHECK_EVERY: Duration = Duration::from_secs(30);

pub(crate) struct LateWatch {
    gateway_started: Timestamp,
    next_check: Option<Instant>,
}

impl LateWatch {
    pub fn new(gateway_started: Timestamp) -> LateWatch {
        LateWatch {
            gateway_started,
            next_check: None,
        }
    }

    /// Check every job, at most once per [`CHECK_EVERY`].
    pub fn check(&mut self, db: &Db, config: &Config, fallback: Tz, now: Timestamp) {
        if self.next_check.is_some_and(|at| monotonic() < at) {
            return;
        }
        self.next_check = Some(monotonic() + CHECK_EVERY);
        let global = !config.cron.alert_command.is_empty() || !config.cron.alert_webhook.is_empty();
        let result = store::for_each_late_candidate(db.conn(), global, |job, last_start| {
            let Some(alert) = AlertSpec::merge(&job.alerts, config.cron.alert_defaults()) else {
                return;
            };
            if !alert.on.contains(AlertKind::Late) || !alert.has_alert_destinations() {
                return;
            }
            let zone = job
                .tz
                .as_deref()
                .and_then(|z| crate::schedule::parse_zone(z).ok())
                .unwrap_or(fallback);
            let since = [last_start, Some(self.gateway_started), Some(job.updated_at)]
                .into_iter()
                .flatten()
                .max()
                .unwrap_or(now);
            let Some(deadline) = late_deadline(&job.schedule, zone, job.anchor, since) else {
                return;
            };
            if now <= deadline {
                return;
            }
            match ledger::record_late(db.conn(), (job.id.as_str(), &job.name), &alert, now) {
                Ok(true) => {
                    tracing::warn!(job = %job.name, "late: not started since {since}; alert queued")
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(job = %job.name, "failed to record a late alert: {}", Chain(&e))
                }
            }
        });
        if let Err(e) = result {
            tracing::error!("failed to check jobs for lateness: {}", Chain(&e));
        }
    }
}
