//! Staging in the gateway: which upcoming instants to prepare now, the runs
//! being prepared and the workers held staged, and the lead time learned
//! from them. The release at the instant is `release.rs`.
//!
//! A stage pass (when the lead of an upcoming instant has begun) claims the
//! instant's jobs ahead (`tick::claim_ahead`); the event loop then stages
//! each run in flight (`Launcher::stage`) and hands the result back here:
//! a held worker is kept until its instant, a run that could not be staged
//! is taken back (`withdraw`) and left to the claim at its instant.
//!
//! Bounds: at most `cron.staging_max_workers` runs staged or being staged
//! (0 turns staging off); one staged run per job at a time (the claim
//! enforces it). The lead of an instant shared by `n` runs is the learned
//! cost of one staging times `n`, plus a margin, within
//! `cron.staging_lead_min_s` and `cron.staging_lead_max_s`
//! (`hermes_cron_core::staging`).

use crate::config::CronConfig;
use crate::db::Db;
use crate::dispatch::{Staged, StagedWorker};
use crate::ids::JobId;
use crate::ledger::{self, ExecState};
use crate::logging::run_span;
use crate::process::Owner;
use crate::schedule::Timestamp;
use crate::store;
use crate::text::Chain;
use crate::tick::{ClaimContext, ClaimedAhead, claim_ahead};
use hermes_cron_core::staging::{LeadTime, plan_staging};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

/// Most upcoming instants looked at per pass.
const LOOK_AHEAD_INSTANTS: usize = 256;

/// A worker held staged for its run.
pub(crate) struct HeldRun {
    pub ahead: ClaimedAhead,
    pub worker: StagedWorker,
}

/// When a batch for an instant was claimed, and how many runs it had.
#[derive(Clone, Copy, Debug)]
struct Batch {
    claimed_at: Timestamp,
    runs: usize,
}

/// The gateway's staged runs.
pub(crate) struct Stager {
    max_workers: usize,
    ceiling: Duration,
    lead: LeadTime,
    /// Held workers, by instant.
    held: BTreeMap<Timestamp, Vec<HeldRun>>,
    /// Runs claimed ahead whose staging is in flight.
    in_flight: usize,
    batches: HashMap<Timestamp, Batch>,
    /// Instants a pass left jobs at with room to spare: those jobs could not
    /// be staged (a run of theirs is staged for an earlier instant, or
    /// staging gave up on them). Looked at again after the next release.
    blocked: BTreeSet<Timestamp>,
    /// (job, slot) staging gave up on: left to the claim at the instant.
    given_up: HashSet<(JobId, Timestamp)>,
    /// After a contended or failed pass, not before this.
    retry_at: Option<Timestamp>,
}

impl Stager {
    /// A stager for `cfg`, holding at most `max_workers` (the configured
    /// bound, or fewer when the descriptor limit allows fewer).
    pub fn new(cfg: &CronConfig, max_workers: usize) -> Stager {
        Stager {
            max_workers,
            ceiling: cfg.staging_lead_max.max(cfg.staging_lead_min),
            lead: LeadTime::new(cfg.staging_lead_min, cfg.staging_lead_max),
            held: BTreeMap::new(),
            in_flight: 0,
            batches: HashMap::new(),
            blocked: BTreeSet::new(),
            given_up: HashSet::new(),
            retry_at: None,
        }
    }

    /// Staged or being staged.
    pub fn count(&self) -> usize {
        self.in_flight + self.held.values().map(Vec::len).sum::<usize>()
    }

    fn room(&self) -> usize {
        self.max_workers.saturating_sub(self.count())
    }

    /// The learned lead-time model (for logs and tests).
    pub fn lead(&self) -> &LeadTime {
        &self.lead
    }

    /// When the next stage pass is due: now, later, or never (staging off,
    /// nothing ahead, or no room until a held run is released).
    pub fn next_pass(&mut self, db: &Db, now: Timestamp) -> Option<Timestamp> {
        if self.max_workers == 0 || self.room() == 0 {
            return None;
        }
        let until = now + chrono::Duration::from_std(self.ceiling).unwrap_or_default();
        let upcoming = match store::upcoming_instants(
            db.conn(),
            now,
            until,
            LOOK_AHEAD_INSTANTS,
            &crate::cluster::Host::this().filter(),
        ) {
            Ok(u) => u,
            Err(e) => {
                tracing::warn!("staging: cannot read the upcoming instants: {}", Chain(&e));
                return None;
            }
        };
        let open: Vec<_> = upcoming
            .into_iter()
            .filter(|u| !self.blocked.contains(&u.at))
            .collect();
        let plan = plan_staging(&open, &self.lead, now);
        let next = if plan.now.is_empty() {
            plan.next_look
        } else {
            Some(now)
        };
        match (next, self.retry_at) {
            (Some(n), Some(r)) => Some(n.max(r)),
            (next, _) => next,
        }
    }

    /// A stage pass: claim ahead the runs of every instant whose lead has
    /// begun, as many as there is room for. The caller stages them.
    pub fn claim(&mut self, db: &mut Db, ctx: &ClaimContext<'_>) -> Vec<ClaimedAhead> {
        let now = ctx.now;
        self.forget_past(now);
        let room = self.room();
        if room == 0 {
            return Vec::new();
        }
        let until = now + chrono::Duration::from_std(self.ceiling).unwrap_or_default();
        let upcoming = store::upcoming_instants(
            db.conn(),
            now,
            until,
            LOOK_AHEAD_INSTANTS,
            &crate::cluster::Host::this().filter(),
        )
        .unwrap_or_default()
        .into_iter()
        .filter(|u| !self.blocked.contains(&u.at))
        .collect::<Vec<_>>();
        let due = plan_staging(&upcoming, &self.lead, now).now;
        if due.is_empty() {
            return Vec::new();
        }
        let runs = match claim_ahead(db, ctx, &due, room, &self.given_up) {
            Ok(Some(c)) => c,
            Ok(None) => {
                // Contended (a `tick` or `run` claiming): look again shortly.
                self.retry_at = Some(now + chrono::Duration::milliseconds(50));
                return Vec::new();
            }
            Err(e) => {
                tracing::error!("staging: the claim ahead failed: {}", Chain(&e));
                self.retry_at = Some(now + chrono::Duration::seconds(1));
                return Vec::new();
            }
        };
        self.retry_at = None;
        if runs.len() < room {
            // What is left at these instants cannot be staged until a run
            // is released (one staged run per job) or at all (given up).
            self.blocked.extend(due.iter().copied());
        }
        for c in &runs {
            let b = self.batches.entry(c.at).or_insert(Batch {
                claimed_at: now,
                runs: 0,
            });
            b.runs += 1;
        }
        self.in_flight += runs.len();
        runs
    }

    /// Staging `ahead` (in flight) came to `staged`.
    pub fn staged(&mut self, db: &Db, ahead: ClaimedAhead, staged: Staged, owner: Owner) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match staged {
            Staged::Held(worker) => {
                run_span(&ahead.run.job_name, &ahead.run.id).in_scope(|| {
                    tracing::debug!(
                        mode = %worker.mode,
                        unit = worker.unit.as_deref().unwrap_or("-"),
                        pid = worker.pid(),
                        at = %ahead.at,
                        "staged"
                    )
                });
                self.held
                    .entry(ahead.at)
                    .or_default()
                    .push(HeldRun { ahead, worker });
            }
            Staged::Not(why) => {
                if let Some(job) = ahead.run.job_id.clone() {
                    self.given_up.insert((job, ahead.at));
                }
                self.take_back(db, &ahead, owner, &why);
            }
        }
    }

    /// Take back a claim made ahead that no worker holds: the slot goes
    /// back to its job, for the claim at the instant.
    fn take_back(&mut self, db: &Db, c: &ClaimedAhead, owner: Owner, why: &str) {
        let _span = run_span(&c.run.job_name, &c.run.id).entered();
        let stored = owner.to_string();
        match ledger::withdraw(db.conn(), &c.run.id, ExecState::Claimed, Some(&stored)) {
            Ok(_) => tracing::info!("not staged ({why}); left to its instant"),
            Err(e) => tracing::error!("not staged ({why}); withdrawing failed: {}", Chain(&e)),
        }
    }

    /// A run was released (or its worker died): jobs blocked behind it may
    /// be staged now.
    pub fn unblock(&mut self) {
        self.blocked.clear();
    }

    /// The earliest instant with held runs, and how many are held for it.
    pub fn next_release(&self) -> Option<(Timestamp, usize)> {
        self.held.iter().next().map(|(at, runs)| (*at, runs.len()))
    }

    /// Take up to `limit` held runs due at or before `at`, earliest first.
    pub fn take_due(&mut self, at: Timestamp, limit: usize) -> Vec<HeldRun> {
        let mut out = Vec::new();
        while out.len() < limit {
            let Some(mut entry) = self.held.first_entry() else {
                break;
            };
            if *entry.key() > at {
                break;
            }
            let runs = entry.get_mut();
            let n = (limit - out.len()).min(runs.len());
            out.extend(runs.drain(..n));
            if runs.is_empty() {
                entry.remove();
            }
        }
        out
    }

    /// The held run whose worker is `pid` (it died before its release).
    pub fn take_pid(&mut self, pid: u32) -> Option<HeldRun> {
        let (at, i) = self.held.iter().find_map(|(at, runs)| {
            runs.iter()
                .position(|r| r.worker.pid() == pid)
                .map(|i| (*at, i))
        })?;
        let runs = self.held.get_mut(&at)?;
        let run = runs.remove(i);
        if runs.is_empty() {
            self.held.remove(&at);
        }
        Some(run)
    }

    /// The instant `at` was released; its last worker held its row
    /// `staged_by` (None: some were not staged yet at the instant).
    pub fn observe_release(&mut self, at: Timestamp, staged_by: Option<Timestamp>) {
        let Some(batch) = self.batches.remove(&at) else {
            return;
        };
        let took = match staged_by {
            Some(last) => last - batch.claimed_at,
            // Late: it took at least until the instant, and more.
            None => (at - batch.claimed_at) * 3 / 2,
        };
        self.lead
            .observe(batch.runs, took.to_std().unwrap_or_default());
    }

    /// Forget the bookkeeping of instants that have passed.
    fn forget_past(&mut self, now: Timestamp) {
        self.blocked = self.blocked.split_off(&now);
        self.given_up.retain(|(_, at)| *at >= now);
        let held = &self.held;
        self.batches
            .retain(|at, _| *at >= now || held.contains_key(at));
    }
}
