//! The runs the gateway launches: queued until there is room, then in
//! flight as futures the loop polls in its `select!` (`Launcher::launch`,
//! one per run: spawn, scope, placement, then the go line, or the stage line
//! and the wait at the gate for its instant). A burst of a thousand scopes
//! never keeps the loop from its other work: a staged run due meanwhile is
//! released on time, a worker that exits is reaped.
//!
//! Runs due now (claims, taken-over claims) count against
//! `cron.max_parallel_jobs` while they are in flight and go first; staged
//! runs and command alerts do not count. At most [`CONCURRENCY`] launches
//! are in flight at once (D-Bus calls overlap; forks do not).
//!
//! None of them touches the loop's ledger connection: what each comes to is
//! recorded by the loop when it is done (`Launcher::record`).
//!
//! ## On the way out
//! [`Launches::abandon`] drops what is queued or in flight: a held worker's
//! gate closes with it (the worker exits untouched, or withdraws its staged
//! row); a run due now is recorded `missed` (`gateway_stopped`), a claim made
//! ahead is taken back. A claim that moved on meanwhile is left as it is (the
//! moves compare-and-set).

use crate::db::Db;
use crate::dispatch::{Gated, Launched, Launcher, Start};
use crate::ids::ExecutionId;
use crate::ledger::ClaimedRun;
use crate::ledger::{self, ExecState};
use crate::logging::run_span;
use crate::process::Owner;
use crate::schedule::Timestamp;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tracing::Instrument;

/// Launches in flight at once.
pub(crate) const CONCURRENCY: usize = 32;

/// A run waiting for room.
struct Queued {
    run: ClaimedRun,
    start: Start,
}

/// How a launch's claim is settled if the gateway stops first.
#[derive(Clone, Copy)]
enum OnStop {
    /// A run due now: recorded `missed` (`gateway_stopped`).
    Abandon,
    /// A claim made ahead: taken back.
    Withdraw,
}

impl OnStop {
    fn of(start: &Start) -> OnStop {
        match start {
            Start::Now { .. } => OnStop::Abandon,
            Start::Staged(_) => OnStop::Withdraw,
        }
    }
}

type Flying = Pin<Box<dyn Future<Output = (u64, ClaimedRun, Launched)>>>;

#[derive(Default)]
pub(crate) struct Launches {
    /// Runs due now (counted against `cron.max_parallel_jobs`).
    due: VecDeque<Queued>,
    /// Staged runs and command alerts.
    other: VecDeque<Queued>,
    flying: FuturesUnordered<Flying>,
    in_flight: HashMap<u64, (ExecutionId, Owner, OnStop, bool)>,
    next_key: u64,
    counted: usize,
}

impl Launches {
    /// Queue `run` to start now; `counted`: against `cron.max_parallel_jobs`.
    pub(super) fn now(&mut self, run: ClaimedRun, counted: bool) {
        let queued = Queued {
            run,
            start: Start::NOW,
        };
        if counted {
            self.due.push_back(queued);
        } else {
            self.other.push_back(queued);
        }
    }

    /// Queue `run` to be staged, released through `gate`.
    pub(super) fn staged(&mut self, run: ClaimedRun, gate: Gated) {
        self.other.push_back(Queued {
            run,
            start: Start::Staged(gate),
        });
    }

    /// Runs due now in flight (they count against `cron.max_parallel_jobs`).
    pub(super) fn counted(&self) -> usize {
        self.counted
    }

    pub(super) fn is_empty(&self) -> bool {
        self.flying.is_empty()
    }

    /// Put queued runs in flight while there is room: runs due now first
    /// (while `capacity` lasts), then the others.
    pub(super) fn start(&mut self, launcher: &Arc<Launcher>, mut capacity: usize) {
        while self.flying.len() < CONCURRENCY {
            let (queued, counted) = if capacity > 0
                && let Some(q) = self.due.pop_front()
            {
                capacity -= 1;
                (q, true)
            } else if let Some(q) = self.other.pop_front() {
                (q, false)
            } else {
                break;
            };
            self.fly(launcher.clone(), queued, counted);
        }
    }

    fn fly(&mut self, launcher: Arc<Launcher>, q: Queued, counted: bool) {
        let key = self.next_key;
        self.next_key += 1;
        let on_stop = OnStop::of(&q.start);
        self.in_flight
            .insert(key, (q.run.id.clone(), q.run.owner, on_stop, counted));
        if counted {
            self.counted += 1;
        }
        let span = run_span(&q.run.job_name, &q.run.id);
        let Queued { run, start } = q;
        self.flying.push(Box::pin(
            async move {
                let launched = launcher.launch(&run, start).await;
                (key, run, launched)
            }
            .instrument(span),
        ));
    }

    fn landed(&mut self, key: u64) {
        if let Some((_, _, _, true)) = self.in_flight.remove(&key) {
            self.counted -= 1;
        }
    }

    /// The next launch that is done (pending forever when none is in
    /// flight: poll it only when [`Launches::is_empty`] is false).
    pub(super) async fn next(&mut self) -> (ClaimedRun, Launched) {
        match self.flying.next().await {
            Some((key, run, launched)) => {
                self.landed(key);
                (run, launched)
            }
            None => std::future::pending().await,
        }
    }

    /// Every launch that can finish without waiting, now: the staged runs
    /// whose gates were just opened write their release bytes here.
    pub(super) fn ready(&mut self) -> Vec<(ClaimedRun, Launched)> {
        let mut out = Vec::new();
        while let Some(Some((key, run, launched))) = self.flying.next().now_or_never() {
            self.landed(key);
            out.push((run, launched));
        }
        out
    }

    /// On the way out: drop what is queued or in flight and settle its
    /// claims (module documentation).
    pub(super) fn abandon(&mut self, db: &Db, now: Timestamp) {
        self.flying.clear();
        self.counted = 0;
        let queued = self
            .due
            .drain(..)
            .chain(self.other.drain(..))
            .map(|q| (q.run.id, q.run.owner, OnStop::of(&q.start)));
        let flying = self
            .in_flight
            .drain()
            .map(|(_, (id, owner, on_stop, _))| (id, owner, on_stop));
        for (id, owner, on_stop) in queued.collect::<Vec<_>>().into_iter().chain(flying) {
            let _ = match on_stop {
                OnStop::Abandon => ledger::abandoned(db.conn(), &id, &owner, now),
                OnStop::Withdraw => {
                    let stored = owner.to_string();
                    ledger::withdraw(db.conn(), &id, ExecState::Claimed, Some(&stored))
                }
            };
        }
    }
}
