//! The staging moves on a real SQLite ledger (in memory, full schema).

use super::*;
use crate::db::Db;
use crate::db::test_backends::on_both;
use crate::ids::ExecutionId;
use crate::job::{Job, JobInput, JobState};
use crate::ledger::{DispatchMode, NewClaim, Occurrence, RunSpec, Source, get_execution};
use crate::process::{self, OwnerRole};
use crate::schedule::{Tz, ZoneTable};
use crate::store;
use chrono::TimeZone;

fn at(s: i64) -> Timestamp {
    chrono::Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap()
}

fn job(db: &Db, schedule: &str) -> Job {
    let mut job = JobInput {
        name: Some("j".into()),
        schedule: Some(schedule.into()),
        argv: Some(vec!["true".into()]),
        ..JobInput::default()
    }
    .build(
        JobId::generate(),
        at(0),
        crate::job::FallbackZone::Configured(Tz::UTC),
        &ZoneTable::compiled_in_only(),
    )
    .unwrap();
    job.next_run_at = Some(at(10));
    store::insert_job(db.conn(), &job).unwrap();
    job
}

/// Claim slot 10 of `job` ahead, as the gateway does: the row, its staging
/// claim, and the job advanced to `next` (completed when `next` is None).
fn claim_slot(db: &Db, job: &Job, next: Option<Timestamp>) -> (ExecutionId, Owner) {
    let id = ExecutionId::generate();
    let owner = process::owner(OwnerRole::Gateway);
    let spec = RunSpec::default();
    let tx = db.conn().immediate().unwrap();
    let claim = NewClaim {
        occurrence: Occurrence {
            id: &id,
            job_id: Some(&job.id),
            job_name: &job.name,
            scheduled_for: Some(at(10)),
            attempt: 1,
            source: Source::Schedule,
            spec: &spec,
            at: at(9),
            host: "a",
        },
        owner,
        output_path: None,
    };
    let state = if next.is_some() {
        JobState::Active
    } else {
        JobState::Completed
    };
    let staged = StagedClaim {
        job_id: job.id.clone(),
        slot: at(10),
        next_run_at: next,
        anchor: job.anchor,
        completed: next.is_none(),
        job_updated_at: job.updated_at,
    };
    assert!(claim_ahead(&tx, &claim, &staged).unwrap());
    store::update_job_schedule_state(&tx, &job.id, next, job.anchor, &state).unwrap();
    tx.commit().unwrap();
    (id, owner)
}

fn stage_it(db: &Db, id: &ExecutionId, claimer: Owner) -> Owner {
    let worker = process::owner(OwnerRole::Worker);
    let s = Taking {
        worker,
        mode: DispatchMode::Degraded,
        cause: None,
        unit: None,
        at: at(9),
    };
    assert!(stage(db.conn(), id, &claimer.into(), &s).unwrap());
    worker
}

fn row(db: &Db, id: &ExecutionId) -> Option<Execution> {
    get_execution(db.conn(), id).unwrap().map(|(r, _)| r)
}

fn job_now(db: &Db, job: &Job) -> Job {
    store::get_job(db.conn(), &job.id).unwrap().unwrap()
}

#[test]
fn a_staged_run_starts_once_and_leaves_no_staging_claim() {
    on_both(|db| {
        let job = job(db, "every 10s");
        let (id, gw) = claim_slot(db, &job, Some(at(20)));
        assert!(staged_claim(db.conn(), &id).unwrap().is_some());
        let worker = stage_it(db, &id, gw);
        let r = row(db, &id).unwrap();
        assert_eq!(r.state, ExecState::Staged);
        assert_eq!((r.started_at, r.heartbeat_at), (None, Some(at(9))));
        assert!(start(db.conn(), &id, &worker, at(10)).unwrap());
        assert!(!start(db.conn(), &id, &worker, at(10)).unwrap(), "once");
        let r = row(db, &id).unwrap();
        assert_eq!((r.state, r.started_at), (ExecState::Running, Some(at(10))));
        assert_eq!(staged_claim(db.conn(), &id).unwrap(), None);
        // A started run is never taken back.
        assert!(withdraw(db.conn(), &id, ExecState::Running, None).is_err());
    });
}

#[test]
fn withdrawing_an_untouched_claim_restores_the_slot() {
    on_both(|db| {
        let job = job(db, "every 10s");
        let (id, gw) = claim_slot(db, &job, Some(at(20)));
        let worker = stage_it(db, &id, gw);
        // The compare-and-set: the worker's view, not the claimer's.
        let gw_stored = gw.to_string();
        assert!(!withdraw(db.conn(), &id, ExecState::Staged, Some(&gw_stored)).unwrap());
        let stored = worker.to_string();
        assert!(withdraw(db.conn(), &id, ExecState::Staged, Some(&stored)).unwrap());
        assert!(row(db, &id).is_none());
        assert_eq!(staged_claim(db.conn(), &id).unwrap(), None);
        assert_eq!(job_now(db, &job).next_run_at, Some(at(10)));
        assert!(!withdraw(db.conn(), &id, ExecState::Staged, Some(&stored)).unwrap());
    });
}

#[test]
fn withdrawing_keeps_what_an_edit_or_a_pause_did_to_the_job() {
    // Rescheduled by an edit: the job keeps its new slot.
    on_both(|db| {
        let job = job(db, "every 10s");
        let (id, gw) = claim_slot(db, &job, Some(at(20)));
        let mut edited = job_now(db, &job);
        edited.anchor = at(5);
        edited.next_run_at = Some(at(35));
        store::update_job(db.conn(), &edited).unwrap();
        let stored = gw.to_string();
        assert!(withdraw(db.conn(), &id, ExecState::Claimed, Some(&stored)).unwrap());
        assert_eq!(job_now(db, &job).next_run_at, Some(at(35)));
    });

    // Paused: the slot comes back, the pause stays.
    on_both(|db| {
        let job = self::job(db, "in 10s");
        let (id, gw) = claim_slot(db, &job, None);
        assert_eq!(job_now(db, &job).state, JobState::Completed);
        let mut paused = job_now(db, &job);
        paused.state = JobState::Paused { reason: None };
        store::update_job(db.conn(), &paused).unwrap();
        let stored = gw.to_string();
        assert!(withdraw(db.conn(), &id, ExecState::Claimed, Some(&stored)).unwrap());
        let now = job_now(db, &job);
        assert_eq!(now.next_run_at, Some(at(10)));
        assert_eq!(now.state, JobState::Paused { reason: None });
    });
}

#[test]
fn a_withdrawn_one_shot_is_active_again() {
    on_both(|db| {
        let job = job(db, "in 10s");
        let (id, gw) = claim_slot(db, &job, None);
        let stored = gw.to_string();
        assert!(withdraw(db.conn(), &id, ExecState::Claimed, Some(&stored)).unwrap());
        let now = job_now(db, &job);
        assert_eq!(
            (now.state, now.next_run_at),
            (JobState::Active, Some(at(10)))
        );
    });
}

#[test]
fn an_overlapped_run_is_skipped_and_can_no_longer_be_withdrawn() {
    on_both(|db| {
        let job = job(db, "every 10s");
        let (id, gw) = claim_slot(db, &job, Some(at(20)));
        let worker = stage_it(db, &id, gw);
        let r = row(db, &id).unwrap();
        assert!(overlapped(db.conn(), &r, at(10)).unwrap());
        let r = row(db, &id).unwrap();
        assert_eq!(r.state, ExecState::Skipped);
        assert_eq!(r.reason_code, Some(ReasonCode::Overlap));
        let stored = worker.to_string();
        assert!(!withdraw(db.conn(), &id, ExecState::Staged, Some(&stored)).unwrap());
        assert!(row(db, &id).is_some(), "a terminal row stays");
        assert_eq!(job_now(db, &job).next_run_at, Some(at(20)));
    });
}

#[test]
fn the_ledger_refuses_states_it_does_not_know_and_freezes_terminal_rows_still() {
    on_both(|db| {
        let insert = |state: &str| {
            db.conn().execute(
                "INSERT INTO executions (id, job_name, source, state, spec, claimed_at)
                 VALUES (?1, 'n', 'manual', ?2, '{}', 0)",
                crate::params![format!("e-{state}"), state.to_string()],
            )
        };
        insert("staged").unwrap();
        assert!(insert("held").is_err(), "the CHECK still holds");
        db.conn()
            .execute(
                "UPDATE executions SET state = 'running' WHERE id = 'e-staged'",
                crate::params![],
            )
            .expect("a staged row may move");
        insert("skipped").unwrap();
        assert!(
            db.conn()
                .execute(
                    "UPDATE executions SET state = 'failed' WHERE id = 'e-skipped'",
                    crate::params![]
                )
                .is_err()
        );
    });
}
