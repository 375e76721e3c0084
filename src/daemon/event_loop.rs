//! The gateway's event loop: sleep until the next due instant (no polling
//! interval for due work), wake early when the database changes or a child
//! exits, claim under the tick lock, dispatch up to `cron.max_parallel_jobs`,
//! reap, and watch running work. Ahead of an instant it stages the runs due
//! then (`staging.rs`) and releases them at the instant (`release.rs`).
//! Dispatches and stagings are in flight inside the `select!`
//! (`inflight.rs`): a burst never keeps the loop from a release, a claim or
//! a reap.
//!
//! ## Locking
//! The tick lock is held only inside `claim_due` and `claim_ahead` (the
//! claim transactions). Nothing here holds a lock across an await, IO or
//! logging: the shared-state mutexes are set and released in one statement.

use super::fatal::{Fatal, dispatch_failure};
use super::inflight::{Done, InFlight};
use super::monitor::Monitor;
use super::provider_sync::ProviderSync;
use super::release;
use super::runs::{Runs, reap_children};
use super::staging::Stager;
use super::state::Shared;
use super::supervision::stop_signals::StopRequests;
use super::upkeep::Upkeep;
use crate::alerts::{AlertDriver, Launch};
use crate::clock::Clock;
use crate::config::Config;
use crate::db::Db;
use crate::db::{DbWatcher, RECHECK_AFTER_CHANGE};
use crate::dispatch::{Dispatched, Launcher};
use crate::home::Home;
use crate::ledger::{self, ExecState};
use crate::logging::run_span;
use crate::process::Owner;
use crate::reconcile::{self, Settled};
use crate::schedule::{Timestamp, Tz};
use crate::store;
use crate::text::Chain;
use crate::tick::{ClaimContext, ClaimReport, ClaimedAhead, ClaimedRun, claim_due};
use hermes_cron_core::health::{TickResult, TickSummary};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// The longest sleep without looking again, even with nothing due.
const MAX_SLEEP: Duration = Duration::from_secs(3600);
/// Dispatches in flight at once (D-Bus calls overlap; forks do not).
const DISPATCH_CONCURRENCY: usize = 32;

/// Why the loop ended.
#[derive(Debug)]
pub(crate) enum LoopExit {
    Signal(&'static str),
    /// A failure the gateway does not survive.
    Fatal(Fatal),
}

/// The signals the loop listens to: stop requests from the signal thread
/// (SIGTERM, SIGINT; see `signals.rs`) and SIGCHLD.
pub(crate) struct Signals {
    stop: StopRequests,
    child: Signal,
}

impl Signals {
    pub fn install(stop: StopRequests) -> std::io::Result<Signals> {
        Ok(Signals {
            stop,
            child: signal(SignalKind::child())?,
        })
    }
}

/// Everything the loop owns.
pub(crate) struct EventLoop {
    pub home: Home,
    pub config: Config,
    pub zone: Tz,
    pub clock: Arc<dyn Clock>,
    pub db: Db,
    pub launcher: Arc<Launcher>,
    pub shared: Arc<Shared>,
    pub owner: Owner,
    pub runs: Runs,
    pub monitor: Monitor,
    pub upkeep: Upkeep,
    pub provider: ProviderSync,
    /// Alert deliveries and the lateness watch (`alerts/`).
    pub alerts: AlertDriver,
    pub queue: VecDeque<ClaimedRun>,
    /// Runs claimed ahead, waiting for room in flight to be staged.
    pub stage_queue: VecDeque<ClaimedAhead>,
    pub stager: Stager,
    pub inflight: InFlight,
    /// After a failed or contended claim, do not claim again before this.
    pub claim_backoff_until: Option<tokio::time::Instant>,
    pub claim_failures: u32,
    /// Set when a dispatch met a failure the gateway does not survive.
    pub fatal: Option<Fatal>,
    /// On a shared (PostgreSQL) ledger: this host's lease.
    pub cluster: Option<super::cluster::Cluster>,
    /// On a PostgreSQL ledger: job changes by other processes.
    pub listener: Option<crate::db::PgListener>,
}

/// A wall-clock instant as a tokio deadline.
fn deadline_for(at: Timestamp, now: Timestamp) -> tokio::time::Instant {
    let wait = (at - now).to_std().unwrap_or_default().min(MAX_SLEEP);
    tokio::time::Instant::now() + wait
}

impl EventLoop {
    /// Runs that may still start under `cron.max_parallel_jobs`.
    pub(super) fn capacity_left(&self) -> usize {
        match self.config.cron.max_parallel_jobs {
            Some(max) => {
                (max as usize).saturating_sub(self.runs.len() + self.inflight.dispatches())
            }
            None => usize::MAX,
        }
    }

    /// The next instant with work: a job's slot or an owed retry.
    fn next_due(&self) -> Result<Option<Timestamp>, String> {
        let host = crate::cluster::Host::this().filter();
        let job = store::next_due_at(self.db.conn(), &host).map_err(|e| e.to_string())?;
        let retry = ledger::next_retry_at(self.db.conn(), &host).map_err(|e| e.to_string())?;
        Ok(match (job, retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// When to wake for the next release, a little before its instant
    /// (None: nothing held, or no capacity to release into).
    fn release_deadline(&self, now: Timestamp) -> Option<tokio::time::Instant> {
        let (at, runs) = self.stager.next_release()?;
        if self.capacity_left() == 0 {
            return None;
        }
        let margin = chrono::Duration::from_std(release::margin(runs)).unwrap_or_default();
        Some(deadline_for(at - margin, now))
    }

    /// Run until a signal or a fatal error.
    pub async fn run(&mut self, mut sig: Signals, mut watcher: DbWatcher) -> LoopExit {
        let mut monitor_tick = tokio::time::interval(self.monitor.period());
        monitor_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut recheck: Option<tokio::time::Instant> = None;
        self.sync_provider(true);
        loop {
            self.shared.bump();
            self.start_in_flight();
            self.deliver_alerts().await;
            if let Some(fatal) = self.fatal.take() {
                return LoopExit::Fatal(fatal);
            }
            let now = self.clock.now();
            let deadline = match self.next_due() {
                Ok(Some(at)) => {
                    tracing::debug!("sleeping until {at}");
                    self.shared.set_doing(format!("sleeping until {at}"));
                    deadline_for(at, now)
                }
                Ok(None) => {
                    tracing::debug!("idle: no job due");
                    self.shared.set_doing("idle: no job due");
                    tokio::time::Instant::now() + MAX_SLEEP
                }
                Err(e) => {
                    tracing::error!("failed to read the next due instant: {e}");
                    tokio::time::Instant::now() + Duration::from_secs(1)
                }
            };
            let deadline = match self.claim_backoff_until {
                Some(b) if b > deadline => b,
                _ => deadline,
            };
            let stage_at = self
                .stager
                .next_pass(&self.db, now)
                .map(|at| deadline_for(at, now));
            let release_at = self.release_deadline(now);
            let soon = tokio::time::Instant::now;
            // An owed alert wakes the loop (its top begins it), not a claim.
            let alert_due = self
                .alerts
                .next_due(&self.db)
                .map(|at| deadline_for(at, now));
            tokio::select! {
                // In this order when several are ready: a release is due at
                // an exact instant; reaping and claiming come before
                // finishing in-flight work, which can come in long bursts.
                biased;
                Some(name) = sig.stop.recv() => return LoopExit::Signal(name),
                _ = tokio::time::sleep_until(release_at.unwrap_or_else(soon)), if release_at.is_some() => {
                    self.release_due();
                }
                _ = sig.child.recv() => self.on_children_exited().await,
                _ = tokio::time::sleep_until(deadline) => self.claim_pass(),
                _ = tokio::time::sleep_until(stage_at.unwrap_or_else(soon)), if stage_at.is_some() => {
                    self.stage_pass();
                }
                done = self.inflight.next(), if !self.inflight.is_empty() => self.on_done(done),
                _ = tokio::time::sleep_until(alert_due.unwrap_or(deadline)), if alert_due.is_some_and(|a| a < deadline) => {}
                Some(done) = self.alerts.outcome() => self.alerts.record(&self.db, done, self.clock.now()),
                _ = watcher.changed() => {
                    if watcher.take_hermes_jobs_changed() {
                        self.sync_provider(true);
                    }
                    // The write that woke us may not be committed yet (a WAL
                    // append comes before its commit); look again shortly.
                    recheck = Some(tokio::time::Instant::now() + RECHECK_AFTER_CHANGE);
                }
                _ = async {
                    match self.listener.as_mut() {
                        Some(l) => l.changed().await,
                        None => std::future::pending().await,
                    }
                } => {}
                _ = tokio::time::sleep_until(recheck.unwrap_or_else(soon)), if recheck.is_some() => {
                    recheck = None;
                }
                _ = monitor_tick.tick() => {
                    self.shared.set_doing("monitoring running work");
                    self.monitor.run(&self.db, &self.launcher, &mut self.runs, &self.shared, self.clock.now()).await;
                    self.resolve_lost_hosts();
                    self.upkeep.run(&mut self.db, &self.home, &self.config.cron, self.clock.now());
                    self.alerts.watch_late(&self.db, &self.config, self.zone, self.clock.now());
                    self.sync_provider(false);
                }
            }
        }
    }

    /// On a shared ledger: resolve the rows of hosts whose lease expired,
    /// and queue the claims taken over for dispatch here.
    fn resolve_lost_hosts(&mut self) {
        let Some(cluster) = &self.cluster else {
            return;
        };
        if !cluster.may_resolve_others() {
            return;
        }
        self.shared.set_doing("looking at other hosts' leases");
        let now = self.clock.now();
        let report = match reconcile::lost_hosts(&mut self.db, &self.home, &self.owner, now) {
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
            run_span(&row.job_name, &row.id).in_scope(|| {
                tracing::warn!(
                    reason = "host_lost",
                    host = row.host.as_deref().unwrap_or("-"),
                    "resolved unknown: its host was lost"
                )
            });
        }
        for (row, spec) in report.taken {
            run_span(&row.job_name, &row.id)
                .in_scope(|| tracing::info!("taken over from a lost host; dispatching here"));
            self.queue.push_back(ClaimedRun {
                id: row.id,
                job_id: row.job_id,
                job_name: row.job_name,
                scheduled_for: row.scheduled_for,
                attempt: row.attempt,
                source: row.source,
                spec,
                owner: self.owner,
                replace: Vec::new(),
            });
        }
    }

    /// Follow Hermes's jobs (see `provider_sync.rs`).
    fn sync_provider(&mut self, forced: bool) {
        let timeout = Duration::from_secs(self.config.cron.script_timeout_seconds);
        let now = self.clock.now();
        self.provider
            .run(&mut self.db, &self.home, timeout, now, forced);
    }

    /// One claim pass; a failure is this pass's (logged, retried with backoff),
    /// never the gateway's.
    fn claim_pass(&mut self) {
        // Stopping: a slot claimed now could only be recorded `missed`
        // (gateway_stopped); leave it due for the next gateway. (select!
        // picks among ready branches at random, so a stop request and a
        // passed deadline seen together could claim first.)
        if self.shared.stop_requested() {
            return;
        }
        self.shared.set_doing("claiming due occurrences");
        let now = self.clock.now();
        let ctx = ClaimContext {
            home: &self.home,
            config: &self.config,
            fallback_zone: self.zone,
            owner: self.owner,
            host: crate::cluster::Host::this(),
            now,
        };
        let result = claim_due(&mut self.db, &ctx);
        match result {
            Ok(Some(report)) => {
                self.claim_backoff_until = None;
                self.claim_failures = 0;
                self.record_claims(&report, now);
                self.queue.extend(report.claimed);
            }
            Ok(None) => {
                self.shared.set_tick(TickSummary {
                    at: Some(now),
                    result: TickResult::Contended,
                    ..TickSummary::default()
                });
                self.claim_backoff_until =
                    Some(tokio::time::Instant::now() + Duration::from_millis(50));
            }
            Err(e) => {
                self.claim_failures += 1;
                let backoff =
                    Duration::from_millis(500 * 2u64.saturating_pow(self.claim_failures.min(6)));
                let msg = Chain(&e).to_string();
                tracing::error!(retry_in = ?backoff, "claim failed: {msg}");
                self.shared.set_tick(TickSummary {
                    at: Some(now),
                    result: TickResult::Error(msg),
                    ..TickSummary::default()
                });
                self.claim_backoff_until = Some(tokio::time::Instant::now() + backoff);
            }
        }
    }

    fn record_claims(&self, report: &ClaimReport, now: Timestamp) {
        let skipped = report
            .not_run
            .iter()
            .filter(|n| n.state == ExecState::Skipped)
            .count();
        self.shared.set_tick(TickSummary {
            at: Some(now),
            result: TickResult::Ok,
            claimed: report.claimed.len(),
            skipped,
            missed: report.not_run.len() - skipped,
        });
        for n in &report.not_run {
            run_span(&n.job_name, &n.id).in_scope(
                || tracing::info!(state = %n.state, reason = %n.reason_code, "{}", n.reason),
            );
        }
        for c in &report.claimed {
            run_span(&c.job_name, &c.id)
                .in_scope(|| tracing::debug!(source = %c.source, "claimed"));
        }
    }

    /// Put queued work in flight while there is room: claims due now first
    /// (while capacity lasts), then runs to stage.
    fn start_in_flight(&mut self) {
        // A stop request: what is not in flight yet stays queued, and is
        // recorded on the way out.
        while self.inflight.len() < DISPATCH_CONCURRENCY && !self.shared.stop_requested() {
            if self.capacity_left() > 0
                && let Some(run) = self.queue.pop_front()
            {
                self.shared
                    .set_doing(format!("dispatching {}", run.job_name));
                let db = self.db.location().clone();
                self.inflight.dispatch(self.launcher.clone(), db, run);
            } else if let Some(ahead) = self.stage_queue.pop_front() {
                self.inflight.stage(self.launcher.clone(), ahead);
            } else {
                break;
            }
        }
    }

    /// A piece of in-flight work is done: record it.
    fn on_done(&mut self, done: Done) {
        // A long burst is progress, not a frozen loop.
        self.shared.bump();
        match done {
            Done::Dispatched { run, prepared } => self.dispatched(run, prepared),
            Done::Staged { ahead, staged } => {
                self.stager.staged(&self.db, ahead, staged, self.owner);
            }
            Done::Replaced { held } => self.release(vec![held]),
        }
    }

    /// Record what a dispatch came to.
    fn dispatched(&mut self, run: ClaimedRun, prepared: Dispatched) {
        let result = self
            .launcher
            .record(&self.db, &run, prepared, self.clock.now());
        let _span = run_span(&run.job_name, &run.id).entered();
        match result {
            Ok(Dispatched::Started {
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
            Ok(Dispatched::Refused { cause, message }) => {
                tracing::warn!(cause = %cause.code, "{message}");
            }
            Ok(Dispatched::NotSpawned { message, .. }) => {
                tracing::error!("{message}");
            }
            Err(e) => match dispatch_failure(&run.id, e) {
                Ok(fatal) => {
                    self.fatal.get_or_insert(fatal);
                }
                Err(e) => {
                    tracing::error!("dispatch failed: {}", Chain(&e))
                }
            },
        }
        self.publish_active();
    }

    pub(super) fn publish_active(&self) {
        self.shared
            .active_runs
            .store(self.runs.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// Begin the alert deliveries that are due; command alerts are runs.
    async fn deliver_alerts(&mut self) {
        let launch = Launch {
            db: &self.db,
            launcher: &self.launcher,
            home: &self.home,
            config: &self.config,
            owner: self.owner,
        };
        let started = self.alerts.pump(&launch, self.clock.now()).await;
        for run in started {
            self.runs
                .add_child(run.id, &run.job_name, run.child.id(), run.unit, run.mode);
            // Reaped through SIGCHLD by pid; the handle must not wait.
            drop(run.child);
        }
    }

    /// Reap every exited child and settle its run.
    async fn on_children_exited(&mut self) {
        self.shared.set_doing("reaping workers");
        for (pid, status) in reap_children() {
            let Some(t) = self.runs.reaped(pid) else {
                if let Some(h) = self.stager.take_pid(pid) {
                    self.staged_worker_died(&h, pid, status);
                }
                continue;
            };
            let _span = run_span(&t.job_name, &t.id).entered();
            let w = reconcile::ReapedWorker {
                by: self.owner,
                pid,
                status: Some(status),
                released: true,
            };
            match reconcile::reaped(&self.db, &t.id, w, self.clock.now()) {
                Ok(Settled::Finished(r)) => {
                    tracing::info!(
                        state = %r.state,
                        exit = r.exit_code.map_or("-".into(), |c| c.to_string()),
                        "finished"
                    );
                }
                Ok(Settled::Resolved(r)) => {
                    if let Some((state, code, reason)) = r.judgement.recorded() {
                        tracing::warn!(state = %state, reason = %code, "worker exited without an outcome: {reason}");
                    }
                }
                Ok(Settled::Untouched) => {}
                Err(e) => {
                    tracing::error!("failed to settle a reaped worker's run: {}", Chain(&e));
                }
            }
            if let (Some(unit), Some(m)) = (&t.unit, self.launcher.manager()) {
                let _ = m.release_unit(unit).await;
            }
        }
        self.shared
            .active_runs
            .store(self.runs.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// On shutdown: claims never dispatched are recorded as not run, claims
    /// made ahead and not staged are taken back. Held workers are let go:
    /// their gates close with this process, and they withdraw their rows.
    pub(crate) fn abandon_queue(&mut self) {
        let now = self.clock.now();
        for run in self.queue.drain(..) {
            let _ = ledger::abandoned(self.db.conn(), &run.id, &run.owner, now);
        }
        let stored = self.owner.to_string();
        for ahead in self.stage_queue.drain(..) {
            let _ = ledger::withdraw(
                self.db.conn(),
                &ahead.run.id,
                ExecState::Claimed,
                Some(&stored),
            );
        }
        self.inflight.abandon(&self.db, now);
    }
}
