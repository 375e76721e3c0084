//! Watching running work on a fixed period: adopted runs to their end, rows
//! of dead owners, stalled workers, the scope capability, and systemd's
//! watchdog and status. Nothing here waits: what needs the bus (stopping a
//! stalled run, releasing a finished scope, probing the manager) is a task
//! of its own on the loop's runtime.
//! The period is also the loop's liveness beat: each round bumps the
//! progress counter the heartbeat file carries.

use super::context::Ctx;
use super::runs::Runs;
use super::supervision::notify::Notifier;
use crate::clock::monotonic;
use crate::db::Db;
use crate::dispatch::{probe_capability, stop_run};
use crate::ids::ExecutionId;
use crate::ledger::Execution;
use crate::logging::run_span;
use crate::reconcile::{self, STALL_INTERVALS, Watch};
use crate::schedule::Timestamp;
use crate::systemd::UnitManager;
use crate::text::Chain;
use std::sync::Arc;
use std::time::Duration;

/// How often the scope capability is probed.
const PROBE_EVERY: Duration = Duration::from_secs(30);

pub(crate) struct Monitor {
    period: Duration,
    notifier: Notifier,
    next_round: tokio::time::Instant,
    next_probe: Option<std::time::Instant>,
    /// The wall-clock instant of the previous round.
    last_round: Option<Timestamp>,
    /// When watching resumed after a gap in our own running (a suspend,
    /// SIGSTOP, an overloaded host): workers' silence counts from here.
    watching_since: Option<Timestamp>,
}

impl Monitor {
    pub(super) fn new(period: Duration, notifier: Notifier) -> Monitor {
        let period = match notifier.watchdog_period() {
            Some(w) => period.min(w),
            None => period,
        };
        Monitor {
            period: period.max(Duration::from_millis(10)),
            notifier,
            next_round: crate::clock::loop_now(),
            next_probe: None,
            last_round: None,
            watching_since: None,
        }
    }

    pub(super) fn period(&self) -> Duration {
        self.period
    }

    pub(crate) fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    /// When the next round is due.
    pub(super) fn next_wake(&self) -> tokio::time::Instant {
        self.next_round
    }

    /// One round; returns the claims to retake (see `reconcile::retake`),
    /// judged with `tracked`: the runs the gateway knows of.
    pub(super) fn round(
        &mut self,
        db: &Db,
        cx: &Ctx,
        runs: &mut Runs,
        tracked: &dyn Fn(&ExecutionId) -> bool,
    ) -> Vec<(Execution, String)> {
        self.next_round = crate::clock::loop_now() + self.period;
        let now = cx.clock.now();
        cx.shared.bump();
        self.notifier.watchdog();
        self.notice_own_gap(now);
        let manager = cx.launcher.manager();
        watch_adopted(db, manager, runs, now);
        let tracking = reconcile::Tracking {
            owner: cx.owner,
            tracked,
        };
        let retake = match reconcile::sweep(db, &cx.host.name, Some(&tracking), now) {
            Ok(swept) => {
                swept.resolved.iter().for_each(|r| r.announce());
                swept.retake
            }
            Err(e) => {
                tracing::error!("failed to resolve rows of dead owners: {}", Chain(&e));
                Vec::new()
            }
        };
        match reconcile::stalled(db, &cx.host.name, now, self.watching_since) {
            Ok(stalls) => {
                if let Some(waited) = stalls.ledger_held {
                    self.ledger_was_unwritable(
                        cx,
                        &format!("its write lock was held ({} ms)", waited.as_millis()),
                    );
                }
                for r in stalls.resolved {
                    r.announce();
                    let manager = manager.cloned();
                    let grace = cx.knobs.kill_grace;
                    tokio::spawn(async move { stop_run(manager.as_deref(), &r.row, grace).await });
                }
            }
            Err(e) => {
                tracing::error!("failed to judge stalled runs: {}", Chain(&e));
                self.ledger_was_unwritable(cx, "it failed");
            }
        }
        if self.next_probe.is_none_or(|at| monotonic() >= at) {
            self.next_probe = Some(monotonic() + PROBE_EVERY);
            let (manager, shared) = (manager.cloned(), cx.shared.clone());
            tokio::spawn(async move {
                shared.set_capability(probe_capability(manager.as_deref()).await);
            });
        }
        runs.publish(&cx.shared);
        let cap = cx.shared.capability();
        let tick = cx.shared.tick();
        let last = match tick.at {
            Some(at) => format!("{} at {}", tick.result, at.format("%H:%M:%SZ")),
            None => "none yet".into(),
        };
        self.notifier.status(&format!(
            "{} running; last tick {last}; dispatch {}",
            runs.len(),
            cap.mode
        ));
        retake
    }

    /// The ledger could not be written for a while: no worker could stamp
    /// its row, so their silence is counted from now, once it can. Said once
    /// per spell.
    fn ledger_was_unwritable(&mut self, cx: &Ctx, why: &str) {
        let now = cx.clock.now();
        if self.watching_since.is_none_or(|w| {
            now - w > chrono::Duration::from_std(self.period * STALL_INTERVALS).unwrap_or_default()
        }) {
            tracing::warn!(
                "the ledger could not be written ({why}): workers could not stamp their rows either; their silence is counted from when it can"
            );
        }
        self.watching_since = Some(now);
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
}

/// Adopted runs are not our children: follow them through the ledger.
fn watch_adopted(db: &Db, manager: Option<&Arc<dyn UnitManager>>, runs: &mut Runs, now: Timestamp) {
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
                r.announce();
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
            release_unit(manager, t.unit);
        }
    }
}

/// Let systemd collect a finished run's scope (off the loop).
pub(crate) fn release_unit(manager: Option<&Arc<dyn UnitManager>>, unit: Option<String>) {
    if let (Some(unit), Some(m)) = (unit, manager.cloned()) {
        tokio::spawn(async move {
            let _ = m.release_unit(&unit).await;
        });
    }
}
