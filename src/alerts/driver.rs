//! The event loop's part in delivering alerts: pick the deliveries that are
//! due, begin an attempt of each and hand it off (an HTTP request to the
//! `alerts-http` thread; a command alert's run back to the loop, which
//! launches it like any run), and record what comes back. Nothing here
//! waits on a delivery: an HTTP outcome arrives on [`AlertDriver::outcome`],
//! a command alert's run settles its own attempt when it ends.

use super::command::{self, Launch};
use super::http::{HttpThread, Outcome, Request};
use super::late::LateWatch;
use crate::config::Config;
use crate::db::Db;
use crate::ledger::{self, Delivery};
use crate::schedule::{Timestamp, Tz, ZoneTable};
use crate::text::Chain;
use hermes_cron_core::alert::Destination;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The most deliveries begun in one turn of the loop.
const BATCH: usize = 32;
/// After a failed ledger write (a full disk, a lock held too long), wait
/// this long before writing again, doubling up to [`MAX_HOLD`].
const FIRST_HOLD: Duration = Duration::from_secs(1);
const MAX_HOLD: Duration = Duration::from_secs(30);

pub(crate) struct AlertDriver {
    http: HttpThread,
    results_tx: UnboundedSender<Outcome>,
    results: UnboundedReceiver<Outcome>,
    late: LateWatch,
    /// Outcomes the ledger could not take yet, written again later (an
    /// attempt left open is retried at the next start at the latest).
    unrecorded: Vec<(Outcome, Timestamp)>,
    /// After a failed write: no delivery begins before this.
    hold: Option<(Timestamp, Duration)>,
    /// HTTP requests handed to the thread and not answered yet.
    in_flight: usize,
}

impl AlertDriver {
    pub(crate) fn new(gateway_started: Timestamp) -> AlertDriver {
        let (results_tx, results) = unbounded_channel();
        AlertDriver {
            http: HttpThread::default(),
            results_tx,
            results,
            late: LateWatch::new(gateway_started),
            unrecorded: Vec::new(),
            hold: None,
            in_flight: 0,
        }
    }

    /// A ledger write failed: hold deliveries back for a while (doubling).
    fn held_back(&mut self, now: Timestamp) {
        let wait = self.hold.map_or(FIRST_HOLD, |(_, w)| (w * 2).min(MAX_HOLD));
        let until = now + chrono::Duration::from_std(wait).unwrap_or_default();
        self.hold = Some((until, wait));
    }

    /// At start: HTTP attempts a previous gateway left open end failed.
    pub(crate) fn startup(&self, db: &Db, host: &str, now: Timestamp) {
        match ledger::interrupted_attempts(db.conn(), ledger::Interrupted::Restarted { host }, now)
        {
            Ok(0) => {}
            Ok(n) => tracing::warn!(
                "{n} alert deliveries were interrupted by the last stop; retrying them"
            ),
            Err(e) => tracing::error!("failed to look for interrupted alert deliveries: {e}"),
        }
    }

    /// When the next delivery is due (None: none owed, or unreadable);
    /// not before a hold after a failed write.
    pub(crate) fn next_due(&self, db: &Db) -> Option<Timestamp> {
        let next = ledger::next_delivery_at(db.conn()).ok().flatten();
        let next = if self.unrecorded.is_empty() {
            next
        } else {
            self.hold.map(|(until, _)| until).or(next)
        };
        match (next, self.hold) {
            (Some(at), Some((until, _))) => Some(at.max(until)),
            (at, _) => at,
        }
    }

    /// The next HTTP outcome (pending forever when none is coming).
    pub(crate) async fn outcome(&mut self) -> Option<Outcome> {
        self.results.recv().await
    }

    /// Record an HTTP attempt's outcome (kept and written again later when
    /// the ledger cannot take it now).
    pub(crate) fn record(&mut self, db: &Db, o: Outcome, now: Timestamp) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if o.ok {
            tracing::info!(delivery = %o.delivery, attempt = o.attempt, "alert delivered: {}", o.result);
        } else {
            tracing::warn!(delivery = %o.delivery, attempt = o.attempt, "alert delivery failed: {}", o.result);
        }
        self.write_outcome(db, o, now);
    }

    fn write_outcome(&mut self, db: &Db, o: Outcome, at: Timestamp) {
        if let Err(e) = ledger::end_attempt(db.conn(), &o.delivery, o.attempt, at, o.ok, &o.result)
        {
            tracing::error!(delivery = %o.delivery, "failed to record an alert attempt (kept, written again later): {e}");
            self.held_back(at);
            self.unrecorded.push((o, at));
        }
    }

    /// Begin every due delivery (up to a batch); the runs of the command
    /// alerts begun, for the loop to launch.
    pub(crate) fn pump(&mut self, l: &Launch<'_>, now: Timestamp) -> Vec<ledger::ClaimedRun> {
        if self.hold.is_some_and(|(until, _)| now < until) {
            return Vec::new();
        }
        for (o, at) in std::mem::take(&mut self.unrecorded) {
            self.write_outcome(l.db, o, at);
        }
        if !self.unrecorded.is_empty() {
            return Vec::new();
        }
        self.hold = None;
        let due = match ledger::due_deliveries(l.db.conn(), now, BATCH) {
            Ok(due) => due,
            Err(e) => {
                tracing::error!("failed to read the alerts owed: {e}");
                return Vec::new();
            }
        };
        let mut runs = Vec::new();
        for d in due {
            match d.destination {
                Destination::Command => match command::claim(l, &d, now) {
                    Ok(Some(run)) => {
                        tracing::info!(delivery = %d.id, kind = %d.kind, job = %d.job_name, execution = %run.id, "alert command claimed");
                        runs.push(run);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        tracing::error!(delivery = %d.id, "failed to begin an alert command: {}", Chain(&e));
                        self.held_back(now);
                        break;
                    }
                },
                Destination::Webhook | Destination::Ping => {
                    if !self.send(l, &d, now) {
                        break;
                    }
                }
            }
        }
        runs
    }

    /// Begin an HTTP attempt; false when the ledger cannot be written.
    fn send(&mut self, l: &Launch<'_>, d: &Delivery, now: Timestamp) -> bool {
        let db = l.db;
        match ledger::begin_attempt(db.conn(), d, now, l.host) {
            Ok(true) => {}
            Ok(false) => return true,
            Err(e) => {
                tracing::error!(delivery = %d.id, "failed to begin an alert attempt: {e}");
                self.held_back(now);
                return false;
            }
        }
        let req = Request {
            delivery: d.id.clone(),
            attempt: d.attempts + 1,
            url: d.target.clone(),
            body: (d.destination == Destination::Webhook).then(|| d.event.clone()),
        };
        match self.http.send(req, &self.results_tx) {
            Ok(()) => self.in_flight += 1,
            Err(e) => {
                let o = Outcome {
                    delivery: d.id.clone(),
                    attempt: d.attempts + 1,
                    ok: false,
                    result: format!("cannot start the alerts-http thread: {}", Chain(&e)),
                };
                self.write_outcome(db, o, now);
            }
        }
        true
    }

    /// HTTP requests handed off and not answered yet.
    pub(crate) fn http_in_flight(&self) -> usize {
        self.in_flight
    }

    /// The lateness watch (at most every 30 s); job zones read in `zones`.
    pub(crate) fn watch_late(
        &mut self,
        db: &Db,
        config: &Config,
        zone: Tz,
        zones: &ZoneTable,
        now: Timestamp,
    ) {
        self.late.check(db, config, zone, zones, now);
    }
}
