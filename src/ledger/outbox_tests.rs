//! The outbox seen from the moves: every way a row of a job with alerts
//! becomes terminal writes its alert in the same transaction, once per
//! incident; a retried attempt writes none; a ping URL gets `/start` at
//! adoption and `/fail` or the URL itself at the end. On both backends
//! (`db::test_backends`).

use super::*;
use crate::db::Db;
use crate::db::test_backends::on_both;
use crate::ids::{ExecutionId, JobId};
use crate::process;
use hermes_cron_core::alert::{AlertSpec, KindSet};
use hermes_cron_core::placement::CauseCode;
use hermes_cron_core::run::{Owner, OwnerRole};

fn now() -> crate::schedule::Timestamp {
    "2026-01-01T08:00:00Z".parse().unwrap()
}

fn spec(retries: u32, ping: Option<&str>) -> RunSpec {
    RunSpec {
        alert: Some(AlertSpec {
            on: KindSet::ALL,
            after: 1,
            commands: Vec::new(),
            webhooks: vec!["http://127.0.0.1:9/hook".into()],
            ping: ping.map(str::to_string),
        }),
        ..super::backend_tests::spec(retries)
    }
}

/// A claimed row of a new job, by `claimer`.
fn claimed(db: &Db, spec: &RunSpec, claimer: Owner) -> ExecutionId {
    let id = ExecutionId::generate();
    let job = JobId::generate();
    let c = NewClaim {
        occurrence: Occurrence {
            id: &id,
            job_id: Some(&job),
            job_name: "j",
            scheduled_for: Some(now()),
            attempt: 1,
            source: Source::Schedule,
            spec,
            at: now(),
            host: "a",
        },
        owner: claimer,
        output_path: None,
    };
    assert!(claim(db.conn(), &c).unwrap());
    id
}

fn adopted(db: &Db, id: &ExecutionId, claimer: Owner, worker: Owner) {
    let a = Taking {
        worker,
        mode: DispatchMode::Degraded,
        cause: None,
        unit: None,
        at: now(),
    };
    assert!(adopt(db.conn(), id, &claimer.into(), &a).unwrap());
}

/// (kind, destination, target) of the deliveries about `id`.
fn owed(db: &Db, id: &ExecutionId) -> Vec<(String, String, String)> {
    db.conn()
        .query_map(
            "SELECT kind, destination, target FROM alert_deliveries
             WHERE execution_id = ?1 ORDER BY id",
            crate::params![id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
}

fn webhook(kind: &str) -> Vec<(String, String, String)> {
    vec![(
        kind.into(),
        "webhook".into(),
        "http://127.0.0.1:9/hook".into(),
    )]
}

fn row(db: &Db, id: &ExecutionId) -> Execution {
    get_execution(db.conn(), id).unwrap().unwrap().0
}

#[test]
fn every_terminal_move_writes_its_alert_with_the_row() {
    on_both(|db| {
        let (gw, wk) = (
            process::owner(OwnerRole::Gateway),
            process::owner(OwnerRole::Worker),
        );
        let s = spec(0, None);
        let t = now();

        let id = claimed(db, &s, gw);
        adopted(db, &id, gw, wk);
        let f = Finished::not_started("no such program".into());
        assert!(finish(db.conn(), &id, &wk, &f, t).unwrap());
        assert_eq!(owed(db, &id), webhook("failed"), "finish");

        let id = claimed(db, &s, gw);
        assert!(
            refuse(
                db.conn(),
                &id,
                &gw,
                CauseCode::NoAddress,
                "no bus".into(),
                t
            )
            .unwrap()
        );
        assert_eq!(owed(db, &id), webhook("refused"), "refuse");

        let id = claimed(db, &s, gw);
        assert!(
            spawn_failed(
                db.conn(),
                &id,
                &gw,
                DispatchMode::Degraded,
                "ENOENT".into(),
                t
            )
            .unwrap()
        );
        assert_eq!(owed(db, &id), webhook("failed"), "spawn_failed");

        let id = claimed(db, &s, gw);
        assert!(abandoned(db.conn(), &id, &gw, t).unwrap());
        assert_eq!(owed(db, &id), webhook("missed"), "abandoned");

        let id = claimed(db, &s, gw);
        adopted(db, &id, gw, wk);
        assert!(stalled(db.conn(), &row(db, &id), "silent".into(), t).unwrap());
        assert_eq!(owed(db, &id), webhook("stalled"), "stalled");

        let id = claimed(db, &s, gw);
        adopted(db, &id, gw, wk);
        let r = row(db, &id);
        assert!(orphaned(db.conn(), &r, ReasonCode::WorkerDied, "gone".into(), t).unwrap());
        assert_eq!(owed(db, &id), webhook("unknown"), "orphaned");

        let id = ExecutionId::generate();
        let job = JobId::generate();
        let missed = NewNotRun {
            occurrence: Occurrence {
                id: &id,
                job_id: Some(&job),
                job_name: "j",
                scheduled_for: Some(t),
                attempt: 1,
                source: Source::Schedule,
                spec: &s,
                at: t,
                host: "a",
            },
            state: ExecState::Missed,
            reason_code: ReasonCode::OutsideGrace,
            reason: "late".into(),
        };
        assert!(not_run(db.conn(), &missed).unwrap());
        assert_eq!(owed(db, &id), webhook("missed"), "not_run");
    });
}

#[test]
fn a_failed_attempt_owed_a_retry_alerts_nothing() {
    on_both(|db| {
        let (gw, wk) = (
            process::owner(OwnerRole::Gateway),
            process::owner(OwnerRole::Worker),
        );
        let id = claimed(db, &spec(2, None), gw);
        adopted(db, &id, gw, wk);
        let f = Finished::not_started("no such program".into());
        assert!(finish(db.conn(), &id, &wk, &f, now()).unwrap());
        assert_eq!(owed(db, &id), vec![]);
    });
}

#[test]
fn a_ping_url_gets_start_then_fail_or_success() {
    on_both(|db| {
        let (gw, wk) = (
            process::owner(OwnerRole::Gateway),
            process::owner(OwnerRole::Worker),
        );
        let s = spec(0, Some("https://hc-ping.com/u/"));
        let id = claimed(db, &s, gw);
        adopted(db, &id, gw, wk);
        let f = Finished::not_started("no such program".into());
        assert!(finish(db.conn(), &id, &wk, &f, now()).unwrap());
        let ping = |kind: &str, url: &str| (kind.to_string(), "ping".to_string(), url.to_string());
        let mut want = vec![
            ping("start", "https://hc-ping.com/u/start"),
            ping("fail", "https://hc-ping.com/u/fail"),
        ];
        want.extend(webhook("failed"));
        assert_eq!(owed(db, &id), want);
    });
}

/// A failed run of a new job with a webhook: its delivery, due.
fn one_delivery_owed(db: &Db) -> ExecutionId {
    let (gw, wk) = (
        process::owner(OwnerRole::Gateway),
        process::owner(OwnerRole::Worker),
    );
    let id = claimed(db, &spec(0, None), gw);
    adopted(db, &id, gw, wk);
    let f = Finished::not_started("no such program".into());
    assert!(finish(db.conn(), &id, &wk, &f, now()).unwrap());
    id
}

#[test]
fn a_restart_ends_only_its_hosts_unanswered_attempts_and_a_survivor_a_lost_hosts() {
    on_both(|db| {
        one_delivery_owed(db);
        one_delivery_owed(db);
        let later = now() + chrono::Duration::days(1);
        let due = due_deliveries(db.conn(), now(), 10).unwrap();
        assert_eq!(due.len(), 2);
        assert!(begin_attempt(db.conn(), &due[0], now(), "a").unwrap());
        assert!(begin_attempt(db.conn(), &due[1], now(), "b").unwrap());
        assert!(
            !begin_attempt(db.conn(), &due[0], now(), "b").unwrap(),
            "another host's gateway began the same attempt"
        );
        let restarted = Interrupted::Restarted { host: "a" };
        assert_eq!(
            interrupted_attempts(db.conn(), restarted, now()).unwrap(),
            1
        );
        assert_eq!(
            interrupted_attempts(db.conn(), restarted, now()).unwrap(),
            0
        );
        assert_eq!(due_deliveries(db.conn(), later, 10).unwrap().len(), 1);
        let lost = Interrupted::Lost { host: "b" };
        assert_eq!(interrupted_attempts(db.conn(), lost, now()).unwrap(), 1);
        assert_eq!(due_deliveries(db.conn(), later, 10).unwrap().len(), 2);
    });
}

#[test]
fn a_late_job_alerts_once_however_many_gateways_look() {
    on_both(|db| {
        let alert = spec(0, None).alert.unwrap();
        let job = JobId::generate();
        let (id, name) = (job.as_str(), "j");
        assert!(record_late(db.conn(), (id, name), &alert, now()).unwrap());
        assert!(!record_late(db.conn(), (id, name), &alert, now()).unwrap());
        let n: i64 = db
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM alert_deliveries WHERE job_id = ?1 AND kind = 'late'",
                crate::params![id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1);
    });
}
