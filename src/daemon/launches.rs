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
//! are busy at once (spawning, making a scope: D-Bus calls overlap; forks
//! do not); a staged launch that has reached its gate only waits and makes
//! room for the next, so every run of a burst is staged ahead.
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
use crate::dispatch::{AtGate, Gated, Launched, Launcher, Start};
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
use std::task::Poll;
use tracing::Instrument;

/// Launches busy at once (not counting those waiting at their gates).
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

/// What is known of a launch in flight.
struct InFlight {
    id: ExecutionId,
    owner: Owner,
    on_stop: OnStop,
    /// Counted against `cron.max_parallel_jobs`.
    counted: bool,
    /// A staged launch's view of its gate, and whether it was seen there.
    at_gate: Option<AtGate>,
    waiting: bool,
}

#[derive(Default)]
pub(crate) struct Launches {
    /// Runs due now (counted against `cron.max_parallel_jobs`).
    due: VecDeque<Queued>,
    /// Staged runs and command alerts.
    other: VecDeque<Queued>,
    flying: FuturesUnordered<Flying>,
    in_flight: HashMap<u64, InFlight>,
    /// Staged launches not yet seen at their gates.
    approaching: Vec<u64>,
    /// Launches in flight not waiting at a gate.
    busy: usize,
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

    /// The runs queued or in flight.
    pub(super) fn ids(&self) -> impl Iterator<Item = &ExecutionId> {
        let queued = self.due.iter().chain(self.other.iter()).map(|q| &q.run.id);
        queued.chain(self.in_flight.values().map(|f| &f.id))
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
        while self.busy < CONCURRENCY {
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
        let at_gate = match &q.start {
            Start::Staged(gate) => {
                self.approaching.push(key);
                Some(gate.at_gate())
            }
            Start::Now { .. } => None,
        };
        self.in_flight.insert(
            key,
            InFlight {
                id: q.run.id.clone(),
                owner: q.run.owner,
                on_stop: OnStop::of(&q.start),
                counted,
                at_gate,
                waiting: false,
            },
        );
        self.busy += 1;
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
        if let Some(f) = self.in_flight.remove(&key) {
            self.counted -= usize::from(f.counted);
            self.busy -= usize::from(!f.waiting);
        }
    }

    /// Note the staged launches that reached their gates since the last
    /// look; whether any did.
    fn note_arrivals(&mut self) -> bool {
        let mut arrived = false;
        let in_flight = &mut self.in_flight;
        let busy = &mut self.busy;
        self.approaching.retain(|key| match in_flight.get_mut(key) {
            Some(f) if f.at_gate.as_ref().is_some_and(AtGate::waiting) => {
                f.waiting = true;
                *busy -= 1;
                arrived = true;
                false
            }
            Some(_) => true,
            None => false,
        });
        arrived
    }

    /// The next launch that is done, or None when staged launches reached
    /// their gates and made room for queued ones (call [`Launches::start`]).
    /// Pending forever when none is in flight: poll it only when
    /// [`Launches::is_empty`] is false.
    pub(super) async fn next(&mut self) -> Option<(ClaimedRun, Launched)> {
        std::future::poll_fn(|cx| match self.flying.poll_next_unpin(cx) {
            Poll::Ready(Some((key, run, launched))) => {
                self.landed(key);
                Poll::Ready(Some((run, launched)))
            }
            Poll::Ready(None) => Poll::Pending,
            Poll::Pending => {
                let queued = !(self.due.is_empty() && self.other.is_empty());
                if self.note_arrivals() && queued {
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                }
            }
        })
        .await
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
        self.busy = 0;
        self.approaching.clear();
        let queued = self
            .due
            .drain(..)
            .chain(self.other.drain(..))
            .map(|q| (q.run.id, q.run.owner, OnStop::of(&q.start)));
        let flying = self
            .in_flight
            .drain()
            .map(|(_, f)| (f.id, f.owner, f.on_stop));
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
