//! Pure planning of one due job: which slots run, which are missed or
//! skipped, and where the job's schedule goes next. Takes `now`; no IO.
//!
//! Rules (docs/schedules.md, "Policies"):
//! - A slot is *on time* when it is at most [`ON_TIME`] (or its grace, if
//!   shorter) old; a single on-time slot simply runs.
//! - catch-up `once`: the newest slot runs if it is within the misfire grace
//!   (half the period, clamped to 2 min..2 h); the older ones are `missed`
//!   with reason `collapsed`. A newest slot beyond the grace: every slot is
//!   `missed` with reason `outside_grace`.
//! - catch-up `skip`: only an on-time newest slot runs; every late slot is
//!   `missed` (`outside_grace`: skip allows no grace) and `every` schedules
//!   re-anchor at `now`.
//! - catch-up `all`: every slot runs, the newest [`CatchUp::ALL_LIMIT`]; older
//!   ones are `missed` with reason `catch_up_limit`.
//! - A schedule set from outside (`External`, a Hermes job) has one slot at
//!   a time, and it runs however late: Hermes fires a late job once too.
//! - overlap `skip` turns each run into a `skipped` row (reason `overlap`)
//!   while a previous run of the job is still active.
//! - At most [`MAX_SLOTS_PER_PASS`] slots become rows in one pass; the count
//!   of older ones beyond that is reported in the oldest row's reason.

use crate::job::{CatchUp, Job, JobState, Overlap};
use crate::run::{ReasonCode, Source};
use crate::schedule::{Schedule, Timestamp, Tz};
use std::time::Duration;

/// How late a slot may be and still count as on time.
pub const ON_TIME: Duration = Duration::from_secs(60);
/// The most slots of one job turned into rows in one pass.
pub const MAX_SLOTS_PER_PASS: usize = 1000;

const GRACE_MIN: Duration = Duration::from_secs(120);
const GRACE_MAX: Duration = Duration::from_secs(7200);

/// Half the period, clamped to 2 min..2 h; one-shots and unknown periods get 2 h.
pub fn misfire_grace(period: Option<Duration>) -> Duration {
    period.map_or(GRACE_MAX, |p| (p / 2).clamp(GRACE_MIN, GRACE_MAX))
}

/// What to do with one slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotFate {
    /// A row is claimed and the run starts.
    Run {
        /// `schedule`, or `catch_up` for a late slot.
        source: Source,
    },
    /// A `missed` row: the slot passed and does not run.
    Missed {
        /// Why, as a code.
        code: ReasonCode,
        /// Why, in words.
        reason: String,
    },
    /// A `skipped` row: the previous run still goes (overlap `skip`).
    Skipped {
        /// Why, as a code.
        code: ReasonCode,
        /// Why, in words.
        reason: String,
    },
}

/// One slot and its fate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedSlot {
    /// The slot.
    pub scheduled_for: Timestamp,
    /// What becomes of it.
    pub fate: SlotFate,
}

/// Everything a claim pass needs to know about a due job.
#[derive(Clone, Debug)]
pub struct PlanInput<'a> {
    /// The due job.
    pub job: &'a Job,
    /// The zone its schedule is read in.
    pub zone: Tz,
    /// The claim pass's instant.
    pub now: Timestamp,
    /// The job's policy, or the config default.
    pub catch_up: CatchUp,
    /// A previous run of the job is claimed or running.
    pub has_active: bool,
}

/// The plan for one job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobPlan {
    /// The due slots, oldest first, each with its fate.
    pub slots: Vec<PlannedSlot>,
    /// The job's next slot after the pass (None: none, as for a fired one-shot).
    pub next_run_at: Option<Timestamp>,
    /// The job's `every` anchor after the pass (catch-up `skip` moves it to `now`).
    pub anchor: Timestamp,
    /// The job's state after the pass (a fired one-shot is completed).
    pub state: JobState,
}

fn human(d: chrono::Duration) -> String {
    crate::schedule::format_duration(d.to_std().unwrap_or_default())
}

/// Slots walked one by one before the walk jumps ahead (see [`jump_point`]).
const JUMP_AFTER: usize = 4 * MAX_SLOTS_PER_PASS;

/// Where a walk that is far behind resumes: a little more than
/// [`MAX_SLOTS_PER_PASS`] periods before `now`, and about how many slots the
/// jump passes over. None when the period is unknown or the jump would not
/// move forward.
fn jump_point(job: &Job, slot: Timestamp, zone: Tz, now: Timestamp) -> Option<(Timestamp, u64)> {
    let period =
        chrono::Duration::from_std(job.schedule.period_at(slot, zone, job.anchor)?).ok()?;
    if period <= chrono::Duration::zero() {
        return None;
    }
    let resume = now - period * (MAX_SLOTS_PER_PASS as i32 + 1);
    (resume > slot).then(|| {
        let skipped = (resume - slot).num_milliseconds() / period.num_milliseconds().max(1);
        (resume, skipped.max(0) as u64)
    })
}

/// Plan a job whose `next_run_at` is at or before `now`.
pub fn plan_job(input: &PlanInput<'_>) -> JobPlan {
    let job = input.job;
    let (now, zone) = (input.now, input.zone);
    let mut due: std::collections::VecDeque<Timestamp> = std::collections::VecDeque::new();
    let mut omitted: u64 = 0;
    let mut cursor = job.next_run_at.filter(|at| *at <= now);
    let mut last = None;
    let mut walked = 0usize;
    while let Some(slot) = cursor {
        if due.len() == MAX_SLOTS_PER_PASS {
            due.pop_front();
            omitted += 1;
        }
        due.push_back(slot);
        last = Some(slot);
        walked += 1;
        let after = match (walked == JUMP_AFTER, jump_point(job, slot, zone, now)) {
            // Far behind: drop what was walked (all older than the window
            // kept) and resume a window's worth of periods before `now`.
            (true, Some((resume, skipped))) => {
                omitted += due.len() as u64 + skipped;
                due.clear();
                resume
            }
            _ => slot,
        };
        cursor = job
            .schedule
            .next_after(after, zone, job.anchor)
            .map(|f| f.at)
            .filter(|at| *at <= now);
    }
    let mut anchor = job.anchor;
    let mut next_run_at = last.and_then(|l| job.schedule.next_after(l, zone, anchor).map(|f| f.at));
    if next_run_at.is_some_and(|n| n <= now) {
        next_run_at = job.schedule.next_after(now, zone, anchor).map(|f| f.at);
    }
    let mut state = job.state.clone();
    if matches!(job.schedule, Schedule::Once { .. }) {
        state = JobState::Completed;
        next_run_at = None;
    }
    let Some(&newest) = due.back() else {
        return JobPlan {
            slots: Vec::new(),
            next_run_at: job.next_run_at,
            anchor,
            state: job.state.clone(),
        };
    };

    let period = job.schedule.period_at(newest, zone, job.anchor);
    let grace = misfire_grace(period);
    let on_time = ON_TIME.min(grace);
    let late = |slot: Timestamp| now - slot;
    let within =
        |slot: Timestamp, limit: Duration| late(slot).to_std().map(|l| l <= limit).unwrap_or(true);
    let newest_on_time = within(newest, on_time);

    let run = |source| SlotFate::Run { source };
    let missed = |code: ReasonCode, why: String| SlotFate::Missed { code, reason: why };
    let mut decisions: Vec<SlotFate> = Vec::with_capacity(due.len());
    let count = due.len();
    let catch_up = match job.schedule {
        Schedule::External => CatchUp::All,
        _ => input.catch_up,
    };
    for (i, &slot) in due.iter().enumerate() {
        let is_newest = i + 1 == count;
        let d = match catch_up {
            _ if is_newest && count == 1 && newest_on_time => run(Source::Schedule),
            CatchUp::Once => {
                if within(newest, grace) {
                    if is_newest {
                        run(Source::CatchUp)
                    } else {
                        missed(
                            ReasonCode::Collapsed,
                            format!(
                                "collapsed into the catch-up run of the {} slot (catch-up once)",
                                newest.format("%Y-%m-%dT%H:%M:%SZ")
                            ),
                        )
                    }
                } else {
                    missed(
                        ReasonCode::OutsideGrace,
                        format!(
                            "late by {}, beyond the misfire grace of {} (catch-up once)",
                            human(late(slot)),
                            human(chrono::Duration::from_std(grace).unwrap_or_default())
                        ),
                    )
                }
            }
            CatchUp::Skip => {
                if is_newest && newest_on_time {
                    run(Source::Schedule)
                } else {
                    missed(
                        ReasonCode::OutsideGrace,
                        format!(
                            "late by {}; catch-up skip runs nothing late",
                            human(late(slot))
                        ),
                    )
                }
            }
            CatchUp::All => {
                if count - i <= CatchUp::ALL_LIMIT {
                    run(if is_newest && newest_on_time {
                        Source::Schedule
                    } else {
                        Source::CatchUp
                    })
                } else {
                    missed(
                        ReasonCode::CatchUpLimit,
                        format!(
                            "catch-up all runs at most the newest {} missed slots",
                            CatchUp::ALL_LIMIT
                        ),
                    )
                }
            }
        };
        decisions.push(d);
    }
    if omitted > 0
        && let Some(SlotFate::Missed { reason, .. }) = decisions.first_mut()
    {
        reason.push_str(&format!(
            "; about {omitted} older slots were missed and not listed"
        ));
    }
    if catch_up == CatchUp::Skip
        && !newest_on_time
        && let Schedule::Every { .. } = job.schedule
    {
        anchor = now;
        next_run_at = job.schedule.next_after(now, zone, anchor).map(|f| f.at);
    }
    let overlap_blocks = input.has_active && job.overlap == Overlap::Skip;
    let slots = due
        .into_iter()
        .zip(decisions)
        .map(|(scheduled_for, decision)| {
            let decision = match decision {
                SlotFate::Run { .. } if overlap_blocks => SlotFate::Skipped {
                    code: ReasonCode::Overlap,
                    reason: "the previous run of this job is still going (overlap skip)".into(),
                },
                d => d,
            };
            PlannedSlot {
                scheduled_for,
                fate: decision,
            }
        })
        .collect();
    JobPlan {
        slots,
        next_run_at,
        anchor,
        state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::JobId;
    use crate::job::JobInput;
    use crate::schedule::ZoneTable;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> Timestamp {
        chrono::Utc.with_ymd_and_hms(2026, 6, 1, h, m, 0).unwrap()
    }

    fn hourly(created: Timestamp) -> Job {
        JobInput {
            name: Some("h".into()),
            schedule: Some("0 * * * *".into()),
            argv: Some(vec!["true".into()]),
            ..JobInput::default()
        }
        .build(
            JobId::generate(),
            created,
            crate::job::FallbackZone::Configured(Tz::UTC),
            &ZoneTable::compiled_in_only(),
        )
        .unwrap()
    }

    fn plan(job: &Job, now: Timestamp, catch_up: CatchUp, has_active: bool) -> JobPlan {
        plan_job(&PlanInput {
            job,
            zone: Tz::UTC,
            now,
            catch_up,
            has_active,
        })
    }

    fn runs(p: &JobPlan) -> usize {
        p.slots
            .iter()
            .filter(|s| matches!(s.fate, SlotFate::Run { .. }))
            .count()
    }
    fn missed(p: &JobPlan, code: ReasonCode) -> usize {
        p.slots
            .iter()
            .filter(|s| matches!(&s.fate, SlotFate::Missed { code: c, .. } if *c == code))
            .count()
    }

    #[test]
    fn a_slot_set_from_outside_runs_however_late_and_leaves_no_next() {
        let mut job = hourly(at(9, 30));
        job.schedule = Schedule::External;
        job.next_run_at = Some(at(6, 0));
        let p = plan(&job, at(10, 0), CatchUp::Skip, false);
        assert_eq!(p.slots.len(), 1);
        assert_eq!(
            p.slots[0].fate,
            SlotFate::Run {
                source: Source::CatchUp
            }
        );
        assert_eq!(p.next_run_at, None);
        assert_eq!(p.state, JobState::Active);
        let p = plan(&job, at(10, 0), CatchUp::Once, true);
        assert!(matches!(
            p.slots[0].fate,
            SlotFate::Skipped {
                code: ReasonCode::Overlap,
                ..
            }
        ));
    }

    #[test]
    fn on_time_slot_runs() {
        let job = hourly(at(9, 30));
        let p = plan(
            &job,
            at(10, 0) + chrono::Duration::milliseconds(5),
            CatchUp::Once,
            false,
        );
        assert_eq!(runs(&p), 1);
        assert_eq!(
            p.slots[0].fate,
            SlotFate::Run {
                source: Source::Schedule
            }
        );
        assert_eq!(p.next_run_at, Some(at(11, 0)));
    }

    #[test]
    fn five_hours_ahead_once_collapses() {
        let job = hourly(at(9, 50));
        let p = plan(&job, at(14, 10), CatchUp::Once, false);
        assert_eq!(p.slots.len(), 5);
        assert_eq!(runs(&p), 1);
        assert_eq!(missed(&p, ReasonCode::Collapsed), 4);
        assert_eq!(
            p.slots[4].fate,
            SlotFate::Run {
                source: Source::CatchUp
            }
        );
        assert_eq!(p.next_run_at, Some(at(15, 0)));
    }

    #[test]
    fn five_hours_ahead_skip_and_all() {
        let job = hourly(at(9, 50));
        let p = plan(&job, at(14, 10), CatchUp::Skip, false);
        assert_eq!((runs(&p), missed(&p, ReasonCode::OutsideGrace)), (0, 5));
        let p = plan(&job, at(14, 10), CatchUp::All, false);
        assert_eq!(runs(&p), 5);
    }

    #[test]
    fn newest_beyond_grace_is_missed_under_once() {
        let job = hourly(at(9, 50));
        // Newest slot 14:00 is 45 min old; hourly grace is 30 min.
        let p = plan(&job, at(14, 45), CatchUp::Once, false);
        assert_eq!((runs(&p), missed(&p, ReasonCode::OutsideGrace)), (0, 5));
    }

    #[test]
    fn overlap_skip_records_skipped() {
        let job = hourly(at(9, 30));
        let p = plan(&job, at(10, 0), CatchUp::Once, true);
        assert!(matches!(
            p.slots[0].fate,
            SlotFate::Skipped {
                code: ReasonCode::Overlap,
                ..
            }
        ));
        let mut allow = job.clone();
        allow.overlap = Overlap::Allow;
        assert_eq!(runs(&plan(&allow, at(10, 0), CatchUp::Once, true)), 1);
    }

    #[test]
    fn far_behind_lists_at_most_the_cap_and_jumps_to_the_future() {
        let mut job = hourly(at(0, 0));
        job.schedule = Schedule::parse("every 1s", at(0, 0), Tz::UTC).unwrap();
        job.next_run_at = Some(at(0, 0) + chrono::Duration::seconds(1));
        let now = at(0, 0) + chrono::Duration::days(2);
        let p = plan(&job, now, CatchUp::Once, false);
        assert_eq!(p.slots.len(), MAX_SLOTS_PER_PASS);
        assert_eq!(runs(&p), 1);
        assert!(p.next_run_at.unwrap() > now);
        match &p.slots[0].fate {
            SlotFate::Missed { reason, .. } => assert!(reason.contains("older slots"), "{reason}"),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn grace_is_clamped() {
        assert_eq!(misfire_grace(Some(Duration::from_secs(1))), GRACE_MIN);
        assert_eq!(
            misfire_grace(Some(Duration::from_secs(3600))),
            Duration::from_secs(1800)
        );
        assert_eq!(
            misfire_grace(Some(Duration::from_secs(86400 * 7))),
            GRACE_MAX
        );
        assert_eq!(misfire_grace(None), GRACE_MAX);
    }

    #[test]
    fn one_shot_completes() {
        let mut job = hourly(at(9, 0));
        job.schedule = Schedule::Once {
            at: at(9, 30),
            wanted: None,
        };
        job.next_run_at = Some(at(9, 30));
        let p = plan(&job, at(9, 30), CatchUp::Once, false);
        assert_eq!(runs(&p), 1);
        assert_eq!(p.state, JobState::Completed);
        assert_eq!(p.next_run_at, None);
    }
}
