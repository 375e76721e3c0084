//! The startup sweep, driven through the real binaries: stale rows made by
//! real crashes become `unknown` with what was checked, a second sweep
//! changes nothing, and a home in rollback-journal mode boots without
//! deadlocking.

use crate::support::TestHome;
use crate::support::gateway::systemctl;
use crate::support::process::proc_state;
use crate::support::rows::s;
use hermes_cron::clock::{Clock, SystemClock};
use hermes_cron::process::{ProcessIdentity, signal_session};
use nix::sys::signal::Signal;
use serde_json::Value;
use std::time::Duration;

/// Units to stop when the test ends, whatever happens.
struct StopUnits(Vec<String>);

impl Drop for StopUnits {
    fn drop(&mut self) {
        for u in &self.0 {
            let _ = systemctl(&["stop", "--", u]);
        }
    }
}

/// The live identity of a running row's worker.
fn worker_of(row: &Value) -> ProcessIdentity {
    let pid = row["pid"].as_u64().expect("a running row has a pid") as u32;
    hermes_cron::process::identity_of(pid).expect("the worker is alive")
}

/// Stale rows made with the real binaries:
/// - `claimed`, claimer dead: a gateway with the crash point `after_claim_commit`;
/// - `running` scoped, worker and scope dead: its scope SIGKILLed;
/// - `running` scoped, worker dead, scope alive (the job outlived its worker);
/// - `running` degraded, worker dead: its session SIGKILLed;
/// - `running` scoped, worker dead right after adopting (crash point
///   `worker_after_adopt`, a `spawn`ed run).
///
/// Returns (claimed id, [scope gone, scope left, degraded, crashed], units).
fn make_stale_rows(h: &TestHome) -> (String, [String; 4], StopUnits) {
    let no_bus = h.scratch().join("empty-runtime-dir");
    std::fs::create_dir_all(&no_bus).unwrap();
    let never = h.scratch().join("never-ran.txt");
    h.add(
        "orphan-claim",
        "in 1s",
        &[],
        &["sh", "-c", &format!("echo ran >> {}", never.display())],
    );
    for name in ["scope-gone", "scope-left", "degraded"] {
        h.add(name, "in 1h", &[], &["sleep", "120"]);
    }
    // Manual runs first: each `run` resolves dead owners it sees, so every
    // worker must still be alive while the next command runs.
    h.run(&["run", "scope-gone"]).ok();
    h.run(&["run", "scope-left"]).ok();
    h.cmd(&["run", "degraded"])
        .env("DBUS_SESSION_BUS_ADDRESS", "")
        .env("XDG_RUNTIME_DIR", &no_bus)
        .run()
        .ok();
    let running = |name: &str| {
        h.wait_until(
            &format!("{name} to be running"),
            Duration::from_secs(30),
            || {
                h.runs_of(name)
                    .into_iter()
                    .find(|r| r["state"] == "running")
            },
        )
    };
    let gone = running("scope-gone");
    let left = running("scope-left");
    let degraded = running("degraded");
    assert_eq!(gone["dispatch_mode"], "scoped", "{gone}");
    assert_eq!(left["dispatch_mode"], "scoped", "{left}");
    assert_eq!(degraded["dispatch_mode"], "degraded", "{degraded}");
    let units = StopUnits(vec![s(&gone, "unit"), s(&left, "unit")]);

    // A gateway that claims the due one-shot and dies right after the commit
    // (its sweep sees the three runs alive and leaves their rows alone).
    let shown: Value = h.run(&["show", "orphan-claim", "--json"]).ok().json();
    let due_at = chrono::DateTime::parse_from_rfc3339(&s(&shown, "next_run_at")).unwrap();
    h.wait_until("the one-shot to be due", Duration::from_secs(30), || {
        (SystemClock::real().now() >= due_at).then_some(())
    });
    let mut crashing = h.gateway(&[("HERMES_CRON_CRASH_AT", "after_claim_commit")]);
    let status = crashing.wait_exit(Duration::from_secs(30));
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "{}",
        crashing.log()
    );
    let claimed = h
        .runs_of("orphan-claim")
        .into_iter()
        .find(|r| r["state"] == "claimed")
        .unwrap_or_else(|| panic!("no claimed row\n{}", h.diag()));

    // Now the workers die.
    let (w_gone, w_left, w_degraded) = (worker_of(&gone), worker_of(&left), worker_of(&degraded));
    let out = systemctl(&["kill", "--signal=SIGKILL", "--", &s(&gone, "unit")]);
    assert!(out.status.success(), "{out:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(w_left.pid as i32),
        Signal::SIGKILL,
    )
    .unwrap();
    signal_session(&w_degraded, Signal::SIGKILL);
    h.wait_until(
        "the three workers to be dead",
        Duration::from_secs(30),
        || {
            (![&w_gone, &w_left, &w_degraded]
                .iter()
                .any(|w| hermes_cron::process::is_alive(w)))
            .then_some(())
        },
    );
    // A worker that dies right after adopting (`spawn` sweeps nothing
    // itself, so the claimed row above stays as it is); `spawn` says its
    // command never started.
    let spawned = h
        .cmd(&["spawn", "--name", "crashed", "--", "sleep", "120"])
        .env("HERMES_CRON_CRASH_AT", "worker_after_adopt")
        .run()
        .fails_with(1);
    assert!(
        spawned
            .stderr
            .contains("the worker ended before it started the command"),
        "{spawned}"
    );
    let crashed = h.wait_until(
        "the crashed worker's row to be running",
        Duration::from_secs(30),
        || {
            h.runs_of("crashed")
                .into_iter()
                .find(|r| r["state"] == "running")
        },
    );
    let crashed_pid = crashed["pid"].as_u64().unwrap() as u32;
    h.wait_until(
        "the crashed worker to be gone",
        Duration::from_secs(30),
        || {
            proc_state(crashed_pid)
                .is_none_or(|st| st == 'Z')
                .then_some(())
        },
    );
    h.wait_until(
        "the killed scope to be gone",
        Duration::from_secs(30),
        || {
            let out = systemctl(&["is-active", "--", &s(&gone, "unit")]);
            (!out.status.success()).then_some(())
        },
    );
    (
        s(&claimed, "id"),
        [
            s(&gone, "id"),
            s(&left, "id"),
            s(&degraded, "id"),
            s(&crashed, "id"),
        ],
        units,
    )
}

/// Every stale row that had started becomes `unknown` with a reason saying
/// what was checked; the claim that never started is taken over and run,
/// once; a second sweep (gateway restarted) changes nothing.
#[test]
fn startup_sweep_resolves_stale_rows_with_reasons_and_is_idempotent() {
    let h = TestHome::scoped();
    let (claimed, [gone, left, degraded, crashed], _units) = make_stale_rows(&h);

    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    assert!(gw.log().contains("unknown=4"), "{}", gw.log());
    assert!(gw.log().contains("taken over"), "{}", gw.log());

    let row = |id: &str| h.row(id).unwrap();
    let r = h.wait_terminal(&claimed, Duration::from_secs(30));
    assert_eq!(r["state"], "succeeded", "{r}");
    let never = std::fs::read_to_string(h.scratch().join("never-ran.txt")).unwrap();
    assert_eq!(
        never.lines().count(),
        1,
        "the claim that never started ran once"
    );

    let r = row(&gone);
    assert_eq!(r["state"], "unknown", "{r}");
    assert_eq!(r["reason_code"], "worker_died", "{r}");
    let why = s(&r, "reason");
    assert!(
        why.contains(&format!("checked scope {}", s(&r, "unit")))
            && why.contains(&format!("worker pid {}", r["pid"])),
        "{why}"
    );

    let r = row(&left);
    assert_eq!(r["state"], "unknown", "{r}");
    assert_eq!(r["reason_code"], "worker_died", "{r}");
    let why = s(&r, "reason");
    assert!(
        why.contains(&format!("checked scope {}", s(&r, "unit")))
            && why.contains("no longer holds worker pid"),
        "{why}"
    );

    let r = row(&degraded);
    assert_eq!(r["state"], "unknown", "{r}");
    assert_eq!(r["reason_code"], "worker_died", "{r}");
    let why = s(&r, "reason");
    assert!(
        why.contains(&format!("worker pid {}", r["pid"])) && why.contains("gone"),
        "{why}"
    );
    let r = row(&crashed);
    assert_eq!(r["state"], "unknown", "{r}");
    assert_eq!(r["reason_code"], "worker_died", "{r}");
    let why = s(&r, "reason");
    assert!(
        why.contains(&format!("checked scope {}: gone", s(&r, "unit")))
            && why.contains(&format!("worker pid {}", r["pid"])),
        "{why}"
    );
    for id in [&claimed, &gone, &left, &degraded, &crashed] {
        assert!(gw.log().contains(id.as_str()), "{id} not logged");
    }
    assert_eq!(gw.stop().code(), Some(0));
    let before = h.runs(None);
    let mut again = h.gateway(&[]);
    again.wait_ready();
    assert!(
        again.log().contains("adopted=0 unknown=0"),
        "{}",
        again.log()
    );
    assert_eq!(again.stop().code(), Some(0));
    assert_eq!(h.runs(None), before, "the second sweep changed the ledger");
}

/// A home in rollback-journal mode (`HERMES_CRON_JOURNAL=delete` for every
/// process), with jobs and stale rows: the gateway is ready within a hard
/// timeout (else it is killed and the test fails), then runs a job.
#[test]
fn boot_in_rollback_journal_mode_with_stale_rows_does_not_deadlock() {
    let mut h = TestHome::scoped();
    h.set_env("HERMES_CRON_JOURNAL", "delete");
    for i in 0..5 {
        h.add(&format!("idle{i}"), "every 1h", &[], &["true"]);
    }
    let (claimed, stale, _units) = make_stale_rows(&h);

    let db = h.path().join("cron/cron.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    assert_eq!(mode, "delete");

    let mut gw = h.gateway(&[]);
    // The hard timeout: a self-deadlock would wait out the busy timeout (15 s)
    // at least once per statement.
    gw.wait_log("gateway ready", Duration::from_secs(20));
    assert!(gw.log().contains("unknown=4"), "{}", gw.log());
    for id in stale.iter() {
        assert_eq!(h.row(id).unwrap()["state"], "unknown");
    }
    let taken = h.wait_terminal(&claimed, Duration::from_secs(30));
    assert_eq!(taken["state"], "succeeded", "taken over and run: {taken}");
    h.add("after-boot", "in 1s", &[], &["sh", "-c", "echo fine"]);
    let row = h.wait_until(
        "the job after boot to finish",
        Duration::from_secs(30),
        || {
            h.runs_of("after-boot")
                .into_iter()
                .find(|r| r["terminal"] == true)
        },
    );
    assert_eq!(row["state"], "succeeded", "{row}");
    assert!(!h.path().join("cron/cron.db-wal").exists());
    assert_eq!(gw.stop().code(), Some(0));
}
