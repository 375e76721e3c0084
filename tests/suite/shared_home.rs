//! hermes-cron shares `~/.hermes` with the Hermes Agent: its files have names
//! of their own, and a home written by an earlier version (which used
//! `state/gateway.heartbeat`, `state/lifecycle.jsonl`, `state/gateway.lock`,
//! `state/metrics.prom`, `logs/worker.log`) is moved to them when the gateway
//! starts, keeping its history and leaving the Hermes gateway's files alone.

use crate::support::TestHome;
use nix::fcntl::{Flock, FlockArg};
use std::fs;

#[test]
fn a_home_written_by_an_earlier_version_moves_to_names_of_its_own() {
    let h = TestHome::new();
    h.run(&["list"]).ok();
    let state = h.path().join("state");
    let logs = h.path().join("logs");
    fs::create_dir_all(&state).unwrap();
    fs::create_dir_all(&logs).unwrap();
    let earlier_start =
        r#"{"event":"start","at":"2026-11-30T07:00:00Z","pid":1,"start_time":1,"version":"0.1.0"}"#;
    fs::write(state.join("lifecycle.jsonl"), format!("{earlier_start}\n")).unwrap();
    fs::write(logs.join("worker.log"), "an earlier worker line\n").unwrap();
    fs::write(state.join("metrics.prom"), "hermes_cron_jobs 0\n").unwrap();
    // The Hermes chat gateway's own heartbeat, another shape: never ours to touch.
    let hermes_beat = r#"{"pid": 4242, "updated_at": "2026-12-01T07:00:00+00:00", "monotonic": 12.5, "start_time": 1764572400.0}"#;
    fs::write(state.join("gateway.heartbeat"), hermes_beat).unwrap();
    fs::write(state.join("gateway.lock"), "1").unwrap();

    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    gw.stop();

    let lifecycle = fs::read_to_string(state.join("hermes-cron-lifecycle.jsonl")).unwrap();
    assert!(
        lifecycle.starts_with(earlier_start),
        "history lost: {lifecycle}"
    );
    assert_eq!(
        lifecycle.lines().count(),
        3,
        "earlier start, start, exit: {lifecycle}"
    );
    assert!(
        fs::read_to_string(logs.join("hermes-cron-worker.log"))
            .unwrap()
            .contains("an earlier worker line")
    );
    for gone in ["lifecycle.jsonl", "metrics.prom", "gateway.lock"] {
        assert!(!state.join(gone).exists(), "state/{gone} is still there");
    }
    assert!(!logs.join("worker.log").exists());
    assert_eq!(
        fs::read_to_string(state.join("gateway.heartbeat")).unwrap(),
        hermes_beat,
        "the Hermes gateway's heartbeat was touched"
    );
    assert!(state.join("hermes-cron.heartbeat").exists());
    assert!(state.join("hermes-cron.lock").exists());
}

#[test]
fn an_earlier_gateway_still_running_on_the_home_is_refused_like_a_second_one() {
    let h = TestHome::new();
    h.run(&["list"]).ok();
    let lock_path = h.path().join("state/gateway.lock");
    fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    fs::write(&lock_path, std::process::id().to_string()).unwrap();
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    let held = Flock::lock(file, FlockArg::LockExclusiveNonblock).unwrap();
    let out = h.run(&["gateway"]);
    assert_eq!(out.code(), 1, "{out}");
    assert!(
        out.stderr.contains("another gateway")
            && out.stderr.contains(&std::process::id().to_string()),
        "{out}"
    );
    drop(held);
}
