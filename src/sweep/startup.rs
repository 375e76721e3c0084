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
use crate::systemd::UnitManager;

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

/// Judge one running scoped row by its scope's process list.
async fn judge_scoped(
    run: &Execution,
    unit: &str,
    worker: &Owner,
    manager: &dyn UnitManager,
) -> Option<Verdict> {
    let alive = worker.process.is_alive();
    match manager.unit_processes(unit).await {
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
        // The scope is gone but the worker lives, or the bus failed: judge by pid alone.
        _ => {
            let _ = run;
            None
        }
    }
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
    for run in active {
        let owner: Option<Owner> = run.owner.as_deref().and_then(|o| o.parse().ok());
        let mut verdict = None;
        if let (ExecState::Running, Some(unit), Some(worker), Some(m)) =
            (run.state, run.unit.as_deref(), owner, manager)
        {
            verdict = judge_scoped(&run, unit, &worker, m).await;
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
