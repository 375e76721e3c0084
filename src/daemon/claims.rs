//! The gateway's claim passes: the claim of what is due now (`tick::claim_due`)
//! and the claim ahead of an instant for staging (`tick::claim_ahead`). Both
//! go through [`Claims::settle`]: it records the pass as the last tick (what
//! `status`, the heartbeat and systemd's status line show) and backs off
//! after a pass that found the tick lock taken (50 ms) or failed (0.5 s,
//! doubling up to 32 s). A failed pass is this pass's (logged, retried),
//! never the gateway's.
//!
//! ## Locking
//! The tick lock is held only inside the claim transactions (`tick/`).

use super::context::Ctx;
use crate::db::Db;
use crate::ids::JobId;
use crate::ledger::ClaimedRun;
use crate::ledger::ExecState;
use crate::logging::run_span;
use crate::schedule::Timestamp;
use crate::text::Chain;
use crate::tick::{ClaimError, ClaimedAhead, claim_ahead, claim_due};
use hermes_cron_core::health::{TickResult, TickSummary};
use std::collections::HashSet;
use std::time::Duration;

/// After a pass found the tick lock taken.
const CONTENDED_BACKOFF: Duration = Duration::from_millis(50);

#[derive(Debug, Default)]
pub(crate) struct Claims {
    /// After a failed or contended pass, no pass before this.
    backoff_until: Option<tokio::time::Instant>,
    failures: u32,
}

impl Claims {
    /// No pass before this (None: any time).
    pub(super) fn not_before(&self) -> Option<tokio::time::Instant> {
        self.backoff_until
    }

    fn backing_off(&self) -> bool {
        self.backoff_until
            .is_some_and(|b| b > crate::clock::loop_now())
    }

    /// Claim what is due now. Nothing while the gateway stops: a slot
    /// claimed now could only be recorded `missed` (`gateway_stopped`); it
    /// is left due for the next gateway.
    pub(super) fn due(&mut self, db: &mut Db, cx: &Ctx) -> Vec<ClaimedRun> {
        if cx.shared.stop_requested() || self.backing_off() {
            return Vec::new();
        }
        cx.shared.set_doing("claiming due occurrences");
        let now = cx.clock.now();
        let result = claim_due(db, &cx.claim_ctx(now));
        let Some(report) = self.settle(cx, now, result, |r| {
            let skipped = r
                .not_run
                .iter()
                .filter(|n| n.state == ExecState::Skipped)
                .count();
            (r.claimed.len(), skipped, r.not_run.len() - skipped)
        }) else {
            return Vec::new();
        };
        for n in &report.not_run {
            run_span(&n.job_name, &n.id).in_scope(
                || tracing::info!(state = %n.state, reason = %n.reason_code, "{}", n.reason),
            );
        }
        for c in &report.claimed {
            run_span(&c.job_name, &c.id)
                .in_scope(|| tracing::debug!(source = %c.source, "claimed"));
        }
        report.claimed
    }

    /// Claim ahead, for staging, up to `limit` jobs due at `instants`,
    /// leaving out `skip` (`tick::claim_ahead`).
    pub(super) fn ahead(
        &mut self,
        db: &mut Db,
        cx: &Ctx,
        instants: &[Timestamp],
        limit: usize,
        skip: &HashSet<(JobId, Timestamp)>,
    ) -> Vec<ClaimedAhead> {
        if cx.shared.stop_requested() || self.backing_off() {
            return Vec::new();
        }
        cx.shared.set_doing("staging runs ahead of their instant");
        let now = cx.clock.now();
        let result = claim_ahead(db, &cx.claim_ctx(now), instants, limit, skip);
        self.settle(cx, now, result, |c| (c.len(), 0, 0))
            .unwrap_or_default()
    }

    /// Record a pass made at `now` as the last tick (`counts`: claimed,
    /// skipped, missed) and set the backoff; the pass's result when it
    /// claimed.
    fn settle<T>(
        &mut self,
        cx: &Ctx,
        now: Timestamp,
        result: Result<Option<T>, ClaimError>,
        counts: impl Fn(&T) -> (usize, usize, usize),
    ) -> Option<T> {
        let tick = |result| TickSummary {
            at: Some(now),
            result,
            ..TickSummary::default()
        };
        match result {
            Ok(Some(pass)) => {
                self.backoff_until = None;
                self.failures = 0;
                let (claimed, skipped, missed) = counts(&pass);
                cx.shared.set_tick(TickSummary {
                    claimed,
                    skipped,
                    missed,
                    ..tick(TickResult::Ok)
                });
                Some(pass)
            }
            Ok(None) => {
                cx.shared.set_tick(tick(TickResult::Contended));
                self.backoff_until = Some(crate::clock::loop_now() + CONTENDED_BACKOFF);
                None
            }
            Err(e) => {
                self.failures += 1;
                let backoff =
                    Duration::from_millis(500 * 2u64.saturating_pow(self.failures.min(6)));
                let msg = Chain(&e).to_string();
                tracing::error!(retry_in = ?backoff, "claim failed: {msg}");
                cx.shared.set_tick(tick(TickResult::Error(msg)));
                self.backoff_until = Some(crate::clock::loop_now() + backoff);
                None
            }
        }
    }
}
