//! The degraded database path (issue 3, item 6): with the rollback journal
//! forced (`HERMES_CRON_JOURNAL=delete`, as on filesystems where WAL is
//! unavailable) for every process, including the workers (they inherit it),
//! add, tick, `run --wait`, runs, list and show all complete under a hard
//! timeout: a self-deadlock (a second read context opened while the first is
//! held, or a lock held across IO) would hang until the test kills it.

use crate::support::TestHome;
use crate::support::rows::{summary, with};
use std::time::Duration;

/// Each command is killed, failing the test, if it runs longer than this.
const HARD_TIMEOUT: Duration = Duration::from_secs(60);

fn journal_mode(db: &std::path::Path) -> String {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap()
}

#[test]
fn add_tick_run_wait_and_runs_finish_under_the_rollback_journal() {
    let mut home = TestHome::new();
    home.set_env("HERMES_CRON_JOURNAL", "delete");
    const JOBS: usize = 20;
    for i in 0..JOBS {
        let out = home
            .cmd(&[
                "add",
                "--name",
                &format!("j{i}"),
                "--schedule",
                "every 1m",
                "--",
                "true",
            ])
            .now("2026-06-01T10:00:00Z")
            .timeout(HARD_TIMEOUT)
            .run()
            .ok();
        assert_eq!(out.line().len(), 36, "{out}");
    }
    home.add("manual", "every 1h", &[], &["true"]);
    home.add("slow", "every 1h", &[], &["sleep", "1"]);
    assert_eq!(journal_mode(&home.db_file()), "delete");

    // Contending ticks and a manual run at once, while the workers write.
    let ticks: Vec<_> = (0..4)
        .map(|_| {
            home.cmd(&["tick"])
                .now("2026-06-01T10:01:00Z")
                .timeout(HARD_TIMEOUT)
                .spawn()
        })
        .collect();
    let manual = home
        .cmd(&["run", "manual", "--wait"])
        .timeout(HARD_TIMEOUT)
        .spawn();
    let slow = home
        .cmd(&["run", "slow", "--wait"])
        .timeout(HARD_TIMEOUT)
        .spawn();
    // Readers while all that writes.
    for args in [
        vec!["runs", "--limit", "5"],
        vec!["list"],
        vec!["show", "slow"],
        vec!["runs", "--json"],
    ] {
        home.cmd(&args).timeout(HARD_TIMEOUT).run().ok();
    }
    for t in ticks {
        t.wait().ok();
    }
    manual.wait().ok();
    slow.wait().ok();

    let rows = home.settle(None, JOBS + 2);
    assert_eq!(
        with(&rows, "state", "succeeded").len(),
        JOBS + 2,
        "{}",
        summary(&rows)
    );
    let out = home
        .cmd(&["runs", "--limit", "100", "--json"])
        .timeout(HARD_TIMEOUT)
        .run()
        .ok();
    assert_eq!(out.json().as_array().unwrap().len(), JOBS + 2);

    // Never switched to WAL by any of those processes.
    assert_eq!(journal_mode(&home.db_file()), "delete");
    assert!(!home.cron_dir().join("cron.db-wal").exists());
}

#[test]
fn a_failing_run_wait_exits_1_under_the_rollback_journal() {
    let mut home = TestHome::new();
    home.set_env("HERMES_CRON_JOURNAL", "delete");
    home.add("bad", "every 1h", &[], &["false"]);
    home.cmd(&["run", "bad", "--wait"])
        .timeout(HARD_TIMEOUT)
        .run()
        .fails_with(1);
    assert_eq!(home.runs(None)[0]["state"], "failed");
    assert_eq!(journal_mode(&home.db_file()), "delete");
}
