//! Full disk and slow disk (issue 8, item 4). A home on a small tmpfs
//! (mounted by the test, root only, unmounted by a guard even on failure):
//! - a job whose output fills the disk still ends with a terminal row, its
//!   real outcome, and a mark in its output file saying it was cut;
//! - a tick that cannot write fails loudly (non-zero, the cause named) and
//!   leaves the database intact; the next tick, with space back, claims;
//! - the gateway survives a full disk: it keeps running, `status` stops
//!   calling it healthy once its heartbeat file cannot be rewritten (and
//!   says why), and when space returns the next slot runs and it is healthy
//!   again, without a restart;
//! - the disk filling while runs are staged, the gateway killed on it: after
//!   the next gateway's sweep every row is terminal and true, and no slot
//!   ran twice.
//!
//! And a database held under an exclusive lock by another process for longer
//! than the busy timeout: the tick fails with the cause, writes nothing, and
//! the next tick succeeds.

use crate::support::gateway::count;
use crate::support::invariants::{self, Periodic};
use crate::support::tmpfs::Tmpfs;
use crate::support::{Bus, SETTLE_TIMEOUT, TestHome, wait_for};
use rusqlite::Connection;
use std::path::Path;
use std::time::Duration;

/// `every 1m` jobs are added with the clock frozen here; the first slot is 10:01.
const T0: &str = "2026-06-01T10:00:00Z";
const AFTER_SLOT1: &str = "2026-06-01T10:01:30Z";
const SLOT1_MS: i64 = 1_780_308_060_000;

fn append_command(side_effects: &Path) -> String {
    format!(
        "echo \"$HERMES_CRON_EXECUTION_ID\" >> {}; echo done",
        side_effects.display()
    )
}

/// `next_run_at` of every job, in milliseconds.
fn next_runs(db: &Path) -> Vec<Option<i64>> {
    let db = invariants::open_read_only(db);
    db.conn()
        .query_map(
            "SELECT next_run_at FROM jobs ORDER BY id",
            hermes_cron::params![],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn output_that_fills_the_disk_still_ends_in_a_terminal_row_with_a_mark() {
    let disk = Tmpfs::mount("4m");
    let home = TestHome::at(&disk.path().join("home"));
    home.add(
        "flood",
        "every 1h",
        &[],
        &["head", "-c", "20000000", "/dev/zero"],
    );
    // The default cap (8 MiB) is above the disk: the disk runs out first.
    let out = home.run(&["run", "flood", "--wait"]);
    assert_eq!(out.code(), 0, "the job itself succeeded\n{out}");
    let rows = home.runs(None);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["exit_code"], 0, "{row:#}");
    assert_eq!(row["output_truncated"], true, "{row:#}");
    let reason = row["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("writing the output file failed") && reason.contains("disk was full"),
        "the reason says the output could not all be written: {reason}"
    );
    let path = row["output_path"].as_str().unwrap();
    let output = std::fs::read(path).unwrap();
    let tail = String::from_utf8_lossy(&output[output.len().saturating_sub(300)..]).into_owned();
    assert!(
        tail.contains("[hermes-cron: output cut to") && tail.contains("the disk was full"),
        "the output file ends with a mark: {tail:?}"
    );
    let mark_at = output
        .windows(b"\n[hermes-cron: output cut to".len())
        .rposition(|w| w == b"\n[hermes-cron: output cut to")
        .unwrap();
    assert_eq!(
        row["output_bytes"].as_u64(),
        Some(mark_at as u64),
        "output_bytes counts the job's bytes kept, not the mark"
    );
    assert!(disk.free() > 0, "cutting the output made room");
    assert_eq!(invariants::integrity(&home.db_file()), "ok");
}

#[test]
fn a_tick_that_cannot_write_fails_loudly_and_leaves_the_database_intact() {
    let disk = Tmpfs::mount("2m");
    let home = TestHome::at(&disk.path().join("home"));
    let side_effects = home.scratch().join("side-effects");
    let job = home.add_at(
        T0,
        "minutely",
        "every 1m",
        &["--shell"],
        &[&append_command(&side_effects)],
    );
    let before = next_runs(&home.db_file());
    let filler = disk.path().join("filler");
    disk.fill(&filler);

    let out = home.cmd(&["tick"]).now(AFTER_SLOT1).run();
    assert_ne!(
        out.status.code(),
        Some(0),
        "a tick that cannot write must fail\n{out}"
    );
    assert_eq!(out.status.code(), Some(1), "{out}");
    // SQLite says "database or disk is full", or, when its shared-memory
    // file cannot grow, "disk I/O error"; either way the message says full.
    assert!(
        out.stderr.contains("is full"),
        "the message names the cause\n{out}"
    );
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(invariants::integrity(&home.db_file()), "ok");
    assert!(
        invariants::rows(&home.db_file()).is_empty(),
        "nothing half-written"
    );
    assert_eq!(
        next_runs(&home.db_file()),
        before,
        "the job was not advanced"
    );

    let out = home.cmd(&["tick", "--json"]).now(AFTER_SLOT1).run().ok();
    assert_eq!(
        out.json()["claimed"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    invariants::wait_settled(&home.db_file(), SETTLE_TIMEOUT);
    let rows = invariants::rows(&home.db_file());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].scheduled_for, Some(SLOT1_MS));
    assert_eq!(rows[0].state, "succeeded", "{}", rows[0]);
    invariants::check(
        &home.db_file(),
        &side_effects,
        &[Periodic {
            job_id: job,
            period_ms: 60_000,
        }],
    );
}

/// `status --json` and its exit code.
fn status(home: &TestHome) -> (Option<i32>, serde_json::Value, String) {
    let out = home.run(&["status", "--json"]);
    let v = serde_json::from_str(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), v, out.stderr)
}

#[test]
fn the_gateway_survives_a_full_disk_and_recovers_when_space_returns() {
    let disk = Tmpfs::mount("8m");
    let mut home = TestHome::at(&disk.path().join("home"));
    home.set_bus(Bus::None);
    home.set_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "200");
    let side_effects = home.scratch().join("side-effects");
    let job = home.add(
        "every-second",
        "every 1s",
        &["--shell"],
        &[&append_command(&side_effects)],
    );
    let succeeded = |home: &TestHome| {
        invariants::rows(&home.db_file())
            .iter()
            .filter(|r| r.state == "succeeded")
            .count()
    };
    let mut gw = home.gateway(&[]);
    gw.wait_ready();
    wait_for("two runs", SETTLE_TIMEOUT, || {
        (succeeded(&home) >= 2).then_some(())
    });
    let (code, healthy, _) = status(&home);
    assert_eq!(code, Some(0), "healthy before: {healthy:#}");

    let filler = disk.path().join("filler");
    disk.fill(&filler);
    // Honest: once the heartbeat file cannot be rewritten, the gateway is
    // not called healthy, and the reason is the stale file.
    let (code, seen) = wait_for("status to stop calling it healthy", SETTLE_TIMEOUT, || {
        let (code, v, _) = status(&home);
        (v["healthy"] == false).then_some((code, v))
    });
    assert_eq!(code, Some(1), "{seen:#}");
    assert_eq!(seen["gateway"], "stalled", "{seen:#}");
    assert_eq!(seen["heartbeat_stale"], true, "{seen:#}");
    let text = home.run(&["status"]);
    assert!(
        text.stdout
            .contains("heartbeat file has not been rewritten"),
        "the text says why\n{text}"
    );
    // Slots come due with the disk full: their claims fail, and the gateway
    // keeps running.
    wait_for(
        "two claim passes to fail on the full disk",
        SETTLE_TIMEOUT,
        || (count(&gw.log(), "disk is full") >= 2).then_some(()),
    );
    assert!(
        gw.exited().is_none(),
        "the gateway died on a full disk\n{}",
        gw.log()
    );

    std::fs::remove_file(&filler).unwrap();
    let before = succeeded(&home);
    wait_for(
        "the next slot to run once space returned",
        SETTLE_TIMEOUT,
        || (succeeded(&home) > before).then_some(()),
    );
    wait_for("status to call it healthy again", SETTLE_TIMEOUT, || {
        let (code, v, _) = status(&home);
        (code == Some(0) && v["healthy"] == true && v["pid"] == gw.pid()).then_some(())
    });
    assert!(gw.exited().is_none(), "the same gateway recovered");
    assert!(
        gw.log().contains("disk is full"),
        "the gateway logged the cause\n{}",
        gw.log()
    );
    gw.stop();
    invariants::wait_settled(&home.db_file(), SETTLE_TIMEOUT);
    let tally = invariants::check(
        &home.db_file(),
        &side_effects,
        &[Periodic {
            job_id: job,
            period_ms: 1000,
        }],
    );
    eprintln!("full disk under the gateway: {tally}");
}

#[test]
fn a_database_locked_past_the_busy_timeout_fails_the_tick_cleanly() {
    let mut home = TestHome::new();
    home.set_env("HERMES_CRON_BUSY_TIMEOUT_MS", "300");
    let side_effects = home.scratch().join("side-effects");
    let job = home.add_at(
        T0,
        "minutely",
        "every 1m",
        &["--shell"],
        &[&append_command(&side_effects)],
    );
    let before = next_runs(&home.db_file());

    // Another process (this test) holds the write lock for longer than the busy timeout.
    let holder = Connection::open(home.db_file()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let started = hermes_cron::clock::monotonic();
    let out = home.cmd(&["tick"]).now(AFTER_SLOT1).run();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "the tick fails\n{out}");
    assert!(
        out.stderr.contains("database is locked")
            && out
                .stderr
                .contains("write lock for longer than the busy timeout (300 ms"),
        "the message names the cause\n{out}"
    );
    assert!(
        took < Duration::from_secs(10),
        "it gave up after the busy timeout, not the default 15 s: {took:?}"
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);

    assert_eq!(invariants::integrity(&home.db_file()), "ok");
    assert!(
        invariants::rows(&home.db_file()).is_empty(),
        "nothing half-written"
    );
    assert_eq!(
        next_runs(&home.db_file()),
        before,
        "the job was not advanced"
    );

    home.tick(AFTER_SLOT1);
    invariants::wait_settled(&home.db_file(), SETTLE_TIMEOUT);
    let rows = invariants::rows(&home.db_file());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].state, "succeeded", "{}", rows[0]);
    invariants::check(
        &home.db_file(),
        &side_effects,
        &[Periodic {
            job_id: job,
            period_ms: 60_000,
        }],
    );
}

/// Issue 23: the disk fills while workers are staged ahead of their
/// instants, the gateway is killed on the full disk, space returns and a
/// new gateway starts. Every occurrence ends as a row that tells the truth:
/// nothing stays `claimed` or `staged` after the new gateway's sweep, a
/// slot's side effect happened at most once (a staged run that may have
/// started is never run again), a succeeded row's exactly once, and the
/// slots of each job form an unbroken sequence.
#[test]
fn a_disk_that_fills_with_runs_staged_leaves_only_true_rows_after_the_next_sweep() {
    let disk = Tmpfs::mount("8m");
    let mut home = TestHome::at(&disk.path().join("home"));
    home.set_bus(Bus::None);
    home.write_config("cron:\n  staging_lead_min_s: 3\n");
    let side_effects = home.scratch().join("side-effects");
    let jobs: Vec<String> = (0..4)
        .map(|i| {
            home.add(
                &format!("staged-{i}"),
                "every 4s",
                &["--shell"],
                &[&append_command(&side_effects)],
            )
        })
        .collect();
    let staged_now = |home: &TestHome| {
        invariants::rows(&home.db_file())
            .iter()
            .filter(|r| r.state == "staged")
            .count()
    };
    let mut gw = home.gateway(&[]);
    gw.wait_ready();
    wait_for(
        "runs staged ahead of their instants",
        SETTLE_TIMEOUT,
        || (staged_now(&home) >= 2).then_some(()),
    );

    let filler = disk.path().join("filler");
    disk.fill(&filler);
    // Instants come and go on the full disk: the staged workers reach
    // theirs, new claims fail.
    wait_for("claims to fail on the full disk", SETTLE_TIMEOUT, || {
        (count(&gw.log(), "disk is full") >= 2).then_some(())
    });
    gw.kill();

    std::fs::remove_file(&filler).unwrap();
    let mut next = home.gateway(&[]);
    next.wait_ready();
    // The sweep and a few slots with space back.
    let ran_before = std::fs::read_to_string(&side_effects)
        .unwrap_or_default()
        .lines()
        .count();
    wait_for("runs again with space back", SETTLE_TIMEOUT, || {
        let now = std::fs::read_to_string(&side_effects)
            .unwrap_or_default()
            .lines()
            .count();
        (now >= ran_before + jobs.len()).then_some(())
    });
    next.stop();
    invariants::wait_settled(&home.db_file(), SETTLE_TIMEOUT);
    let rows = invariants::rows(&home.db_file());
    let left: Vec<String> = rows
        .iter()
        .filter(|r| matches!(r.state.as_str(), "claimed" | "staged"))
        .map(|r| r.to_string())
        .collect();
    assert!(left.is_empty(), "rows left claimed or staged: {left:#?}");
    let periodic: Vec<Periodic> = jobs
        .iter()
        .map(|job| Periodic {
            job_id: job.clone(),
            period_ms: 4000,
        })
        .collect();
    let tally = invariants::check(&home.db_file(), &side_effects, &periodic);
    eprintln!("a full disk with runs staged: {tally}");
}
