//! The event loop's staging steps: a stage pass (claim ahead what is due
//! for staging; the runs are then staged in flight), the release of the held
//! runs at their instant (decided and released by `release.rs`), and a held
//! worker that died before its release.

use super::event_loop::EventLoop;
use super::release;
use super::staging::HeldRun;
use crate::logging::run_span;
use crate::reconcile::{self, Settled};
use crate::text::Chain;
use crate::tick::ClaimContext;

impl EventLoop {
    /// A stage pass: claim ahead what is due for staging now; it is staged
    /// in flight.
    pub(super) fn stage_pass(&mut self) {
        self.shared.set_doing("staging runs ahead of their instant");
        let ctx = ClaimContext {
            home: &self.home,
            config: &self.config,
            fallback_zone: self.zone,
            owner: self.owner,
            host: crate::cluster::Host::this(),
            now: self.clock.now(),
        };
        let claimed = self.stager.claim(&mut self.db, &ctx);
        if !claimed.is_empty() {
            tracing::debug!(
                runs = claimed.len(),
                per_run_ms = self.stager.lead().per_run().as_secs_f64() * 1000.0,
                "claimed ahead for staging"
            );
        }
        self.stage_queue.extend(claimed);
    }

    /// Release the held runs whose instant has come (as many as capacity
    /// allows): decide them, wait for the exact instant, release.
    pub(super) fn release_due(&mut self) {
        let Some((at, _)) = self.stager.next_release() else {
            return;
        };
        self.shared
            .set_doing(format!("releasing runs staged for {at}"));
        let now = self.clock.now();
        let held = self.stager.take_due(at.max(now), self.capacity_left());
        let decided = match release::decide(&self.db, held, now) {
            Ok(d) => d,
            Err(e) => {
                // The held workers are dropped: they withdraw their rows.
                tracing::error!("cannot decide the staged runs of {at}: {}", Chain(&e));
                return;
            }
        };
        for (held, previous) in decided.replace_first {
            let db = self.db.location().clone();
            self.inflight
                .replace_then_release(self.launcher.clone(), db, held, previous);
        }
        release::wait_for(self.clock.as_ref(), at);
        self.release(decided.release);
        self.stager.observe_release(at, decided.staged_by);
    }

    /// Write the release byte of each of `held`; track what started.
    pub(super) fn release(&mut self, held: Vec<HeldRun>) {
        let mut gone = Vec::new();
        let mut started = Vec::with_capacity(held.len());
        for h in held {
            let HeldRun { ahead, worker } = h;
            let (mode, unit, pid) = (worker.mode, worker.unit.clone(), worker.pid());
            match worker.release() {
                Ok(child) => started.push((ahead, mode, unit, child)),
                Err(e) => gone.push((ahead, pid, e)),
            }
        }
        crate::crash::point("after_release");
        self.stager.unblock();
        for (ahead, mode, unit, child) in started {
            run_span(&ahead.run.job_name, &ahead.run.id).in_scope(|| {
                tracing::info!(mode = %mode, unit = unit.as_deref().unwrap_or("-"), pid = child.id(), "released")
            });
            self.runs.add_child(
                ahead.run.id.clone(),
                &ahead.run.job_name,
                child.id(),
                unit,
                mode,
            );
            drop(child);
        }
        for (ahead, pid, e) in gone {
            release::gone_before_release(&self.db, &ahead, pid, self.owner, &e, self.clock.now());
        }
        self.publish_active();
    }

    /// A held worker died before its release: its command never started.
    pub(super) fn staged_worker_died(&mut self, h: &HeldRun, pid: u32, status: i32) {
        self.stager.unblock();
        let run = &h.ahead.run;
        let _span = run_span(&run.job_name, &run.id).entered();
        let w = reconcile::ReapedWorker {
            by: self.owner,
            pid,
            status: Some(status),
            released: false,
        };
        match reconcile::reaped(&self.db, &run.id, w, self.clock.now()) {
            Ok(Settled::Resolved(r)) => {
                if let Some((state, code, reason)) = r.judgement.recorded() {
                    tracing::warn!(state = %state, reason = %code, "staged worker exited before its release: {reason}");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::error!("failed to settle a staged worker's run: {}", Chain(&e)),
        }
    }
}
