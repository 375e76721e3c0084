//! Degraded and fail-closed dispatch through the real binaries: no bus at all (both bus
//! variables unset), and a mock `org.freedesktop.systemd1.Manager` on a private
//! `dbus-daemon` that refuses, fails the job, never answers or answers out of order.

use crate::support::cli::Running;
use crate::support::dbus_daemon::DbusDaemon;
use crate::support::mock_manager::{Behavior, MockManager};
use crate::support::process::children_of;
use crate::support::rows::execution_id_in;
use crate::support::{Bus, PATIENCE, TestHome, wait_for};
use serde_json::Value;
use std::path::Path;

/// `sh -c` script: append a line to `$1` (so the test counts runs), then wait until `$2`
/// exists, or not at all when it is empty.
const COUNT_AND_HOLD: &str =
    r#"echo ran >> "$1"; while [ -n "$2" ] && [ ! -e "$2" ]; do sleep 0.05; done"#;

fn count_and_hold(count: &Path, hold: Option<&Path>) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        COUNT_AND_HOLD.into(),
        "sh".into(),
        count.display().to_string(),
        hold.map(|p| p.display().to_string()).unwrap_or_default(),
    ]
}

fn add_counting(h: &TestHome, name: &str, hold: Option<&Path>) -> (String, std::path::PathBuf) {
    let count = h.scratch().join(format!("{name}.count"));
    let argv = count_and_hold(&count, hold);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    (h.add(name, "every 1h", &[], &argv), count)
}

fn runs_of(count: &Path) -> usize {
    std::fs::read_to_string(count)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The lines of `stderr` that are the degraded-mode warning.
fn degraded_warnings(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("degraded")).collect()
}

#[track_caller]
fn assert_personalized_fix(text: &str) {
    assert!(text.contains(crate::support::host_fix_marker()), "{text}");
    assert!(
        !text.contains("<user>") && !text.contains("<uid>"),
        "placeholders left in: {text}"
    );
}

// ---------------------------------------------------------------------------------------
// No bus at all.

#[test]
fn one_tick_without_a_bus_runs_three_jobs_degraded_with_one_warning() {
    let h = TestHome::new();
    let mut counts = Vec::new();
    for i in 0..3 {
        let count = h.scratch().join(format!("j{i}.count"));
        let argv = count_and_hold(&count, None);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        h.add(&format!("every-minute-{i}"), "every 1m", &[], &argv);
        counts.push(count);
    }
    // Two minutes on: each job is due (its catch-up run is dispatched, the older slot missed).
    let out = h.cmd(&["tick", "--json"]).now("+120").run().ok();
    let report: Value = serde_json::from_str(&out.stdout).expect("tick --json");
    let claimed = report["claimed"].as_array().expect("claimed");
    assert_eq!(claimed.len(), 3, "{report:#}");
    for c in claimed {
        assert_eq!(c["dispatch"], "started", "{c:#}");
        assert_eq!(c["mode"], "degraded", "{c:#}");
        assert_eq!(c["cause"], "no_address", "{c:#}");
    }

    let warnings = degraded_warnings(&out.stderr);
    assert_eq!(warnings.len(), 1, "stderr: {}", out.stderr);
    // One line for a person, not a log record (issue 24).
    assert!(warnings[0].starts_with("warning: "), "{}", warnings[0]);
    assert!(
        warnings[0].contains("DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset"),
        "{}",
        warnings[0]
    );
    assert_personalized_fix(warnings[0]);

    for c in claimed {
        let row = h.wait_terminal(c["id"].as_str().unwrap(), PATIENCE);
        assert_eq!(row["state"], "succeeded", "{row:#}");
        assert_eq!(row["dispatch_mode"], "degraded", "{row:#}");
        assert_eq!(row["dispatch_cause"], "no_address", "{row:#}");
        assert_eq!(row["unit"], Value::Null, "{row:#}");
    }
    for count in &counts {
        assert_eq!(runs_of(count), 1, "{}", count.display());
    }
}

#[test]
fn required_scope_without_a_bus_refuses_with_exit_69_and_runs_nothing() {
    let h = TestHome::new();
    h.config_set("cron.require_restart_safe_scope", "true");
    let touched = h.scratch().join("touched");
    let job = h.add(
        "strict",
        "every 1h",
        &[],
        &["touch", touched.to_str().unwrap()],
    );
    let out = h.run(&["run", "strict", "--wait"]);
    assert_eq!(out.code(), 69, "{out:#?}");
    assert!(out.stderr.contains("refused"), "{out:#?}");
    assert_personalized_fix(&out.stderr);

    let rows = h.runs(Some(&job));
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let row = &rows[0];
    assert_eq!(row["state"], "refused", "{row:#}");
    assert_eq!(row["reason_code"], "scope_unavailable", "{row:#}");
    assert_eq!(row["dispatch_cause"], "no_address", "{row:#}");
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains("cron.require_restart_safe_scope"),
        "{reason}"
    );
    assert!(reason.contains("DBUS_SESSION_BUS_ADDRESS"), "{reason}");
    assert_personalized_fix(reason);
    assert!(!touched.exists(), "the command ran");
    assert_eq!(h.live_processes(), Vec::<u32>::new(), "a worker is left");
}

#[test]
fn a_job_added_with_require_scope_refuses_without_a_bus() {
    let h = TestHome::new();
    let touched = h.scratch().join("touched");
    let job = h.add(
        "strict-job",
        "every 1h",
        &["--require-scope"],
        &["touch", touched.to_str().unwrap()],
    );
    let out = h.run(&["run", &job, "--wait"]);
    assert_eq!(out.code(), 69, "{out:#?}");
    let rows = h.runs(Some(&job));
    assert_eq!(rows[0]["state"], "refused", "{rows:#?}");
    assert!(
        rows[0]["reason"]
            .as_str()
            .unwrap()
            .contains("--require-scope")
    );
    assert!(!touched.exists(), "the command ran");
}

#[test]
fn spawn_require_scope_without_a_bus_refuses_whatever_the_config() {
    let h = TestHome::new();
    let touched = h.scratch().join("touched");
    let out = h.run(&[
        "spawn",
        "--name",
        "k",
        "--require-scope",
        "--",
        "touch",
        touched.to_str().unwrap(),
    ]);
    assert_eq!(out.code(), 69, "{out:#?}");
    assert!(out.stderr.contains("spawn --require-scope"), "{out:#?}");
    assert_personalized_fix(&out.stderr);
    let rows = h.runs(Some("k"));
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["state"], "refused", "{:#}", rows[0]);
    assert_eq!(rows[0]["source"], "spawn", "{:#}", rows[0]);
    assert_eq!(rows[0]["dispatch_cause"], "no_address", "{:#}", rows[0]);
    assert!(!touched.exists(), "the command ran");
    assert_eq!(h.live_processes(), Vec::<u32>::new(), "a worker is left");

    // Without --require-scope the same spawn degrades and runs.
    let out = h
        .run(&[
            "spawn",
            "--name",
            "k",
            "--",
            "touch",
            touched.to_str().unwrap(),
        ])
        .ok();
    assert!(out.stdout.contains("\tdegraded\t"), "{out:#?}");
    let row = h.wait_terminal(&execution_id_in(&out.stdout), PATIENCE);
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert!(touched.exists());
}

// ---------------------------------------------------------------------------------------
// A mock manager on a private bus.

/// A private bus with a mock manager on it, served by a runtime of its own while the
/// test drives the CLI synchronously.
struct MockBus {
    mock: Option<MockManager>,
    daemon: Option<DbusDaemon>,
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

impl MockBus {
    fn start(behavior: Behavior) -> MockBus {
        let dir = tempfile::tempdir().unwrap();
        let daemon = DbusDaemon::start(dir.path());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let mock = rt.block_on(MockManager::serve(daemon.address(), behavior));
        MockBus {
            mock: Some(mock),
            daemon: Some(daemon),
            rt,
            _dir: dir,
        }
    }

    fn mock(&self) -> &MockManager {
        self.mock.as_ref().unwrap()
    }

    /// A home whose commands see only this bus, with D-Bus timeouts of `timeout_ms`.
    fn hermes(&self, timeout_ms: u64) -> TestHome {
        TestHome::new()
            .with_bus(Bus::Address(
                self.daemon.as_ref().unwrap().address().to_owned(),
            ))
            .with_env("HERMES_CRON_DBUS_TIMEOUT_MS", timeout_ms.to_string())
    }

    /// The pids the one `StartTransientUnit` asked for, and its unit name.
    fn started(&self) -> (String, Vec<u32>) {
        let starts = self.mock().starts();
        assert_eq!(starts.len(), 1, "{starts:#?}");
        let pids = starts[0]
            .property("PIDs")
            .map(|v| Vec::<u32>::try_from(v.clone()).expect("PIDs is au"))
            .unwrap_or_default();
        (starts[0].name.clone(), pids)
    }
}

impl Drop for MockBus {
    fn drop(&mut self) {
        let _guard = self.rt.enter();
        drop(self.mock.take());
        drop(self.daemon.take());
    }
}

/// Which worker ran a run that fell back to degraded.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ran {
    /// The worker held for the scope: the manager refused the call, so
    /// nothing was done with it (it is spawned once).
    HeldWorker,
    /// A fresh worker: the scope's start job ran and failed, so the held one
    /// may have been moved; it is given up.
    FreshWorker,
}

/// `run JOB --wait` against `behavior`: the job ran exactly once, degraded, with `cause`.
fn falls_back_to_degraded(behavior: Behavior, cause: &str, ran: Ran) -> (MockBus, Value, String) {
    let bus = MockBus::start(behavior);
    let h = bus.hermes(10_000);
    let (job, count) = add_counting(&h, "mocked", None);
    let out = h.run(&["run", &job, "--wait"]).ok();
    let row = h.row(&execution_id_in(&out.stdout)).expect("row");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["dispatch_mode"], "degraded", "{row:#}");
    assert_eq!(row["dispatch_cause"], cause, "{row:#}");
    assert_eq!(row["unit"], Value::Null, "{row:#}");
    assert_eq!(runs_of(&count), 1);
    let (unit, pids) = bus.started();
    assert!(unit.starts_with("hermes-cron-mocked-"), "{unit}");
    assert_eq!(pids.len(), 1, "PIDs = the held worker");
    let held_ran = row["pid"].as_u64() == Some(u64::from(pids[0]));
    assert_eq!(held_ran, ran == Ran::HeldWorker, "{ran:?}: {row:#}");
    assert_eq!(degraded_warnings(&out.stderr).len(), 1, "{out:#?}");
    (bus, row, out.stderr)
}

#[test]
fn mock_unit_exists_falls_back_to_degraded_as_call_refused() {
    let (_bus, _row, stderr) =
        falls_back_to_degraded(Behavior::RefuseUnitExists, "call_refused", Ran::HeldWorker);
    assert!(
        stderr.contains("org.freedesktop.systemd1.UnitExists"),
        "{stderr}"
    );
}

#[test]
fn mock_failed_job_falls_back_to_degraded_as_job_failed() {
    let (bus, _row, stderr) =
        falls_back_to_degraded(Behavior::FailJob, "job_failed", Ran::FreshWorker);
    assert!(stderr.contains("`failed`"), "{stderr}");
    // The reference AddRef took on the failed unit is given back.
    assert!(
        bus.mock().methods().contains(&"UnrefUnit"),
        "{:?}",
        bus.mock().methods()
    );
}

/// The manager never completes the start: after the (short) D-Bus timeout the held worker
/// is killed and reaped, and the job runs once, degraded.
fn wedged_manager_kills_and_reaps_the_held_worker(behavior: Behavior) {
    let bus = MockBus::start(behavior);
    let h = bus.hermes(1_000);
    let hold = h.scratch().join("hold");
    let (job, count) = add_counting(&h, "wedged", Some(&hold));
    let run: Running = h.start(&["run", &job, "--wait"]);

    let row = wait_for("the degraded run", PATIENCE, || {
        h.runs(Some(&job))
            .into_iter()
            .find(|r| r["state"] == "running")
    });
    assert_eq!(row["dispatch_mode"], "degraded", "{row:#}");
    assert_eq!(row["dispatch_cause"], "timeout", "{row:#}");
    let (_, pids) = bus.started();
    let held = pids[0];
    // The CLI (still waiting on the job) has exactly one child: the degraded worker. The
    // held one is neither alive nor a zombie under it.
    let children = children_of(run.pid());
    assert!(
        children.iter().all(|(_, state)| *state != 'Z'),
        "zombie children of the CLI: {children:?}"
    );
    let worker = row["pid"].as_u64().unwrap() as u32;
    assert_ne!(worker, held);
    assert_eq!(
        children.iter().map(|c| c.0).collect::<Vec<_>>(),
        [worker],
        "children of the CLI (held worker was {held})"
    );

    std::fs::write(&hold, "").unwrap();
    let out = run.wait_within(PATIENCE).ok();
    assert!(
        out.stderr.contains("timed out"),
        "the warning names the timeout: {out:#?}"
    );
    assert_eq!(runs_of(&count), 1, "ran exactly once");
    let row = h.wait_terminal(row["id"].as_str().unwrap(), PATIENCE);
    assert_eq!(row["state"], "succeeded", "{row:#}");
}

#[test]
fn mock_without_job_removed_times_out_and_reaps_the_held_worker() {
    wedged_manager_kills_and_reaps_the_held_worker(Behavior::NeverSignal);
}

#[test]
fn mock_without_a_reply_times_out_and_reaps_the_held_worker() {
    wedged_manager_kills_and_reaps_the_held_worker(Behavior::NeverReply);
}

#[test]
fn mock_job_removed_before_the_reply_proceeds_scoped() {
    let bus = MockBus::start(Behavior::SignalBeforeReply);
    let h = bus.hermes(10_000);
    let (job, count) = add_counting(&h, "early-signal", None);
    let out = h.run(&["run", &job, "--wait"]).ok();
    assert_eq!(degraded_warnings(&out.stderr), Vec::<&str>::new());
    let row = h.row(&execution_id_in(&out.stdout)).expect("row");
    let (unit, pids) = bus.started();
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    assert_eq!(row["unit"], unit.as_str(), "{row:#}");
    // The pid handed to the manager is the worker that ran the job.
    assert_eq!(row["pid"].as_u64(), Some(u64::from(pids[0])), "{row:#}");
    assert_eq!(runs_of(&count), 1);
}

#[test]
fn under_journald_the_gateway_prefixes_each_line_with_its_priority() {
    let h = TestHome::new();
    h.add("tick-tock", "every 1s", &[], &["true"]);
    // Set by systemd for a unit's stdio connected to journald.
    let mut gw = h.gateway(&[("JOURNAL_STREAM", "8:12345")]);
    gw.wait_ready();
    gw.wait_log("scopes are unavailable", PATIENCE);
    gw.stop();
    let log = gw.log();
    let warning = log.lines().find(|l| l.contains("scopes are unavailable"));
    assert!(warning.unwrap().starts_with("<4>"), "{log}");
    let ready = log.lines().find(|l| l.contains("gateway ready")).unwrap();
    assert!(ready.starts_with("<6>"), "{log}");
    // Every line carries its priority, none a timestamp or level word of its own.
    for line in log.lines() {
        let priority = line.get(..3).unwrap_or(line);
        assert!(
            ["<3>", "<4>", "<6>", "<7>"].contains(&priority),
            "{line:?} in\n{log}"
        );
        assert!(
            !line.contains(" INFO ") && !line.contains(" WARN "),
            "{line:?}"
        );
    }
}
