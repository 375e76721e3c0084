//! Tests of `set` and `unset` through the real file.

use hermes_cron_core::config::Secrets;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::super::*;
use hermes_cron_core::config::Config;
use hermes_cron_core::schedule::ZoneTable;

/// The zones these tests read `timezone` in: the compiled-in ones, so what
/// they expect does not depend on the host's zoneinfo.
pub(super) fn zones() -> ZoneTable {
    ZoneTable::compiled_in_only()
}

pub(super) fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    fs::write(&path, text).unwrap();
    (dir, path)
}

pub(super) fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

pub(super) fn invalid_message(err: ConfigError) -> String {
    match err {
        ConfigError::Invalid(message) => message,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn dir_names(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const KEEP: &str = "# my settings\ngateway.loop_watchdog_max_strikes: 4  # four\n";

#[test]
fn set_refuses_nan_and_leaves_the_file_byte_identical() {
    let (_dir, path) = file(KEEP);
    let key = "gateway.loop_watchdog_max_strikes";
    for value in [
        "nan", ".nan", ".inf", "-.inf", "0", "1001", "-1", "2.5", "abc", "1e300", "", "[1]",
    ] {
        let message = invalid_message(set(&path, key, value, &zones()).unwrap_err());
        assert!(message.contains(key), "{message}");
        assert!(message.contains(&format!("`{value}`")), "{message}");
        assert!(message.contains("from 1 to 1000"), "{message}");
    }
    assert_eq!(read(&path), KEEP);
    assert_eq!(dir_names(&path), ["config.yaml"]);
}

#[test]
fn set_refuses_bad_booleans_zones_and_unparsable_values() {
    let (_dir, path) = file(KEEP);
    for (key, value) in [
        ("cron.catch_up_missed", "maybe"),
        ("cron.catch_up_missed", "1"),
        ("cron.catch_up_missed", "y"),
        ("gateway.loop_watchdog_probe_timeout_s", "0.5"),
        ("gateway.loop_watchdog_probe_timeout_s", "nan"),
        ("timezone", "europe/pariss"),
        ("timezone", "Mars/Olympus"),
        ("timezone", "5"),
        ("cron.max_parallel_jobs", "0"),
        ("cron.output_max_bytes", "1023"),
        ("cron.output_retention", "'unterminated"),
        ("cron.output_retention", "a: b"),
    ] {
        let message = invalid_message(set(&path, key, value, &zones()).unwrap_err());
        assert!(
            message.contains(key) && message.contains(value),
            "{message}"
        );
    }
    assert_eq!(read(&path), KEEP);
}

#[test]
fn set_refuses_unknown_keys_naming_close_ones() {
    let (_dir, path) = file(KEEP);
    let message = invalid_message(set(&path, "cron.max_paralel_jobs", "2", &zones()).unwrap_err());
    assert!(message.contains("`cron.max_paralel_jobs`"), "{message}");
    assert!(
        message.contains("did you mean `cron.max_parallel_jobs`"),
        "{message}"
    );
    assert!(message.contains("valid keys:"), "{message}");
    assert_eq!(read(&path), KEEP);
}

#[test]
fn set_never_clobbers_a_malformed_file() {
    let text = "cron: [1, 2\n# precious\n";
    let (_dir, path) = file(text);
    let err = set(&path, "cron.output_retention", "5", &zones()).unwrap_err();
    assert!(matches!(err, ConfigError::Syntax { .. }), "{err:?}");
    assert!(matches!(
        unset(&path, "cron.output_retention"),
        Err(ConfigError::Syntax { .. })
    ));
    assert_eq!(read(&path), text);
    let (_dir, path) = file("- a list\n");
    assert!(set(&path, "cron.output_retention", "5", &zones()).is_err());
    assert_eq!(read(&path), "- a list\n");
}

#[test]
fn set_keeps_unrelated_and_unknown_keys() {
    let (_dir, path) = file(
        "model: gpt\ncron:\n  output_retention: 5\n  mystery: [1, 2]\nplugins:\n  a: {b: c}\n",
    );
    set(&path, "cron.heartbeat_interval_s", "7", &zones()).unwrap();
    let value: serde_yaml::Value = serde_yaml::from_str(&read(&path)).unwrap();
    assert_eq!(value["model"], "gpt");
    assert_eq!(value["cron"]["output_retention"], 5);
    assert_eq!(value["cron"]["mystery"][1], 2);
    assert_eq!(value["cron"]["heartbeat_interval_s"], 7);
    assert_eq!(value["plugins"]["a"]["b"], "c");
    let keys: Vec<&str> = value
        .as_mapping()
        .unwrap()
        .keys()
        .filter_map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["model", "cron", "plugins"]);
}

#[test]
fn set_updates_the_dotted_form_when_present_else_nested() {
    let (_dir, path) =
        file("gateway.loop_watchdog_max_strikes: 4\ngateway: {loop_watchdog: true}\n");
    set(&path, "gateway.loop_watchdog_max_strikes", "6", &zones()).unwrap();
    set(
        &path,
        "gateway.loop_watchdog_probe_timeout_s",
        "20",
        &zones(),
    )
    .unwrap();
    let value: serde_yaml::Value = serde_yaml::from_str(&read(&path)).unwrap();
    assert_eq!(value["gateway.loop_watchdog_max_strikes"], 6);
    assert!(value["gateway"].get("loop_watchdog_max_strikes").is_none());
    assert_eq!(value["gateway"]["loop_watchdog_probe_timeout_s"], 20);
    // A section that is not a mapping is left alone; the dotted form is written.
    let (_dir, path) = file("cron: off\n");
    set(&path, "cron.output_retention", "9", &zones()).unwrap();
    assert_eq!(read(&path), "cron: off\ncron.output_retention: 9\n");
    assert_eq!(
        load(&path, &zones()).unwrap().config.cron.output_retention,
        9
    );
}

#[test]
fn set_creates_the_file_0600_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home").join("config.yaml");
    set(&path, "cron.max_parallel_jobs", "4", &zones()).unwrap();
    assert_eq!(read(&path), "cron:\n  max_parallel_jobs: 4\n");
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    set(&path, "cron.output_retention", "8", &zones()).unwrap();
    assert_eq!(dir_names(&path), ["config.yaml"]);
}

#[test]
fn set_writes_canonical_values() {
    let (_dir, path) = file("");
    set(
        &path,
        "gateway.loop_watchdog_probe_interval_s",
        "30.0",
        &zones(),
    )
    .unwrap();
    set(&path, "cron.max_parallel_jobs", "unbounded", &zones()).unwrap();
    set(&path, "timezone", "system", &zones()).unwrap();
    assert_eq!(
        read(&path),
        "gateway:\n  loop_watchdog_probe_interval_s: 30\ncron:\n  max_parallel_jobs: null\ntimezone: null\n"
    );
    assert!(load(&path, &zones()).unwrap().warnings.is_empty());
}

#[test]
fn every_key_round_trips_through_set_and_get() {
    let (_dir, path) = file("");
    let values = [
        ("timezone", "America/New_York"),
        ("cron.require_restart_safe_scope", "true"),
        ("cron.catch_up_missed", "false"),
        ("cron.max_parallel_jobs", "100000"),
        ("cron.script_timeout_seconds", "2592000"),
        ("cron.output_retention", "1"),
        ("cron.output_max_bytes", "1073741824"),
        ("cron.ledger_retention", "10000000"),
        ("cron.heartbeat_interval_s", "300"),
        ("cron.staging_max_workers", "0"),
        ("cron.staging_lead_min_s", "0.25"),
        ("cron.staging_lead_max_s", "3600"),
        ("gateway.loop_watchdog", "false"),
        ("gateway.loop_watchdog_probe_interval_s", "3600"),
        ("gateway.loop_watchdog_probe_timeout_s", "600"),
        ("gateway.loop_watchdog_max_strikes", "1000"),
        ("cron.alert_on", "failed,recovered,late"),
        ("cron.alert_after", "1000"),
        (
            "cron.alert_command",
            "notify-send \"$HERMES_CRON_ALERT_SUMMARY\"",
        ),
        ("cron.alert_webhook", "https://hooks.example/x?token=1"),
        ("gateway.ping_url", "https://hc-ping.com/abc"),
        ("gateway.ping_command", "curl -fsS https://hc-ping.com/abc"),
        ("gateway.ping_interval_s", "86400"),
        ("gateway.http_listen", "[::1]:9464"),
        ("gateway.http_token", "0123456789abcdef-token"),
        ("gateway.http_token_file", "/etc/hermes-cron/token"),
        ("cron.database", "postgresql://cron@db.example:5432/ledger"),
        ("cron.path", "/opt/tools/bin:/usr/bin:/bin"),
        // `cron.env` is a mapping: one variable at a time.
        ("cron.env.TZ", "Europe/Berlin"),
    ];
    assert_eq!(values.len(), key_table().len());
    for (key, value) in values {
        set(&path, key, value, &zones()).unwrap();
        assert_eq!(
            get(&path, key, &zones(), Secrets::Revealed).unwrap(),
            value,
            "{key}"
        );
    }
    let loaded = load(&path, &zones()).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    for (key, value) in values {
        assert_eq!(
            get(&path, key, &zones(), Secrets::Revealed).unwrap(),
            value,
            "{key} after all sets"
        );
    }
    for (key, _) in values {
        unset(&path, key).unwrap();
    }
    assert_eq!(load(&path, &zones()).unwrap().config, Config::default());
    assert_eq!(read(&path), "{}\n");
    for (key, word) in [
        ("cron.max_parallel_jobs", "unbounded"),
        ("timezone", "system"),
    ] {
        set(&path, key, word, &zones()).unwrap();
        assert_eq!(get(&path, key, &zones(), Secrets::Revealed).unwrap(), word);
    }
}

#[test]
fn unset_removes_both_forms_and_an_emptied_section() {
    let (_dir, path) = file(
        "other: 1\ngateway.loop_watchdog_max_strikes: 5\ngateway:\n  loop_watchdog_max_strikes: 4\n",
    );
    unset(&path, "gateway.loop_watchdog_max_strikes").unwrap();
    assert_eq!(read(&path), "other: 1\n");
    assert_eq!(
        get(
            &path,
            "gateway.loop_watchdog_max_strikes",
            &zones(),
            Secrets::Revealed
        )
        .unwrap(),
        "3"
    );
    let (_dir, path) = file("cron:\n  output_retention: 5\n  heartbeat_interval_s: 9\n");
    unset(&path, "cron.output_retention").unwrap();
    assert_eq!(read(&path), "cron:\n  heartbeat_interval_s: 9\n");
}

#[test]
fn unset_of_an_absent_key_is_a_no_op() {
    let (_dir, path) = file(KEEP);
    unset(&path, "cron.output_retention").unwrap();
    assert_eq!(read(&path), KEEP);
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("config.yaml");
    unset(&missing, "timezone").unwrap();
    assert!(!missing.exists());
}

#[test]
fn unset_removes_a_present_near_miss_and_refuses_other_keys() {
    let text = "# mine\ncron:\n  stale: 1\n  output_retention: 5\n  requre_restart_safe_scope: true\n\
                legacy: x\nloop_watchdog_max_strikes: 4  # bare\nmodel: {default: gpt}\n";
    let (_dir, path) = file(text);
    for key in ["cron.stale", "legacy", "model", "model.default", "cron"] {
        let message = invalid_message(unset(&path, key).unwrap_err());
        assert!(
            message.contains("not a hermes-cron key"),
            "{key}: {message}"
        );
    }
    assert_eq!(read(&path), text, "refused unsets change nothing");
    unset(&path, "cron.requre_restart_safe_scope").unwrap();
    unset(&path, "loop_watchdog_max_strikes").unwrap();
    assert_eq!(
        read(&path),
        "# mine\ncron:\n  stale: 1\n  output_retention: 5\nlegacy: x\nmodel: {default: gpt}\n"
    );
    let message = invalid_message(unset(&path, "cron.output_retentoin").unwrap_err());
    assert!(
        message.contains("did you mean `cron.output_retention`"),
        "{message}"
    );
}

/// The heart of the issue: `set` and `unset` change only the lines of their
/// key; every other byte of a Hermes config survives.
#[test]
fn set_and_unset_change_only_the_lines_of_their_key() {
    let text = "# Hermes config\n\
                model:\n  default: \"gpt-5\"   # quoted on purpose\n\
                approvals: {mode: 'off'}\n\
                defaults: &defaults\n  retries: 3\n\
                agent:\n  <<: *defaults\n  since: \"2026-01-01\"\n\
                cron:\n  provider: hermes-cron\n  # how many to keep\n  output_retention: 7  # seven\n\
                gateway: {strict: yes, loop_watchdog: true}\n";
    let (_dir, path) = file(text);
    set(&path, "cron.output_retention", "9", &zones()).unwrap();
    set(&path, "gateway.loop_watchdog", "off", &zones()).unwrap();
    set(
        &path,
        "gateway.loop_watchdog_probe_timeout_s",
        "2.5",
        &zones(),
    )
    .unwrap();
    set(&path, "timezone", "europe/london", &zones()).unwrap();
    let expected =
        text.replace(
            "output_retention: 7  # seven",
            "output_retention: 9  # seven",
        )
        .replace(
            "gateway: {strict: yes, loop_watchdog: true}",
            "gateway: {strict: yes, loop_watchdog: false, loop_watchdog_probe_timeout_s: 2.5}",
        ) + "timezone: Europe/London\n";
    assert_eq!(read(&path), expected);
    unset(&path, "gateway.loop_watchdog").unwrap();
    unset(&path, "gateway.loop_watchdog_probe_timeout_s").unwrap();
    unset(&path, "timezone").unwrap();
    unset(&path, "cron.output_retention").unwrap();
    let expected = text
        .replace("  output_retention: 7  # seven\n", "")
        .replace("{strict: yes, loop_watchdog: true}", "{strict: yes}");
    assert_eq!(read(&path), expected);
}

#[test]
fn set_writes_into_both_forms_when_the_file_has_both() {
    let (_dir, path) = file(
        "gateway.loop_watchdog_max_strikes: 4\ngateway:\n  loop_watchdog_max_strikes: 3  # old\n",
    );
    set(&path, "gateway.loop_watchdog_max_strikes", "6", &zones()).unwrap();
    assert_eq!(
        read(&path),
        "gateway.loop_watchdog_max_strikes: 6\ngateway:\n  loop_watchdog_max_strikes: 6  # old\n"
    );
}

#[test]
fn set_refuses_a_section_that_is_an_alias_and_a_shared_anchor() {
    let text = "base: &base {output_retention: 5}\ncron: *base\n";
    let (_dir, path) = file(text);
    let message = invalid_message(set(&path, "cron.output_retention", "6", &zones()).unwrap_err());
    assert!(message.contains("alias"), "{message}");
    let message = invalid_message(unset(&path, "cron.output_retention").unwrap_err());
    assert!(message.contains("alias"), "{message}");
    assert_eq!(read(&path), text);
    // Changing an anchored section would change its alias elsewhere too.
    let text = "cron: &c\n  output_retention: 5\nbackup_cron: *c\n";
    let (_dir, path) = file(text);
    let message = invalid_message(set(&path, "cron.output_retention", "6", &zones()).unwrap_err());
    assert!(message.contains("`backup_cron`"), "{message}");
    let message = invalid_message(unset(&path, "cron.output_retention").unwrap_err());
    assert!(message.contains("`backup_cron`"), "{message}");
    assert_eq!(read(&path), text);
    // With the dotted form present, that is where the value goes.
    let text = "base: &base {output_retention: 5}\ncron: *base\ncron.output_retention: 7\n";
    let (_dir, path) = file(text);
    set(&path, "cron.output_retention", "6", &zones()).unwrap();
    assert_eq!(read(&path), text.replace(": 7", ": 6"));
}

#[test]
fn set_accepts_hermes_spellings_and_writes_the_canonical_value() {
    let (_dir, path) = file("# c\n");
    for (key, value, written) in [
        ("gateway.loop_watchdog", "off", "false"),
        ("cron.require_restart_safe_scope", "Yes", "true"),
        ("gateway.loop_watchdog_max_strikes", "5.0", "5"),
        ("gateway.loop_watchdog_probe_timeout_s", "2.5", "2.5"),
        ("gateway.loop_watchdog_probe_interval_s", "'20'", "20"),
        ("timezone", "europe/london", "Europe/London"),
    ] {
        set(&path, key, value, &zones()).unwrap();
        assert_eq!(
            get(&path, key, &zones(), Secrets::Revealed).unwrap(),
            written,
            "{key}"
        );
    }
    assert_eq!(
        read(&path),
        "# c\ngateway:\n  loop_watchdog: false\n  loop_watchdog_max_strikes: 5\n  \
         loop_watchdog_probe_timeout_s: 2.5\n  loop_watchdog_probe_interval_s: 20\n\
         cron:\n  require_restart_safe_scope: true\ntimezone: Europe/London\n"
    );
    assert!(load(&path, &zones()).unwrap().warnings.is_empty());
}

#[test]
fn a_section_with_a_merge_key_gets_its_own_key() {
    let text = "defaults: &d\n  output_retention: 4\ncron:\n  <<: *d\n  provider: hermes-cron\n";
    let (_dir, path) = file(text);
    assert_eq!(
        get(&path, "cron.output_retention", &zones(), Secrets::Revealed).unwrap(),
        "4"
    );
    set(&path, "cron.output_retention", "9", &zones()).unwrap();
    assert_eq!(read(&path), format!("{text}  output_retention: 9\n"));
    assert_eq!(
        get(&path, "cron.output_retention", &zones(), Secrets::Revealed).unwrap(),
        "9"
    );
    unset(&path, "cron.output_retention").unwrap();
    assert_eq!(read(&path), text);
    assert_eq!(
        get(&path, "cron.output_retention", &zones(), Secrets::Revealed).unwrap(),
        "4",
        "the merged value again"
    );
}

#[test]
fn a_multi_line_value_is_replaced_whole() {
    let (_dir, path) = file("a: 1\ntimezone: |\n  Europe/Paris\nb: 2\n");
    set(&path, "timezone", "UTC", &zones()).unwrap();
    assert_eq!(read(&path), "a: 1\ntimezone: UTC\nb: 2\n");
}

#[test]
fn edits_of_odd_documents() {
    for (before, after) in [
        ("", "timezone: UTC\n"),
        ("# only a comment\n", "# only a comment\ntimezone: UTC\n"),
        ("---\n", "---\ntimezone: UTC\n"),
        ("null\n", "\ntimezone: UTC\n"),
        ("{}\n", "{timezone: UTC}\n"),
        ("a: 1", "a: 1\ntimezone: UTC"),
        ("a: 1\r\nb: 2\r\n", "a: 1\r\nb: 2\r\ntimezone: UTC\r\n"),
        (
            "\u{feff}a: 1\nb: 2\n",
            "\u{feff}a: 1\nb: 2\ntimezone: UTC\n",
        ),
        ("timezone: 'Asia/Tokyo'  # q\n", "timezone: UTC  # q\n"),
    ] {
        let (_dir, path) = file(before);
        set(&path, "timezone", "utc", &zones()).unwrap();
        assert_eq!(read(&path), after, "{before:?}");
        unset(&path, "timezone").unwrap();
        let (_dir2, again) = file(after);
        unset(&again, "timezone").unwrap();
        assert!(load(&again, &zones()).unwrap().config.timezone.is_none());
    }
}

mod properties {
    //! `set` and `unset` on generated YAML-shaped documents: they never
    //! panic, and when they write, the key has its new value, no other key of
    //! ours changes, and no line that does not name the key or its section
    //! changes.

    use super::zones;
    use hermes_cron_core::config::{self as pure, load_bytes, validated};
    use proptest::prelude::*;
    use proptest::sample::select;
    use std::path::Path;

    const KEYS: [&str; 18] = [
        "timezone",
        "cron.path",
        "cron.env",
        "cron.require_restart_safe_scope",
        "cron.catch_up_missed",
        "cron.max_parallel_jobs",
        "cron.script_timeout_seconds",
        "cron.output_retention",
        "cron.output_max_bytes",
        "cron.ledger_retention",
        "cron.heartbeat_interval_s",
        "cron.staging_max_workers",
        "cron.staging_lead_min_s",
        "cron.staging_lead_max_s",
        "gateway.loop_watchdog",
        "gateway.loop_watchdog_probe_interval_s",
        "gateway.loop_watchdog_probe_timeout_s",
        "gateway.loop_watchdog_max_strikes",
    ];

    fn words(list: &[&'static str]) -> impl Strategy<Value = String> + Clone + use<> {
        select(list.to_vec()).prop_map(str::to_string)
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u64..2_000).prop_map(|n| n.to_string()),
            words(&[
                ".nan",
                "2.5",
                "30.0",
                "'5'",
                "off",
                "'off'",
                "yes",
                "\"yes\"",
                "true",
                "null",
                "~",
                "",
                "unbounded",
                "system",
                "Europe/Paris",
                "europe/london",
                "2026-01-01",
                "12:30",
                "1_000",
                "0x10",
                "1e3",
                "[1, 2]",
                "{a: 1}",
                "&a 5",
                "*a",
                "!tag x",
                "x  # comment",
                "'it''s'",
                "/opt/bin:/usr/bin",
                "'/usr/bin:/bin'",
                "{TZ: UTC, N: 5}",
                "{1X: a, PATH: b}",
                "\n      TZ: UTC\n      B: 'x'",
            ]),
        ]
    }

    /// The keys `set` takes: ours, and variables of `cron.env`.
    fn settable() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => select(KEYS.to_vec()).prop_map(str::to_string),
            1 => words(&["cron.env.TZ", "cron.env.NEW_ONE", "cron.env.X_TOKEN", "cron.env.1X"]),
        ]
    }

    /// The key of ours that `key` (maybe `cron.env.NAME`) changes.
    fn owner(key: &str) -> &str {
        if key.starts_with("cron.env.") {
            "cron.env"
        } else {
            key
        }
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => select(KEYS.to_vec()).prop_map(str::to_string),
            1 => words(&["cron", "gateway", "model", "cron.provider", "timezon", "<<", "a.b", "cron.env.TZ"]),
        ]
    }

    fn entry() -> impl Strategy<Value = String> {
        prop_oneof![
            (key(), value()).prop_map(|(k, v)| format!("{k}: {v}")),
            (
                words(&["cron", "gateway", "other"]),
                prop::collection::vec((key(), value()), 0..4),
                words(&["  ", "    "]),
                any::<bool>(),
            )
                .prop_map(|(section, entries, indent, flow)| {
                    let leaf = |key: &str| key.rsplit('.').next().unwrap_or_default().to_string();
                    if flow {
                        let inner: Vec<String> = entries
                            .iter()
                            .map(|(k, v)| format!("{}: {}", leaf(k), v.replace('\n', " ")))
                            .collect();
                        format!("{section}: {{{}}}  # flow", inner.join(", "))
                    } else {
                        let mut out = format!("{section}:");
                        for (key, value) in entries {
                            out.push_str(&format!("\n{indent}{}: {value}", leaf(&key)));
                        }
                        out
                    }
                }),
            words(&[
                "# comment",
                "",
                "anchor: &x {output_retention: 4}",
                "alias: *x"
            ]),
        ]
    }

    fn document() -> impl Strategy<Value = String> {
        prop::collection::vec(entry(), 0..7).prop_map(|lines| lines.join("\n") + "\n")
    }

    /// The lines of `text` that do not name `key`'s leaf or section. Not
    /// compared: blank lines (two around a removed entry become one), the
    /// `{}` left when the last key goes, and the lines of a block mapping
    /// value (indented six spaces: they go with the entry they are under,
    /// whose key may be the one edited; `values` compares what they mean).
    fn untouched_lines(text: &str, key: &str) -> Vec<String> {
        let names: Vec<&str> = key.split('.').collect();
        text.lines()
            .filter(|line| !names.iter().any(|name| line.contains(name)))
            .filter(|line| !line.trim().is_empty() && *line != "{}")
            .filter(|line| !line.starts_with("      "))
            .map(str::to_string)
            .collect()
    }

    fn values(text: &str) -> Vec<(&'static str, String)> {
        let path = Path::new("c.yaml");
        let validated = validated(path, Some(text.as_bytes()), &zones()).unwrap();
        KEYS.iter()
            .map(|key| {
                (
                    *key,
                    pure::get(&validated, key, pure::Secrets::Revealed).unwrap(),
                )
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 400,
            max_global_rejects: 1_000_000,
            ..ProptestConfig::default()
        })]

        #[test]
        fn set_changes_only_its_key(doc in document(), key in settable(), value in value()) {
            let path = Path::new("c.yaml");
            prop_assume!(load_bytes(path, doc.as_bytes(), &zones()).is_ok());
            let Ok(text) = pure::set(path, Some(doc.as_bytes()), &key, &value, &zones()) else {
                return Ok(());
            };
            let before = values(&doc);
            let after = values(&text);
            let fresh = pure::set(path, None, &key, &value, &zones()).unwrap();
            for ((name, old), (_, new)) in before.iter().zip(&after) {
                if *name != owner(&key) {
                    prop_assert_eq!(old, new, "{} changed", name);
                } else if *name == key {
                    prop_assert_eq!(new, &values(&fresh).into_iter().find(|(n, _)| n == name).unwrap().1);
                }
            }
            if key != owner(&key) {
                // One variable: it reads back; the others stay as they were.
                let read = pure::get(&validated(path, Some(text.as_bytes()), &zones()).unwrap(), &key, pure::Secrets::Revealed).unwrap();
                prop_assert!(read == value || read == "<redacted>", "{} read {}", key, read);
                let others = |text: &str| {
                    let mut env = validated(path, Some(text.as_bytes()), &zones()).unwrap().loaded.config.cron.env.0;
                    env.retain(|(n, _)| Some(n.as_str()) != key.strip_prefix("cron.env."));
                    env
                };
                prop_assert_eq!(others(&doc), others(&text));
            }
            prop_assert_eq!(untouched_lines(&doc, &key), untouched_lines(&text, &key), "{}", text);
        }

        #[test]
        fn unset_changes_only_its_key(doc in document(), key in key()) {
            let path = Path::new("c.yaml");
            prop_assume!(load_bytes(path, doc.as_bytes(), &zones()).is_ok());
            let Ok(Some(text)) = pure::unset(path, Some(doc.as_bytes()), &key) else {
                return Ok(());
            };
            let before = values(&doc);
            let after = values(&text);
            let defaults = values("");
            for (((name, old), (_, new)), (_, default)) in before.iter().zip(&after).zip(&defaults) {
                if *name == key {
                    prop_assert_eq!(new, default);
                } else if *name == owner(&key) {
                    let after = validated(path, Some(text.as_bytes()), &zones()).unwrap();
                    prop_assert!(pure::get(&after, &key, pure::Secrets::Revealed).is_err(), "{} still set", key);
                } else {
                    prop_assert_eq!(old, new, "{} changed", name);
                }
            }
            prop_assert_eq!(untouched_lines(&doc, &key), untouched_lines(&text, &key), "{}", text);
        }
    }
}
