//! Staging's pure decisions: how far ahead of an instant its runs are
//! prepared (the lead time), which upcoming instants to stage now, and when
//! to look again. Takes `now` and data; no IO.
//!
//! The lead time of an instant is the measured cost of staging one run
//! times the number of runs that share the instant, plus a margin, clamped
//! to the configured floor and ceiling (`cron.staging_lead_min_s`,
//! `cron.staging_lead_max_s`). The cost is learned from the batches staged
//! so far ([`LeadTime::observe`]): the time from a batch's claim to its last
//! worker holding its row, divided by the runs in it.

use crate::job::{JobState, Overlap};
use crate::run::ExecState;
use crate::schedule::Timestamp;
use std::time::Duration;

/// The cost of one staging assumed before any was measured: a held spawn,
/// a scope, the worker's start-up and its staging commit, on a slow host.
pub const INITIAL_PER_RUN: Duration = Duration::from_millis(20);
/// Added to every lead: a burst of load, the release's own work.
pub const MARGIN: Duration = Duration::from_millis(100);
/// Weight of the newest batch in the learned cost.
const NEWEST_WEIGHT: f64 = 0.3;

/// The lead-time model: floor, ceiling and the learned cost of one staging.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeadTime {
    floor: Duration,
    ceiling: Duration,
    per_run: Duration,
}

impl LeadTime {
    /// A model with nothing learned yet. A ceiling below the floor is the floor.
    pub fn new(floor: Duration, ceiling: Duration) -> LeadTime {
        LeadTime {
            floor,
            ceiling: ceiling.max(floor),
            per_run: INITIAL_PER_RUN,
        }
    }

    /// The learned cost of staging one run.
    pub fn per_run(&self) -> Duration {
        self.per_run
    }

    /// How far ahead of an instant that `sharing` runs share to start staging.
    pub fn lead(&self, sharing: usize) -> Duration {
        let work = self
            .per_run
            .saturating_mul(sharing.min(u32::MAX as usize) as u32);
        (work + MARGIN).clamp(self.floor, self.ceiling)
    }

    /// A batch of `runs` took `took` from its claim until its last worker
    /// held its row.
    pub fn observe(&mut self, runs: usize, took: Duration) {
        if runs == 0 {
            return;
        }
        let sample = took.as_secs_f64() / runs as f64;
        let blended = self.per_run.as_secs_f64() * (1.0 - NEWEST_WEIGHT) + sample * NEWEST_WEIGHT;
        // Never below a tenth of a millisecond: a cost of zero would stage
        // the largest burst at the floor.
        self.per_run = Duration::from_secs_f64(blended.clamp(0.000_1, 60.0));
    }
}

/// One upcoming instant and how many jobs are due at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upcoming {
    /// The instant, after `now`.
    pub at: Timestamp,
    /// How many jobs are due at it.
    pub jobs: usize,
}

/// What to stage now, and when to look again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StagePlan {
    /// Instants whose lead has begun: stage their runs now.
    pub now: Vec<Timestamp>,
    /// The earliest instant's staging start still ahead.
    pub next_look: Option<Timestamp>,
}

/// Which of `upcoming` (instants after `now`) to stage now under `lead`.
pub fn plan_staging(upcoming: &[Upcoming], lead: &LeadTime, now: Timestamp) -> StagePlan {
    let mut plan = StagePlan::default();
    for u in upcoming.iter().filter(|u| u.at > now && u.jobs > 0) {
        let lead = chrono::Duration::from_std(lead.lead(u.jobs)).unwrap_or_default();
        let start = u.at - lead;
        if start <= now {
            plan.now.push(u.at);
        } else {
            plan.next_look = Some(plan.next_look.map_or(start, |n: Timestamp| n.min(start)));
        }
    }
    plan
}

/// What the gateway does with a staged run at its instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtInstant {
    /// Release it: its command starts now.
    Release,
    /// Overlap `replace`: stop the previous runs, then release it.
    ReplaceFirst,
    /// Overlap `skip`: record it `skipped` (`overlap`); it never starts.
    Skip,
    /// Take it back (`withdraw`): its job changed or went away before the
    /// instant; the slot is the job's again, as if never claimed.
    Withdraw(&'static str),
    /// Its row is gone or moved on (its worker died and was resolved): drop it.
    Gone,
}

/// The job of a staged run as it is at the instant.
#[derive(Clone, Copy, Debug)]
pub struct JobAtInstant<'a> {
    /// When the job was last changed.
    pub updated_at: Timestamp,
    /// Its state now.
    pub state: &'a JobState,
    /// Its overlap policy now.
    pub overlap: Overlap,
}

/// Decide a staged run's fate at its instant: `row` is its row's state,
/// `job` its job now (None: removed), `claimed_updated_at` the job's
/// `updated_at` when the run was claimed and `completed` whether that claim
/// completed a one-shot, `previous_active` whether another run of the job
/// is still going. Every check the claim at the instant would make is made
/// here, now: the job as it is, and overlap.
pub fn at_instant(
    row: Option<ExecState>,
    job: Option<JobAtInstant<'_>>,
    claimed_updated_at: Timestamp,
    completed: bool,
    previous_active: bool,
) -> AtInstant {
    if !matches!(row, Some(ExecState::Claimed | ExecState::Staged)) {
        return AtInstant::Gone;
    }
    let Some(job) = job else {
        return AtInstant::Withdraw("its job was removed before its instant");
    };
    let left_by_claim = if completed {
        JobState::Completed
    } else {
        JobState::Active
    };
    if matches!(job.state, JobState::Paused { .. }) {
        return AtInstant::Withdraw("its job was paused before its instant");
    }
    if job.updated_at != claimed_updated_at || *job.state != left_by_claim {
        return AtInstant::Withdraw("its job was changed before its instant");
    }
    match (previous_active, job.overlap) {
        (false, _) | (true, Overlap::Allow) => AtInstant::Release,
        (true, Overlap::Skip) => AtInstant::Skip,
        (true, Overlap::Replace) => AtInstant::ReplaceFirst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_instant_decides_job_changes_and_overlap() {
        let t = at(0);
        let active = JobState::Active;
        let paused = JobState::Paused { reason: None };
        let job = |state, overlap| {
            Some(JobAtInstant {
                updated_at: t,
                state,
                overlap,
            })
        };
        let staged = Some(ExecState::Staged);
        let check = |row, job, prev| at_instant(row, job, t, false, prev);
        assert_eq!(
            check(staged, job(&active, Overlap::Skip), false),
            AtInstant::Release
        );
        assert_eq!(
            check(staged, job(&active, Overlap::Skip), true),
            AtInstant::Skip
        );
        assert_eq!(
            check(staged, job(&active, Overlap::Allow), true),
            AtInstant::Release
        );
        assert_eq!(
            check(staged, job(&active, Overlap::Replace), true),
            AtInstant::ReplaceFirst
        );
        assert!(
            matches!(check(staged, None, false), AtInstant::Withdraw(w) if w.contains("removed"))
        );
        assert!(
            matches!(check(staged, job(&paused, Overlap::Skip), false), AtInstant::Withdraw(w) if w.contains("paused"))
        );
        let edited = Some(JobAtInstant {
            updated_at: at(5),
            state: &active,
            overlap: Overlap::Skip,
        });
        assert!(
            matches!(check(staged, edited, false), AtInstant::Withdraw(w) if w.contains("changed"))
        );
        // A one-shot the claim completed is as the claim left it.
        let done = JobState::Completed;
        assert_eq!(
            at_instant(staged, job(&done, Overlap::Skip), t, true, false),
            AtInstant::Release
        );
        // Not yet staged (the worker is slow) is fine; gone or started is not ours.
        assert_eq!(
            check(Some(ExecState::Claimed), job(&active, Overlap::Skip), false),
            AtInstant::Release
        );
        assert_eq!(
            check(None, job(&active, Overlap::Skip), false),
            AtInstant::Gone
        );
        assert_eq!(
            check(Some(ExecState::Failed), job(&active, Overlap::Skip), false),
            AtInstant::Gone
        );
    }

    fn at(ms: i64) -> Timestamp {
        chrono::Utc
            .timestamp_millis_opt(1_800_000_000_000 + ms)
            .unwrap()
    }

    fn model() -> LeadTime {
        LeadTime::new(Duration::from_millis(500), Duration::from_secs(60))
    }

    #[test]
    fn the_lead_grows_with_the_runs_sharing_an_instant_within_floor_and_ceiling() {
        let mut m = model();
        assert_eq!(m.lead(1), Duration::from_millis(500), "the floor");
        assert_eq!(m.lead(100), INITIAL_PER_RUN * 100 + MARGIN);
        assert_eq!(m.lead(1_000_000), Duration::from_secs(60), "the ceiling");
        m.observe(1000, Duration::from_secs(5));
        assert!(m.per_run() < INITIAL_PER_RUN && m.per_run() > Duration::from_millis(5));
        let inverted = LeadTime::new(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(inverted.lead(1_000_000), Duration::from_secs(2));
    }

    #[test]
    fn learning_follows_measured_batches() {
        let mut m = model();
        for _ in 0..30 {
            m.observe(10, Duration::from_millis(60));
        }
        let per = m.per_run().as_secs_f64() * 1000.0;
        assert!((5.9..6.1).contains(&per), "{per} ms");
        m.observe(0, Duration::from_secs(100));
        assert!((5.9..6.1).contains(&(m.per_run().as_secs_f64() * 1000.0)));
    }

    #[test]
    fn stages_the_instants_whose_lead_began_and_says_when_the_next_one_does() {
        let m = model();
        let upcoming = [
            Upcoming {
                at: at(300),
                jobs: 1,
            }, // lead 500 ms: began
            Upcoming {
                at: at(4_000),
                jobs: 1,
            }, // begins at 3.5 s
            Upcoming {
                at: at(5_000),
                jobs: 500,
            }, // lead 10.1 s: began
            Upcoming {
                at: at(-5),
                jobs: 1,
            }, // past: not staging's
        ];
        let plan = plan_staging(&upcoming, &m, at(0));
        assert_eq!(plan.now, vec![at(300), at(5_000)]);
        assert_eq!(plan.next_look, Some(at(3_500)));
        assert_eq!(plan_staging(&[], &m, at(0)), StagePlan::default());
    }
}
