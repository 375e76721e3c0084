//! One regression test per gateway bug fixed while writing the issue 5
//! acceptance tests, named for the bug.

use crate::support::TestHome;
use crate::support::rows::s;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// A worker that ends before adopting its row (here: a stand-in that takes
/// its go byte and exits 124, as a mismatched worker binary after an upgrade
/// would) used to leave the row `claimed` by the live gateway forever, so
/// the job never ran again under overlap `skip`. Now the row is `failed`
/// (`worker_exited`) and retried per the job's policy.
#[test]
fn worker_exiting_before_adopt_does_not_leave_its_row_claimed() {
    let h = TestHome::scoped();
    let fake = h.scratch().join("fake-worker");
    std::fs::write(&fake, "#!/bin/sh\nhead -c 1 >/dev/null\nexit 124\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut gw = h.gateway(&[("HERMES_CRON_WORKER", fake.to_str().unwrap())]);
    gw.wait_ready();
    h.add(
        "never-adopted",
        "in 1s",
        &["--retries", "1", "--retry-backoff", "1s"],
        &["true"],
    );
    let rows = h.wait_until(
        "both attempts to be terminal",
        Duration::from_secs(60),
        || {
            let rows = h.runs_of("never-adopted");
            (rows.len() == 2 && rows.iter().all(|r| r["terminal"] == true)).then_some(rows)
        },
    );
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["attempt"], i as u64 + 1, "{r}");
        assert_eq!(r["state"], "failed", "{r}");
        assert_eq!(r["reason_code"], "worker_exited", "{r}");
        let why = s(r, "reason");
        assert!(
            why.contains("exit 124") && why.contains("never started"),
            "{why}"
        );
    }
    assert_eq!(gw.stop().code(), Some(0));
}

/// Jobs used to start with the worker's blocked signals (SIGTERM, SIGINT,
/// SIGHUP, SIGCHLD: std's `Command` keeps the mask across exec), so a job
/// never saw the SIGTERM of a timeout, a stall stop or `systemctl stop` of
/// its scope, and was SIGKILLed only after the grace (or the unit's
/// `TimeoutStopSec`, 90 s). The worker, and the worker's launcher, now start
/// their children with nothing blocked.
#[test]
fn jobs_start_with_no_signal_blocked() {
    let h = TestHome::scoped();
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add(
        "mask",
        "in 1s",
        &[],
        &["grep", "^SigBlk", "/proc/self/status"],
    );
    let row = h.wait_until("the job to finish", Duration::from_secs(30), || {
        h.runs_of("mask")
            .into_iter()
            .find(|r| r["terminal"] == true)
    });
    assert_eq!(row["state"], "succeeded", "{row}");
    let out = std::fs::read_to_string(s(&row, "output_path")).unwrap();
    assert_eq!(out.trim(), "SigBlk:\t0000000000000000", "{row}");
    assert_eq!(gw.stop().code(), Some(0));
}

/// `run` (without `--wait`) used to return before its worker adopted the
/// row: for that moment the row was `claimed` by a process that was gone,
/// and any dead-owner check (the next `run`, a `tick`, a gateway's startup
/// sweep) resolved it `unknown`, so the job never ran. A worker that is slow
/// to start (here: one second) makes the window wide.
#[test]
fn run_returns_after_its_worker_adopted_the_row() {
    let h = TestHome::scoped();
    let slow = h.scratch().join("slow-worker");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nsleep 1\nexec {} \"$@\"\n",
            crate::support::cli::worker_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    h.add("first", "in 1h", &[], &["sh", "-c", "echo first"]);
    h.add("second", "in 1h", &[], &["sh", "-c", "echo second"]);
    for name in ["first", "second"] {
        h.cmd(&["run", name])
            .env("HERMES_CRON_WORKER", &slow)
            .run()
            .ok();
    }
    for name in ["first", "second"] {
        let row = h.wait_until(
            &format!("{name} to finish"),
            Duration::from_secs(30),
            || h.runs_of(name).into_iter().find(|r| r["terminal"] == true),
        );
        assert_eq!(row["state"], "succeeded", "{row}");
    }
}

/// `run --wait` used to wait forever when its worker ended before adopting
/// the row (the row stayed `claimed` by the waiting command itself, so the
/// dead-owner check never settled it). Now it records `failed`
/// (`worker_exited`) and exits 1.
#[test]
fn run_wait_returns_when_the_worker_exits_before_adopting() {
    let h = TestHome::scoped();
    let fake = h.scratch().join("fake-worker");
    std::fs::write(&fake, "#!/bin/sh\nhead -c 1 >/dev/null\nexit 124\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    h.add("never-adopted", "in 1h", &[], &["true"]);
    // Killed and reaped if the test fails before it returns.
    let mut run = h
        .cmd(&["run", "never-adopted", "--wait"])
        .env("HERMES_CRON_WORKER", &fake)
        .spawn();
    let status = h.wait_until("run --wait to return", Duration::from_secs(30), || {
        run.try_status()
    });
    assert_eq!(status.code(), Some(1));
    let row = &h.runs_of("never-adopted")[0];
    assert_eq!(row["state"], "failed", "{row}");
    assert_eq!(row["reason_code"], "worker_exited", "{row}");
}

/// Regression: a change written by a process that keeps its database
/// connection open was noticed only at the next monitor tick (here: never
/// within the test). The inotify event of its WAL append came before the
/// commit, and the gateway looked once, too early; it now looks again
/// shortly after every change notification.
#[test]
fn a_change_from_a_connection_that_stays_open_wakes_the_gateway() {
    let h = TestHome::scoped();
    h.write_config("cron:\n  heartbeat_interval_s: 300\n");
    // A job far in the future; the gateway sleeps toward it.
    let id = h.add("later", "every 1d", &[], &["sh", "-c", "echo woke"]);
    let mut gw = h.gateway(&[
        ("HERMES_CRON_HEARTBEAT_PERIOD_MS", "600000"),
        (
            "HERMES_CRON_LOG",
            "info,hermes_cron::daemon::event_loop=debug",
        ),
    ]);
    gw.wait_ready();
    gw.wait_log("sleeping until", Duration::from_secs(30));
    // Another process makes it due in a moment and keeps its connection.
    let conn = rusqlite::Connection::open(h.path().join("cron/cron.db")).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let soon: i64 = conn
        .query_row(
            "SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 1500",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute(
        "UPDATE jobs SET next_run_at = ?1 WHERE id = ?2",
        rusqlite::params![soon, id],
    )
    .unwrap();
    // Watch through the same open connection: a CLI poll opens and closes
    // connections of its own, and their writes would wake the gateway too.
    let state: String = h.wait_until(
        "the job made due by an open connection to run",
        Duration::from_secs(60),
        || {
            conn.query_row(
                "SELECT state FROM executions WHERE job_id = ?1 AND source = 'schedule'",
                [&id],
                |r| r.get(0),
            )
            .ok()
            .filter(|s: &String| s == "succeeded")
        },
    );
    assert_eq!(state, "succeeded");
    drop(conn);
    assert_eq!(gw.stop().code(), Some(0));
}

/// "Hermes fires its own jobs" was logged by every gateway, on a home with
/// no Hermes at all (issue 24, "kinder messages"). Now it is said only on a
/// Hermes home: here, once Hermes's `cron/jobs.json` appears.
#[test]
fn hermes_firing_its_own_jobs_is_said_only_on_a_hermes_home() {
    const OWN_JOBS: &str = "Hermes fires its own jobs: Hermes's cron.provider is not set";
    let h = TestHome::new().with_env(
        "HERMES_CRON_LOG",
        "info,hermes_cron::daemon::provider_sync=debug",
    );
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.wait_until("the first provider sync", Duration::from_secs(30), || {
        gw.log().contains("no Hermes jobs to fire").then_some(())
    });
    assert!(!gw.log().contains(OWN_JOBS), "{}", gw.log());
    std::fs::create_dir_all(h.path().join("cron")).unwrap();
    std::fs::write(h.path().join("cron/jobs.json"), "{\"jobs\": []}\n").unwrap();
    h.wait_until(
        "the gateway to see a Hermes home",
        Duration::from_secs(30),
        || gw.log().contains(OWN_JOBS).then_some(()),
    );
    assert_eq!(gw.stop().code(), Some(0));
}
