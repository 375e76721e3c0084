//! A command that claimed rows (`tick`, `run`, `spawn`) stays alive until
//! each worker it released has adopted its row, or exited.
//!
//! A `claimed` row belongs to its claimer until the worker adopts it
//! (`claimed -> running`, by compare-and-set). A sweep that finds the claimer
//! dead resolves the row `unknown` (`claimer_died`), and the worker, finding
//! the row no longer claimed, exits without running the job. A claiming
//! command that exited right after dispatching left that window open to the
//! very next `tick` or `run`, which lost the occurrence. Waiting here closes it
//! without writing anything (a per-row ownership hand-over write was measured
//! to double the dispatch time of 500 simultaneous jobs through lock
//! contention with the starting workers).
//!
//! Only reads the ledger, one row at a time; holds no lock while sleeping.

use crate::clock::{elapsed, monotonic};
use crate::db::Db;
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState};
use std::process::Child;
use std::time::Duration;

/// The longest a command waits for its workers to adopt their rows.
const LIMIT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(5);

/// Wait until no row in `pending` is still `claimed` while its worker lives,
/// at most [`LIMIT`]. Returns how many were still waiting at the limit.
/// Rows are checked in dispatch order, which is about the order their
/// workers adopt them, so each poll is usually one read.
pub fn wait_adopted(db: &Db, pending: Vec<(&ExecutionId, &mut Child)>) -> anyhow::Result<usize> {
    let start = monotonic();
    let mut pending = std::collections::VecDeque::from(pending);
    while let Some((id, child)) = pending.front_mut() {
        let claimed = matches!(
            ledger::get_execution(db.conn(), id)?,
            Some((row, _)) if row.state == ExecState::Claimed
        );
        if !claimed || child.try_wait()?.is_some() {
            pending.pop_front();
            continue;
        }
        if elapsed(start) >= LIMIT {
            tracing::warn!(
                count = pending.len(),
                "workers had not adopted their rows after {}s; exiting anyway (a tick that runs before they do resolves those rows as unknown)",
                LIMIT.as_secs()
            );
            return Ok(pending.len());
        }
        std::thread::sleep(POLL);
    }
    Ok(0)
}
