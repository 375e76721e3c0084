//! Stopping a stalled worker, after the reconciler recorded its row
//! `timed_out` (`stalled`): `StopUnit` for a scope, else SIGTERM to the
//! worker's session, then SIGKILL after the grace.

use crate::ledger::{DispatchMode, Execution};
use crate::process::{kill_grace, signal_session};
use crate::systemd::UnitManager;
use nix::sys::signal::Signal;
use std::sync::Arc;

/// Stop the run of `row` (already recorded stalled).
pub async fn stop(manager: Option<&Arc<dyn UnitManager>>, row: &Execution) {
    let worker = row.owner.as_ref().and_then(|o| o.owner());
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
}
