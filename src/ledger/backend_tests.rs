//! The ledger's moves on both backends: every test runs on an in-memory
//! SQLite database and on a fresh PostgreSQL schema (`db::test_backends`).

use crate::db::test_backends::{TEST_PG_ENV, on_both, postgres};
use crate::db::{Db, Dialect, from_ms};
use crate::ids::{ExecutionId, JobId};
use crate::ledger::{self, NewClaim, Occurrence, Taking};
use crate::params;
use crate::process::{self, Owner};
use hermes_cron_core::run::{
    DispatchMode, ExecState, Exit, Finished, OwnerRole, ProcessIdentity, ReasonCode, RowOwner,
    RunEnd, RunSpec, Source,
};

/// A run spec owing `retries` retries (shared with `outbox_tests.rs`).
pub(super) fn spec(retries: u32) -> RunSpec {
    RunSpec {
        argv: vec!["true".into()],
        timeout_s: 60,
        output_max_bytes: 1024,
        heartbeat_interval_s: 5,
        retries,
        retry_backoff_s: 30,
        ..RunSpec::default()
    }
}

fn claim(
    db: &Db,
    job: &JobId,
    slot: i64,
    host: &str,
    owner: Owner,
    spec: &RunSpec,
) -> (ExecutionId, bool) {
    let id = ExecutionId::generate();
    let fresh = ledger::claim(
        db.conn(),
        &NewClaim {
            occurrence: Occurrence {
                id: &id,
                job_id: Some(job),
                job_name: "j",
                scheduled_for: Some(from_ms(slot)),
                attempt: 1,
                source: Source::Schedule,
                spec,
                at: from_ms(slot),
                host,
            },
            owner,
            output_path: None,
        },
    )
    .unwrap();
    (id, fresh)
}

fn adoption(worker: Owner) -> Taking<'static> {
    Taking {
        worker,
        mode: DispatchMode::Degraded,
        cause: None,
        unit: None,
        at: from_ms(1_000),
    }
}

fn finished(exit: i32) -> Finished {
    Finished {
        end: if exit == 0 {
            RunEnd::Succeeded
        } else {
            RunEnd::Failed {
                exit: Exit::Code(exit),
            }
        },
        exit: Some(Exit::Code(exit)),
        duration_ms: Some(5),
        max_rss_kb: Some(1),
        output_bytes: Some(0),
        output_truncated: Some(false),
        notes: Vec::new(),
        usage: None,
    }
}

/// A job's occurrence claimed on `host` by this process as gateway, then
/// adopted by it as worker: the row and the worker.
fn running(db: &Db, host: &str, spec: &RunSpec) -> (ExecutionId, Owner) {
    let job = JobId::generate();
    let gw = process::owner(OwnerRole::Gateway);
    let (id, _) = claim(db, &job, 60_000, host, gw, spec);
    let worker = process::owner(OwnerRole::Worker);
    ledger::adopt(db.conn(), &id, &RowOwner::from(gw), &adoption(worker)).unwrap();
    (id, worker)
}

fn other_worker() -> Owner {
    Owner {
        role: OwnerRole::Worker,
        process: ProcessIdentity {
            pid: 999_999,
            start: 1,
        },
    }
}

#[test]
fn one_row_per_occurrence_and_moves_compare_and_set_on_the_owner() {
    on_both(|db| {
        let job = JobId::generate();
        let gw = process::owner(OwnerRole::Gateway);
        let (id, fresh) = claim(db, &job, 60_000, "a", gw, &spec(0));
        assert!(fresh);
        let (_, again) = claim(db, &job, 60_000, "b", gw, &spec(0));
        assert!(!again, "a second claim of the slot is a no-op");

        // A worker that read another claimer cannot adopt.
        let worker = process::owner(OwnerRole::Worker);
        let wrong = RowOwner::from(other_worker());
        assert!(!ledger::adopt(db.conn(), &id, &wrong, &adoption(worker)).unwrap());
        assert!(ledger::adopt(db.conn(), &id, &RowOwner::from(gw), &adoption(worker)).unwrap());
        assert!(ledger::heartbeat(db.conn(), &id, &worker, from_ms(2_000)).unwrap());
        assert!(
            !ledger::finish(
                db.conn(),
                &id,
                &other_worker(),
                &finished(0),
                from_ms(3_000)
            )
            .unwrap()
        );
        assert!(ledger::finish(db.conn(), &id, &worker, &finished(0), from_ms(3_000)).unwrap());
        let (row, _) = ledger::get_execution(db.conn(), &id).unwrap().unwrap();
        assert_eq!(row.state, ExecState::Succeeded);
        assert_eq!(row.host.as_deref(), Some("a"));
        assert_eq!(row.exit_code, Some(0));

        // Terminal rows are frozen by the database too.
        let err = db
            .conn()
            .execute(
                "UPDATE executions SET state = 'failed' WHERE id = ?1",
                params![id.as_str()],
            )
            .unwrap_err();
        assert!(err.to_string().contains("never change"), "{err}");
    });
}

#[test]
fn a_failed_attempt_queues_its_retry_in_the_same_transaction() {
    on_both(|db| {
        let (id, worker) = running(db, "a", &spec(2));
        assert!(ledger::finish(db.conn(), &id, &worker, &finished(3), from_ms(61_000)).unwrap());
        let queued: i64 = db
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM retry_queue WHERE execution_id = ?1",
                params![id.as_str()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(queued, 1);
        ledger::take_retry(db.conn(), &id).unwrap();
        let queued: i64 = db
            .conn()
            .query_row("SELECT COUNT(*) FROM retry_queue", params![], |r| r.get(0))
            .unwrap();
        assert_eq!(queued, 0);
    });
}

#[test]
fn a_taken_over_claim_cannot_be_adopted_by_the_lost_hosts_worker() {
    on_both(|db| {
        let job = JobId::generate();
        let lost_gw = Owner {
            role: OwnerRole::Gateway,
            process: ProcessIdentity {
                pid: 4242,
                start: 7,
            },
        };
        let (id, _) = claim(db, &job, 60_000, "lost", lost_gw, &spec(0));
        let (row, _) = ledger::get_execution(db.conn(), &id).unwrap().unwrap();
        let survivor = process::owner(OwnerRole::Gateway);
        assert!(ledger::take_over(db.conn(), &row, &survivor, "survivor", Some("/out")).unwrap());
        assert!(
            !ledger::take_over(db.conn(), &row, &survivor, "third", None).unwrap(),
            "a second survivor loses the compare-and-set"
        );
        // The lost host's worker read the old claimer: it runs nothing.
        let old_worker = other_worker();
        assert!(
            !ledger::adopt(
                db.conn(),
                &id,
                &RowOwner::from(lost_gw),
                &adoption(old_worker)
            )
            .unwrap()
        );
        let (row, _) = ledger::get_execution(db.conn(), &id).unwrap().unwrap();
        assert_eq!(row.state, ExecState::Claimed);
        assert_eq!(row.host.as_deref(), Some("survivor"));
        assert_eq!(row.output_path.as_deref(), Some("/out"));
        let worker = process::owner(OwnerRole::Worker);
        assert!(
            ledger::adopt(db.conn(), &id, &RowOwner::from(survivor), &adoption(worker)).unwrap()
        );
    });
}

#[test]
fn a_late_outcome_is_kept_beside_a_host_lost_row_once_and_only_its_workers() {
    on_both(|db| {
        let (id, worker) = running(db, "lost", &spec(0));
        let late = |by: &Owner| {
            ledger::late_outcome(db.conn(), &id, by, "lost", &finished(0), from_ms(5_000)).unwrap()
        };
        let (row, _) = ledger::get_execution(db.conn(), &id).unwrap().unwrap();
        // Before the survivor's decision there is nothing to be late for.
        assert!(!late(&worker));
        // The survivor, in one transaction as `reconcile::lost_hosts` does.
        let tx = db.conn().immediate().unwrap();
        assert!(
            ledger::orphaned(
                &tx,
                &row,
                ReasonCode::HostLost,
                "lost".into(),
                from_ms(4_000)
            )
            .unwrap()
        );
        tx.commit().unwrap();
        // The worker finishes later: its finish loses, its late outcome is kept.
        assert!(!ledger::finish(db.conn(), &id, &worker, &finished(0), from_ms(5_000)).unwrap());
        let (row, _) = ledger::get_execution(db.conn(), &id).unwrap().unwrap();
        assert!(hermes_cron_core::reconcile::may_record_late(&row, &worker));
        assert!(!late(&other_worker()), "only the row's own worker");
        assert!(late(&worker));
        assert!(
            !ledger::late_outcome(
                db.conn(),
                &id,
                &worker,
                "lost",
                &finished(1),
                from_ms(6_000)
            )
            .unwrap(),
            "a late outcome is kept once"
        );
        let late = ledger::late_outcome_of(db.conn(), &id).unwrap().unwrap();
        assert_eq!(late.state, "succeeded");
        assert_eq!(late.exit_code, Some(0));
        let (row, _) = ledger::get_execution(db.conn(), &id).unwrap().unwrap();
        assert_eq!(
            row.state,
            ExecState::Unknown,
            "the survivor's decision stands"
        );
        assert_eq!(row.reason_code, Some(ReasonCode::HostLost));
    });
}

#[test]
fn a_failed_write_inside_a_transaction_rolls_back_only_its_savepoint() {
    on_both(|db| {
        let job = JobId::generate();
        let gw = process::owner(OwnerRole::Gateway);
        let tx = db.conn().immediate().unwrap();
        let (_, fresh) = claim(db, &job, 60_000, "a", gw, &spec(0));
        assert!(fresh);
        let failed = tx.savepoint(|c| {
            c.execute("INSERT INTO no_such_table VALUES (1)", params![])
                .map(|_| ())
        });
        assert!(failed.is_err());
        tx.commit().unwrap();
        let n: i64 = db
            .conn()
            .query_row("SELECT COUNT(*) FROM executions", params![], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "the claim before the failed savepoint was committed");
        assert!(db.conn().is_autocommit());
    });
}

#[test]
fn migrations_are_idempotent_and_a_newer_schema_is_refused_on_postgres() {
    let db = postgres();
    assert_eq!(db.dialect(), Dialect::Postgres);
    let version: i64 = db
        .conn()
        .query_row("SELECT version FROM schema_version", params![], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, crate::db::SCHEMA_VERSION);
    db.conn()
        .execute("UPDATE schema_version SET version = version + 1", params![])
        .unwrap();
    let schema: String = db
        .conn()
        .query_row("SELECT current_schema() AS s", params![], |r| r.get(0))
        .unwrap();
    let base = std::env::var(TEST_PG_ENV).unwrap();
    let again = Db::open_postgres(&format!("{base} options='-c search_path={schema}'"), true);
    assert!(
        matches!(again, Err(crate::db::DbError::TooNew { .. })),
        "{again:?}"
    );
}
