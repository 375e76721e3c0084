//! `--json` on every command (issue 24, "one convention for output"): the
//! commands that had no JSON form print one, and under `--json` an error is a
//! JSON object on stdout too (`error`, `exit_code`, `message`, `field`,
//! `fix`), with the README's exit codes and nothing more on stderr.

use crate::support::TestHome;
use crate::support::cli::Out;
use serde_json::Value;

/// The error object of a failed `--json` command, checked for its shape.
#[track_caller]
fn error_object(out: &Out, code: i32) -> Value {
    assert_eq!(out.code(), code, "{out}");
    let e = out.json();
    assert_eq!(e["exit_code"], code, "{out}");
    for key in ["error", "message", "field", "fix"] {
        assert!(e.get(key).is_some(), "no {key:?}: {out}");
    }
    assert!(
        !out.stderr.contains("hermes-cron: "),
        "the error is printed once, as JSON: {out}"
    );
    e
}

#[test]
fn the_job_commands_print_the_job_under_json() {
    let h = TestHome::new();
    let id = h.add(
        "brief",
        "daily at 8am",
        &["--tz", "Europe/Berlin"],
        &["true"],
    );
    let edited = h
        .run(&["edit", "brief", "--schedule", "daily at 9am", "--json"])
        .ok()
        .json();
    assert_eq!(edited["id"], id.as_str());
    assert_eq!(edited["schedule"], "daily at 9am");
    let paused = h
        .run(&["pause", "brief", "--reason", "holiday", "--json"])
        .ok()
        .json();
    assert_eq!(
        (&paused["state"], &paused["pause_reason"]),
        (&Value::from("paused"), &Value::from("holiday"))
    );
    let resumed = h.run(&["resume", "brief", "--json"]).ok().json();
    assert_eq!(resumed["state"], "active");
    assert!(resumed["next_run_at"].is_string(), "{resumed:#}");
    // `--json` may come anywhere, as every global flag.
    let removed = h.run(&["--json", "rm", "brief"]).ok().json();
    assert_eq!(removed["id"], id.as_str());
    assert!(h.run(&["list", "--all", "--json"]).ok().json() == Value::Array(vec![]));
}

#[test]
fn config_get_set_unset_and_show_print_json() {
    let h = TestHome::new();
    let key = "cron.max_parallel_jobs";
    let set = h.run(&["config", "set", key, "4", "--json"]).ok().json();
    assert_eq!(set, serde_json::json!({"key": key, "value": "4"}));
    let got = h.run(&["config", "get", key, "--json"]).ok().json();
    assert_eq!(got, serde_json::json!({"key": key, "value": "4"}));
    let shown = h.run(&["config", "show", "--json"]).ok().json();
    let entry = shown["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == key)
        .unwrap_or_else(|| panic!("{key} not shown: {shown:#}"));
    assert_eq!(
        (&entry["value"], &entry["source"]),
        (&Value::from("4"), &Value::from("file"))
    );
    let unset = h.run(&["config", "unset", key, "--json"]).ok().json();
    assert_eq!(
        (&unset["removed"], &unset["default"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{unset:#}"
    );
}

#[test]
fn run_and_run_wait_print_the_run_under_json() {
    let h = TestHome::new();
    let job = h.add("now", "daily at 8am", &[], &["sh", "-c", "exit 3"]);
    let started = h.run(&["run", "now", "--json"]).ok().json();
    assert_eq!(started["job_id"], job.as_str());
    assert!(started["execution"].is_string(), "{started:#}");
    assert!(started["mode"].is_string(), "{started:#}");
    let out = h.run(&["run", "now", "--wait", "--json"]);
    assert_eq!(out.code(), 1, "{out}");
    let end = out.json();
    assert_eq!(
        (&end["state"], &end["exit_code"]),
        (&Value::from("failed"), &Value::from(3)),
        "{end:#}"
    );
}

#[test]
fn errors_under_json_are_objects_naming_the_field_and_the_fix() {
    let h = TestHome::new();
    h.add("brief", "daily at 8am", &[], &["true"]);

    let e = error_object(
        &h.run(&[
            "add",
            "--json",
            "--name",
            "x",
            "--schedule",
            "daily at 25pm",
            "--",
            "true",
        ]),
        2,
    );
    assert_eq!(
        (&e["error"], &e["field"]),
        (&"usage".into(), &"--schedule".into())
    );
    assert!(e["message"].as_str().unwrap().contains("25pm"), "{e:#}");

    let e = error_object(
        &h.run(&[
            "add",
            "--json",
            "--name",
            "BRIEF",
            "--schedule",
            "daily",
            "--",
            "true",
        ]),
        2,
    );
    assert_eq!(e["field"], "--name");
    assert!(
        e["fix"]
            .as_str()
            .unwrap()
            .starts_with("choose another name"),
        "{e:#}"
    );

    let e = error_object(&h.run(&["show", "nope", "--json"]), 2);
    assert_eq!(e["field"], "JOB");
    assert!(e["fix"].as_str().unwrap().contains("list --all"), "{e:#}");

    let e = error_object(
        &h.run(&["config", "set", "cron.max_parallel_jobs", "-3", "--json"]),
        2,
    );
    assert_eq!(e["field"], "cron.max_parallel_jobs");

    // An error in the command line itself, found before anything runs.
    let e = error_object(
        &h.run(&["add", "--json", "--schedul", "x", "--", "true"]),
        2,
    );
    assert_eq!(e["field"], "--schedul");
    assert!(e["fix"].as_str().unwrap().contains("--schedule"), "{e:#}");

    // A command whose output is a format of its own says so.
    let e = error_object(&h.run(&["metrics", "--json"]), 2);
    assert_eq!(e["field"], "--json");
    assert!(
        e["message"].as_str().unwrap().contains("Prometheus"),
        "{e:#}"
    );

    let e = error_object(&h.run(&["wait", "0000-not-a-run", "--json"]), 2);
    assert_eq!(e["error"], "usage");

    // A failure (exit 1) is one too: a file that cannot be read.
    let e = error_object(&h.run(&["import", "/nonexistent/crontab", "--json"]), 1);
    assert_eq!(e["error"], "failure");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("cannot read /nonexistent/crontab"),
        "{e:#}"
    );
}
