//! The lateness watch: every [`CHECK_EVERY`], each active job that alerts
//! anywhere and has a period is checked against
//! `hermes_cron_core::alert::late_deadline`, counting from its last start
//! or the gateway's start, whichever is later (so only lateness while the
//! gateway is up alerts). The ledger's incident keeps it to one `late`
//! alert per incident. Deadlines are cached per job until it starts again
//! or is edited, so a check parses only the schedules of jobs that moved.

use crate::clock::monotonic;
use crate::config::Config;
use crate::db::Db;
use crate::ledger;
use crate::schedule::{Schedule, Timestamp, Tz, ZoneTable};
use crate::store::{self, LateRow};
use crate::text::Chain;
use hermes_cron_core::alert::{AlertKind, AlertSpec, late_deadline};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How often lateness is checked.
const CHECK_EVERY: Duration = Duration::from_secs(30);

/// A job's deadline, and what it was computed from.
struct Cached {
    since: Timestamp,
    updated_at: Timestamp,
    deadline: Option<Timestamp>,
}

pub(crate) struct LateWatch {
    gateway_started: Timestamp,
    next_check: Option<Instant>,
    deadlines: HashMap<String, Cached>,
}

impl LateWatch {
    pub(super) fn new(gateway_started: Timestamp) -> LateWatch {
        LateWatch {
            gateway_started,
            next_check: None,
            deadlines: HashMap::new(),
        }
    }

    /// Check every job, at most once per [`CHECK_EVERY`]; a job's zone is
    /// read in `zones`, `fallback` for a job without one.
    pub(super) fn check(
        &mut self,
        db: &Db,
        config: &Config,
        fallback: Tz,
        zones: &ZoneTable,
        now: Timestamp,
    ) {
        if self.next_check.is_some_and(|at| monotonic() < at) {
            return;
        }
        self.next_check = Some(monotonic() + CHECK_EVERY);
        let global = config.cron.alert_command.is_some() || config.cron.alert_webhook.is_some();
        let mut late = Vec::new();
        let mut seen = Vec::new();
        let result = store::for_each_late_candidate(db.conn(), global, |job| {
            let Some(alert) = AlertSpec::merge(&job.alerts, config.cron.alert_defaults()) else {
                return;
            };
            if !alert.on.contains(AlertKind::Late) || !alert.has_alert_destinations() {
                return;
            }
            seen.push(job.id.clone());
            let since = [
                job.last_start,
                Some(self.gateway_started),
                Some(job.updated_at),
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(now);
            if let Some(deadline) =
                self.deadline(&job, since, zones.zone_or(job.tz.as_deref(), fallback))
                && now > deadline
            {
                late.push((job, alert, since));
            }
        });
        if let Err(e) = result {
            tracing::error!("failed to check jobs for lateness: {}", Chain(&e));
            return;
        }
        seen.sort_unstable();
        self.deadlines
            .retain(|id, _| seen.binary_search(id).is_ok());
        for (job, alert, since) in late {
            match ledger::record_late(db.conn(), (&job.id, &job.name), &alert, now) {
                Ok(true) => {
                    tracing::warn!(job = %job.name, "late: not started since {since}; alert queued")
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::error!(job = %job.name, "failed to record a late alert: {}", Chain(&e))
                }
            }
        }
    }

    /// The job's deadline from `since` in its `zone`, from the cache when
    /// nothing moved.
    fn deadline(&mut self, job: &LateRow, since: Timestamp, zone: Tz) -> Option<Timestamp> {
        if let Some(c) = self.deadlines.get(&job.id)
            && c.since == since
            && c.updated_at == job.updated_at
        {
            return c.deadline;
        }
        let deadline = Schedule::from_canonical(&job.schedule)
            .ok()
            .and_then(|s| late_deadline(&s, zone, job.anchor, since));
        self.deadlines.insert(
            job.id.clone(),
            Cached {
                since,
                updated_at: job.updated_at,
                deadline,
            },
        );
        deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::test_backends::on_both;
    use crate::ids::JobId;
    use crate::job::Job;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    /// One `every 1m` job made at `t0`, in `db`.
    fn with_a_job(db: &Db, t0: Timestamp) {
        let schedule = Schedule::parse("every 1m", t0, Tz::UTC).unwrap();
        let argv = vec!["true".to_string()];
        let job = Job::new(
            JobId::generate(),
            "pulse".into(),
            "every 1m".into(),
            schedule,
            argv,
            t0,
        );
        store::insert_job(db.conn(), &job).unwrap();
    }

    fn late_alerts(db: &Db) -> Vec<(String, String)> {
        db.conn()
            .query_map(
                "SELECT kind, destination FROM alert_deliveries ORDER BY id",
                crate::params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    }

    /// An `every 1m` job that has not started since the gateway did: not
    /// late within its next slot plus the 2 min grace, late after, alerted
    /// once however often it is checked.
    #[test]
    fn a_job_not_started_within_its_period_and_grace_alerts_late_once() {
        on_both(|db| {
            let t0 = at("2026-01-01T10:00:00Z");
            with_a_job(db, t0);
            let mut config = Config::default();
            config.cron.alert_webhook = Some("http://127.0.0.1:9/hook".into());
            let mut watch = LateWatch::new(t0);
            let zones = ZoneTable::compiled_in_only();
            let mut check = |now: &str| {
                watch.next_check = None;
                watch.check(db, &config, Tz::UTC, &zones, at(now));
            };
            // Next slot 10:01, grace 2 min: due by 10:03.
            check("2026-01-01T10:02:59Z");
            assert!(late_alerts(db).is_empty());
            check("2026-01-01T10:03:01Z");
            check("2026-01-01T10:30:00Z");
            assert_eq!(
                late_alerts(db),
                [("late".to_string(), "webhook".to_string())]
            );
        });
    }

    /// Without anywhere to send it, lateness is not even looked at.
    #[test]
    fn no_destination_no_late_alert() {
        on_both(|db| {
            let t0 = at("2026-01-01T10:00:00Z");
            with_a_job(db, t0);
            let mut watch = LateWatch::new(t0);
            watch.check(
                db,
                &Config::default(),
                Tz::UTC,
                &ZoneTable::compiled_in_only(),
                at("2026-01-02T00:00:00Z"),
            );
            assert!(late_alerts(db).is_empty());
        });
    }
}
