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

/// The dispatcher's stop of a worker that ignores SIGTERM: SIGTERM, 5 s,
/// SIGKILL of the reported pid ends the whole run (the command, a child in
/// its group that ignores SIGTERM too, and one that left its session), its
/// output until then is in the task log, and the row says how it ended.
#[test]
fn the_dispatchers_sigterm_then_sigkill_of_the_reported_pid_ends_the_whole_run() {
    let h = TestHome::scoped();
    h.require_scopes();
    let log = h.scratch().join("task-9.log");
    let pids = h.scratch().join("pids");
    let script = format!(
        "trap '' TERM; sleep 600 & echo $! >> '{p}'; setsid sleep 601 & echo $! >> '{p}'; \
         echo started; while :; do sleep 0.2; done",
        p = pids.display()
    );
    let got = launch(&h, true, "9", &log, &script);
    assert_eq!(got["code"], 0, "{got:#}");
    let report = &got["report"];
    assert_eq!(report["mode"], "scoped", "{report:#}");
    let pid = report["pid"].as_u64().expect("a pid");
    let worker = report["worker_pid"].as_u64().expect("the worker's pid");
    assert_ne!(pid, worker, "{report:#}");
    let id = report["execution"].as_str().unwrap().to_string();
    let children: Vec<u64> = wait_for("both children's pids", PATIENCE, || {
        let text = std::fs::read_to_string(&pids).ok()?;
        let got: Vec<u64> = text.lines().filter_map(|l| l.parse().ok()).collect();
        (got.len() == 2).then_some(got)
    });
    wait_for("the first line in the task log", PATIENCE, || {
        let text = std::fs::read_to_string(&log).ok()?;
        text.contains("started").then_some(())
    });
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(cmdline.starts_with("/bin/sh\0-c\0"), "{cmdline:?}");

    let stopped = launcher(None, false, &["stop", &pid.to_string()]);
    assert_eq!(stopped["sigkill"], true, "SIGTERM was ignored: {stopped:#}");
    // The dispatcher looks once, right after its SIGKILL; we wait.
    for p in [pid, worker].iter().chain(&children) {
        wait_for(
            &format!("process {p} of the run to end"),
            SETTLE_TIMEOUT,
            || (!alive(*p)).then_some(()),
        );
    }
    let waited = h.run(&["wait", &id, "--json"]);
    let row = waited.json();
    assert_eq!(row["state"], "failed", "{row:#}");
    let reason = row["reason"].as_str().unwrap();
    assert!(reason.starts_with("killed by SIGKILL"), "{reason}");
    // Both children, and the loop's `sleep 0.2` when one was running.
    let others: usize = reason
        .rsplit("; the ")
        .next()
        .and_then(|r| r.strip_suffix(" other process(es) of the run were killed with it"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{reason}"));
    assert!((2..=3).contains(&others), "{reason}");
    let unit = report["unit"].as_str().unwrap();
    wait_for("the scope to be gone", SETTLE_TIMEOUT, || {
        let out = crate::support::real_manager::systemctl(
            &crate::support::real_manager::bus_env(),
            &["is-active", unit],
        );
        (!String::from_utf8_lossy(&out.stdout).starts_with("active")).then_some(())
    });
}
