//! Rows whose owning process is dead: a `claimed` row whose claimer died
//! before a worker adopted it, or a `running` row whose worker died without
//! writing its outcome. Both become `unknown` (never retried), by
//! compare-and-set, so a worker that adopts or finishes at the same moment
//! wins and nothing is overwritten.
//!
//! Liveness is pid + process start time (a recycled pid is not the owner).
//! The judgement is pure ([`judge_active`]); the caller supplies liveness.

use crate::db::Db;
use crate::ledger::{self, DispatchMode, ExecState, Execution, Outcome};
use crate::process::{Owner, OwnerRole, ProcessIdentity, live_workers};
use crate::schedule::Instant;
use std::collections::HashMap;

/// Answers whether a process is alive.
pub trait Liveness {
    fn alive(&self, owner: &Owner) -> bool;
    /// A live worker process started for `execution` (it may not have
    /// adopted its row yet).
    fn worker_for(&self, execution: &str) -> Option<ProcessIdentity>;
}

/// Liveness from `/proc`. The worker scan runs once, when first needed.
#[derive(Default)]
pub struct ProcLiveness {
    workers: std::sync::OnceLock<HashMap<String, ProcessIdentity>>,
}

impl Liveness for ProcLiveness {
    fn alive(&self, owner: &Owner) -> bool {
        owner.process.is_alive()
    }

    fn worker_for(&self, execution: &str) -> Option<ProcessIdentity> {
        self.workers
            .get_or_init(live_workers)
            .get(execution)
            .copied()
    }
}

/// A row that was resolved.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub execution: Execution,
    pub reason_code: &'static str,
    pub reason: String,
}

fn role_name(o: &Owner) -> &'static str {
    match o.role {
        OwnerRole::Cli => "command",
        OwnerRole::Gateway => "gateway",
        OwnerRole::Worker => "worker",
    }
}

/// Whether `run` must be resolved as `unknown`, and why. None: its owner lives.
pub fn judge_active(run: &Execution, live: &dyn Liveness) -> Option<(&'static str, String)> {
    let owner: Option<Owner> = run.owner.as_deref().and_then(|o| o.parse().ok());
    let Some(owner) = owner else {
        return Some((
            "no_owner",
            "the row has no readable owner; nothing can be running it".into(),
        ));
    };
    if live.alive(&owner) {
        return None;
    }
    match run.state {
        ExecState::Claimed if live.worker_for(run.id.as_str()).is_some() => {
            // Released (or held) but not yet adopted: the worker moves the
            // row on, or exits on EOF and a later sweep resolves it.
            None
        }
        ExecState::Claimed => Some((
            "claimer_died",
            format!(
                "the {} that claimed it (pid {}) ended before a worker adopted the row; checked pid {} with start time {}: gone",
                role_name(&owner),
                owner.process.pid,
                owner.process.pid,
                owner.process.start
            ),
        )),
        _ => {
            let mut reason = format!(
                "worker pid {} (start time {}) is gone and wrote no outcome",
                owner.process.pid, owner.process.start
            );
            let claimer: Option<Owner> = run.claimed_by.as_deref().and_then(|o| o.parse().ok());
            if run.dispatch_mode == Some(DispatchMode::Degraded)
                && let Some(c) = claimer.filter(|c| c.role == OwnerRole::Gateway && !live.alive(c))
            {
                reason.push_str(&format!(
                        "; it ran degraded (no scope) under gateway pid {}, which is gone too: a gateway restart or stop kills degraded runs",
                        c.process.pid
                    ));
                return Some(("gateway_restart", reason));
            }
            if let Some(unit) = &run.unit {
                reason.push_str(&format!("; its scope was {unit}"));
            }
            Some(("worker_died", reason))
        }
    }
}

/// Resolve every active row whose owner is dead. Returns what changed.
pub fn resolve_dead_owners(db: &Db, now: Instant) -> Result<Vec<Resolved>, ledger::LedgerError> {
    let active = ledger::active_runs(db.conn()).map_err(|source| ledger::LedgerError::Sql {
        id: "(active rows)".into(),
        source,
    })?;
    let mut out = Vec::new();
    let live = ProcLiveness::default();
    for run in active {
        let Some((code, reason)) = judge_active(&run, &live) else {
            continue;
        };
        crate::crash::point("sweep_before_resolve");
        let outcome = Outcome::with_reason(ExecState::Unknown, code, reason.clone(), now);
        if ledger::resolve(
            db.conn(),
            &run.id,
            run.state,
            run.owner.as_deref(),
            &outcome,
        )? {
            out.push(Resolved {
                execution: run,
                reason_code: code,
                reason,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::ProcessIdentity;

    struct Dead;
    impl Liveness for Dead {
        fn alive(&self, _: &Owner) -> bool {
            false
        }
        fn worker_for(&self, _: &str) -> Option<ProcessIdentity> {
            None
        }
    }
    struct Alive;
    impl Liveness for Alive {
        fn alive(&self, _: &Owner) -> bool {
            true
        }
        fn worker_for(&self, _: &str) -> Option<ProcessIdentity> {
            None
        }
    }

    /// The claimer is dead but the released worker lives.
    struct Released;
    impl Liveness for Released {
        fn alive(&self, _: &Owner) -> bool {
            false
        }
        fn worker_for(&self, _: &str) -> Option<ProcessIdentity> {
            Some(ProcessIdentity { pid: 99, start: 1 })
        }
    }

    #[test]
    fn regression_a_released_worker_keeps_its_claimed_row() {
        let cli = owner(OwnerRole::Cli, 10);
        assert!(judge_active(&row(ExecState::Claimed, cli, cli, None), &Released).is_none());
    }

    fn row(
        state: ExecState,
        owner: Owner,
        claimed_by: Owner,
        mode: Option<DispatchMode>,
    ) -> Execution {
        Execution {
            state,
            owner: Some(owner.to_string()),
            claimed_by: Some(claimed_by.to_string()),
            dispatch_mode: mode,
            ..Execution::sample()
        }
    }

    fn owner(role: OwnerRole, pid: u32) -> Owner {
        Owner {
            role,
            process: ProcessIdentity { pid, start: 7 },
        }
    }

    #[test]
    fn live_owners_are_left_alone() {
        let gw = owner(OwnerRole::Gateway, 10);
        assert!(judge_active(&row(ExecState::Claimed, gw, gw, None), &Alive).is_none());
    }

    #[test]
    fn dead_claimer_and_dead_worker_are_named() {
        let gw = owner(OwnerRole::Gateway, 10);
        let w = owner(OwnerRole::Worker, 11);
        let (code, why) = judge_active(&row(ExecState::Claimed, gw, gw, None), &Dead).unwrap();
        assert_eq!(code, "claimer_died");
        assert!(why.contains("pid 10"), "{why}");
        let (code, why) = judge_active(
            &row(ExecState::Running, w, gw, Some(DispatchMode::Degraded)),
            &Dead,
        )
        .unwrap();
        assert_eq!(code, "gateway_restart");
        assert!(why.contains("gateway pid 10"), "{why}");
        let (code, _) = judge_active(
            &row(ExecState::Running, w, gw, Some(DispatchMode::Scoped)),
            &Dead,
        )
        .unwrap();
        assert_eq!(code, "worker_died");
    }
}
