//! Staging in the gateway: which upcoming instants to prepare now, the gates
//! of the runs staged for each instant, the release at the instant, and the
//! lead time learned from them.
//!
//! A stage pass (when the lead of an upcoming instant has begun) claims the
//! instant's jobs ahead (`Claims::ahead`) and gives each run a gate
//! (`dispatch::gate`): the loop launches it staged (`Launcher::launch`: the
//! worker holds its row and waits at the gate). A little before the instant
//! ([`margin`]) the stager reads the active rows and each run's job as it
//! is now, once, and decides each fate as the claim at the instant would
//! (`hermes_cron_core::staging::at_instant`): release it; stop the previous
//! runs first (overlap `replace`, done by the launch before its release);
//! record it `skipped` (overlap `skip`); take it back (`withdraw`: its job
//! was paused, edited or removed); or drop it (its row moved on). The moves
//! are made before the instant; at the instant the gates of the released
//! runs open, and each launch writes its worker's release byte. A gate that
//! is dropped instead closes its worker's pipe: the worker sees EOF and
//! exits without running anything.
//!
//! Bounds: at most `cron.staging_max_workers` runs staged or being staged
//! (0 turns staging off); one staged run per job at a time (the claim
//! enforces it). The lead of an instant shared by `n` runs is the learned
//! cost of one staging times `n`, plus a margin, within
//! `cron.staging_lead_min_s` and `cron.staging_lead_max_s`
//! (`hermes_cron_core::staging`).

use super::claims::Claims;
use super::context::Ctx;
use crate::clock::Clock;
use crate::config::CronConfig;
use crate::db::Db;
use crate::dispatch::{Gate, Gated, Release, gate};
use crate::ids::{ExecutionId, JobId};
use crate::ledger::ClaimedRun;
use crate::ledger::{self, ExecState, Execution, LedgerError};
use crate::logging::run_span;
use crate::schedule::Timestamp;
use crate::store;
use crate::text::Chain;
use crate::tick::ClaimedAhead;
use hermes_cron_core::staging::{AtInstant, JobAtInstant, LeadTime, at_instant, plan_staging};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

/// Most upcoming instants looked at per pass.
const LOOK_AHEAD_INSTANTS: usize = 256;
/// The longest the loop thread waits, blocked, for the exact instant.
const MAX_PRECISE_WAIT: Duration = Duration::from_millis(50);

/// How long before an instant to wake for the release of `runs` staged
/// runs: enough to read and decide them all before it.
pub(crate) fn margin(runs: usize) -> Duration {
    Duration::from_millis(2) + Duration::from_micros(30) * runs.min(100_000) as u32
}

/// A run claimed ahead and the loop's end of its gate.
struct Staging {
    ahead: ClaimedAhead,
    gate: Gate,
}

/// When a batch for an instant was claimed, and how many runs it had.
#[derive(Clone, Copy, Debug)]
struct Batch {
    claimed_at: Timestamp,
    runs: usize,
}

pub(crate) struct Stager {
    max_workers: usize,
    ceiling: Duration,
    lead: LeadTime,
    /// The runs claimed ahead, by instant, until released or taken back.
    gates: BTreeMap<Timestamp, Vec<Staging>>,
    batches: HashMap<Timestamp, Batch>,
    /// Instants a pass left jobs at with room to spare: those jobs could not
    /// be staged (a run of theirs is staged for an earlier instant, or
    /// staging gave up on them). Looked at again after the next release.
    blocked: BTreeSet<Timestamp>,
    /// (job, slot) staging gave up on: left to the claim at the instant.
    given_up: HashSet<(JobId, Timestamp)>,
}

impl Stager {
    /// A stager for `cfg`, holding at most `max_workers` (the configured
    /// bound, or fewer when the descriptor limit allows fewer; 0: off).
    pub(super) fn new(cfg: &CronConfig, max_workers: usize) -> Stager {
        Stager {
            max_workers,
            ceiling: cfg.staging_lead_max.max(cfg.staging_lead_min),
            lead: LeadTime::new(cfg.staging_lead_min, cfg.staging_lead_max),
            gates: BTreeMap::new(),
            batches: HashMap::new(),
            blocked: BTreeSet::new(),
            given_up: HashSet::new(),
        }
    }

    /// The runs staged or being staged.
    pub(super) fn ids(&self) -> impl Iterator<Item = &ExecutionId> {
        self.gates.values().flatten().map(|s| &s.ahead.run.id)
    }

    /// Staged or being staged.
    pub(super) fn count(&self) -> usize {
        self.gates.values().map(Vec::len).sum()
    }

    fn room(&self) -> usize {
        self.max_workers.saturating_sub(self.count())
    }

    /// The instants of the next `ceiling` whose lead has begun (`now`), and
    /// when the next one's begins.
    fn plan(&self, db: &Db, cx: &Ctx, now: Timestamp) -> (Vec<Timestamp>, Option<Timestamp>) {
        let until = now + chrono::Duration::from_std(self.ceiling).unwrap_or_default();
        let filter = cx.host.filter();
        let upcoming =
            match store::upcoming_instants(db.conn(), now, until, LOOK_AHEAD_INSTANTS, &filter) {
                Ok(u) => u,
                Err(e) => {
                    tracing::warn!("staging: cannot read the upcoming instants: {}", Chain(&e));
                    return (Vec::new(), None);
                }
            };
        let open: Vec<_> = upcoming
            .into_iter()
            .filter(|u| !self.blocked.contains(&u.at))
            .collect();
        let plan = plan_staging(&open, &self.lead, now);
        (plan.now, plan.next_look)
    }

    /// When the next stage pass is due: now, later, or never (staging off,
    /// nothing ahead, or no room until a staged run is released).
    pub(super) fn next_pass(&self, db: &Db, cx: &Ctx, now: Timestamp) -> Option<Timestamp> {
        if self.room() == 0 {
            return None;
        }
        match self.plan(db, cx, now) {
            (due, _) if !due.is_empty() => Some(now),
            (_, next) => next,
        }
    }

    /// A stage pass: claim ahead the runs of every instant whose lead has
    /// begun, as many as there is room for; each with the launch's end of
    /// its gate, to be launched staged.
    pub(super) fn pass(
        &mut self,
        db: &mut Db,
        cx: &Ctx,
        claims: &mut Claims,
    ) -> Vec<(ClaimedRun, Gated)> {
        let now = cx.clock.now();
        self.forget_past(now);
        let room = self.room();
        let due = self.plan(db, cx, now).0;
        if room == 0 || due.is_empty() {
            return Vec::new();
        }
        let claimed = claims.ahead(db, cx, &due, room, &self.given_up);
        if claimed.len() < room {
            // What is left at these instants cannot be staged until a run
            // is released (one staged run per job) or at all (given up).
            self.blocked.extend(due.iter().copied());
        }
        if !claimed.is_empty() {
            tracing::debug!(
                runs = claimed.len(),
                per_run_ms = self.lead.per_run().as_secs_f64() * 1000.0,
                "claimed ahead for staging"
            );
        }
        let mut launches = Vec::with_capacity(claimed.len());
        for ahead in claimed {
            let b = self.batches.entry(ahead.at).or_insert(Batch {
                claimed_at: now,
                runs: 0,
            });
            b.runs += 1;
            let (loop_end, launch_end) = gate();
            launches.push((ahead.run.clone(), launch_end));
            self.gates.entry(ahead.at).or_default().push(Staging {
                ahead,
                gate: loop_end,
            });
        }
        launches
    }

    /// The launch of `run` could not stage it: forget its gate and leave
    /// its slot to the claim at the instant (its claim is taken back).
    pub(super) fn not_staged(&mut self, run: &ClaimedRun, why: &str) {
        if let Some(s) = self.take(|s| s.ahead.run.id == run.id)
            && let Some(job) = s.ahead.run.job_id.clone()
        {
            self.given_up.insert((job, s.ahead.at));
        }
        run_span(&run.job_name, &run.id)
            .in_scope(|| tracing::info!("not staged ({why}); left to its instant"));
    }

    /// A staged run was released, or its worker died: jobs blocked behind it
    /// may be staged now.
    pub(super) fn unblock(&mut self) {
        self.blocked.clear();
    }

    /// The staged run whose worker is `pid` (it died before its release):
    /// its gate is dropped.
    pub(super) fn worker_died(&mut self, pid: u32) -> Option<ExecutionId> {
        let s = self.take(|s| s.gate.pid() == Some(pid))?;
        self.unblock();
        Some(s.ahead.run.id)
    }

    fn take(&mut self, which: impl Fn(&Staging) -> bool) -> Option<Staging> {
        let (at, i) = self
            .gates
            .iter()
            .find_map(|(at, runs)| runs.iter().position(&which).map(|i| (*at, i)))?;
        let runs = self.gates.get_mut(&at)?;
        let s = runs.remove(i);
        if runs.is_empty() {
            self.gates.remove(&at);
        }
        Some(s)
    }

    /// When to wake for the next release, a little before its instant.
    pub(super) fn next_release(&self) -> Option<Timestamp> {
        let (at, runs) = self.gates.iter().next()?;
        Some(*at - chrono::Duration::from_std(margin(runs.len())).unwrap_or_default())
    }

    /// Release the staged runs whose instant has come, as many as
    /// `capacity` allows: decide them (module documentation), wait for the
    /// exact instant, open the gates of those released. Returns how many.
    pub(super) fn release_due(&mut self, db: &Db, clock: &dyn Clock, capacity: usize) -> usize {
        let Some(&at) = self.gates.keys().next() else {
            return 0;
        };
        let now = clock.now();
        let due = self.take_due(at.max(now), capacity);
        let decided = match decide(db, &due, now) {
            Ok(d) => d,
            Err(e) => {
                // The gates are dropped: the workers withdraw their rows.
                tracing::error!("cannot decide the staged runs of {at}: {}", Chain(&e));
                return 0;
            }
        };
        wait_for(clock, at);
        let mut released = 0;
        for (s, fate) in due.into_iter().zip(decided.fates) {
            if let Some(release) = fate {
                s.gate.open(release);
                released += 1;
            }
        }
        self.unblock();
        self.observe_release(at, decided.staged_by);
        released
    }

    /// Take up to `limit` staged runs due at or before `at`, earliest first.
    fn take_due(&mut self, at: Timestamp, limit: usize) -> Vec<Staging> {
        let mut out = Vec::new();
        while out.len() < limit {
            let Some(mut entry) = self.gates.first_entry() else {
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

    /// The instant `at` was released; its last worker held its row
    /// `staged_by` (None: some were not staged yet at the instant).
    fn observe_release(&mut self, at: Timestamp, staged_by: Option<Timestamp>) {
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
        let gates = &self.gates;
        self.batches
            .retain(|at, _| *at >= now || gates.contains_key(at));
    }
}

/// The fates of an instant's staged runs.
struct Decided {
    /// Per run, in order: its release, or None (skipped, withdrawn, gone).
    fates: Vec<Option<Release>>,
    /// The latest instant a worker of these runs held its row; None when a
    /// worker had not staged yet (the batch was late).
    staged_by: Option<Timestamp>,
}

/// Decide the fate of each of `due` (module documentation) and make the
/// moves that are not releases.
fn decide(db: &Db, due: &[Staging], now: Timestamp) -> Result<Decided, LedgerError> {
    let active = ledger::active_runs(db.conn()).map_err(|source| LedgerError::Read {
        what: "active rows",
        source,
    })?;
    let by_id: HashMap<&str, &Execution> = active.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut fates = Vec::with_capacity(due.len());
    let mut staged_by = None;
    let mut late = false;
    for s in due {
        let run = &s.ahead.run;
        let row = by_id.get(run.id.as_str()).copied();
        let job = run
            .job_id
            .as_ref()
            .map(|id| store::job_now(db.conn(), id))
            .transpose()
            .map_err(|source| LedgerError::Read {
                what: "a staged run's job",
                source,
            })?
            .flatten();
        let previous: Vec<Execution> = active
            .iter()
            .filter(|r| r.job_id == run.job_id && r.id != run.id)
            .cloned()
            .collect();
        let verdict = at_instant(
            row.map(|r| r.state),
            job.as_ref().map(|j| JobAtInstant {
                updated_at: j.updated_at,
                state: &j.state,
                overlap: j.overlap,
            }),
            s.ahead.claim.job_updated_at,
            s.ahead.claim.completed,
            !previous.is_empty(),
        );
        match row.map(|r| r.state) {
            Some(ExecState::Staged) => staged_by = staged_by.max(row.and_then(|r| r.heartbeat_at)),
            Some(_) => late = true,
            None => {}
        }
        let _span = run_span(&run.job_name, &run.id).entered();
        fates.push(match (verdict, row) {
            (AtInstant::Release, _) => Some(Release::default()),
            (AtInstant::ReplaceFirst, _) => Some(Release { replace: previous }),
            (AtInstant::Skip, Some(r)) => {
                if ledger::overlapped(db.conn(), r, now)? {
                    tracing::info!(
                        state = "skipped",
                        reason = "overlap",
                        "the previous run of this job is still going (overlap skip)"
                    );
                }
                None
            }
            (AtInstant::Withdraw(why), Some(r)) => {
                let owner = r.owner.as_ref().map(|o| o.as_stored());
                if ledger::withdraw(db.conn(), &r.id, r.state, owner)? {
                    tracing::info!("withdrawn, never started: {why}");
                }
                None
            }
            (AtInstant::Gone, _) | (_, None) => {
                tracing::info!("its row moved on before its instant; not released");
                None
            }
        });
    }
    Ok(Decided {
        fates,
        staged_by: if late { None } else { staged_by },
    })
}

/// Block the loop thread until `clock` reads `at` (at most
/// [`MAX_PRECISE_WAIT`]): the runtime's timer wheel wakes to the millisecond,
/// later than the instant by up to that much; a run starts on it.
fn wait_for(clock: &dyn Clock, at: Timestamp) {
    let left = (at - clock.now()).to_std().unwrap_or_default();
    if !left.is_zero() {
        std::thread::sleep(left.min(MAX_PRECISE_WAIT));
    }
}
