//! Overlap `replace`: before a run starts, stop the previous runs of its job
//! (their scope, or their worker, which passes SIGTERM to its job) and wait
//! until their rows are terminal or their workers gone, at most the kill
//! grace plus a margin. The rows themselves are recorded by their workers
//! (`cancelled`), or by the reconciler when a worker dies without a word.

use crate::clock::monotonic;
use crate::db::{Db, DbWatcher, Location};
use crate::ledger::{self, ExecState, Execution};
use crate::logging::run_span;
use crate::process::{identity_of, signal_pid};
use crate::systemd::UnitManager;
use nix::sys::signal::Signal;
use std::sync::Arc;
use std::time::Duration;

/// Stop `old` and wait for them to end, watching the ledger at `db` through
/// a read-only connection of its own (so a gateway can run this in flight
/// while its own connection claims and records).
pub(crate) async fn stop_previous(
    db: &Location,
    manager: Option<&Arc<dyn UnitManager>>,
    old: &[Execution],
) {
    for run in old {
        run_span(&run.job_name, &run.id)
            .in_scope(|| tracing::info!("overlap replace: stopping the previous run"));
        let stopped = match (&run.unit, manager) {
            (Some(unit), Some(m)) => m.stop_unit(unit).await.is_ok(),
            _ => false,
        };
        if !stopped && let Some(pid) = run.pid {
            let _ = signal_pid(pid, Signal::SIGTERM);
        }
    }
    // Woken by the rows' writes; looked at again on a period for a worker
    // that died without writing.
    // (A shared ledger is no file of this host: looked at on the period.)
    let mut changes = match db {
        Location::Sqlite(path) => path
            .parent()
            .and_then(|dir| DbWatcher::new(dir).ok())
            .unwrap_or_else(DbWatcher::disabled),
        Location::Postgres(_) => DbWatcher::disabled(),
    };
    let Ok(reader) = Db::open_read_only_at(db) else {
        return;
    };
    let deadline = monotonic() + crate::process::kill_grace() + Duration::from_secs(5);
    for run in old {
        while monotonic() < deadline {
            let row = ledger::get_execution(reader.conn(), &run.id).ok().flatten();
            let done = row.is_none_or(|(r, _)| {
                r.state.is_terminal()
                    || (r.state == ExecState::Running
                        && r.pid.is_some_and(|p| identity_of(p).is_none()))
            });
            if done {
                break;
            }
            changes.next_look(Duration::from_millis(100)).await;
        }
    }
}
