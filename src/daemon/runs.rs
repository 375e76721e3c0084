//! The runs this gateway watches: workers it started (its children, reaped
//! on SIGCHLD) and runs it adopted at startup (watched through the ledger).
//! Their count is what `cron.max_parallel_jobs` limits.

use super::state::Shared;
use crate::ids::ExecutionId;
use crate::ledger::{DispatchMode, Execution};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tracked {
    pub id: ExecutionId,
    pub job_name: String,
    pub pid: Option<u32>,
    pub unit: Option<String>,
    pub mode: Option<DispatchMode>,
    /// Our child (reaped by us) rather than adopted.
    pub ours: bool,
}

/// Watched runs, by execution and by worker pid.
#[derive(Debug, Default)]
pub(super) struct Runs {
    by_id: HashMap<ExecutionId, Tracked>,
    by_pid: HashMap<u32, ExecutionId>,
}

impl Runs {
    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// The runs watched.
    pub(super) fn ids(&self) -> impl Iterator<Item = &ExecutionId> {
        self.by_id.keys()
    }

    /// A worker we spawned.
    pub(crate) fn add_child(
        &mut self,
        id: ExecutionId,
        job_name: &str,
        pid: u32,
        unit: Option<String>,
        mode: DispatchMode,
    ) {
        self.by_pid.insert(pid, id.clone());
        self.by_id.insert(
            id.clone(),
            Tracked {
                id,
                job_name: job_name.to_string(),
                pid: Some(pid),
                unit,
                mode: Some(mode),
                ours: true,
            },
        );
    }

    /// A run found alive by the startup sweep.
    pub(crate) fn add_adopted(&mut self, e: &Execution) {
        self.by_id.insert(
            e.id.clone(),
            Tracked {
                id: e.id.clone(),
                job_name: e.job_name.clone(),
                pid: e.pid,
                unit: e.unit.clone(),
                mode: e.dispatch_mode,
                ours: false,
            },
        );
    }

    /// Our child `pid` was reaped: stop watching its run.
    pub(super) fn reaped(&mut self, pid: u32) -> Option<Tracked> {
        let id = self.by_pid.remove(&pid)?;
        self.by_id.remove(&id)
    }

    /// Stop watching `id` (its row is terminal).
    pub(super) fn remove(&mut self, id: &ExecutionId) -> Option<Tracked> {
        let t = self.by_id.remove(id)?;
        if let Some(pid) = t.pid.filter(|_| t.ours) {
            self.by_pid.remove(&pid);
        }
        Some(t)
    }

    /// Tell the other threads how many runs are watched.
    pub(crate) fn publish(&self, shared: &Shared) {
        shared
            .active_runs
            .store(self.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// Adopted runs (not our children): watched through the ledger.
    pub(super) fn adopted(&self) -> Vec<Tracked> {
        self.by_id.values().filter(|t| !t.ours).cloned().collect()
    }
}

/// Reap every exited child: `(pid, wait status)` for each.
pub(crate) fn reap_children() -> Vec<(u32, i32)> {
    let mut out = Vec::new();
    loop {
        let mut status = 0;
        // SAFETY: waitpid with WNOHANG only writes `status`.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return out;
        }
        out.push((pid as u32, status));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_children_by_pid_and_adopted_by_id() {
        let mut runs = Runs::default();
        let a = ExecutionId::generate();
        runs.add_child(a.clone(), "a", 42, None, DispatchMode::Degraded);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs.reaped(42).unwrap().id, a);
        assert_eq!(runs.len(), 0);
        assert!(runs.reaped(42).is_none());
    }
}
