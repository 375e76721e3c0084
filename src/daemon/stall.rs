//! Stalled workers: alive, but no heartbeat for [`STALL_INTERVALS`] of their
//! heartbeat intervals. The row is moved to `timed_out` with reason `stalled`
//! first (compare-and-set on the worker's ownership, with the retry its job
//! owes), then the run is stopped: `StopUnit` for a scope, else SIGTERM to the
//! worker's session, then SIGKILL after the grace.

use crate::db::Db;
use crate::ledger::{self, DispatchMode, ExecState, Execution, LedgerError, Outcome, RunSpec};
use crate::process::{Owner, kill_grace, signal_session};
use crate::schedule::Instant;
use crate::systemd::UnitManager;
use crate::worker::retry_under;
use nix::sys::signal::Signal;
use std::sync::Arc;
use std::time::Duration;

/// Heartbeat intervals of silence that make a live worker stalled.
pub const STALL_INTERVALS: u32 = 3;

/// Whether `row` (running) has been silent too long at `now`. Silence is
/// counted from its last heartbeat, but not from before `watching_since`
/// (when the gateway last resumed watching: time it did not run itself, a
/// suspend or a stop, is nobody's silence). Pure.
pub fn is_stalled(
    row: &Execution,
    interval: Duration,
    now: Instant,
    watching_since: Option<Instant>,
) -> bool {
    let Some(last) = row.heartbeat_at.or(row.started_at) else {
        return false;
    };
    let last = watching_since.map_or(last, |w| last.max(w));
    (now - last)
        .to_std()
        .is_ok_and(|silent| silent > interval * STALL_INTERVALS)
}

/// Record and stop one stalled run. Returns false when the row moved first.
pub async fn stop_stalled(
    db: &Db,
    manager: Option<&Arc<dyn UnitManager>>,
    row: &Execution,
    spec: &RunSpec,
    now: Instant,
) -> Result<bool, LedgerError> {
    let interval = Duration::from_secs(spec.heartbeat_interval_s.max(1));
    let silent = row
        .heartbeat_at
        .map(|h| crate::schedule::format_duration((now - h).to_std().unwrap_or_default()));
    let mut outcome = Outcome::with_reason(
        ExecState::TimedOut,
        "stalled",
        format!(
            "no heartbeat for {} (limit: {} intervals of {}) while worker pid {} was alive; stopped",
            silent.unwrap_or_else(|| "ever".into()),
            STALL_INTERVALS,
            crate::schedule::format_duration(interval),
            row.pid.unwrap_or_default()
        ),
        now,
    );
    outcome.retry_at = retry_under(spec, ExecState::TimedOut, row.attempt, now);
    if !ledger::resolve(
        db.conn(),
        &row.id,
        ExecState::Running,
        row.owner.as_deref(),
        &outcome,
    )? {
        return Ok(false);
    }
    let worker: Option<Owner> = row.owner.as_deref().and_then(|o| o.parse().ok());
    let mut stopped = false;
    if let (Some(DispatchMode::Scoped), Some(unit), Some(m)) =
        (row.dispatch_mode, &row.unit, manager)
    {
        stopped = m.stop_unit(unit).await.is_ok();
    }
    if !stopped && let Some(w) = worker {
        signal_session(&w.process, Signal::SIGTERM);
        tokio::spawn(async move {
            tokio::time::sleep(kill_grace()).await;
            signal_session(&w.process, Signal::SIGKILL);
        });
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn stalled_after_three_silent_intervals() {
        let t0 = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let mut row = Execution::sample();
        row.heartbeat_at = Some(t0);
        let i = Duration::from_secs(5);
        let at = |s| t0 + chrono::Duration::seconds(s);
        assert!(!is_stalled(&row, i, at(15), None));
        assert!(is_stalled(&row, i, at(16), None));
        // The gateway itself was away until t0+10: silence counts from then.
        assert!(!is_stalled(&row, i, at(16), Some(at(10))));
        assert!(is_stalled(&row, i, at(26), Some(at(10))));
    }
}
