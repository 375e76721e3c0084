//! The gateway's startup sweep, before its first claim: every `claimed` or
//! `running` row is resolved. A scoped run whose unit still exists and still
//! holds the recorded worker pid (`GetUnitProcesses`) is adopted; a run whose
//! worker is alive with the same start time is adopted; anything else becomes
//! `unknown` with a reason that says what was checked. Rows claimed by a live
//! process other than us are left to it. Idempotent: a second sweep finds the
//! adopted rows still adoptable and nothing else to do.

use super::dead_owners::{ProcLiveness, judge_active};
use crate::db::Db;
use crate::ledger::{self, ExecState, Execution, LedgerError, Outcome};
use crate::process::Owner;
use crate::schedule::Instant;
use crate::systemd::{BusCause, UnitManager};

/// What the sweep did with one row.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Alive: watch it to its end.
    Adopted { note: String },
    /// Resolved `unknown`.
    Unknown { code: &'static str, reason: String },
    /// Claimed by another live process; not ours to judge.
    LeftAlone { note: String },
}

/// The sweep's account.
#[derive(Debug, Default)]
pub struct SweepReport {
    pub rows: Vec<(Execution, Verdict)>,
}

impl SweepReport {
    pub fn adopted(&self) -> impl Iterator<Item = &Execution> {
        self.rows
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Adopted { .. }))
            .map(|(e, _)| e)
    }
    pub fn unknown_count(&self) -> usize {
        self.rows
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Unknown { .. }))
            .count()
    }
}

/// Judge one running scoped row by its scope's process list. `Err` when the
/// manager cannot be asked (unavailable, or too slow to answer): the caller
/// judges by pid alone, and asks the bus no more in this sweep, so a wedged
/// manager costs one timeout, not one per row.
async fn judge_scoped(
    unit: &str,
    worker: &Owner,
    manager: &dyn UnitManager,
) -> Result<Option<Verdict>, BusCause> {
    let alive = worker.process.is_alive();
    let procs = match manager.unit_processes(unit).await {
        Err(cause) if cause.is_unavailable() || matches!(cause, BusCause::Timeout { .. }) => {
            return Err(cause);
        }
        other => other,
    };
    Ok(match procs {
        Ok(Some(procs)) if procs.iter().any(|(_, pid, _)| *pid == worker.process.pid) && alive => {
            Some(Verdict::Adopted {
                note: format!("scope {unit} holds worker pid {}", worker.process.pid),
            })
        }
        Ok(Some(_)) if alive => Some(Verdict::Adopted {
            note: format!(
                "worker pid {} alive (start time matches) though scope {unit} does not list it",
                worker.process.pid
            ),
        }),
        Ok(Some(_)) => Some(Verdict::Unknown {
            code: "worker_died",
            reason: format!(
                "checked scope {unit}: it exists but no longer holds worker pid {}; the worker is gone and wrote no outcome",
                worker.process.pid
            ),
        }),
        Ok(None) if !alive => Some(Verdict::Unknown {
            code: "worker_died",
            reason: format!(
                "checked scope {unit}: gone; worker pid {} (start time {}): gone; no outcome was written",
                worker.process.pid, worker.process.start
            ),
        }),
        // The scope is gone but the worker lives, or the call failed: judge by pid alone.
        _ => None,
    })
}

/// Sweep every active row. `manager` checks scopes when a bus is available.
pub async fn startup_sweep(
    db: &Db,
    manager: Option<&dyn UnitManager>,
    now: Instant,
) -> Result<SweepReport, LedgerError> {
    let active = ledger::active_runs(db.conn()).map_err(|source| LedgerError::Sql {
        id: "(active rows)".into(),
        source,
    })?;
    let mut report = SweepReport::default();
    let live = ProcLiveness::default();
    let mut manager = manager;
    for run in active {
        let owner: Option<Owner> = run.owner.as_deref().and_then(|o| o.parse().ok());
        let mut verdict = None;
        if let (ExecState::Running, Some(unit), Some(worker), Some(m)) =
            (run.state, run.unit.as_deref(), owner, manager)
        {
            match judge_scoped(unit, &worker, m).await {
                Ok(v) => verdict = v,
                Err(cause) => {
                    tracing::warn!(
                        "cannot ask the user manager about scopes ({cause}); the rest of the startup sweep judges by pid and start time alone"
                    );
                    manager = None;
                }
            }
        }
        let verdict = match verdict {
            Some(v) => v,
            None => match judge_active(&run, &live) {
                Some((code, reason)) => Verdict::Unknown { code, reason },
                None if run.state == ExecState::Claimed => Verdict::LeftAlone {
                    note: format!("claimed by live {}", run.owner.as_deref().unwrap_or("?")),
                },
                None => Verdict::Adopted {
                    note: format!(
                        "worker {} alive with the same start time",
                        run.owner.as_deref().unwrap_or("?")
                    ),
                },
            },
        };
        if let Verdict::Unknown { code, reason } = &verdict {
            crate::crash::point("sweep_before_resolve");
            let outcome = Outcome::with_reason(ExecState::Unknown, code, reason.clone(), now);
            if !ledger::resolve(
                db.conn(),
                &run.id,
                run.state,
                run.owner.as_deref(),
                &outcome,
            )? {
                // It moved on while we looked (adopted or finished): not ours to judge.
                continue;
            }
        }
        report.rows.push((run, verdict));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ExecutionId;
    use crate::ledger::{Adoption, DispatchMode, NewRow, RunSpec, Source};
    use crate::process::OwnerRole;
    use crate::systemd::{ScopeSpec, UnitFuture, UnitProcess};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A manager that never answers in time, counting how often it is asked.
    #[derive(Default)]
    struct Wedged {
        asked: AtomicUsize,
    }

    impl UnitManager for Wedged {
        fn probe(&self) -> UnitFuture<'_, ()> {
            Box::pin(async { Ok(()) })
        }
        fn start_scope<'a>(&'a self, _: &'a ScopeSpec) -> UnitFuture<'a, ()> {
            Box::pin(async { Ok(()) })
        }
        fn unit_processes<'a>(&'a self, _: &'a str) -> UnitFuture<'a, Option<Vec<UnitProcess>>> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {
                Err(BusCause::Timeout {
                    what: "calling GetUnitProcesses".into(),
                })
            })
        }
        fn stop_unit<'a>(&'a self, _: &'a str) -> UnitFuture<'a, ()> {
            Box::pin(async { Ok(()) })
        }
    }

    fn spec() -> RunSpec {
        RunSpec {
            argv: vec!["true".into()],
            shell: false,
            env: Default::default(),
            workdir: None,
            timeout_s: 60,
            output_max_bytes: 1024,
            heartbeat_interval_s: 5,
            retries: 0,
            retry_backoff_s: 30,
            resources: Default::default(),
            require_scope: false,
        }
    }

    /// Regression: a manager that timed out was asked again for every
    /// running scoped row (5 s each by default), delaying READY past
    /// systemd's start timeout on a home with many runs.
    #[tokio::test]
    async fn a_wedged_manager_is_asked_once_then_rows_are_judged_by_pid() {
        let db = Db::open_in_memory().unwrap();
        let claimer = Owner::current(OwnerRole::Gateway);
        let worker = Owner::current(OwnerRole::Worker);
        let now = chrono::DateTime::UNIX_EPOCH;
        let spec = spec();
        for i in 0..3 {
            let id = ExecutionId::generate();
            assert!(
                ledger::insert_row(
                    db.conn(),
                    &NewRow {
                        id: id.clone(),
                        job_id: None,
                        job_name: "spawned",
                        scheduled_for: None,
                        attempt: 1,
                        source: Source::Spawn,
                        state: ExecState::Claimed,
                        reason_code: None,
                        reason: None,
                        spec: &spec,
                        owner: Some(claimer),
                        dispatch_mode: None,
                        dispatch_cause: None,
                        output_path: None,
                        now,
                    },
                )
                .unwrap()
            );
            let unit = format!("u{i}.scope");
            assert!(
                ledger::adopt(
                    db.conn(),
                    &id,
                    &claimer.to_string(),
                    &Adoption {
                        worker,
                        mode: DispatchMode::Scoped,
                        cause: None,
                        unit: Some(&unit),
                        started_at: now,
                    },
                )
                .unwrap()
            );
        }
        let manager = Wedged::default();
        let report = startup_sweep(&db, Some(&manager), now).await.unwrap();
        assert_eq!(manager.asked.load(Ordering::SeqCst), 1);
        assert_eq!(report.adopted().count(), 3, "{report:?}");
    }
}
