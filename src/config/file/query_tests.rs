//! Tests of `get` and `show` through the real file.

use hermes_cron_core::config::Secrets;
use std::fs;
use std::path::PathBuf;

use super::super::*;
use super::edit_tests::zones;

fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn get_prints_defaults_and_ignores_invalid_values() {
    let (_dir, path) = file("cron.output_retention: .nan\n");
    assert_eq!(
        get(&path, "cron.output_retention", &zones(), Secrets::Revealed).unwrap(),
        "50"
    );
    assert_eq!(
        get(&path, "cron.max_parallel_jobs", &zones(), Secrets::Revealed).unwrap(),
        "unbounded"
    );
    assert_eq!(
        get(&path, "timezone", &zones(), Secrets::Revealed).unwrap(),
        "system"
    );
    assert_eq!(
        get(&path, "cron.output_max_bytes", &zones(), Secrets::Revealed).unwrap(),
        "8388608"
    );
    assert!(matches!(
        get(&path, "cron", &zones(), Secrets::Revealed),
        Err(ConfigError::Invalid(_))
    ));
}

#[test]
fn show_lists_every_key_with_its_source_aligned() {
    let (_dir, path) = file(
        "cron.output_retention: 7\ngateway: {loop_watchdog_max_strikes: .inf}\nextra: 1\ntimezon: UTC\n",
    );
    let text = show(&path, &zones(), Secrets::Revealed).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), key_table().len() + 1, "{text}");
    let columns: Vec<usize> = lines[..key_table().len()]
        .iter()
        .map(|line| line.find("  # ").unwrap())
        .collect();
    assert!(columns.windows(2).all(|w| w[0] == w[1]), "{text}");
    // (value, source) of the line for `key`.
    let row = |key: &str| {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("{key}:")))
            .unwrap();
        let (left, source) = line.split_once("  # ").unwrap();
        (left.split_whitespace().nth(1).unwrap(), source)
    };
    assert_eq!(row("cron.output_retention"), ("7", "file"), "{text}");
    assert_eq!(
        row("gateway.loop_watchdog_max_strikes"),
        ("3", "file (invalid, default used)"),
        "{text}"
    );
    assert_eq!(row("timezone"), ("system", "default"), "{text}");
    assert_eq!(
        row("cron.max_parallel_jobs"),
        ("unbounded", "default"),
        "{text}"
    );
    assert_eq!(
        lines[key_table().len()],
        "# unknown key, ignored: timezon (did you mean timezone?)"
    );
}

#[test]
fn get_and_show_print_fractional_seconds_and_canonical_zones() {
    let (_dir, path) = file(
        "timezone: asia/tokyo\ngateway: {loop_watchdog_probe_timeout_s: '2.5', loop_watchdog: 'off'}\n",
    );
    assert_eq!(
        get(
            &path,
            "gateway.loop_watchdog_probe_timeout_s",
            &zones(),
            Secrets::Revealed
        )
        .unwrap(),
        "2.5"
    );
    assert_eq!(
        get(
            &path,
            "gateway.loop_watchdog_probe_interval_s",
            &zones(),
            Secrets::Revealed
        )
        .unwrap(),
        "30"
    );
    assert_eq!(
        get(&path, "gateway.loop_watchdog", &zones(), Secrets::Revealed).unwrap(),
        "false"
    );
    assert_eq!(
        get(&path, "timezone", &zones(), Secrets::Revealed).unwrap(),
        "Asia/Tokyo"
    );
    let text = show(&path, &zones(), Secrets::Revealed).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("gateway.loop_watchdog_probe_timeout_s:"))
        .unwrap();
    assert_eq!(line.split_whitespace().nth(1), Some("2.5"), "{text}");
}

#[test]
fn show_output_loads_back_to_the_same_config() {
    let (_dir, path) = file(
        "timezone: Asia/Tokyo\ncron: {max_parallel_jobs: 3, catch_up_missed: false, path: /opt/bin:/bin, \
         env: {TZ: Europe/Berlin, N: 5, ON: 'off', URL: 'http://x:1/#a'}}\n\
         gateway: {loop_watchdog_probe_interval_s: 0.25e1}\n",
    );
    let text = show(&path, &zones(), Secrets::Revealed).unwrap();
    let (_dir, copy) = file(&text);
    let reloaded = load(&copy, &zones()).unwrap();
    assert!(reloaded.warnings.is_empty(), "{:?}", reloaded.warnings);
    assert_eq!(reloaded.config, load(&path, &zones()).unwrap().config);
}
