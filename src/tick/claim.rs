//! The claim transaction.
//!
//! ## Locking
//! `claim_due` takes the tick lock without waiting (SQLite: `flock` on
//! `cron/.hermes-cron.tick.lock`; PostgreSQL: the transaction-scoped advisory
//! lock `LockKey::Tick`, so gateways on several hosts do not stampede), then
//! one write transaction: read the due jobs (those this host may claim), the
//! active runs (of every host) and the owed retries, insert a row for every
//! due slot (claimed, missed or skipped; the row names this host), advance
//! each job, commit, and release the lock. On PostgreSQL a pass takes at
//! most `HERMES_CRON_CLAIM_BATCH` jobs (64), so the due work of one second
//! spreads over the hosts instead of going to whichever locked first.
//! Everything that needs IO beyond the database (the zone table, config) is
//! computed by the caller before; nothing is logged while the lock or the transaction
//! is held.

use super::lock::{LockError, TickLock, TryLock};
use crate::cluster::Host;
use crate::config::Config;
use crate::db::{Caps, Conn, Db, LockKey, SqlError, Tx};
use crate::home::Home;
use crate::ids::{ExecutionId, JobId};
use crate::job::{CatchUp, Job, Overlap};
use crate::ledger::{
    self, ClaimedRun, ExecState, Execution, NewClaim, NewNotRun, Occurrence, ReasonCode, RunSpec,
    Source,
};
use crate::process::Owner;
use crate::schedule::{Timestamp, Tz, ZoneTable};
use crate::store::{self, StoreError};
use hermes_cron_core::plan::{PlanInput, SlotFate, plan_job};
use std::collections::HashMap;

/// Most jobs planned in one pass; the rest wait for the next pass.
const MAX_JOBS_PER_PASS: usize = 10_000;

/// Most jobs one pass takes: on a shared ledger a batch (`batch`), so the
/// due work of one second spreads over the hosts.
fn pass_limit(caps: Caps, batch: usize) -> usize {
    if caps.shared {
        batch.min(MAX_JOBS_PER_PASS)
    } else {
        MAX_JOBS_PER_PASS
    }
}

/// What a claim needs, computed before any lock is taken.
#[derive(Clone, Debug)]
pub struct ClaimContext<'a> {
    pub home: &'a Home,
    pub config: &'a Config,
    /// The config zone, else the system zone.
    pub fallback_zone: Tz,
    /// Where jobs' zone names are read (the process's table).
    pub zones: &'a ZoneTable,
    pub owner: Owner,
    /// The host claiming: rows name it, and only jobs it may run are claimed.
    pub host: &'a Host,
    /// Most jobs a pass takes on a shared ledger (the knob `claim_batch`).
    pub claim_batch: usize,
    pub now: Timestamp,
}

/// A row that was recorded without running.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NotRun {
    pub id: ExecutionId,
    pub job_id: Option<JobId>,
    pub job_name: String,
    pub scheduled_for: Option<Timestamp>,
    pub state: ExecState,
    pub reason_code: ReasonCode,
    pub reason: String,
}

/// What one pass did.
#[derive(Clone, Debug, Default)]
pub struct ClaimReport {
    pub claimed: Vec<ClaimedRun>,
    pub not_run: Vec<NotRun>,
    /// Slots that already had a row (claimed by someone else): never doubled.
    pub conflicts: usize,
    /// The pass took as many due jobs (or retries) as one pass may: more
    /// may be due now (a PostgreSQL pass takes `HERMES_CRON_CLAIM_BATCH`).
    pub more_due: bool,
}

impl ClaimReport {
    /// Add what a later pass did.
    pub fn absorb(&mut self, later: ClaimReport) {
        self.claimed.extend(later.claimed);
        self.not_run.extend(later.not_run);
        self.conflicts += later.conflicts;
        self.more_due = later.more_due;
    }
}

/// Failed to claim.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("claim transaction failed")]
    Sql(#[from] SqlError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
}

/// The zone of `job`: its own, read in the context's table, else the fallback.
pub(super) fn zone_of(job: &Job, ctx: &ClaimContext<'_>) -> Tz {
    ctx.zones.zone_or(job.tz.as_deref(), ctx.fallback_zone)
}

/// What every claim holds: the tick lock as the backend takes it (the
/// `flock` on SQLite, held by the returned guard; the advisory lock `Tick`
/// on PostgreSQL, with the transaction) and the write transaction. None:
/// another process is claiming right now.
pub(super) fn begin_claim<'c>(
    db: &'c Db,
    home: &Home,
) -> Result<Option<(Option<TickLock>, Tx<'c>)>, ClaimError> {
    let lock = if db.caps().tick_flock {
        match TickLock::try_acquire(&home.tick_lock())? {
            TryLock::Acquired(lock) => Some(lock),
            TryLock::Contended => return Ok(None),
        }
    } else {
        None
    };
    Ok(db.conn().try_immediate(LockKey::Tick)?.map(|tx| (lock, tx)))
}

/// One claim pass. `Ok(None)` means another process holds the tick lock.
pub fn claim_due(db: &mut Db, ctx: &ClaimContext<'_>) -> Result<Option<ClaimReport>, ClaimError> {
    let limit = pass_limit(db.caps(), ctx.claim_batch);
    let Some((lock, tx)) = begin_claim(db, ctx.home)? else {
        return Ok(None);
    };
    let report = claim_in(&tx, ctx, limit)?;
    crate::crash::point("claim_before_commit");
    tx.commit()?;
    drop(lock);
    crate::crash::point("after_claim_commit");
    Ok(Some(report))
}

/// Whether `run` is a previous run still going, as overlap sees it at
/// `now`: a run claimed ahead of a later instant (staged, not started) is
/// not one yet; its own instant decides (the gateway, at its release).
fn going(run: &Execution, now: Timestamp) -> bool {
    run.state == ExecState::Running || run.scheduled_for.is_none_or(|at| at <= now)
}

/// The runs overlap `replace` stops before this one starts (none otherwise).
fn replaced(job: &Job, running: Vec<Execution>) -> Vec<Execution> {
    if job.overlap == Overlap::Replace {
        running
    } else {
        Vec::new()
    }
}

struct Writer<'t> {
    tx: &'t Conn,
    ctx: &'t ClaimContext<'t>,
    report: ClaimReport,
}

/// One slot of a job and its fate.
struct Slot {
    scheduled_for: Option<Timestamp>,
    attempt: u32,
    fate: SlotFate,
    /// The source of its row unless the fate names one.
    base: Source,
}

impl Writer<'_> {
    /// One occurrence outside the plan (manual, retry, `@reboot`): it runs
    /// unless a previous run is active and the job's overlap policy is `skip`.
    fn single(
        &mut self,
        job: &Job,
        running: Vec<Execution>,
        scheduled_for: Option<Timestamp>,
        attempt: u32,
        source: Source,
    ) -> Result<(), ClaimError> {
        let fate = if !running.is_empty() && job.overlap == Overlap::Skip {
            SlotFate::Skipped {
                code: ReasonCode::Overlap,
                reason: "the previous run of this job is still going (overlap skip)".into(),
            }
        } else {
            SlotFate::Run { source }
        };
        let replace = replaced(job, running);
        let spec = RunSpec::of_job(job, &self.ctx.config.cron);
        let slot = Slot {
            scheduled_for,
            attempt,
            fate,
            base: source,
        };
        self.row(job, &spec, slot, &replace)
    }

    fn row(
        &mut self,
        job: &Job,
        spec: &RunSpec,
        slot: Slot,
        replace: &[Execution],
    ) -> Result<(), ClaimError> {
        let id = ExecutionId::generate();
        let source = match (&slot.fate, slot.attempt > 1) {
            (_, true) => Source::Retry,
            (SlotFate::Run { source }, false) => *source,
            _ => slot.base,
        };
        let occurrence = Occurrence {
            id: &id,
            job_id: Some(&job.id),
            job_name: &job.name,
            scheduled_for: slot.scheduled_for,
            attempt: slot.attempt,
            source,
            spec,
            at: self.ctx.now,
            host: &self.ctx.host.name,
        };
        let (state, code, reason) = match slot.fate {
            SlotFate::Run { .. } => {
                let output_path = self
                    .ctx
                    .home
                    .output_file(job.id.as_str(), id.as_str())
                    .to_string_lossy()
                    .into_owned();
                let claim = NewClaim {
                    occurrence,
                    owner: self.ctx.owner,
                    output_path: Some(output_path),
                };
                if !ledger::claim(self.tx, &claim)? {
                    self.report.conflicts += 1;
                    return Ok(());
                }
                self.report.claimed.push(ClaimedRun {
                    id,
                    job_id: Some(job.id.clone()),
                    job_name: job.name.clone(),
                    scheduled_for: slot.scheduled_for,
                    attempt: slot.attempt,
                    source,
                    spec: spec.clone(),
                    owner: self.ctx.owner,
                    replace: replace.to_vec(),
                });
                return Ok(());
            }
            SlotFate::Missed { code, reason } => (ExecState::Missed, code, reason),
            SlotFate::Skipped { code, reason } => (ExecState::Skipped, code, reason),
        };
        let not_run = NewNotRun {
            occurrence,
            state,
            reason_code: code,
            reason: reason.clone(),
        };
        if !ledger::not_run(self.tx, &not_run)? {
            self.report.conflicts += 1;
            return Ok(());
        }
        self.report.not_run.push(NotRun {
            id,
            job_id: Some(job.id.clone()),
            job_name: job.name.clone(),
            scheduled_for: slot.scheduled_for,
            state,
            reason_code: code,
            reason,
        });
        Ok(())
    }
}

fn claim_in(tx: &Conn, ctx: &ClaimContext<'_>, limit: usize) -> Result<ClaimReport, ClaimError> {
    let host = ctx.host.filter();
    let mut active: HashMap<JobId, Vec<Execution>> = HashMap::new();
    for run in ledger::active_runs(tx)?
        .into_iter()
        .filter(|r| going(r, ctx.now))
    {
        if let Some(job) = run.job_id.clone() {
            active.entry(job).or_default().push(run);
        }
    }
    let mut w = Writer {
        tx,
        ctx,
        report: ClaimReport::default(),
    };

    let due = store::due_jobs(tx, ctx.now, limit, &host)?;
    w.report.more_due = due.len() >= limit;
    for job in due {
        let zone = zone_of(&job, ctx);
        let catch_up = job
            .catch_up
            .unwrap_or(CatchUp::default_for(ctx.config.cron.catch_up_missed));
        let running = active.get(&job.id).cloned().unwrap_or_default();
        let plan = plan_job(&PlanInput {
            job: &job,
            zone,
            now: ctx.now,
            catch_up,
            has_active: !running.is_empty(),
        });
        let spec = RunSpec::of_job(&job, &ctx.config.cron);
        let replace = replaced(&job, running);
        for planned in plan.slots {
            let slot = Slot {
                scheduled_for: Some(planned.scheduled_for),
                attempt: 1,
                fate: planned.fate,
                base: Source::Schedule,
            };
            w.row(&job, &spec, slot, &replace)?;
        }
        store::update_job_schedule_state(tx, &job.id, plan.next_run_at, plan.anchor, &plan.state)?;
    }

    let retries = ledger::due_retries(tx, ctx.now, limit, &host)?;
    w.report.more_due |= retries.len() >= limit;
    for retry in retries {
        ledger::take_retry(tx, &retry.failed.id)?;
        let Some(job_id) = retry.failed.job_id.clone() else {
            continue;
        };
        let Some(job) = store::get_job(tx, &job_id)? else {
            continue;
        };
        let running = active.get(&job.id).cloned().unwrap_or_default();
        w.single(
            &job,
            running,
            retry.failed.scheduled_for,
            retry.failed.attempt + 1,
            Source::Retry,
        )?;
    }
    Ok(w.report)
}

/// A manual occurrence (`run`): one row, source `manual`, no slot. Honours the
/// job's overlap policy. Takes no tick lock: it claims no scheduled slot.
pub fn claim_manual(
    db: &mut Db,
    ctx: &ClaimContext<'_>,
    job: &Job,
) -> Result<ClaimReport, ClaimError> {
    let tx = db.immediate()?;
    let mut running = ledger::active_runs_for_job(&tx, &job.id)?;
    running.retain(|r| going(r, ctx.now));
    let mut w = Writer {
        tx: &tx,
        ctx,
        report: ClaimReport::default(),
    };
    w.single(job, running, None, 1, Source::Manual)?;
    let report = w.report;
    tx.commit()?;
    crate::crash::point("after_claim_commit");
    Ok(report)
}

/// `@reboot` jobs: one occurrence each per gateway start, at `ctx.now` (the
/// start instant), source `reboot`. Honours overlap like any claim.
pub(crate) fn claim_reboot(db: &mut Db, ctx: &ClaimContext<'_>) -> Result<ClaimReport, ClaimError> {
    let tx = db.immediate()?;
    let mut w = Writer {
        tx: &tx,
        ctx,
        report: ClaimReport::default(),
    };
    for job in store::reboot_jobs(&tx, &ctx.host.filter())? {
        let mut running = ledger::active_runs_for_job(&tx, &job.id)?;
        running.retain(|r| going(r, ctx.now));
        w.single(&job, running, Some(ctx.now), 1, Source::Reboot)?;
    }
    let report = w.report;
    tx.commit()?;
    Ok(report)
}
