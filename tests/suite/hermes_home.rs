//! hermes-cron in a real Hermes home (the `hermes-agent` package's own CLI
//! and Python code, see `support::hermes`): whatever hermes-cron does there
//! (`config set`/`unset`, `add`, `run`, `import`, the gateway), every Hermes
//! setting reads back identical through Hermes's own loader (PyYAML), the
//! comments and quoting of `config.yaml` survive, and `hermes cron list`
//! still shows Hermes's jobs.

use crate::support::hermes::HermesHome;
use crate::support::rows::execution_id_in;
use serde_json::Value;
use std::fs;

/// Lines a Hermes user wrote by hand, which PyYAML reads with care: quoted
/// words that YAML 1.1 would read as booleans or a date, an anchor and an
/// alias, a flow list, comments.
const HAND_WRITTEN: &str = "\
# my own notes, keep them
notes:
  mode: \"off\"      # a string, not false
  confirm: 'yes'
  since: \"2026-01-01\"
  tags: [a, b]
anchors:
  base: &base {x: 1}
  copy: *base
";

/// `value` without the keys hermes-cron owns.
fn without_ours(mut value: Value) -> Value {
    if let Some(gw) = value.get_mut("gateway").and_then(Value::as_object_mut) {
        gw.retain(|k, _| !k.starts_with("loop_watchdog"));
    }
    if let Some(cron) = value.get_mut("cron").and_then(Value::as_object_mut) {
        cron.remove("require_restart_safe_scope");
    }
    if let Some(root) = value.as_object_mut() {
        root.retain(|k, v| {
            !(v.as_object().is_some_and(|o| o.is_empty()) && (k == "gateway" || k == "cron"))
        });
    }
    value
}

#[test]
fn hermes_cron_leaves_every_hermes_setting_and_job_as_it_was() {
    let h = HermesHome::new();
    for (k, v) in [
        ("model.default", "fake-model"),
        ("model.provider", "custom"),
        ("model.base_url", "http://127.0.0.1:9/v1"),
        ("timezone", "Europe/Berlin"),
        ("display.personality", "kawaii"),
        ("agent.max_turns", "40"),
    ] {
        let out = h.hermes(&["config", "set", k, v]);
        assert_eq!(out.code, 0, "{out:#?}");
    }
    let config = h.home.config_file();
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str(HAND_WRITTEN);
    fs::write(&config, &text).unwrap();
    let scripts = h.home.path().join("scripts");
    fs::create_dir_all(&scripts).unwrap();
    fs::write(scripts.join("disk.sh"), "#!/bin/sh\ndf -h /\n").unwrap();
    let created = h.hermes(&[
        "cron",
        "create",
        "--name",
        "disk",
        "--script",
        "disk.sh",
        "--no-agent",
        "--deliver",
        "local",
        "every 1h",
    ]);
    assert!(created.stdout.contains("Created job"), "{created:#?}");
    let before = h.raw_config();
    let jobs_before = fs::read(h.home.path().join("cron/jobs.json")).unwrap();
    assert_eq!(
        before["notes"]["mode"], "off",
        "PyYAML reads the hand-written file: {before:#}"
    );

    // hermes-cron does everything it does, in the same home.
    let ours = &h.home;
    ours.run(&["config", "set", "gateway.loop_watchdog_max_strikes", "5"])
        .ok();
    ours.run(&["config", "set", "cron.require_restart_safe_scope", "true"])
        .ok();
    ours.run(&["config", "unset", "cron.require_restart_safe_scope"])
        .ok();
    let listed = ours.run(&["list"]).ok();
    assert!(
        !listed.stderr.contains("unknown config key"),
        "Hermes's keys are not ours to warn about: {listed}"
    );
    ours.add("backup", "every 1h", &[], &["true"]);
    let ran = ours.run(&["run", "backup", "--wait"]).ok();
    assert!(ours.row(&execution_id_in(&ran.stdout)).is_some());
    let jobs = ours.path().join("cron/jobs.json");
    ours.run(&["import", jobs.to_str().unwrap(), "--dry-run"])
        .ok();
    let mut gw = ours.gateway(&[]);
    gw.wait_ready();
    gw.stop();

    // Every Hermes setting reads back identical through Hermes's own code.
    let after = h.raw_config();
    assert_eq!(
        after["gateway"]["loop_watchdog_max_strikes"], 5,
        "{after:#}"
    );
    assert_eq!(without_ours(after), without_ours(before));
    // The file itself: Hermes's lines and the hand-written ones survive, comments included.
    let now = fs::read_to_string(&config).unwrap();
    for line in text.lines() {
        assert!(now.contains(line), "lost {line:?}:\n{now}");
    }
    // Hermes's jobs are untouched and still listed by Hermes.
    assert_eq!(fs::read(&jobs).unwrap(), jobs_before, "jobs.json changed");
    let list = h.hermes(&["cron", "list"]);
    assert!(list.stdout.contains("disk"), "{list:#?}");
}
