//! Watching running work on a fixed period: adopted runs to their end, rows
//! of dead owners, stalled workers, the scope capability, and systemd's
//! watchdog and status.
//! The period is also the loop's liveness beat: each one bumps the progress
//! counter the heartbeat file carries.

use super::runs::Runs;
use super::stall;
use super::state::Shared;
use super::supervision::notify::Notifier;
use crate::clock::monotonic;
use crate::db::Db;
use crate::dispatch::{Launcher, probe_capability};
use crate::logging::run_span;
use crate::reconcile::{self, Judgement, STALL_INTERVALS, Watch};
use crate::schedule::Timestamp;
use crate::text::Chain;
use hermes_cron_core::health::Capability;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How often the scope capability is probed.
const PROBE_EVERY: Duration = Duration::from_secs(30);

/// The periodic watcher.
pub(crate) struct Monitor {
    period: Duration,
    notifier: Notifier,
    next_probe: Option<std::time::Instant>,
    /// The wall-clock instant of the previous round.
    last_round: Option<Timestamp>,
    /// When watching resumed after a gap in our own running (a suspend,
    /// SIGSTOP, an overloaded host): workers' silence counts from here.
    watching_since: Option<Timestamp>,
}

impl Monitor {
    pub fn new(period: Duration, notifier: Notifier) -> Monitor {
        let period = match notifier.watchdog_period() {
            Some(w) => period.min(w),
            None => period,
        };
        Monitor {
            period: period.max(Duration::from_millis(10)),
            notifier,
            next_probe: None,
            last_round: None,
            watching_since: None,
        }
    }

    pub fn period(&self) -> Duration {
        self.period
    }

    pub(crate) fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    pub async fn run(
        &mut self,
        db: &Db,
        launcher: &Launcher,
        runs: &mut Runs,
        shared: &Shared,
        now: Timestamp,
    ) {
        shared.bump();
        self.notifier.watchdog();
        self.notice_own_gap(now);
        self.watch_adopted(db, launcher, runs, now).await;
        resolve_orphans(db, now);
        self.stop_stalled_runs(db, launcher, now).await;
        if self.next_probe.is_none_or(|at| monotonic() >= at) {
            self.next_probe = Some(monotonic() + PROBE_EVERY);
            shared.set_capability(probe(launcher).await);
        }
        shared
            .active_runs
            .store(runs.len() as u64, Ordering::Relaxed);
        let cap = shared.capability();
        let tick = shared.tick();
        let last = match tick.at {
            Some(at) => format!("{} at {}", tick.result, at.format("%H:%M:%SZ")),
            None => "none yet".into(),
        };
        self.notifier.status(&format!(
            "{} running; last tick {last}; dispatch {}",
            runs.len(),
            cap.mode
        ));
    }

    /// A round much later than the period means this process did not run
    /// (the host slept, or we were stopped): the workers did not run either,
    /// so their heartbeats are as old as our absence. Count their silence
    /// from now, or every running job would look stalled and be killed.
    fn notice_own_gap(&mut self, now: Timestamp) {
        if let Some(prev) = self.last_round.replace(now) {
            let gap = (now - prev).to_std().unwrap_or_default();
            if gap > self.period * STALL_INTERVALS + Duration::from_secs(1) {
                tracing::warn!(
                    "the gateway did not run for {} (host suspended or process stopped?); worker silence is counted from now",
                    crate::schedule::format_duration(gap)
                );
                self.watching_since = Some(now);
            }
        }
    }

    /// Adopted runs are not our children: follow them through the ledger.
    async fn watch_adopted(&self, db: &Db, launcher: &Launcher, runs: &mut Runs, now: Timestamp) {
        for t in runs.adopted() {
            let done = match reconcile::watched(db, &t.id, now) {
                Ok(Watch::Running) => false,
                Ok(Watch::Ended(row)) => {
                    if let Some(r) = row {
                        run_span(&r.job_name, &r.id)
                            .in_scope(|| tracing::info!(state = %r.state, "adopted run finished"));
                    }
                    true
                }
                Ok(Watch::Resolved(r)) => {
                    if let Judgement::Orphaned { reason, .. } = &r.judgement {
                        run_span(&r.row.job_name, &r.row.id).in_scope(|| {
                            tracing::warn!("adopted run ended without an outcome: {reason}")
                        });
                    }
                    true
                }
                Err(e) => {
                    run_span(&t.job_name, &t.id).in_scope(|| {
                        tracing::error!("failed to look at an adopted run: {}", Chain(&e))
                    });
                    false
                }
            };
            if done {
                runs.remove(&t.id);
                if let (Some(unit), Some(m)) = (&t.unit, launcher.manager()) {
                    let _ = m.release_unit(unit).await;
                }
            }
        }
    }

    async fn stop_stalled_runs(&self, db: &Db, launcher: &Launcher, now: Timestamp) {
        match reconcile::stalled(db, now, self.watching_since) {
            Ok(resolved) => {
                for r in resolved {
                    stall::stop(launcher.manager(), &r.row).await;
                    run_span(&r.row.job_name, &r.row.id).in_scope(|| {
                        tracing::warn!(
                            pid = r.row.pid.unwrap_or_default(),
                            "stalled worker stopped; recorded timed_out (stalled)"
                        )
                    });
                }
            }
            Err(e) => tracing::error!("failed to record a stalled run: {}", Chain(&e)),
        }
    }
}

/// Rows whose owner died while we run: a `run` or `tick` killed after its
/// claim, or a claimed row the startup sweep left to a live worker that then
/// died before adopting it. Nobody else resolves them while the gateway
/// lives, and overlap `skip` would skip their job until the next restart.
fn resolve_orphans(db: &Db, now: Timestamp) {
    match reconcile::sweep(db, now) {
        Ok(resolved) => {
            for r in resolved {
                if let Judgement::Orphaned { code, reason } = &r.judgement {
                    run_span(&r.row.job_name, &r.row.id)
                        .in_scope(|| tracing::warn!(reason = %code, "resolved unknown: {reason}"));
                }
            }
        }
        Err(e) => tracing::error!("failed to resolve rows of dead owners: {}", Chain(&e)),
    }
}

/// Whether the launcher can make a scope right now, and why not.
pub async fn probe(launcher: &Launcher) -> Capability {
    probe_capability(launcher.manager().map(|m| m.as_ref())).await
}
