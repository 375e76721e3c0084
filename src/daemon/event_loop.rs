//! The gateway's event loop: a dispatcher over the gateway's parts. Each
//! part says when it next needs to wake ([`Wakes`]) and what it does then;
//! the `select!` waits for the earliest of those or for an event: a stop
//! request, an exited child, a launch that is done, an alert's HTTP outcome,
//! a change in the ledger or Hermes's jobs. Nothing in it waits on IO
//! beyond one ledger statement at a time: launches are futures in flight
//! (`launches.rs`), what needs the bus is a task of its own.
//!
//! | part | wakes | does |
//! |---|---|---|
//! | stager (`staging.rs`) | a little before the next staged instant | releases its runs |
//! | claims (`claims.rs`) | the next slot or owed retry | claims what is due |
//! | stager | when an instant's lead begins | claims ahead, stages |
//! | alerts (`alerts/`) | the next owed delivery | begins deliveries |
//! | monitor (`monitor.rs`) | its period | watches runs, upkeep, lost hosts, Hermes |
//! | feed (`feed.rs`) | just after a change | looks again |
//!
//! ## Locking
//! The tick lock is held only inside the claim transactions. Nothing here
//! holds a lock across an await, IO or logging: the shared-state mutexes
//! are set and released in one statement.

use super::claims::Claims;
use super::cluster::Cluster;
use super::context::Ctx;
use super::fatal::{Fatal, dispatch_failure};
use super::feed::{Change, Feed};
use super::launches::Launches;
use super::monitor::{Monitor, release_unit};
use super::provider_sync::ProviderSync;
use super::runs::{Runs, reap_children};
use super::staging::Stager;
use super::supervision::stop_signals::StopRequests;
use super::upkeep::Upkeep;
use crate::alerts::{AlertDriver, Launch};
use crate::clock::loop_now;
use crate::db::Db;
use crate::dispatch::{Dispatched, Launched, Launcher};
use crate::ids::ExecutionId;
use crate::ledger;
use crate::ledger::{ClaimedRun, Execution, RunSpec};
use crate::logging::run_span;
use crate::reconcile::{self, ReapedWorker};
use crate::schedule::Timestamp;
use crate::store;
use crate::text::Chain;
use hermes_cron_core::provider::SyncAt;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::time::Instant;

/// The longest sleep without looking again, even with nothing due.
const MAX_SLEEP: Duration = Duration::from_secs(3600);

/// Why the loop ended.
#[derive(Debug)]
pub(crate) enum LoopExit {
    Signal(&'static str),
    /// A failure the gateway does not survive.
    Fatal(Fatal),
}

/// The signals the loop listens to: stop requests from the signal thread
/// (SIGTERM, SIGINT; see `stop_signals.rs`) and SIGCHLD.
pub(crate) struct Signals {
    stop: StopRequests,
    child: Signal,
}

impl Signals {
    pub(super) fn install(stop: StopRequests) -> std::io::Result<Signals> {
        Ok(Signals {
            stop,
            child: signal(SignalKind::child())?,
        })
    }
}

/// The gateway's parts, as the loop drives them.
pub(crate) struct Parts {
    pub runs: Runs,
    pub monitor: Monitor,
    pub stager: Stager,
    pub alerts: AlertDriver,
    pub feed: Feed,
    /// On a shared (PostgreSQL) ledger: this host's lease.
    pub cluster: Option<Cluster>,
    /// Runs claimed at start (`@reboot`), to launch first.
    pub launch_first: Vec<ClaimedRun>,
}

/// When each part next needs the loop (None: not until something changes).
#[derive(Clone, Copy, Debug, Default)]
struct Wakes {
    release: Option<Instant>,
    claim: Option<Instant>,
    stage: Option<Instant>,
    alerts: Option<Instant>,
    monitor: Option<Instant>,
    recheck: Option<Instant>,
}

impl Wakes {
    fn earliest(&self) -> Instant {
        [
            self.release,
            self.claim,
            self.stage,
            self.alerts,
            self.monitor,
            self.recheck,
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or_else(|| loop_now() + MAX_SLEEP)
    }
}

/// A wall-clock instant as a tokio deadline.
fn deadline_for(at: Timestamp, now: Timestamp) -> Instant {
    let wait = (at - now).to_std().unwrap_or_default().min(MAX_SLEEP);
    loop_now() + wait
}

pub(crate) struct EventLoop {
    cx: Ctx,
    db: Db,
    claims: Claims,
    stager: Stager,
    launches: Launches,
    runs: Runs,
    monitor: Monitor,
    upkeep: Upkeep,
    provider: ProviderSync,
    alerts: AlertDriver,
    feed: Feed,
    cluster: Option<Cluster>,
    /// Set when recording a launch met a failure the gateway does not survive.
    fatal: Option<Fatal>,
}

impl EventLoop {
    pub(super) fn new(cx: Ctx, db: Db, parts: Parts) -> EventLoop {
        let mut launches = Launches::default();
        for run in parts.launch_first {
            launches.now(run, true);
        }
        EventLoop {
            cx,
            db,
            claims: Claims::default(),
            stager: parts.stager,
            launches,
            runs: parts.runs,
            monitor: parts.monitor,
            upkeep: Upkeep::default(),
            provider: ProviderSync::default(),
            alerts: parts.alerts,
            feed: parts.feed,
            cluster: parts.cluster,
            fatal: None,
        }
    }

    pub(super) fn knobs(&self) -> &crate::knobs::Knobs {
        &self.cx.knobs
    }

    /// Runs that may still start under `cron.max_parallel_jobs` (bounded by
    /// default on a shared ledger: `CronConfig::parallel_bound`).
    fn capacity_left(&self) -> usize {
        match self.cx.config.cron.parallel_bound(self.db.caps().shared) {
            Some(max) => (max as usize).saturating_sub(self.runs.len() + self.launches.counted()),
            None => usize::MAX,
        }
    }

    /// Run until a signal or a fatal error.
    pub(super) async fn run(&mut self, mut sig: Signals) -> LoopExit {
        self.sync_provider(true);
        loop {
            self.cx.shared.bump();
            if self.provider.owed() {
                self.sync_provider(true);
            }
            self.launches.start(&self.cx.launcher, self.capacity_left());
            if let Some(fatal) = self.fatal.take() {
                return LoopExit::Fatal(fatal);
            }
            let wakes = self.wakes();
            tokio::select! {
                // In this order when several are ready: a stop, then the
                // parts' wakes (a release is due at an exact instant), reaping
                // and finishing launches, which can come in long bursts.
                biased;
                Some(name) = sig.stop.recv() => return LoopExit::Signal(name),
                _ = tokio::time::sleep_until(wakes.earliest()) => self.wake(wakes),
                _ = sig.child.recv() => self.reap(),
                landed = self.launches.next(), if !self.launches.is_empty() => {
                    // None: staged launches reached their gates, making
                    // room; the next turn starts queued ones.
                    if let Some((run, launched)) = landed {
                        self.launched(run, launched);
                    }
                }
                Some(done) = self.alerts.outcome() => {
                    self.alerts.record(&self.db, done, self.cx.clock.now());
                }
                change = self.feed.changed() => {
                    if let Change::HermesJobs = change {
                        self.sync_provider(true);
                    }
                }
            }
        }
    }

    fn wakes(&self) -> Wakes {
        let now = self.cx.clock.now();
        let not_before = |at: Instant| match self.claims.not_before() {
            Some(b) if b > at => b,
            _ => at,
        };
        let claim = match self.next_due() {
            Ok(Some(at)) => {
                tracing::debug!("sleeping until {at}");
                self.cx.shared.set_doing(format!("sleeping until {at}"));
                Some(deadline_for(at, now))
            }
            Ok(None) => {
                tracing::debug!("idle: no job due");
                self.cx.shared.set_doing("idle: no job due");
                None
            }
            Err(e) => {
                tracing::error!("failed to read the next due instant: {}", Chain(&e));
                Some(loop_now() + Duration::from_secs(1))
            }
        };
        Wakes {
            release: (self.capacity_left() > 0)
                .then(|| self.stager.next_release())
                .flatten()
                .map(|at| deadline_for(at, now)),
            claim: claim.map(not_before),
            stage: self
                .stager
                .next_pass(&self.db, &self.cx, now)
                .map(|at| not_before(deadline_for(at, now))),
            alerts: self
                .alerts
                .next_due(&self.db)
                .map(|at| deadline_for(at, now)),
            monitor: Some(self.monitor.next_wake()),
            recheck: self.feed.next_wake(),
        }
    }

    /// The next instant with work: a job's slot or an owed retry.
    fn next_due(&self) -> Result<Option<Timestamp>, store::StoreError> {
        let host = self.cx.host.filter();
        let job = store::next_due_at(self.db.conn(), &host)?;
        let retry = ledger::next_retry_at(self.db.conn(), &host)?;
        Ok(match (job, retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// Do what each part woken by now does, the release first.
    fn wake(&mut self, wakes: Wakes) {
        let due = |at: Option<Instant>| at.is_some_and(|at| at <= loop_now());
        if due(wakes.release) {
            self.release_due();
        }
        if due(wakes.claim) || due(wakes.stage) {
            // A fire takes Hermes's settings of its moment (five `stat`s).
            self.sync_provider(false);
        }
        if due(wakes.claim) {
            for run in self.claims.due(&mut self.db, &self.cx) {
                self.launches.now(run, true);
            }
            self.provider.owe();
        }
        if due(wakes.stage) {
            for (run, gate) in self.stager.pass(&mut self.db, &self.cx, &mut self.claims) {
                self.launches.staged(run, gate);
            }
        }
        if due(wakes.alerts) {
            let launch = Launch {
                db: &self.db,
                home: &self.cx.home,
                config: &self.cx.config,
                owner: self.cx.owner,
                host: &self.cx.host.name,
            };
            for run in self.alerts.pump(&launch, self.cx.clock.now()) {
                self.launches.now(run, false);
            }
        }
        if due(wakes.monitor) {
            self.monitor_round();
        }
        if due(wakes.recheck) {
            self.feed.rechecked();
        }
    }

    /// Release the staged runs whose instant has come, and record at once
    /// what they came to (their launches write the release bytes now).
    fn release_due(&mut self) {
        self.cx.shared.set_doing("releasing staged runs");
        let capacity = self.capacity_left();
        if self
            .stager
            .release_due(&self.db, self.cx.clock.as_ref(), capacity)
            > 0
        {
            for (run, launched) in self.launches.ready() {
                self.launched(run, launched);
            }
        }
    }

    /// The monitor's period: watch runs, then the chores that share its pace.
    fn monitor_round(&mut self) {
        self.cx.shared.set_doing("monitoring running work");
        let tracked: std::collections::HashSet<ExecutionId> = self
            .launches
            .ids()
            .chain(self.stager.ids())
            .chain(self.runs.ids())
            .cloned()
            .collect();
        let retake = self
            .monitor
            .round(&self.db, &self.cx, &mut self.runs, &|id| {
                tracked.contains(id)
            });
        self.retake(retake);
        self.take_over_lost_hosts();
        let now = self.cx.clock.now();
        let cx = &self.cx;
        self.upkeep
            .run(&mut self.db, &cx.home, &cx.host.name, &cx.config.cron, now);
        self.alerts
            .watch_late(&self.db, &cx.config, cx.zone, &cx.zones, now);
        self.sync_provider(false);
    }

    /// Record what a launch came to, in one place: the ledger's part
    /// (`Launcher::record`), then what the gateway tracks.
    fn launched(&mut self, run: ClaimedRun, launched: Launched) {
        // A long burst is progress, not a frozen loop.
        self.cx.shared.bump();
        let now = self.cx.clock.now();
        self.provider.owe();
        if let Err(e) = Launcher::record(&self.db, &run, &launched, now) {
            match dispatch_failure(&run.id, e) {
                Ok(fatal) => {
                    self.fatal.get_or_insert(fatal);
                }
                Err(e) => run_span(&run.job_name, &run.id)
                    .in_scope(|| tracing::error!("dispatch failed: {}", Chain(&e))),
            }
            return;
        }
        let span = run_span(&run.job_name, &run.id).entered();
        match launched {
            Launched::Dispatched(Dispatched::Started {
                mode,
                cause,
                unit,
                child,
            }) => {
                tracing::info!(
                    mode = %mode,
                    unit = unit.as_deref().unwrap_or("-"),
                    cause = cause.as_ref().map_or("-", |c| c.code.as_str()),
                    pid = child.id(), "started"
                );
                self.runs
                    .add_child(run.id.clone(), &run.job_name, child.id(), unit, mode);
                // Reaped through SIGCHLD by pid; the handle must not wait.
                drop(child);
            }
            Launched::Dispatched(Dispatched::Refused { cause, message }) => {
                tracing::warn!(cause = %cause.code, "{message}");
            }
            Launched::Dispatched(Dispatched::NotSpawned { message, .. }) => {
                tracing::error!("{message}");
            }
            Launched::NotStaged(why) => {
                drop(span);
                self.stager.not_staged(&run, &why);
            }
            Launched::Withdrawn => {}
            Launched::Gone { pid, error } => {
                tracing::warn!("the staged worker was gone at its release ({error})");
                self.settle(&run.id, pid, None, false);
            }
        }
        self.runs.publish(&self.cx.shared);
    }

    /// Reap every exited child and settle its run: a run's worker, or a
    /// staged worker that died before its release.
    fn reap(&mut self) {
        self.cx.shared.set_doing("reaping workers");
        for (pid, status) in reap_children() {
            if let Some(t) = self.runs.reaped(pid) {
                self.settle(&t.id, pid, Some(status), true);
                release_unit(self.cx.launcher.manager(), t.unit);
            } else if let Some(id) = self.stager.worker_died(pid) {
                self.settle(&id, pid, Some(status), false);
            }
        }
        self.runs.publish(&self.cx.shared);
    }

    /// Settle the run `id` of our worker `pid` that is gone (`released`: its
    /// go or release was written).
    fn settle(&self, id: &crate::ids::ExecutionId, pid: u32, status: Option<i32>, released: bool) {
        let w = ReapedWorker {
            by: self.cx.owner,
            pid,
            status,
            released,
        };
        match reconcile::reaped(&self.db, id, w, self.cx.clock.now()) {
            Ok(settled) => settled.announce(),
            Err(e) => tracing::error!(
                execution = %id,
                "failed to settle a reaped worker's run: {}",
                Chain(&e)
            ),
        }
    }

    /// On a shared ledger: resolve the rows of hosts whose lease expired,
    /// and launch here the claims taken over.
    fn take_over_lost_hosts(&mut self) {
        if !self
            .cluster
            .as_ref()
            .is_some_and(Cluster::may_resolve_others)
        {
            return;
        }
        self.cx.shared.set_doing("looking at other hosts' leases");
        let now = self.cx.clock.now();
        let report = match reconcile::lost_hosts(
            &mut self.db,
            &self.cx.home,
            &self.cx.owner,
            &self.cx.host.name,
            now,
        ) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("failed to look at other hosts' leases: {}", Chain(&e));
                return;
            }
        };
        for host in &report.hosts {
            tracing::warn!(
                host = %host,
                "host lost: its lease expired; its started runs are recorded unknown (host_lost), its unstarted claims taken over"
            );
        }
        for row in &report.unknown {
            reconcile::announce(
                row,
                &reconcile::Judgement::Orphaned {
                    code: ledger::ReasonCode::HostLost,
                    reason: "its host was lost".into(),
                },
            );
        }
        for (row, spec) in report.taken {
            run_span(&row.job_name, &row.id)
                .in_scope(|| tracing::info!("taken over from a lost host; dispatching here"));
            self.launch_taken(row, spec);
        }
    }

    /// Retake the claims of this host whose command never started and that
    /// nobody will start (`reconcile::retake`): launched now, or `missed`.
    pub(super) fn retake(&mut self, rows: Vec<(Execution, String)>) {
        if rows.is_empty() {
            return;
        }
        let now = self.cx.clock.now();
        let cx = &self.cx;
        let retaker = reconcile::Retaker {
            home: &cx.home,
            owner: cx.owner,
            host: &cx.host.name,
            catch_up_missed: cx.config.cron.catch_up_missed,
            zones: &cx.zones,
            fallback: cx.zone,
        };
        let mut taken = Vec::new();
        for (row, why) in rows {
            match reconcile::retake(&self.db, &retaker, &row, &why, now) {
                Ok(retaken) => {
                    retaken.announce();
                    if let reconcile::Retaken::Run(found) = retaken {
                        taken.push(*found);
                    }
                }
                Err(e) => run_span(&row.job_name, &row.id).in_scope(|| {
                    tracing::error!("cannot retake a claim that never started (tried again on the next round): {}", Chain(&e))
                }),
            }
        }
        for (row, spec) in taken {
            self.launch_taken(row, spec);
        }
    }

    /// Launch a claim this gateway took over, as its own.
    fn launch_taken(&mut self, row: Execution, spec: RunSpec) {
        let run = ClaimedRun::taken_over(row, spec, self.cx.owner);
        self.launches.now(run, true);
    }

    /// Follow Hermes's jobs (see `provider_sync.rs`).
    fn sync_provider(&mut self, forced: bool) {
        let cx = &self.cx;
        let when = SyncAt {
            now: cx.clock.now(),
            zone: cx.zone,
        };
        self.provider.run(
            &mut self.db,
            &cx.home,
            &cx.host.name,
            &cx.config.cron.env,
            when,
            forced,
        );
        cx.shared.set_hermes(self.provider.side());
    }

    /// On the way out: what is queued or in flight is settled
    /// (`Launches::abandon`); staged workers are let go (their gates close
    /// with this process, and they withdraw their rows); the lease thread
    /// stops; systemd hears we are stopping.
    pub(crate) fn shut_down(mut self) {
        self.monitor.notifier().stopping();
        self.launches.abandon(&self.db, self.cx.clock.now());
        if let Some(cluster) = self.cluster.take() {
            cluster.stop();
        }
    }
}

#[cfg(test)]
#[path = "loop_tests.rs"]
mod tests;
