//! `spawn` as the drop-in for a kanban dispatcher's worker launch: output
//! appended to the caller's log file, `--json` also on a refusal, and the
//! run watched and stopped from outside with `wait` and `stop`, whose exit
//! code is the command's own.

use crate::support::TestHome;
use std::fs;

fn spawn_json(h: &TestHome, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["spawn", "--json"];
    all.extend_from_slice(args);
    h.run(&all).ok().json()
}

#[test]
fn output_is_appended_to_the_log_file_and_wait_exits_with_the_commands_code() {
    let h = TestHome::new();
    let log = h.scratch().join("task 7.log");
    fs::write(&log, "earlier run\n").unwrap();
    let first = spawn_json(
        &h,
        &[
            "--name",
            "kanban",
            "--log-file",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo out; echo err >&2; exit 75",
        ],
    );
    let id = first["execution"].as_str().unwrap();
    assert!(first["pid"].as_u64().is_some(), "{first:#}");
    let waited = h.run(&["wait", id, "--json"]);
    assert_eq!(waited.code(), 75, "{waited}");
    assert_eq!(waited.json()["state"], "failed", "{waited}");
    let text = fs::read_to_string(&log).unwrap();
    assert!(
        text.starts_with("earlier run\n"),
        "the log was not appended to: {text}"
    );
    assert!(text.contains("out\n") && text.contains("err\n"), "{text}");
    // Waiting on an ended run answers at once, the same way.
    assert_eq!(h.run(&["wait", id]).code(), 75);
}

#[test]
fn stop_ends_a_long_running_worker_and_reports_the_signal() {
    let h = TestHome::new();
    let started = h.scratch().join("started");
    let spawned = spawn_json(
        &h,
        &[
            "--name",
            "long",
            "--",
            "sh",
            "-c",
            &format!("touch '{}'; sleep 300", started.display()),
        ],
    );
    let id = spawned["execution"].as_str().unwrap().to_string();
    crate::support::wait_for(
        "the worker's command to start",
        crate::support::PATIENCE,
        || started.exists().then_some(()),
    );
    let stopped = h.run(&["stop", &id, "--json"]);
    // A stop that stopped the run exits 0 (issue 24, bug 5: it passed on the
    // command's SIGTERM, 143); how the run ended is in what it prints.
    assert_eq!(stopped.code(), 0, "{stopped}");
    let report = stopped.json();
    assert_eq!(report["state"], "cancelled", "{report:#}");
}

#[test]
fn a_refused_spawn_prints_a_json_error_object_and_exits_69() {
    let h = TestHome::new();
    let out = h.run(&[
        "spawn",
        "--json",
        "--name",
        "kanban",
        "--require-scope",
        "--",
        "true",
    ]);
    assert_eq!(out.code(), 69, "{out}");
    let error = out.json();
    assert_eq!(error["error"], "refused", "{error:#}");
    assert_eq!(error["cause"], "no_address", "{error:#}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains(crate::support::host_fix_marker()),
        "{error:#}"
    );
    let id = error["execution"].as_str().unwrap();
    let row = h.row(id).expect("the refused row");
    assert_eq!(row["state"], "refused", "{row:#}");
}
