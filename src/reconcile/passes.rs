//! The reconciler's passes: each gathers evidence for some active rows,
//! asks the one judgement (`hermes_cron_core::reconcile::judge`), and applies
//! it through the named ledger move ([`apply`]).
//!
//! | pass | rows | run by |
//! |---|---|---|
//! | [`sweep`] | every active row | the gateway's monitor period; `run` and `tick` before they claim |
//! | [`startup_sweep`] | every active row, scopes asked | the gateway, before its first claim |
//! | [`reaped`] | the row of a worker we reaped | the gateway on SIGCHLD; `run --wait` |
//! | [`stalled`] | running rows, silence checked | the gateway's monitor period |
//! | [`watched`] | rows of runs adopted at start | the gateway's monitor period |

use super::evidence::{ProcLiveness, command_ended, describe_wait_status};
use crate::db::Db;
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState, Execution, LedgerError};
use crate::schedule::Timestamp;
use crate::systemd::{BusCause, UnitManager};
use hermes_cron_core::reconcile::{Evidence, Judgement, Reaped, ScopeSeen, Silence, judge};
use hermes_cron_core::run::Owner;
use std::time::Duration;

/// A row the reconciler moved, and why.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The row as it was before the move.
    pub row: Execution,
    pub judgement: Judgement,
}

/// Apply `j` to `row` through its named move. Returns whether the row
/// moved: false for a judgement that moves nothing, or a lost
/// compare-and-set (it moved on while we looked: not ours to judge).
pub(crate) fn apply(
    db: &Db,
    row: &Execution,
    j: &Judgement,
    now: Timestamp,
) -> Result<bool, LedgerError> {
    let conn = db.conn();
    match j {
        // The caller retakes it (`retake.rs`): it alone can launch it.
        Judgement::Ended | Judgement::Alive { .. } | Judgement::Retake { .. } => Ok(false),
        Judgement::Unadopted { reason } => ledger::unadopted(conn, row, reason.clone(), now),
        Judgement::Orphaned { code, reason } => {
            crate::crash::point("sweep_before_resolve");
            ledger::orphaned(conn, row, *code, reason.clone(), now)
        }
        Judgement::Stalled { reason } => ledger::stalled(conn, row, reason.clone(), now),
        Judgement::Withdraw { .. } => {
            crate::crash::point("sweep_before_resolve");
            let owner = row.owner.as_ref().map(|o| o.as_stored());
            ledger::withdraw(conn, &row.id, row.state, owner)
        }
    }
}

/// The evidence every pass starts from: whether `row` is a claim made ahead
/// for staging, not yet started.
fn base_evidence(db: &Db, row: &Execution) -> Result<Evidence, LedgerError> {
    let staging = row.state == ExecState::Claimed
        && ledger::staged_claim(db.conn(), &row.id)
            .map_err(|source| LedgerError::Read {
                what: "a staging claim",
                source,
            })?
            .is_some();
    Ok(Evidence {
        staging,
        ..Evidence::default()
    })
}

/// The active rows of this host: a row another host claimed is never judged
/// by this host's processes (a pid means nothing there); only its lease
/// decides (`lost_hosts`).
fn active(db: &Db, host: &str) -> Result<Vec<Execution>, LedgerError> {
    ledger::active_runs_on(db.conn(), host).map_err(|source| LedgerError::Read {
        what: "active rows",
        source,
    })
}

fn row_of(db: &Db, id: &ExecutionId) -> Result<Option<Execution>, LedgerError> {
    ledger::get_execution(db.conn(), id)
        .map(|found| found.map(|(row, _)| row))
        .map_err(|source| LedgerError::Read {
            what: "one row",
            source,
        })
}

/// The claims a gateway keeps track of (queued, in flight, staged, watched):
/// a claim of its own it does not know is one it lost track of.
pub struct Tracking<'a> {
    pub owner: Owner,
    pub tracked: &'a dyn Fn(&ExecutionId) -> bool,
}

/// What a [`sweep`] did, and the claims it left to its caller to retake.
#[derive(Debug, Default)]
pub struct Swept {
    pub resolved: Vec<Resolved>,
    /// Claims whose command never started and that nobody will start, with
    /// why (`Judgement::Retake`): the caller retakes them (`retake.rs`) if
    /// it can launch them; else they stay for a gateway or a `tick`.
    pub retake: Vec<(Execution, String)>,
}

/// Resolve every active row of `host` whose owner is dead; `tracking`: the
/// sweeping gateway's own claims. Returns what moved, and what to retake.
pub fn sweep(
    db: &Db,
    host: &str,
    tracking: Option<&Tracking<'_>>,
    now: Timestamp,
) -> Result<Swept, LedgerError> {
    let live = ProcLiveness::default();
    let mut out = Swept::default();
    for row in active(db, host)? {
        let mut ev = base_evidence(db, &row)?;
        ev.untracked = tracking.is_some_and(|t| {
            row.state == ExecState::Claimed
                && row.owner.as_ref().and_then(|o| o.owner()) == Some(t.owner)
                && !(t.tracked)(&row.id)
        });
        match judge(&row, &live, &ev) {
            Judgement::Retake { reason } => out.retake.push((row, reason)),
            j => {
                if apply(db, &row, &j, now)? {
                    out.resolved.push(Resolved { row, judgement: j });
                }
            }
        }
    }
    Ok(out)
}

/// What the startup sweep decided for each active row.
#[derive(Debug, Default)]
pub(crate) struct SweepReport {
    /// Every row looked at and its judgement; a judgement that would move
    /// a row which moved on meanwhile is left out.
    pub rows: Vec<(Execution, Judgement)>,
}

impl SweepReport {
    pub(crate) fn unknown_count(&self) -> usize {
        self.rows
            .iter()
            .filter(|(_, j)| matches!(j, Judgement::Orphaned { .. }))
            .count()
    }
}

/// Ask the manager what a running row's scope holds. `Err` when it cannot
/// be asked (unavailable, or too slow to answer).
async fn scope_of(manager: &dyn UnitManager, unit: &str) -> Result<Option<ScopeSeen>, BusCause> {
    match manager.unit_processes(unit).await {
        Ok(Some(procs)) => Ok(Some(ScopeSeen::Holds(
            procs.iter().map(|(_, pid, _)| *pid).collect(),
        ))),
        Ok(None) => Ok(Some(ScopeSeen::Gone)),
        Err(cause) if cause.is_unavailable() || matches!(cause, BusCause::Timeout { .. }) => {
            Err(cause)
        }
        // This call failed: judge by pid alone.
        Err(_) => Ok(None),
    }
}

/// The gateway's startup sweep, before its first claim: every active row is
/// adopted (its worker lives; a scoped one whose scope still holds it),
/// left to the live process that claimed it, or resolved with what was
/// checked. `manager` is asked about scopes while it answers; once it
/// cannot be asked, the rest is judged by pid and start time, so a wedged
/// manager costs one timeout, not one per row. Idempotent.
pub(crate) async fn startup_sweep(
    db: &Db,
    host: &str,
    manager: Option<&dyn UnitManager>,
    now: Timestamp,
) -> Result<SweepReport, LedgerError> {
    let live = ProcLiveness::default();
    let mut report = SweepReport::default();
    let mut manager = manager;
    for row in active(db, host)? {
        let mut ev = base_evidence(db, &row)?;
        if let (ExecState::Running, Some(unit), Some(m)) = (row.state, row.unit.as_deref(), manager)
            && row.owner.as_ref().and_then(|o| o.owner()).is_some()
        {
            match scope_of(m, unit).await {
                Ok(seen) => ev.scope = seen,
                Err(cause) => {
                    tracing::warn!(
                        "cannot ask the user manager about scopes ({cause}); the rest of the startup sweep judges by pid and start time alone"
                    );
                    manager = None;
                }
            }
        }
        let j = judge(&row, &live, &ev);
        let moves = matches!(
            j,
            Judgement::Orphaned { .. }
                | Judgement::Unadopted { .. }
                | Judgement::Stalled { .. }
                | Judgement::Withdraw { .. }
        );
        if moves && !apply(db, &row, &j, now)? {
            continue;
        }
        report.rows.push((row, j));
    }
    Ok(report)
}

/// What became of a reaped worker's run.
#[derive(Debug)]
pub enum Settled {
    /// The worker recorded its outcome.
    Finished(Execution),
    /// We recorded it: the worker did not.
    Resolved(Resolved),
    /// Nothing to do (the row is gone, or moved on by someone else).
    Untouched,
}

/// How a launcher's worker ended, as the launcher saw it.
#[derive(Clone, Copy, Debug)]
pub struct ReapedWorker {
    /// The launcher (the row's claimer).
    pub by: Owner,
    pub pid: u32,
    /// Its wait status (None: reaped elsewhere, not known).
    pub status: Option<i32>,
    /// The launcher wrote its go: a staged worker may have started the command.
    pub released: bool,
}

/// Settle the run `id` of a worker its launcher reaped. A worker writes its
/// own terminal row before it exits, so normally there is nothing to do; a
/// row it never adopted (or held staged and was never released) becomes
/// `failed` (`worker_exited`), one it adopted or was released for `unknown`.
pub fn reaped(
    db: &Db,
    id: &ExecutionId,
    w: ReapedWorker,
    now: Timestamp,
) -> Result<Settled, LedgerError> {
    let Some(row) = row_of(db, id)? else {
        return Ok(Settled::Untouched);
    };
    let ev = Evidence {
        reaped: Some(Reaped {
            by: w.by,
            pid: w.pid,
            how: w
                .status
                .map_or_else(|| "gone".to_string(), describe_wait_status),
            released: w.released,
        }),
        ..base_evidence(db, &row)?
    };
    let j = judge(&row, &ProcLiveness::default(), &ev);
    if j == Judgement::Ended {
        return Ok(Settled::Finished(row));
    }
    if !apply(db, &row, &j, now)? {
        return Ok(Settled::Untouched);
    }
    Ok(Settled::Resolved(Resolved { row, judgement: j }))
}

/// Where a run the gateway adopted at start (not its child) stands.
#[derive(Debug)]
pub enum Watch {
    /// Its worker lives: keep watching.
    Running,
    /// Its row is terminal (the worker recorded it), or gone.
    Ended(Option<Execution>),
    /// Its worker is gone without a word: resolved now.
    Resolved(Resolved),
}

/// Look at the row of a run adopted at start (`| watched |` above).
pub(crate) fn watched(db: &Db, id: &ExecutionId, now: Timestamp) -> Result<Watch, LedgerError> {
    let Some(row) = row_of(db, id)? else {
        return Ok(Watch::Ended(None));
    };
    let j = judge(&row, &ProcLiveness::default(), &base_evidence(db, &row)?);
    Ok(match j {
        Judgement::Alive { .. } => Watch::Running,
        Judgement::Ended => Watch::Ended(Some(row)),
        _ => {
            apply(db, &row, &j, now)?;
            Watch::Resolved(Resolved { row, judgement: j })
        }
    })
}

/// Waiting longer than this for the write lock means the ledger was held:
/// workers could not stamp their rows either.
pub const LEDGER_HELD: Duration = Duration::from_millis(100);

/// What [`stalled`] did.
#[derive(Debug, Default)]
pub struct Stalls {
    /// The rows moved to `timed_out` (`stalled`); the caller stops each one.
    pub resolved: Vec<Resolved>,
    /// How long the ledger's write lock kept us waiting when that was more
    /// than [`LEDGER_HELD`]: nothing was judged, since the silence may be
    /// the ledger's; the caller counts silence from now.
    pub ledger_held: Option<Duration>,
}

/// Running rows whose live worker has been silent for too long, moved to
/// `timed_out` (`stalled`). `watching_since`: see [`Silence`]. A worker
/// whose command ended is recording (see `Evidence::command_ended`); one
/// the ledger kept from writing is not silent by its own doing, so the
/// write lock is taken first, and a long wait for it judges nobody.
pub fn stalled(
    db: &Db,
    host: &str,
    now: Timestamp,
    watching_since: Option<Timestamp>,
) -> Result<Stalls, LedgerError> {
    let live = ProcLiveness::default();
    let mut candidates = Vec::new();
    for row in active(db, host)?
        .into_iter()
        .filter(|r| r.state == ExecState::Running)
    {
        // A cheap first cut with the shortest interval a spec can have
        // (1 s), then the row's own interval from its spec.
        let silence = |interval| Silence {
            interval,
            now,
            watching_since,
        };
        if !hermes_cron_core::reconcile::is_stalled(&row, &silence(Duration::from_secs(1))) {
            continue;
        }
        let Ok(Some((row, spec))) = ledger::get_execution(db.conn(), &row.id) else {
            continue;
        };
        // A worker that cannot write the ledger falls silent too: what the
        // processes show decides (its command ended: it is recording).
        let ev = Evidence {
            silence: Some(silence(Duration::from_secs(
                spec.heartbeat_interval_s.max(1),
            ))),
            command_ended: command_ended(&row),
            ..Evidence::default()
        };
        let j = judge(&row, &live, &ev);
        if matches!(j, Judgement::Stalled { .. }) {
            candidates.push((row, j));
        }
    }
    if candidates.is_empty() {
        return Ok(Stalls::default());
    }
    let asked = crate::clock::monotonic();
    let tx = db.conn().immediate().map_err(|source| LedgerError::Sql {
        id: candidates[0].0.id.to_string(),
        source,
    })?;
    let waited = crate::clock::elapsed(asked);
    if waited > LEDGER_HELD {
        let _ = tx.rollback();
        return Ok(Stalls {
            resolved: Vec::new(),
            ledger_held: Some(waited),
        });
    }
    let _ = tx.rollback();
    let mut resolved = Vec::new();
    for (row, j) in candidates {
        if apply(db, &row, &j, now)? {
            resolved.push(Resolved { row, judgement: j });
        }
    }
    Ok(Stalls {
        resolved,
        ledger_held: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{DispatchMode, NewClaim, Occurrence, RunSpec, Source, Taking};
    use crate::process;
    use crate::systemd::{ScopeSpec, UnitFuture, UnitProcess};
    use hermes_cron_core::run::{OwnerRole, ProcessIdentity};
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
            timeout_s: 60,
            output_max_bytes: 1024,
            heartbeat_interval_s: 5,
            retry_backoff_s: 30,
            ..RunSpec::default()
        }
    }

    /// A write lock another process holds keeps workers from stamping their
    /// rows: a silent worker is judged only when the stall check got the lock
    /// without waiting; after a wait, nobody (issue 23, section 0).
    #[test]
    fn silence_is_judged_only_when_the_write_lock_came_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cron.db");
        let db = Db::open(&path).unwrap();
        // A live worker with a live command: a session leader with a child.
        let mut leader = std::process::Command::new("setsid")
            .args(["sh", "-c", "sleep 60 & wait"])
            .spawn()
            .unwrap();
        let worker = Owner {
            role: OwnerRole::Worker,
            process: process::identity_of(leader.id()).unwrap(),
        };
        // Its session goes when the test ends, however it ends.
        struct Ends(ProcessIdentity);
        impl Drop for Ends {
            fn drop(&mut self) {
                process::signal_session(&self.0, nix::sys::signal::Signal::SIGKILL);
            }
        }
        let _ends = Ends(worker.process);
        let deadline = crate::clock::monotonic() + Duration::from_secs(10);
        while !process::has_live_child(&worker.process) {
            assert!(
                crate::clock::monotonic() < deadline,
                "no child of the leader"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let claimer = process::owner(OwnerRole::Gateway);
        let then: Timestamp = "2026-01-01T08:00:00Z".parse().unwrap();
        let id = ExecutionId::generate();
        let spec = spec();
        let claim = NewClaim {
            occurrence: Occurrence {
                id: &id,
                job_id: None,
                job_name: "silent",
                scheduled_for: None,
                attempt: 1,
                source: Source::Spawn,
                spec: &spec,
                at: then,
                host: "test-host",
            },
            owner: claimer,
            output_path: None,
        };
        assert!(ledger::claim(db.conn(), &claim).unwrap());
        let taking = Taking {
            worker,
            mode: DispatchMode::Degraded,
            cause: None,
            unit: None,
            at: then,
        };
        assert!(ledger::adopt(db.conn(), &id, &claimer.into(), &taking).unwrap());
        let now = then + chrono::Duration::seconds(60);

        // Held by another connection for a while: judged by nobody.
        let holder = rusqlite::Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            holder.execute_batch("ROLLBACK").unwrap();
        });
        let held = stalled(&db, "test-host", now, None).unwrap();
        release.join().unwrap();
        assert!(held.resolved.is_empty(), "{held:?}");
        assert!(
            held.ledger_held.is_some_and(|w| w > LEDGER_HELD),
            "{held:?}"
        );
        // Free: the silent worker is stalled.
        let free = stalled(&db, "test-host", now, None).unwrap();
        assert_eq!(
            (free.resolved.len(), free.ledger_held),
            (1, None),
            "{free:?}"
        );
        drop(_ends);
        let _ = leader.wait();
    }

    /// Regression: a manager that timed out was asked again for every
    /// running scoped row (5 s each by default), delaying READY past
    /// systemd's start timeout on a home with many runs.
    #[tokio::test]
    async fn a_wedged_manager_is_asked_once_then_rows_are_judged_by_pid() {
        let db = Db::open_in_memory().unwrap();
        let claimer = process::owner(OwnerRole::Gateway);
        let worker = process::owner(OwnerRole::Worker);
        let now = chrono::DateTime::UNIX_EPOCH;
        let spec = spec();
        for i in 0..3 {
            let id = ExecutionId::generate();
            let claim = NewClaim {
                occurrence: Occurrence {
                    id: &id,
                    job_id: None,
                    job_name: "spawned",
                    scheduled_for: None,
                    attempt: 1,
                    source: Source::Spawn,
                    spec: &spec,
                    at: now,
                    host: "test-host",
                },
                owner: claimer,
                output_path: None,
            };
            assert!(ledger::claim(db.conn(), &claim).unwrap());
            let unit = format!("u{i}.scope");
            assert!(
                ledger::adopt(
                    db.conn(),
                    &id,
                    &claimer.into(),
                    &Taking {
                        worker,
                        mode: DispatchMode::Scoped,
                        cause: None,
                        unit: Some(&unit),
                        at: now,
                    },
                )
                .unwrap()
            );
        }
        let manager = Wedged::default();
        let report = startup_sweep(&db, "test-host", Some(&manager), now)
            .await
            .unwrap();
        assert_eq!(manager.asked.load(Ordering::SeqCst), 1);
        let adopted = report
            .rows
            .iter()
            .filter(|(_, j)| matches!(j, Judgement::Alive { .. }))
            .count();
        assert_eq!(adopted, 3, "{report:?}");
    }
}
