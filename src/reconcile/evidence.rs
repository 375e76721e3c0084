//! Gathering the evidence the reconciler judges by: whether processes are
//! alive (`/proc`: pid and start time, and the workers started for each
//! execution), and how a reaped worker ended.

use crate::process::{self, live_workers};
use hermes_cron_core::reconcile::Liveness;
use hermes_cron_core::run::{Execution, Owner, ProcessIdentity};
use std::collections::HashMap;

/// Liveness from `/proc`. The worker scan runs once, when first needed.
#[derive(Default)]
pub(crate) struct ProcLiveness {
    workers: std::sync::OnceLock<HashMap<String, ProcessIdentity>>,
}

impl Liveness for ProcLiveness {
    fn alive(&self, owner: &Owner) -> bool {
        process::is_alive(&owner.process)
    }

    fn worker_for(&self, execution: &str) -> Option<ProcessIdentity> {
        self.workers
            .get_or_init(live_workers)
            .get(execution)
            .copied()
    }
}

/// Whether `row`'s worker lives with its command ended (no live child):
/// it is recording the outcome, however long the ledger makes it wait. A
/// stopped worker (SIGSTOP) is not: it records nothing until continued, so
/// its silence is judged as any other.
pub(crate) fn command_ended(row: &Execution) -> bool {
    row.owner.as_ref().and_then(|o| o.owner()).is_some_and(|w| {
        process::is_alive(&w.process)
            && !process::is_stopped(w.process.pid)
            && !process::has_live_child(&w.process)
    })
}

/// A wait status in words: `exit 3`, `SIGKILL`.
pub(crate) fn describe_wait_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        process::signal_name(libc::WTERMSIG(status))
    } else {
        format!("wait status {status}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_exits_and_signals() {
        assert_eq!(describe_wait_status(124 << 8), "exit 124");
        assert_eq!(describe_wait_status(9), "SIGKILL");
    }
}
