//! Scoped dispatch through the real binaries against the real systemd user manager
//! (see `support::real_manager`; without one these tests fail, loudly): the job's
//! cgroup is its scope, hostile job names give valid units, `spawn` is scoped, and
//! killing the dispatching CLI around the go byte neither stops nor doubles a job.

use crate::support::real_manager;
use crate::support::rows::execution_id_in;
use crate::support::{PATIENCE, TestHome, wait_for};
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;

/// A job that waits until `file` exists (so the test decides when its scope ends).
fn wait_for_file(file: &std::path::Path) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        r#"while [ ! -e "$1" ]; do sleep 0.05; done; echo released"#.into(),
        "sh".into(),
        file.display().to_string(),
    ]
}

fn str_of<'a>(row: &'a Value, key: &str) -> &'a str {
    row[key]
        .as_str()
        .unwrap_or_else(|| panic!("row has no string {key}: {row:#}"))
}

/// Characters systemd accepts in a unit name, and its length limit.
#[track_caller]
fn assert_valid_unit_name(unit: &str) {
    assert!(
        unit.starts_with("hermes-cron-") && unit.ends_with(".scope"),
        "{unit:?}"
    );
    assert!(unit.len() <= 255, "{} bytes: {unit:?}", unit.len());
    assert!(
        unit.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":_.-\\".contains(&b)),
        "invalid character in {unit:?}"
    );
}

fn systemctl(args: &[&str]) -> String {
    let out = real_manager::systemctl(&real_manager::bus_env(), args);
    assert!(
        out.status.success(),
        "systemctl --user {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn scoped_job_reads_its_own_unit_in_proc_self_cgroup() {
    let h = TestHome::scoped();
    h.add("cgroup", "every 1h", &[], &["cat", "/proc/self/cgroup"]);
    let out = h.run(&["run", "cgroup", "--wait"]).ok();
    let id = execution_id_in(&out.stdout);
    let row = h.row(&id).expect("row");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    assert_eq!(row["dispatch_cause"], Value::Null, "{row:#}");
    let unit = str_of(&row, "unit");
    assert_valid_unit_name(unit);
    assert!(out.stdout.contains(unit), "{out:#?}");

    // The hierarchies systemd manages: `0::` (unified) and `name=systemd` (v1, hybrid).
    let cgroup = h.output_of(&row);
    let managed: Vec<&str> = cgroup
        .lines()
        .filter(|l| l.starts_with("0::") || l.contains(":name=systemd:"))
        .collect();
    assert!(!managed.is_empty(), "no systemd hierarchy in {cgroup:?}");
    for line in managed {
        assert!(
            line.ends_with(&format!("/{unit}")),
            "{line:?} is not in {unit}"
        );
    }
}

#[test]
fn hostile_job_names_give_valid_units_and_clean_descriptions() {
    let names = [
        "semi;colon; rm -rf /".to_owned(),
        "spaces in the name".to_owned(),
        "new\nline\nWants=evil.service".to_owned(),
        "../../etc/passwd".to_owned(),
        "ünïcödé ☕ 名前".to_owned(),
        "ab-".repeat(100),
        "slow-report".to_owned(),
    ];
    let h = TestHome::scoped();
    for (i, name) in names.iter().enumerate() {
        let release = h.scratch().join(format!("release-{i}"));
        let argv = wait_for_file(&release);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let job = h.add(name, "every 1h", &[], &argv);
        let run = h.start(&["run", name.as_str(), "--wait"]);

        let row = wait_for(&format!("job {name:?} running"), PATIENCE, || {
            h.runs(Some(&job))
                .into_iter()
                .find(|r| r["state"] == "running")
        });
        assert_eq!(row["dispatch_mode"], "scoped", "{name:?}: {row:#}");
        let unit = str_of(&row, "unit").to_owned();
        assert_valid_unit_name(&unit);
        // The pattern `show` prints finds the running unit (issue 24, bug 7:
        // a dash was `\x2d`, so `hermes-cron-slow-report-*` matched nothing).
        let shown = h.run(&["show", &job, "--json"]).ok().json();
        let glob = shown["unit_glob"].as_str().unwrap();
        if name == "slow-report" {
            assert_eq!(glob, "hermes-cron-slow-report-*.scope");
        }
        let listed = systemctl(&["list-units", "--all", "--no-legend", "--plain", "--", glob]);
        assert!(listed.contains(&unit), "{name:?}: {glob} lists {listed:?}");

        // `show` prints one property per line: a newline in the description would add one.
        // (It echoes Id and Description for units that do not exist: ActiveState tells.)
        let shown = systemctl(&[
            "show",
            "-p",
            "Id",
            "-p",
            "ActiveState",
            "-p",
            "Description",
            "--",
            &unit,
        ]);
        let lines: Vec<&str> = shown.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 3, "{name:?}: {shown:?}");
        assert!(lines.contains(&format!("Id={unit}").as_str()), "{shown:?}");
        assert!(lines.contains(&"ActiveState=active"), "{shown:?}");
        let description = lines
            .iter()
            .find_map(|l| l.strip_prefix("Description="))
            .expect("Description");
        assert!(
            description.starts_with("hermes-cron job "),
            "{description:?}"
        );
        assert!(
            !description.chars().any(char::is_control),
            "{description:?}"
        );
        // The transient unit file: every line is a section, a comment or `Key=value`.
        let file = systemctl(&["cat", "--", &unit]);
        for line in file.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let ok = line.starts_with('#')
                || line.starts_with('[')
                || line
                    .split_once('=')
                    .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_alphanumeric()));
            assert!(ok, "{name:?}: stray line {line:?} in\n{file}");
        }

        std::fs::write(&release, "").unwrap();
        run.wait_within(PATIENCE).ok();
        let row = h.wait_terminal(str_of(&row, "id"), PATIENCE);
        assert_eq!(row["state"], "succeeded", "{name:?}: {row:#}");
        assert_eq!(row["job_name"], name.as_str());
        assert_eq!(row["unit"], unit.as_str());
        assert_eq!(h.output_of(&row), "released\n");
    }
}

#[test]
fn spawn_with_a_bus_is_scoped_and_prints_execution_and_unit() {
    let h = TestHome::scoped();
    let out = h
        .run(&[
            "spawn",
            "--name",
            "kanban",
            "--",
            "cat",
            "/proc/self/cgroup",
        ])
        .ok();
    let fields: Vec<&str> = out.stdout.trim().split('\t').collect();
    assert_eq!(fields.len(), 3, "{out:#?}");
    let (id, mode, unit) = (fields[0], fields[1], fields[2]);
    assert_eq!(mode, "scoped", "{out:#?}");
    assert_valid_unit_name(unit);
    let row = h.wait_terminal(id, PATIENCE);
    assert_eq!(row["source"], "spawn", "{row:#}");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    assert_eq!(row["unit"], unit, "{row:#}");
    assert!(
        h.output_of(&row)
            .lines()
            .any(|l| l.starts_with("0::") && l.ends_with(&format!("/{unit}"))),
        "{row:#}"
    );
    // `runs NAME` finds spawned runs by name.
    assert!(h.runs(Some("kanban")).iter().any(|r| r["id"] == id));
}

#[test]
fn killing_the_cli_right_after_the_go_byte_does_not_stop_the_job() {
    let h = TestHome::scoped();
    let job = h.add(
        "survivor",
        "every 1h",
        &[],
        &["sh", "-c", "sleep 2; echo done"],
    );
    let out = h
        .cmd(&["run", "survivor"])
        .env("HERMES_CRON_CRASH_AT", "after_go")
        .run();
    assert_eq!(out.status.signal(), Some(9), "the CLI must die: {out:#?}");
    assert!(out.stderr.contains("after_go"), "{out:#?}");

    let row = wait_for("the surviving run", PATIENCE, || {
        h.runs(Some(&job)).into_iter().next()
    });
    let row = h.wait_terminal(str_of(&row, "id"), PATIENCE);
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    assert_eq!(h.output_of(&row), "done\n");
    assert_eq!(h.runs(Some(&job)).len(), 1, "ran once");
}

#[test]
fn killing_the_cli_before_the_go_byte_runs_nothing_and_tick_resolves_the_row() {
    let h = TestHome::scoped();
    let marker = h.scratch().join("ran");
    let job = h.add(
        "never",
        "every 1h",
        &[],
        &["touch", marker.to_str().unwrap()],
    );
    let out = h
        .cmd(&["run", "never"])
        .env("HERMES_CRON_CRASH_AT", "after_scope_created")
        .run();
    assert_eq!(out.status.signal(), Some(9), "the CLI must die: {out:#?}");
    assert!(out.stderr.contains("after_scope_created"), "{out:#?}");

    // The held worker sees EOF on its pipe and exits without running anything.
    wait_for("the held worker to exit", PATIENCE, || {
        h.live_processes().is_empty().then_some(())
    });
    let rows = h.runs(Some(&job));
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["state"], "claimed", "{:#}", rows[0]);

    // Its command never started, and a manual run is not started again:
    // `missed`, not `unknown` (nothing may have run).
    h.run(&["tick"]).ok();
    let row = h.wait_terminal(str_of(&rows[0], "id"), PATIENCE);
    assert_eq!(row["state"], "missed", "{row:#}");
    assert_eq!(row["reason_code"], "claimer_died", "{row:#}");
    assert!(
        str_of(&row, "reason").contains("a manual run is not started again"),
        "{row:#}"
    );
    assert!(!marker.exists(), "the command ran");
    assert_eq!(h.runs(Some(&job)).len(), 1);
}

/// Runs `cmd` with piped stdout and stderr, as `subprocess.run(capture_output=True)` or
/// `$(...)` would, and returns its output once both pipes reach EOF.
fn captured(mut cmd: std::process::Command) -> std::process::Output {
    use std::process::Stdio;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output().expect("run hermes-cron"));
    });
    rx.recv_timeout(PATIENCE)
        .expect("the caller's pipes stayed open: a detached worker inherited them")
}

#[test]
fn regression_detached_workers_do_not_hold_the_callers_pipes() {
    let h = TestHome::scoped();
    let release = h.scratch().join("release");
    let argv = wait_for_file(&release);
    let job_args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut spawn_args = vec!["spawn", "--name", "long", "--"];
    spawn_args.extend_from_slice(&job_args);
    let spawn = h.cmd(&spawn_args).command();
    h.add("long-job", "every 1h", &[], &job_args);
    let run = h.cmd(&["run", "long-job"]).command();

    let mut ids = Vec::new();
    for cmd in [spawn, run] {
        // Both return while their job is still held by `release`.
        let out = captured(cmd);
        assert!(out.status.success(), "{out:?}");
        let id = execution_id_in(&String::from_utf8_lossy(&out.stdout));
        let row = wait_for("the run to start", PATIENCE, || {
            h.row(&id).filter(|r| r["state"] != "claimed")
        });
        assert_eq!(row["state"], "running", "{row:#}");
        ids.push(id);
    }
    std::fs::write(&release, "").unwrap();
    for id in ids {
        let row = h.wait_terminal(&id, PATIENCE);
        assert_eq!(row["state"], "succeeded", "{row:#}");
        assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    }
}

#[test]
fn a_process_left_behind_in_a_finished_runs_scope_is_reported_on_its_row() {
    let h = TestHome::scoped();
    // The job starts a daemon of its own (detached from its output) and ends.
    h.add(
        "leaves-one",
        "every 1h",
        &[],
        &["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo started"],
    );
    let out = h.run(&["run", "leaves-one", "--wait"]).ok();
    let row = h.row(&execution_id_in(&out.stdout)).expect("row");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    let unit = str_of(&row, "unit");
    let reason = str_of(&row, "reason");
    assert!(
        reason.starts_with("1 process(es) the command started still run after it ended: ")
            && reason.contains(" (sleep)")
            && reason.contains(&format!("`systemctl --user stop {unit}`")),
        "{row:#}"
    );
    // The scope stays for it, as the row says; stopping it ends the daemon.
    assert_eq!(systemctl(&["is-active", unit]).trim(), "active");
    systemctl(&["stop", unit]);
    // A job that leaves nothing says nothing.
    h.add(
        "leaves-none",
        "every 1h",
        &[],
        &["sh", "-c", "sleep 0.1 & wait"],
    );
    let out = h.run(&["run", "leaves-none", "--wait"]).ok();
    let row = h.row(&execution_id_in(&out.stdout)).expect("row");
    assert_eq!(row["reason"], Value::Null, "{row:#}");
}
