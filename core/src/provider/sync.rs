//! The one-way sync from Hermes's jobs to hermes-cron's: for each Hermes job
//! one hermes-cron job, *managed* (Hermes is its source of truth), which
//! fires at the Hermes job's `next_run_at` by running the plugin's fire
//! entry point. Pure: the caller reads `jobs.json` and the store, says which
//! slots already have ledger rows, and passes `now` and the zone.
//!
//! Rules:
//! - A Hermes job that may fire (`enabled`, not paused) is active and due
//!   at its `next_run_at` while that slot has no ledger row.
//! - Hermes moves `next_run_at` only when a fire reaches it
//!   (`claim_job_for_fire`, `mark_job_run` inside `fire.py`). A slot that
//!   got a row but never reached Hermes (refused for want of a scope,
//!   skipped as an overlap, failed before Hermes's claim, declined by
//!   Hermes) leaves `next_run_at` where it was. A recurring job then goes on
//!   at the next slot of its own schedule after the newest slot with a row,
//!   in `zone` (Hermes's built-in ticker never lets a schedule stop): the
//!   next one after `now`, or, after an outage, the newest one missed, once
//!   (Hermes fires a late job once too). A one-shot gets no next run.
//!   When the fire reaches Hermes, its new `next_run_at` is followed again.
//! - Paused or disabled in Hermes: paused here, with Hermes's reason.
//!   Completed in Hermes: completed here. Gone from `jobs.json`: removed
//!   here (its ledger rows stay).
//! - Each job's timeouts are backstops strictly after Hermes's own limits
//!   ([`HermesLimits::backstops`], read from Hermes's settings at each sync),
//!   so that Hermes's limit acts first and Hermes records the run.

use super::jobs_file::{HermesJob, JobsFile};
use super::limits::HermesLimits;
use crate::ids::JobId;
use crate::job::{Job, JobState, Overlap};
use crate::schedule::{Schedule, Timestamp, Tz};
use std::path::PathBuf;
use std::time::Duration;

/// The status by which the fire entry point says Hermes declined the fire.
pub const DECLINED_EXIT: i32 = 100;

/// The status by which the fire entry point says the job ran but Hermes
/// could not deliver its result.
pub const DELIVERY_FAILED_EXIT: i32 = 101;

/// How a Hermes job is fired: Hermes's interpreter running the plugin's
/// `fire.py` with the job's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FireCommand {
    /// Hermes's Python interpreter.
    pub python: PathBuf,
    /// The plugin's `fire.py`.
    pub fire_script: PathBuf,
}

impl FireCommand {
    /// The command that fires Hermes job `hermes_id`.
    pub fn argv(&self, hermes_id: &str) -> Vec<String> {
        vec![
            self.python.to_string_lossy().into_owned(),
            self.fire_script.to_string_lossy().into_owned(),
            hermes_id.to_string(),
        ]
    }
}

/// What a managed job should be.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired {
    /// The Hermes job's id.
    pub hermes_id: String,
    /// The Hermes job's name (its id when it has none).
    pub name: String,
    /// Hermes's schedule text, shown by `list` and `show`.
    pub schedule_text: String,
    /// The fire command.
    pub argv: Vec<String>,
    /// `Some(ZERO)`: no wall-clock limit.
    pub timeout: Option<Duration>,
    /// An agent prompt's idle limit (None for a script, or when Hermes has none).
    pub idle_timeout: Option<Duration>,
    /// Active, paused (with Hermes's reason) or completed, as Hermes says.
    pub state: JobState,
    /// Hermes's `next_run_at`, or the slot after the newest one with a row
    /// while Hermes has not moved on (None: not due).
    pub next_run_at: Option<Timestamp>,
}

impl Desired {
    fn matches(&self, job: &Job) -> bool {
        job.name == self.name
            && job.schedule_text == self.schedule_text
            && job.argv == self.argv
            && job.timeout == self.timeout
            && job.idle_timeout == self.idle_timeout
            && job.state == self.state
            && job.next_run_at == self.next_run_at
    }

    /// A new managed job, with id `id`, made at `now`.
    pub fn new_job(&self, id: JobId, now: Timestamp) -> Job {
        let mut job = Job::new(
            id,
            String::new(),
            String::new(),
            Schedule::External,
            Vec::new(),
            now,
        );
        // Hermes declines a fire while one is going; overlap skip says so first.
        job.overlap = Overlap::Skip;
        self.apply_to(&mut job);
        job
    }

    /// `job` made to be what this says.
    pub fn apply_to(&self, job: &mut Job) {
        job.name = self.name.clone();
        job.schedule_text = self.schedule_text.clone();
        job.argv = self.argv.clone();
        job.shell = false;
        job.timeout = self.timeout;
        job.idle_timeout = self.idle_timeout;
        job.state = self.state.clone();
        job.next_run_at = self.next_run_at;
        job.hermes_id = Some(self.hermes_id.clone());
        job.managed = true;
    }
}

/// What the ledger says of a managed job's slots from Hermes's `next_run_at` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// No row for that slot or a later one.
    No,
    /// The newest slot from it on with a row (any state, any attempt).
    Through(Timestamp),
    /// The ledger could not be read: counts as fired (a missed fire is put
    /// right by the next sync, a double fire is not).
    Unknown,
}

/// When the sync runs and the zone Hermes's schedules are read in.
#[derive(Clone, Copy, Debug)]
pub struct SyncAt {
    /// The sync's `now`.
    pub now: Timestamp,
    /// Hermes's zone (the home's `timezone`, else the system's).
    pub zone: Tz,
}

/// The most slots walked past to catch up after an outage.
const MAX_BEHIND: usize = 1000;

/// The slot of `recurring` after `latest`, which had a row while Hermes
/// stayed at `at`: the first after `now` if none was missed, else the newest
/// missed one (more than [`MAX_BEHIND`] missed: the first after `now`). `at`
/// anchors an interval as Hermes does (last slot + period).
fn slot_after(
    recurring: &str,
    at: Timestamp,
    latest: Timestamp,
    when: SyncAt,
) -> Option<Timestamp> {
    let schedule = Schedule::parse(recurring, when.now, when.zone).ok()?;
    let mut slot = schedule.next_after(latest.max(at), when.zone, at)?.at;
    for _ in 0..MAX_BEHIND {
        match schedule.next_after(slot, when.zone, at) {
            Some(next) if next.at <= when.now => slot = next.at,
            _ => return Some(slot),
        }
    }
    schedule.next_after(when.now, when.zone, at).map(|f| f.at)
}

/// One change to the store.
#[derive(Clone, Debug, PartialEq)]
pub enum SyncChange {
    /// A new managed job.
    Add(Desired),
    /// A managed job made to be what `to` says.
    Update {
        /// Which managed job.
        id: JobId,
        /// What it should be.
        to: Desired,
    },
    /// A managed job whose Hermes job is gone (its rows stay).
    Remove {
        /// Which managed job.
        id: JobId,
        /// Its name, to say what went.
        name: String,
    },
}

fn desired(
    h: &HermesJob,
    fire: &FireCommand,
    limits: HermesLimits,
    existing: Option<&JobId>,
    fired: &dyn Fn(&JobId, Timestamp) -> Fired,
    when: SyncAt,
) -> Desired {
    let state = if h.state == "completed" {
        JobState::Completed
    } else if h.fires {
        JobState::Active
    } else {
        let why = h
            .paused_reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        JobState::Paused {
            reason: Some(format!(
                "paused in Hermes{why}; resume it with `hermes cron resume {}`",
                h.id
            )),
        }
    };
    let next_run_at = match (&state, h.next_run_at) {
        (JobState::Active, Some(at)) => match existing.map_or(Fired::No, |id| fired(id, at)) {
            Fired::No => Some(at),
            Fired::Through(latest) => h
                .recurring
                .as_deref()
                .and_then(|text| slot_after(text, at, latest, when)),
            Fired::Unknown => None,
        },
        _ => None,
    };
    let (timeout, idle_timeout) = limits.backstops(h.script, h.pre_run_script);
    Desired {
        hermes_id: h.id.clone(),
        name: h.name.clone(),
        schedule_text: if h.display.is_empty() {
            "(set by Hermes)".into()
        } else {
            h.display.clone()
        },
        argv: fire.argv(&h.id),
        timeout,
        idle_timeout,
        state,
        next_run_at,
    }
}

/// The changes that make `managed` (the store's managed jobs) follow `file`,
/// fired by `fire` under Hermes's `limits`. `fired(job, at)` says which
/// slots of that job from `at` on have rows.
pub fn plan_sync(
    file: &JobsFile,
    managed: &[Job],
    fire: &FireCommand,
    limits: HermesLimits,
    fired: &dyn Fn(&JobId, Timestamp) -> Fired,
    when: SyncAt,
) -> Vec<SyncChange> {
    let mut changes = Vec::new();
    for h in &file.jobs {
        let mine = managed
            .iter()
            .find(|j| j.hermes_id.as_deref() == Some(h.id.as_str()));
        let want = desired(h, fire, limits, mine.map(|j| &j.id), fired, when);
        match mine {
            None => changes.push(SyncChange::Add(want)),
            Some(job) if !want.matches(job) => changes.push(SyncChange::Update {
                id: job.id.clone(),
                to: want,
            }),
            Some(_) => {}
        }
    }
    for job in managed {
        let still = job
            .hermes_id
            .as_deref()
            .is_some_and(|id| file.jobs.iter().any(|h| h.id == id));
        // A second managed job for one Hermes job (never made by the sync;
        // a hand-edited database) goes too.
        let first = managed
            .iter()
            .find(|j| j.hermes_id == job.hermes_id)
            .is_some_and(|j| j.id == job.id);
        if !still || !first {
            changes.push(SyncChange::Remove {
                id: job.id.clone(),
                name: job.name.clone(),
            });
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::read_jobs_file;

    fn fire() -> FireCommand {
        FireCommand {
            python: "/venv/bin/python".into(),
            fire_script: "/h/plugins/hermes-cron/fire.py".into(),
        }
    }

    /// The sync at 2026-12-02T07:30Z, in UTC.
    fn plan(
        file: &JobsFile,
        managed: &[Job],
        fired: &dyn Fn(&JobId, Timestamp) -> Fired,
    ) -> Vec<SyncChange> {
        plan_in(file, managed, fired, "2026-12-02T07:30:00Z", Tz::UTC)
    }

    fn plan_in(
        file: &JobsFile,
        managed: &[Job],
        fired: &dyn Fn(&JobId, Timestamp) -> Fired,
        now: &str,
        zone: Tz,
    ) -> Vec<SyncChange> {
        let when = SyncAt { now: at(now), zone };
        plan_sync(file, managed, &fire(), HermesLimits::default(), fired, when)
    }

    fn file(records: &str) -> JobsFile {
        read_jobs_file("jobs.json", &format!("{{\"jobs\": [{records}]}}")).unwrap()
    }

    const BRIEF: &str = r#"{"id": "aaaaaaaaaaaa", "name": "brief", "next_run_at": "2026-12-02T08:00:00+00:00",
        "schedule": {"display": "0 8 * * *"}}"#;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn managed_from(change: &SyncChange) -> Job {
        let SyncChange::Add(want) = change else {
            panic!("{change:?}")
        };
        want.new_job(JobId::generate(), at("2026-12-01T00:00:00Z"))
    }

    #[test]
    fn a_new_hermes_job_becomes_a_managed_job_due_at_its_next_run() {
        let changes = plan(&file(BRIEF), &[], &|_, _| Fired::No);
        let [SyncChange::Add(want)] = changes.as_slice() else {
            panic!("{changes:?}")
        };
        assert_eq!(want.name, "brief");
        assert_eq!(want.next_run_at, Some(at("2026-12-02T08:00:00Z")));
        assert_eq!(
            want.argv,
            [
                "/venv/bin/python",
                "/h/plugins/hermes-cron/fire.py",
                "aaaaaaaaaaaa"
            ]
        );
        assert_eq!(
            want.timeout,
            Some(Duration::ZERO),
            "agent jobs: no wall clock"
        );
        assert_eq!(
            want.idle_timeout,
            Some(Duration::from_secs(720)),
            "Hermes's 600 s inactivity limit, and a margin"
        );
        assert_eq!(want.schedule_text, "0 8 * * *");
    }

    #[test]
    fn nothing_changes_when_nothing_did_and_a_claimed_slot_is_not_due_again() {
        let job = managed_from(&plan(&file(BRIEF), &[], &|_, _| Fired::No)[0]);
        assert_eq!(
            plan(&file(BRIEF), std::slice::from_ref(&job), &|_, _| Fired::No),
            []
        );
        let changes = plan(&file(BRIEF), std::slice::from_ref(&job), &|_, _| {
            Fired::Unknown
        });
        let [SyncChange::Update { to, .. }] = changes.as_slice() else {
            panic!("{changes:?}")
        };
        assert_eq!(
            to.next_run_at, None,
            "a slot that cannot be checked is not fired again"
        );
    }

    /// The next run the sync gives the one managed job of `records` when
    /// `fired` says what the ledger has, at `now` in `zone`.
    fn next_run(records: &str, fired: Fired, now: &str, zone: Tz) -> Option<Timestamp> {
        let job = managed_from(&plan(&file(records), &[], &|_, _| Fired::No)[0]);
        let changes = plan_in(
            &file(records),
            std::slice::from_ref(&job),
            &|id, _| {
                assert_eq!(*id, job.id);
                fired
            },
            now,
            zone,
        );
        match changes.as_slice() {
            [] => job.next_run_at,
            [SyncChange::Update { to, .. }] => to.next_run_at,
            other => panic!("{other:?}"),
        }
    }

    const DAILY: &str = r#"{"id": "dddddddddddd", "name": "brief", "next_run_at": "2026-12-02T08:00:00+01:00",
        "schedule": {"kind": "cron", "expr": "0 8 * * *", "display": "0 8 * * *"}}"#;
    const HALF_HOURLY: &str = r#"{"id": "hhhhhhhhhhhh", "name": "watch", "next_run_at": "2026-12-02T08:00:00+00:00",
        "schedule": {"kind": "interval", "minutes": 30, "display": "every 30m"}}"#;
    const ONCE: &str = r#"{"id": "oooooooooooo", "name": "remind", "next_run_at": "2026-12-02T08:00:00+00:00",
        "schedule": {"kind": "once", "run_at": "2026-12-02T08:00:00+00:00"}}"#;

    #[test]
    fn a_recurring_slot_that_never_reached_hermes_is_followed_by_the_next_slot() {
        let berlin = crate::schedule::compiled_in_zone("Europe/Berlin").unwrap();
        // 08:00 Berlin had a row (refused, skipped, failed before Hermes's
        // claim); Hermes still says 08:00: tomorrow's 08:00 Berlin.
        let slot = at("2026-12-02T07:00:00Z");
        assert_eq!(
            next_run(DAILY, Fired::No, "2026-12-02T06:59:00Z", berlin),
            Some(slot)
        );
        assert_eq!(
            next_run(DAILY, Fired::Through(slot), "2026-12-02T07:00:01Z", berlin),
            Some(at("2026-12-03T07:00:00Z"))
        );
        // Every 30 minutes from Hermes's slot; a later slot with a row counts.
        assert_eq!(
            next_run(
                HALF_HOURLY,
                Fired::Through(at("2026-12-02T08:00:00Z")),
                "2026-12-02T08:00:02Z",
                Tz::UTC
            ),
            Some(at("2026-12-02T08:30:00Z"))
        );
        assert_eq!(
            next_run(
                HALF_HOURLY,
                Fired::Through(at("2026-12-02T08:30:00Z")),
                "2026-12-02T08:31:00Z",
                Tz::UTC
            ),
            Some(at("2026-12-02T09:00:00Z"))
        );
        // A one-shot has no next slot.
        assert_eq!(
            next_run(
                ONCE,
                Fired::Through(at("2026-12-02T08:00:00Z")),
                "2026-12-02T08:00:02Z",
                Tz::UTC
            ),
            None
        );
    }

    #[test]
    fn after_an_outage_the_newest_missed_slot_fires_once() {
        // Refused at 08:00, the gateway down until 10:10: 10:00 fires now,
        // 08:30 to 09:30 do not.
        assert_eq!(
            next_run(
                HALF_HOURLY,
                Fired::Through(at("2026-12-02T08:00:00Z")),
                "2026-12-02T10:10:00Z",
                Tz::UTC
            ),
            Some(at("2026-12-02T10:00:00Z"))
        );
        // Further behind than the walk goes (1,440 slots): the next slot.
        assert_eq!(
            next_run(
                HALF_HOURLY,
                Fired::Through(at("2026-12-02T08:00:00Z")),
                "2027-01-01T00:10:00Z",
                Tz::UTC
            ),
            Some(at("2027-01-01T00:30:00Z"))
        );
        // A week behind, a daily job (in UTC here): today's 08:00, once.
        assert_eq!(
            next_run(
                DAILY,
                Fired::Through(at("2026-12-02T07:00:00Z")),
                "2026-12-09T12:00:00Z",
                Tz::UTC
            ),
            Some(at("2026-12-09T08:00:00Z"))
        );
    }

    #[test]
    fn pause_completion_and_removal_follow_hermes() {
        let job = managed_from(&plan(&file(BRIEF), &[], &|_, _| Fired::No)[0]);
        let paused = file(
            r#"{"id": "aaaaaaaaaaaa", "name": "brief", "enabled": false, "state": "paused",
                "next_run_at": "2026-12-02T08:00:00+00:00"}"#,
        );
        let changes = plan(&paused, std::slice::from_ref(&job), &|_, _| Fired::No);
        let [SyncChange::Update { to, .. }] = changes.as_slice() else {
            panic!("{changes:?}")
        };
        assert!(
            matches!(&to.state, JobState::Paused { reason: Some(r) } if r.contains("hermes cron resume aaaaaaaaaaaa"))
        );
        assert_eq!(to.next_run_at, None);
        let done = file(r#"{"id": "aaaaaaaaaaaa", "name": "brief", "state": "completed"}"#);
        let changes = plan(&done, std::slice::from_ref(&job), &|_, _| Fired::No);
        assert!(
            matches!(&changes[0], SyncChange::Update { to, .. } if to.state == JobState::Completed)
        );
        let gone = plan(&file(""), std::slice::from_ref(&job), &|_, _| Fired::No);
        assert_eq!(
            gone,
            [SyncChange::Remove {
                id: job.id.clone(),
                name: "brief".into()
            }]
        );
    }

    #[test]
    fn scripts_get_hermes_script_timeout_plus_a_margin_and_no_idle_limit() {
        let f = file(r#"{"id": "bbbbbbbbbbbb", "no_agent": true, "next_run_at": null}"#);
        let want = match &plan(&f, &[], &|_, _| Fired::No)[0] {
            SyncChange::Add(w) => w.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(want.timeout, Some(Duration::from_secs(3660)));
        assert_eq!(want.idle_timeout, None);
        assert_eq!(want.next_run_at, None);
    }

    #[test]
    fn a_second_managed_job_for_one_hermes_job_is_removed() {
        let job = managed_from(&plan(&file(BRIEF), &[], &|_, _| Fired::No)[0]);
        let mut twin = job.clone();
        twin.id = JobId::generate();
        let changes = plan(&file(BRIEF), &[job, twin.clone()], &|_, _| Fired::No);
        assert_eq!(
            changes,
            [SyncChange::Remove {
                id: twin.id,
                name: "brief".into()
            }]
        );
    }
}
