//! The event loop's part in delivering alerts: pick the deliveries that are
//! due, begin an attempt of each and hand it off (an HTTP request to the
//! `alerts-http` thread; a command alert to the launcher, like a job), and
//! record what comes back. Nothing here waits on a delivery: an HTTP
//! outcome arrives on [`AlertDriver::outcome`], a command alert's run
//! settles its own attempt when it ends.

use super::command::{self, Launched};
use super::http::{HttpThread, Outcome, Request};
use super::late::LateWatch;
use crate::config::Config;
use crate::db::Db;
use crate::dispatch::Launcher;
use crate::home::Home;
use crate::ledger::{self, Delivery};
use crate::process::Owner;
use crate::schedule::{Timestamp, Tz};
use crate::text::Chain;
use hermes_cron_core::alert::Destination;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The most deliveries begun in one turn of the loop.
const BATCH: usize = 32;

/// What a turn of the loop needs to launch command alerts.
pub(crate) struct Launch<'a> {
    pub db: &'a Db,
    pub launcher: &'a Launcher,
    pub home: &'a Home,
    pub config: &'a Config,
    pub owner: Owner,
}

pub(crate) struct AlertDriver {
    http: HttpThread,
    results_tx: UnboundedSender<Outcome>,
    results: UnboundedReceiver<Outcome>,
    late: LateWatch,
}

impl AlertDriver {
    pub fn new(gateway_started: Timestamp) -> AlertDriver {
        let (results_tx, results) = unbounded_channel();
        AlertDriver {
            http: HttpThread::default(),
            results_tx,
            results,
            late: LateWatch::new(gateway_started),
        }
    }

    /// At start: HTTP attempts a previous gateway left open end failed.
    pub fn startup(&self, db: &Db, now: Timestamp) {
        match ledger::interrupted_attempts(db.conn(), now) {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                "{n} alert deliveries were interrupted by the last stop; retrying them"
            ),
            Err(e) => tracing::error!("failed to look for interrupted alert deliveries: {e}"),
        }
    }

    /// When the next delivery is due (None: none owed, or unreadable).
    pub fn next_due(&self, db: &Db) -> Option<Timestamp> {
        ledger::next_delivery_at(db.conn()).ok().flatten()
    }

    /// The next HTTP outcome (pending forever when none is coming).
    pub async fn outcome(&mut self) -> Option<Outcome> {
        self.results.recv().await
    }

    /// Record an HTTP attempt's outcome.
    pub fn record(&self, db: &Db, o: &Outcome, now: Timestamp) {
        if o.ok {
            tracing::info!(delivery = %o.delivery, attempt = o.attempt, "alert delivered: {}", o.result);
        } else {
            tracing::warn!(delivery = %o.delivery, attempt = o.attempt, "alert delivery failed: {}", o.result);
        }
        if let Err(e) = ledger::end_attempt(db.conn(), &o.delivery, o.attempt, now, o.ok, &o.result)
        {
            // Left `sending`: the next gateway start retries it.
            tracing::error!(delivery = %o.delivery, "failed to record an alert attempt: {e}");
        }
    }

    /// Begin every due delivery (up to a batch); the command alerts started.
    pub async fn pump(&mut self, l: &Launch<'_>, now: Timestamp) -> Vec<Launched> {
        let due = match ledger::due_deliveries(l.db.conn(), now, BATCH) {
            Ok(due) => due,
            Err(e) => {
                tracing::error!("failed to read the alerts owed: {e}");
                return Vec::new();
            }
        };
        let mut launched = Vec::new();
        for d in due {
            match d.destination {
                Destination::Command => {
                    match command::launch(l.db, l.launcher, l.home, l.config, l.owner, &d, now)
                        .await
                    {
                        Ok(Some(run)) => {
                            tracing::info!(delivery = %d.id, kind = %d.kind, job = %d.job_name, execution = %run.id, "alert command started");
                            launched.push(run);
                        }
                        Ok(None) => {}
                        Err(message) => {
                            tracing::warn!(delivery = %d.id, "alert command not started: {message}")
                        }
                    }
                }
                Destination::Webhook | Destination::Ping => self.send(l.db, &d, now),
            }
        }
        launched
    }

    fn send(&mut self, db: &Db, d: &Delivery, now: Timestamp) {
        match ledger::begin_attempt(db.conn(), d, now, None) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::error!(delivery = %d.id, "failed to begin an alert attempt: {e}");
                return;
            }
        }
        let req = Request {
            delivery: d.id.clone(),
            attempt: d.attempts + 1,
            url: d.target.clone(),
            body: (d.destination == Destination::Webhook).then(|| d.event.clone()),
        };
        if let Err(e) = self.http.send(req, &self.results_tx) {
            let result = format!("cannot start the alerts-http thread: {}", Chain(&e));
            let _ = ledger::end_attempt(db.conn(), &d.id, d.attempts + 1, now, false, &result);
        }
    }

    /// The lateness watch (at most every 30 s).
    pub fn watch_late(&mut self, db: &Db, config: &Config, zone: Tz, now: Timestamp) {
        self.late.check(db, config, zone, now);
    }
}
