//! Policies through real ticks (issue 3): catch-up after the clock jumps,
//! overlap while a run is still going, manual runs, `runs` ordering, and
//! retries with backoff (never after `unknown`). Time moves only through
//! `HERMES_CRON_NOW`, which the workers inherit from the tick that started
//! them, so their finish times (and the retry backoff) are exact.

use crate::support::rows::{summary, with};
use crate::support::{SETTLE_TIMEOUT, TestHome, wait_for};
use serde_json::Value;

const T0: &str = "2026-06-01T09:50:00Z";

/// An hourly job created at 09:50, ticked first at 14:10: slots 10:00 to
/// 14:00 (five) have passed. Returns the settled rows.
fn five_hours_ahead(catch_up: &str, expected_rows: usize) -> Vec<Value> {
    let home = TestHome::new();
    home.add_at(
        T0,
        "hourly",
        "0 * * * *",
        &["--catch-up", catch_up],
        &["true"],
    );
    home.tick("2026-06-01T14:10:00Z");
    let rows = home.settle(None, expected_rows);
    let slots: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["scheduled_for"].as_str().unwrap())
        .collect();
    assert_eq!(slots.len(), 5, "one row per slot: {}", summary(&rows));
    for h in 10..=14 {
        assert!(
            slots.contains(format!("2026-06-01T{h}:00:00.000Z").as_str()),
            "{}",
            summary(&rows)
        );
    }
    // The next tick at the same instant adds nothing; the job moved on.
    home.tick("2026-06-01T14:10:00Z");
    assert_eq!(home.runs(None).len(), expected_rows);
    let job = home.run(&["show", "hourly", "--json"]).ok().json();
    assert_eq!(job["next_run_at"], "2026-06-01T15:00:00.000Z");
    rows
}

#[test]
fn catch_up_once_runs_the_newest_slot_and_collapses_four() {
    let rows = five_hours_ahead("once", 5);
    let ran = with(&rows, "state", "succeeded");
    assert_eq!(ran.len(), 1, "{}", summary(&rows));
    assert_eq!(ran[0]["scheduled_for"], "2026-06-01T14:00:00.000Z");
    assert_eq!(ran[0]["source"], "catch_up");
    let missed = with(&rows, "state", "missed");
    assert_eq!(missed.len(), 4, "{}", summary(&rows));
    assert!(missed.iter().all(|r| r["reason_code"] == "collapsed"));
}

#[test]
fn catch_up_skip_runs_nothing_and_records_five_missed() {
    let rows = five_hours_ahead("skip", 5);
    let missed = with(&rows, "state", "missed");
    assert_eq!(missed.len(), 5, "{}", summary(&rows));
    assert!(missed.iter().all(|r| r["reason_code"] == "outside_grace"));
    assert!(
        rows.iter().all(|r| r["started_at"].is_null()),
        "nothing ran"
    );
}

#[test]
fn catch_up_all_runs_all_five() {
    let rows = five_hours_ahead("all", 5);
    let ran = with(&rows, "state", "succeeded");
    assert_eq!(ran.len(), 5, "{}", summary(&rows));
    assert!(ran.iter().all(|r| r["source"] == "catch_up"));
}

/// A `sleep 30` job every minute; its second slot comes while the first
/// still runs. Returns the home (its drop stops the sleepers) and the rows.
fn second_slot_while_running(overlap: &str) -> (TestHome, Vec<Value>) {
    let home = TestHome::new();
    home.add_at(
        "2026-06-01T10:00:00Z",
        "long",
        "every 1m",
        &["--overlap", overlap],
        &["sleep", "30"],
    );
    home.tick("2026-06-01T10:01:00Z");
    home.wait_state(None, "running");
    home.tick("2026-06-01T10:02:00Z");
    let rows = home.runs(None);
    (home, rows)
}

#[test]
fn overlap_skip_records_a_skipped_row_for_the_second_slot() {
    let (home, rows) = second_slot_while_running("skip");
    assert_eq!(rows.len(), 2, "{}", summary(&rows));
    let second = &rows[0];
    assert_eq!(second["scheduled_for"], "2026-06-01T10:02:00.000Z");
    assert_eq!(second["state"], "skipped");
    assert_eq!(second["reason_code"], "overlap");
    assert_eq!(rows[1]["state"], "running", "the first is untouched");
    drop(home);
}

#[test]
fn overlap_allow_runs_both() {
    let (home, _) = second_slot_while_running("allow");
    let both = wait_for("two rows running at once", SETTLE_TIMEOUT, || {
        let rows = home.runs(None);
        (rows.len() == 2 && rows.iter().all(|r| r["state"] == "running")).then_some(rows)
    });
    let slots: Vec<&str> = both
        .iter()
        .map(|r| r["scheduled_for"].as_str().unwrap())
        .collect();
    assert_eq!(
        slots,
        ["2026-06-01T10:02:00.000Z", "2026-06-01T10:01:00.000Z"]
    );
    assert_ne!(both[0]["pid"], both[1]["pid"], "two workers");
}

#[test]
fn run_wait_exits_0_on_success_and_1_on_failure() {
    let home = TestHome::new();
    home.add("ok", "every 1h", &[], &["true"]);
    home.add("bad", "every 1h", &["--shell"], &["echo oops >&2; exit 3"]);
    let out = home.run(&["run", "ok", "--wait"]).ok();
    assert!(out.stderr.contains("succeeded"), "{out}");
    let out = home.run(&["run", "bad", "--wait"]).fails_with(1);
    assert!(out.stderr.contains("failed (exit 3)"), "{out}");

    let rows = home.runs(Some("bad"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["state"], "failed");
    assert_eq!(rows[0]["exit_code"], 3);
    assert_eq!(rows[0]["source"], "manual");
    assert_eq!(rows[0]["scheduled_for"], Value::Null);
    let log = home.run(&["logs", rows[0]["id"].as_str().unwrap()]).ok();
    assert_eq!(log.stdout, "oops\n");
}

#[test]
fn runs_lists_newest_first_and_honours_the_limit() {
    let home = TestHome::new();
    home.add("r", "every 1h", &[], &["true"]);
    home.add("other", "every 1h", &[], &["true"]);
    let mut ids = Vec::new();
    for _ in 0..4 {
        let out = home.run(&["run", "r", "--wait"]).ok();
        ids.push(out.stdout.split_whitespace().next().unwrap().to_string());
    }
    home.run(&["run", "other", "--wait"]).ok();

    let out = home.run(&["runs", "r", "--limit", "3", "--json"]).ok();
    let rows = out.json();
    let got: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = ids.iter().rev().take(3).map(String::as_str).collect();
    assert_eq!(got, want, "the 3 newest of job r, newest first");
    assert_eq!(home.runs(None).len(), 5);
    let text = home.run(&["runs", "--limit", "2"]).ok();
    assert_eq!(text.stdout.lines().count(), 3, "header + 2 rows\n{text}");
}

#[test]
fn a_failing_job_is_retried_twice_with_backoff_as_attempts_2_and_3() {
    let home = TestHome::new();
    home.add_at(
        "2026-06-01T10:00:00Z",
        "flaky",
        "every 1m",
        &["--retries", "2", "--retry-backoff", "1s"],
        &["false"],
    );
    // Attempt 1 at the 10:01 slot fails at 10:01:00 (the worker's clock is
    // the tick's); its retry is owed 1 s later.
    home.tick("2026-06-01T10:01:00Z");
    home.settle(None, 1);
    home.tick("2026-06-01T10:01:00Z");
    assert_eq!(home.runs(None).len(), 1, "not before the backoff");
    home.tick("2026-06-01T10:01:01Z");
    home.settle(None, 2);
    // Attempt 2 failed at 10:01:01; backoff doubles to 2 s.
    home.tick("2026-06-01T10:01:02Z");
    assert_eq!(home.runs(None).len(), 2, "not before the doubled backoff");
    home.tick("2026-06-01T10:01:03Z");
    let rows = home.settle(None, 3);
    // No fourth attempt, however long we wait within the minute.
    home.tick("2026-06-01T10:01:59Z");
    let rows_after = home.settle(None, 3);
    assert_eq!(rows.len(), rows_after.len());

    let mut attempts: Vec<(u64, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["attempt"].as_u64().unwrap(),
                r["source"].as_str().unwrap(),
                r["state"].as_str().unwrap(),
            )
        })
        .collect();
    attempts.sort();
    assert_eq!(
        attempts,
        [
            (1, "schedule", "failed"),
            (2, "retry", "failed"),
            (3, "retry", "failed")
        ],
        "{}",
        summary(&rows)
    );
    assert!(
        rows.iter()
            .all(|r| r["scheduled_for"] == "2026-06-01T10:01:00.000Z"),
        "retries are attempts of the same occurrence"
    );
}

#[test]
fn a_success_is_not_retried() {
    let home = TestHome::new();
    home.add_at(
        "2026-06-01T10:00:00Z",
        "fine",
        "every 1m",
        &["--retries", "2", "--retry-backoff", "1s"],
        &["true"],
    );
    home.tick("2026-06-01T10:01:00Z");
    home.settle(None, 1);
    home.tick("2026-06-01T10:01:30Z");
    let rows = home.settle(None, 1);
    assert_eq!(rows[0]["state"], "succeeded");
}

/// The job ran (its side effects happened) but its worker died before
/// writing the outcome: the row becomes `unknown`, and is never retried.
#[test]
fn an_unknown_outcome_is_never_retried() {
    let home = TestHome::new();
    let marker = home.scratch().join("ran");
    home.add_at(
        "2026-06-01T10:00:00Z",
        "sideeffect",
        "every 1m",
        &["--retries", "2", "--retry-backoff", "1s", "--shell"],
        &[&format!("echo x >> {}; exit 1", marker.display())],
    );
    home.cmd(&["tick"])
        .now("2026-06-01T10:01:00Z")
        .env("HERMES_CRON_CRASH_AT", "worker_before_finish")
        .run()
        .ok();
    // The worker is killed after the job ended; the row stays `running`
    // until a sweep sees its worker is gone.
    wait_for("the job to run", SETTLE_TIMEOUT, || {
        marker.exists().then_some(())
    });
    let resolved = wait_for("the dead worker's row resolved", SETTLE_TIMEOUT, || {
        home.tick("2026-06-01T10:01:05Z");
        let rows = home.runs(None);
        (rows.len() == 1 && rows[0]["state"] == "unknown").then(|| rows[0].clone())
    });
    assert_eq!(resolved["reason_code"], "worker_died", "{resolved}");
    for at in [
        "2026-06-01T10:01:10Z",
        "2026-06-01T10:01:30Z",
        "2026-06-01T10:01:59Z",
    ] {
        home.tick(at);
    }
    let rows = home.settle(None, 1);
    assert_eq!(rows[0]["attempt"], 1, "{}", summary(&rows));
    let ran = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(ran.lines().count(), 1, "the command ran once, never again");
}

/// Regression: the worker blocks SIGTERM, SIGINT, SIGHUP and SIGCHLD to wait
/// for them, and its jobs inherited that mask through exec.
#[test]
fn regression_a_job_starts_with_no_signal_blocked() {
    let home = TestHome::new();
    home.add(
        "mask",
        "every 1h",
        &[],
        // Not through sh: dash clears its mask at startup and would hide it.
        &["grep", "SigBlk", "/proc/self/status"],
    );
    home.run(&["run", "mask", "--wait"]).ok();
    let rows = home.runs(None);
    let log = home.run(&["logs", rows[0]["id"].as_str().unwrap()]).ok();
    assert_eq!(log.stdout.trim(), "SigBlk:\t0000000000000000", "{log}");
}

/// Regression (same cause): a SIGTERM for the worker (an operator, systemd
/// stopping the scope) is passed to the job, which used to have it blocked
/// and only died by the SIGKILL after the grace. The grace is made a minute
/// here, so only a delivered SIGTERM ends the job in time.
#[test]
fn regression_sigterm_to_the_worker_stops_the_job_at_once() {
    let home = TestHome::new();
    home.add_at(
        "2026-06-01T10:00:00Z",
        "long",
        "every 1m",
        &[],
        &["sleep", "30"],
    );
    home.cmd(&["tick"])
        .now("2026-06-01T10:01:00Z")
        .env("HERMES_CRON_KILL_GRACE_MS", "60000")
        .run()
        .ok();
    let running = home.wait_state(None, "running");
    crate::support::process::stop_worker(running["pid"].as_i64().unwrap() as i32);
    let row = wait_for(
        "the cancelled row",
        std::time::Duration::from_secs(20),
        || home.runs(None).into_iter().find(|r| r["terminal"] == true),
    );
    assert_eq!(row["state"], "cancelled", "{row}");
    assert_eq!(row["signal"], libc::SIGTERM, "{row}");
}

/// Regression (same cause): the timeout's SIGTERM reached a job that had it
/// blocked; the job only died by the SIGKILL after the grace.
#[test]
fn regression_a_timed_out_job_dies_by_the_sigterm() {
    let home = TestHome::new();
    home.add_at(
        "2026-06-01T10:00:00Z",
        "slow",
        "every 1m",
        &["--timeout", "1s"],
        &["sleep", "30"],
    );
    home.cmd(&["tick"])
        .now("2026-06-01T10:01:00Z")
        .env("HERMES_CRON_KILL_GRACE_MS", "60000")
        .run()
        .ok();
    let row = wait_for(
        "the timed-out row",
        std::time::Duration::from_secs(20),
        || home.runs(None).into_iter().find(|r| r["terminal"] == true),
    );
    assert_eq!(row["state"], "timed_out", "{row}");
    assert_eq!(row["signal"], libc::SIGTERM, "{row}");
}

/// Regression: a retry that came due while its job was paused was dropped
/// from the queue and never ran after `resume`; it now waits for the resume.
#[test]
fn regression_a_retry_owed_while_paused_runs_after_resume() {
    let home = TestHome::new();
    home.add_at(
        "2026-06-01T10:00:00Z",
        "flaky",
        "every 1h",
        &["--retries", "1", "--retry-backoff", "1s"],
        &["false"],
    );
    home.tick("2026-06-01T11:00:00Z");
    home.settle(None, 1);
    home.cmd(&["pause", "flaky"]).run().ok();
    home.tick("2026-06-01T11:00:05Z");
    assert_eq!(home.runs(None).len(), 1, "no retry while paused");
    home.cmd(&["resume", "flaky"])
        .now("2026-06-01T11:00:06Z")
        .run()
        .ok();
    home.tick("2026-06-01T11:00:07Z");
    let rows = home.settle(None, 2);
    assert!(
        rows.iter()
            .any(|r| r["attempt"] == 2 && r["source"] == "retry"),
        "{}",
        summary(&rows)
    );
}
