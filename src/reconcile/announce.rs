//! The one reaction to a reconciler verdict: every pass that judged a row
//! says what it found in one line, inside the run's span, in the same words
//! (`resolved unknown: ...`, `left alone: ...`), whoever ran it: the startup
//! sweep, the monitor period, a reaped worker, a stalled one, the look at
//! lost hosts, a retaken claim.

use super::passes::{Resolved, Settled};
use super::retake::Retaken;
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
        Judgement::Retake { reason } => {
            tracing::info!("left for a gateway or a tick to retake: {reason}")
        }
    }
}

impl Retaken {
    /// Say what became of a retaken claim.
    pub fn announce(&self) {
        match self {
            Retaken::Run(taken) => run_span(&taken.0.job_name, &taken.0.id).in_scope(|| {
                tracing::warn!("taken over: it was claimed but never started; starting it now")
            }),
            Retaken::Missed(row, reason) => run_span(&row.job_name, &row.id)
                .in_scope(|| tracing::warn!(reason = "claimer_died", "recorded missed: {reason}")),
            Retaken::Lost => {}
        }
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
