//! Stopping a run: the one routine for overlap `replace`, a stalled worker
//! and `hermes-cron stop`.
//!
//! 1. Ask: a run in a scope is stopped through its unit (`StopUnit`: systemd
//!    sends SIGTERM to every process in it); any other run through its
//!    worker's session (the worker called `setsid`, so the session holds it,
//!    its job's process group and whatever the job started): SIGTERM to
//!    each member. The worker forwards SIGTERM to its job, kills the job's
//!    group after its own grace and records how the run ended.
//! 2. Wait for the worker to end, at most its grace plus [`MARGIN`] (woken
//!    by the exit itself, `process::ended_within`).
//! 3. SIGKILL whatever is left in the session: a worker wedged past its
//!    grace, or a job's child that outlived the worker.
//!
//! A row with no worker yet (claimed, not adopted) has nothing to stop: its
//! owner is the process that claimed it, never signalled here.

use crate::ledger::{DispatchMode, Execution};
use crate::process::{ended_within, signal_session};
use crate::systemd::UnitManager;
use hermes_cron_core::run::{OwnerRole, ProcessIdentity};
use nix::sys::signal::Signal;
use std::time::Duration;

/// How much longer than the worker's own grace a stop waits for it: the
/// worker records the run's end after its job is gone.
pub(crate) const MARGIN: Duration = Duration::from_secs(5);

/// The worker of `row`, when it has one (the row's owner is a worker).
fn worker_of(row: &Execution) -> Option<ProcessIdentity> {
    row.owner
        .as_ref()
        .and_then(|o| o.owner())
        .filter(|o| o.role == OwnerRole::Worker)
        .map(|o| o.process)
}

/// Stop the run of `row` (module documentation), its worker's grace being
/// `grace`; false when it has no worker to stop (nothing was signalled).
pub async fn stop_run(manager: Option<&dyn UnitManager>, row: &Execution, grace: Duration) -> bool {
    let Some(worker) = worker_of(row) else {
        return false;
    };
    let by_unit = match (row.dispatch_mode, row.unit.as_deref(), manager) {
        (Some(DispatchMode::Scoped), Some(unit), Some(m)) => m.stop_unit(unit).await.is_ok(),
        _ => false,
    };
    if !by_unit {
        signal_session(&worker, Signal::SIGTERM);
    }
    // The worker ended within its grace (and recorded the run's end), or
    // is wedged past it: what is left of the session is killed either way.
    ended_within(&worker, grace + MARGIN).await;
    signal_session(&worker, Signal::SIGKILL);
    true
}

/// Stop every run of `rows` at once; returns when each is stopped.
pub async fn stop_runs(manager: Option<&dyn UnitManager>, rows: &[Execution], grace: Duration) {
    let stops = rows.iter().map(|row| {
        crate::logging::run_span(&row.job_name, &row.id)
            .in_scope(|| tracing::info!("stopping the previous run (overlap replace)"));
        stop_run(manager, row, grace)
    });
    futures_util::future::join_all(stops).await;
}
