//! Work the event loop has in flight: dispatches (spawn, scope, go line),
//! stagings (spawn, scope, stage line), and the releases that wait for
//! overlap `replace` to stop the previous runs. They are futures the loop
//! polls in its `select!`, next to claiming, releasing and reaping, so a
//! burst of a thousand scopes never keeps it from its other work: a staged
//! run due meanwhile is released on time, a worker that exits is reaped.
//!
//! None of them touches the ledger (the loop's one connection): what they
//! come to is recorded by the loop when they are done ([`Done`]). The one
//! exception reads only, through a connection of its own (`replace`).
//!
//! ## On the way out
//! [`InFlight::abandon`] drops what is still in flight: a held worker's gate
//! closes with it (the worker exits untouched, or withdraws its staged row),
//! and each dispatch's claim is recorded `missed` (`gateway_stopped`), each
//! staging's claim withdrawn; a claim that moved on meanwhile is left as it
//! is (the moves compare-and-set).

use super::staging::HeldRun;
use crate::db::Db;
use crate::db::Location;
use crate::dispatch::{Attach, Dispatched, Launcher, Requirement, Staged, stop_previous};
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState, Execution};
use crate::logging::run_span;
use crate::process::Owner;
use crate::schedule::Timestamp;
use crate::tick::{ClaimedAhead, ClaimedRun};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tracing::Instrument;

/// What a piece of in-flight work came to.
pub(crate) enum Done {
    /// Not recorded yet (`Launcher::record`).
    Dispatched {
        run: ClaimedRun,
        prepared: Dispatched,
    },
    Staged {
        ahead: ClaimedAhead,
        staged: Staged,
    },
    /// The previous runs are stopped: release this one now.
    Replaced {
        held: HeldRun,
    },
}

/// What a piece of in-flight work is for.
enum Kind {
    Dispatch(ExecutionId, Owner),
    Stage(ExecutionId, Owner),
    Replace,
}

type Flying = Pin<Box<dyn Future<Output = (u64, Done)>>>;

/// The loop's in-flight work.
#[derive(Default)]
pub(crate) struct InFlight {
    futures: FuturesUnordered<Flying>,
    kinds: HashMap<u64, Kind>,
    next_key: u64,
    dispatches: usize,
}

impl InFlight {
    pub fn len(&self) -> usize {
        self.futures.len()
    }

    pub fn is_empty(&self) -> bool {
        self.futures.is_empty()
    }

    /// Dispatches in flight (they count against `cron.max_parallel_jobs`).
    pub fn dispatches(&self) -> usize {
        self.dispatches
    }

    fn push(&mut self, kind: Kind, fut: impl Future<Output = Done> + 'static) {
        let key = self.next_key;
        self.next_key += 1;
        if matches!(kind, Kind::Dispatch(..)) {
            self.dispatches += 1;
        }
        self.kinds.insert(key, kind);
        self.futures.push(Box::pin(async move { (key, fut.await) }));
    }

    /// Dispatch `run` (overlap `replace` first, through `db`'s file).
    pub fn dispatch(&mut self, launcher: Arc<Launcher>, db: Location, run: ClaimedRun) {
        let span = run_span(&run.job_name, &run.id);
        let kind = Kind::Dispatch(run.id.clone(), run.owner);
        self.push(
            kind,
            async move {
                if !run.replace.is_empty() {
                    stop_previous(&db, launcher.manager(), &run.replace).await;
                }
                let prepared = launcher
                    .prepare(&run, Requirement::None, Attach::Detached)
                    .await;
                Done::Dispatched { run, prepared }
            }
            .instrument(span),
        );
    }

    /// Stage `ahead`.
    pub fn stage(&mut self, launcher: Arc<Launcher>, ahead: ClaimedAhead) {
        let span = run_span(&ahead.run.job_name, &ahead.run.id);
        let kind = Kind::Stage(ahead.run.id.clone(), ahead.run.owner);
        self.push(
            kind,
            async move {
                let staged = launcher.stage(&ahead.run).await;
                Done::Staged { ahead, staged }
            }
            .instrument(span),
        );
    }

    /// Stop `previous` (overlap `replace`), then hand `held` back for release.
    pub fn replace_then_release(
        &mut self,
        launcher: Arc<Launcher>,
        db: Location,
        held: HeldRun,
        previous: Vec<Execution>,
    ) {
        let span = run_span(&held.ahead.run.job_name, &held.ahead.run.id);
        self.push(
            Kind::Replace,
            async move {
                stop_previous(&db, launcher.manager(), &previous).await;
                Done::Replaced { held }
            }
            .instrument(span),
        );
    }

    /// The next piece of work that is done (pending forever when none is
    /// in flight: poll it only when [`InFlight::is_empty`] is false).
    pub async fn next(&mut self) -> Done {
        match self.futures.next().await {
            Some((key, done)) => {
                if let Some(Kind::Dispatch(..)) = self.kinds.remove(&key) {
                    self.dispatches -= 1;
                }
                done
            }
            None => std::future::pending().await,
        }
    }

    /// On the way out: drop what is in flight and record it (module docs).
    pub fn abandon(&mut self, db: &Db, now: Timestamp) {
        self.futures.clear();
        self.dispatches = 0;
        for (_, kind) in self.kinds.drain() {
            match kind {
                Kind::Dispatch(id, owner) => {
                    let _ = ledger::abandoned(db.conn(), &id, &owner, now);
                }
                Kind::Stage(id, owner) => {
                    let stored = owner.to_string();
                    let _ = ledger::withdraw(db.conn(), &id, ExecState::Claimed, Some(&stored));
                }
                Kind::Replace => {}
            }
        }
    }
}
