//! The one reaction to a reconciler verdict: every pass that judged a row
//! says what it found in one line, inside the run's span, in the same words
//! (`resolved unknown: ...`, `left alone: ...`), whoever ran it: the startup
//! sweep, the monitor period, a reaped worker, a stalled one, the look at
//! lost hosts.

use super::passes::{Resolved, Settled};
use crate::ledger::{ExecState, Execution};
use crate::logging::run_span;
use hermes_cron_core::reconcile::Judgement;

/// Say what `j` means for `row` (what it did, or why it left the row).
pub fn announce(row: &Execution, j: &Judgement) {
    let _span = run_span(&row.job_name, &row.id).entered();
    match j {
        Judgement::Ended => tracing::info!(
            state = %row.state,
            exit = row.exit_code.map_or("-".into(), |c| c.to_string()),
            "finished"
        ),
        Judgement::Alive { note } if row.state == ExecState::Running => {
            tracing::info!("adopted: {note}")
        }
        Judgement::Alive { note } => tracing::info!("left alone: {note}"),
        Judgement::Withdraw { reason } => {
            tracing::info!("withdrawn, to be claimed again: {reason}")
        }
        Judgement::Stalled { reason } => tracing::warn!(
            pid = row.pid.unwrap_or_default(),
            "stalled worker stopped; recorded timed_out (stalled): {reason}"
        ),
        Judgement::Orphaned { code, reason } => {
            tracing::warn!(reason = %code, "resolved unknown: {reason}")
        }
        Judgement::Unadopted { reason } => tracing::warn!(
            state = "failed",
            reason = "worker_exited",
            "worker exited without an outcome: {reason}"
        ),
    }
}

impl Resolved {
    /// Say what was done to its row.
    pub fn announce(&self) {
        announce(&self.row, &self.judgement);
    }
}

impl Settled {
    /// Say how a reaped worker's run ended.
    pub fn announce(&self) {
        match self {
            Settled::Finished(row) => announce(row, &Judgement::Ended),
            Settled::Resolved(r) => r.announce(),
            Settled::Untouched => {}
        }
    }
}
