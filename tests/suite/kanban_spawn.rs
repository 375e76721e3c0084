//! A kanban worker launched the way Hermes's kanban dispatcher launches one
//! (`integrations/hermes/kanban_launch.py`: `subprocess` from Python, the
//! task log appended to, the pid kept and probed), through `hermes-cron
//! spawn --require-scope --json`: refused without a user systemd session
//! (fail closed, exit 69, a JSON error), and with one, in a scope that a
//! gateway restart leaves running.

use crate::support::real_manager::{bus_env, command_env};
use crate::support::{PATIENCE, SETTLE_TIMEOUT, TestHome, cli, wait_for};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const LAUNCHER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/integrations/hermes/kanban_launch.py"
);

/// The launcher, as Hermes's dispatcher process would run it: on the real
/// user manager's bus, or with no session bus at all; with the home's
/// ledger (`HERMES_CRON_DATABASE` when it is in PostgreSQL: on a shared
/// ledger the dispatcher's environment names it, or config does).
fn launcher(home: Option<&TestHome>, with_bus: bool, args: &[&str]) -> Value {
    let mut cmd = Command::new("python3");
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", std::env::temp_dir())
        .envs(home.map(TestHome::ledger_env).unwrap_or_default())
        .arg(LAUNCHER)
        .args(args);
    if with_bus {
        cmd.envs(command_env(&bus_env()));
    }
    let out = cmd.output().expect("python3");
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

fn launch(h: &TestHome, with_bus: bool, task: &str, log: &Path, script: &str) -> Value {
    let bin = cli::bin();
    let ws = h.scratch().to_str().unwrap().to_string();
    launcher(
        Some(h),
        with_bus,
        &[
            "launch",
            bin.to_str().unwrap(),
            h.path().to_str().unwrap(),
            task,
            log.to_str().unwrap(),
            &ws,
            "--",
            "/bin/sh",
            "-c",
            script,
        ],
    )
}

fn alive(pid: u64) -> bool {
    launcher(None, false, &["alive", &pid.to_string()])["alive"] == true
}

#[test]
fn without_a_user_session_the_launch_is_refused_and_nothing_runs() {
    let h = TestHome::new();
    let log = h.scratch().join("task-7.log");
    let ran = h.scratch().join("ran");
    let got = launch(&h, false, "7", &log, &format!("touch '{}'", ran.display()));
    assert_eq!(got["code"], 69, "{got:#}");
    let report = &got["report"];
    assert_eq!(report["error"], "refused", "{report:#}");
    let row = h
        .row(report["execution"].as_str().unwrap())
        .expect("the refused row");
    assert_eq!(row["state"], "refused");
    assert!(!ran.exists(), "the worker ran unscoped");
}

#[test]
fn a_scoped_worker_outlives_a_gateway_restart_and_its_pid_is_the_one_to_watch() {
    let h = TestHome::scoped();
    h.require_scopes();
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let log = h.scratch().join("task-8.log");
    let go = h.scratch().join("go");
    let script = format!(
        "echo working on $HERMES_KANBAN_TASK in $(pwd); while [ ! -e '{}' ]; do sleep 0.1; done; echo done",
        go.display()
    );
    let got = launch(&h, true, "8", &log, &script);
    assert_eq!(got["code"], 0, "{got:#}");
    let report = &got["report"];
    assert_eq!(report["mode"], "scoped", "{report:#}");
    let pid = report["pid"].as_u64().expect("a pid");
    let id = report["execution"].as_str().unwrap().to_string();
    wait_for("the worker's first line in the task log", PATIENCE, || {
        let text = std::fs::read_to_string(&log).ok()?;
        text.contains("working on 8 in").then_some(())
    });
    assert!(alive(pid));
    gw.stop();
    assert!(alive(pid), "stopping the gateway stopped the worker");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    assert!(alive(pid), "the restarted gateway stopped the worker");
    std::fs::write(&go, "").unwrap();
    wait_for("the worker to end", SETTLE_TIMEOUT, || {
        (!alive(pid)).then_some(())
    });
    let waited = h.run(&["wait", &id, "--json"]);
    assert_eq!(waited.code(), 0, "{waited}");
    assert_eq!(waited.json()["state"], "succeeded");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(&format!("in {}", h.scratch().display())),
        "{text}"
    );
    assert!(text.ends_with("done\n"), "{text}");
    gw.stop();
}
