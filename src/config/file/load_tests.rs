//! Tests of `load` through the real file.

use super::super::*;
use super::edit_tests::zones;
use hermes_cron_core::config::{Config, ConfigWarning, load_bytes};
use std::fs;
use std::path::Path;
use std::time::Duration;

/// A config file with `text` in a fresh temp dir (kept alive by the guard).
fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    fs::write(&path, text).unwrap();
    (dir, path)
}

fn load_text(text: &str) -> Loaded {
    let (_dir, path) = file(text);
    load(&path, &zones()).unwrap_or_else(|err| panic!("{text:?}: {err}"))
}

/// The one warning `text` must produce, naming `key`.
fn one_warning(text: &str, key: &str) -> ConfigWarning {
    let loaded = load_text(text);
    assert_eq!(loaded.warnings.len(), 1, "{text:?}: {:?}", loaded.warnings);
    let warning = loaded.warnings[0].clone();
    assert_eq!(warning.key, key, "{text:?}");
    assert!(warning.message.contains(key), "{}", warning.message);
    warning
}

#[test]
fn every_key_defaults_when_the_file_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load(&dir.path().join("absent.yaml"), &zones()).unwrap();
    assert!(loaded.warnings.is_empty());
    let c = loaded.config;
    assert_eq!(c, Config::default());
    assert_eq!(c.timezone, None);
    assert!(!c.cron.require_restart_safe_scope);
    assert!(c.cron.catch_up_missed);
    assert_eq!(c.cron.max_parallel_jobs, None);
    assert_eq!(c.cron.script_timeout_seconds, 3600);
    assert_eq!(c.cron.output_retention, 50);
    assert_eq!(c.cron.output_max_bytes, 8_388_608);
    assert_eq!(c.cron.ledger_retention, 1000);
    assert_eq!(c.cron.heartbeat_interval_s, 5);
    assert!(c.gateway.loop_watchdog);
    assert_eq!(
        c.gateway.loop_watchdog_probe_interval,
        Duration::from_secs(30)
    );
    assert_eq!(
        c.gateway.loop_watchdog_probe_timeout,
        Duration::from_secs(10)
    );
    assert_eq!(c.gateway.loop_watchdog_max_strikes, 3);
    assert_eq!(c.cron.path, "/usr/local/bin:/usr/bin:/bin");
    assert!(c.cron.env.is_empty());
}

#[test]
fn empty_comment_only_and_null_documents_are_all_defaults() {
    for text in [
        "",
        "\n\n",
        "# just a comment\n",
        "null\n",
        "~",
        "---\n",
        "cron:\ngateway: ~\n",
    ] {
        let loaded = load_text(text);
        assert_eq!(loaded.config, Config::default(), "{text:?}");
        assert!(
            loaded.warnings.is_empty(),
            "{text:?}: {:?}",
            loaded.warnings
        );
    }
}

#[test]
fn every_key_loads_from_the_file() {
    let loaded = load_text(
        "timezone: Europe/Paris\n\
         cron:\n  require_restart_safe_scope: true\n  catch_up_missed: false\n  \
         max_parallel_jobs: 4\n  script_timeout_seconds: 60\n  output_retention: 7\n  \
         output_max_bytes: 1024\n  ledger_retention: 10000000\n  heartbeat_interval_s: 300\n  \
         path: /opt/bin:/bin\n  env: {TZ: UTC}\n\
         gateway:\n  loop_watchdog: false\n  loop_watchdog_probe_interval_s: 1\n  \
         loop_watchdog_probe_timeout_s: 600\n  loop_watchdog_max_strikes: 1000\n",
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = loaded.config;
    assert_eq!(c.timezone.as_deref(), Some("Europe/Paris"));
    assert!(c.cron.require_restart_safe_scope && !c.cron.catch_up_missed);
    assert_eq!(c.cron.max_parallel_jobs, Some(4));
    assert_eq!(c.cron.script_timeout_seconds, 60);
    assert_eq!(c.cron.output_retention, 7);
    assert_eq!(c.cron.output_max_bytes, 1024);
    assert_eq!(c.cron.ledger_retention, 10_000_000);
    assert_eq!(c.cron.heartbeat_interval_s, 300);
    assert_eq!(c.cron.path, "/opt/bin:/bin");
    assert_eq!(c.cron.env.0, [("TZ".to_string(), "UTC".to_string())]);
    assert!(!c.gateway.loop_watchdog);
    assert_eq!(
        c.gateway.loop_watchdog_probe_interval,
        Duration::from_secs(1)
    );
    assert_eq!(
        c.gateway.loop_watchdog_probe_timeout,
        Duration::from_secs(600)
    );
    assert_eq!(c.gateway.loop_watchdog_max_strikes, 1000);
}

#[test]
fn dotted_key_beats_nested_form_in_either_order() {
    for text in [
        "gateway.loop_watchdog_max_strikes: 5\ngateway:\n  loop_watchdog_max_strikes: 3\n",
        "gateway:\n  loop_watchdog_max_strikes: 3\ngateway.loop_watchdog_max_strikes: 5\n",
    ] {
        let loaded = load_text(text);
        assert_eq!(loaded.config.gateway.loop_watchdog_max_strikes, 5, "{text}");
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    }
    // An invalid dotted value still wins: default, one warning, nested ignored.
    let text = "gateway.loop_watchdog_max_strikes: 0\ngateway: {loop_watchdog_max_strikes: 9}\n";
    one_warning(text, "gateway.loop_watchdog_max_strikes");
    assert_eq!(load_text(text).config.gateway.loop_watchdog_max_strikes, 3);
}

#[test]
fn infinite_probe_interval_falls_back_with_one_warning() {
    let text = "gateway: {loop_watchdog_probe_interval_s: .inf}\n";
    let warning = one_warning(text, "gateway.loop_watchdog_probe_interval_s");
    assert!(warning.message.contains(".inf"), "{}", warning.message);
    assert!(warning.message.contains("1 to 3600"), "{}", warning.message);
    let config = load_text(text).config;
    assert_eq!(
        config.gateway.loop_watchdog_probe_interval,
        Duration::from_secs(30)
    );
}

#[test]
fn each_bad_number_gives_exactly_one_warning_and_the_default() {
    let cases = [
        (".nan", ".nan"),
        ("-.inf", "-.inf"),
        ("-1", "-1"),
        ("0", "0"),
        ("1001", "1001"),
        ("1e300", "1e300"),
        ("-1e300", "-1e300"),
        ("99999999999999999999", "99999999999999999999"),
        ("999999999999999999999999999999999999999999", "1e42"),
        ("abc", "\"abc\""),
        ("'-5'", "out of range"),
        ("'1e3'", "\"1e3\""),
        ("2.5", "2.5"),
        ("'2.5'", "not a whole number"),
        ("true", "true"),
        ("null", "null"),
        ("[1, 2]", "a list"),
        ("{a: 1}", "a mapping"),
        ("!custom 5", "a value tagged !custom"),
    ];
    let key = "gateway.loop_watchdog_max_strikes";
    for (yaml, shown) in cases {
        for text in [
            format!("{key}: {yaml}\n"),
            format!("gateway:\n  loop_watchdog_max_strikes: {yaml}\n"),
        ] {
            let warning = one_warning(&text, key);
            assert!(
                warning.message.contains(shown),
                "{text}: {}",
                warning.message
            );
            assert!(warning.message.contains("1 to 1000"), "{}", warning.message);
            assert!(warning.message.contains("default 3"), "{}", warning.message);
            let loaded = load_text(&text);
            assert_eq!(loaded.config.gateway.loop_watchdog_max_strikes, 3, "{text}");
        }
    }
}

#[test]
fn integral_floats_are_accepted_for_integer_keys() {
    let loaded =
        load_text("gateway.loop_watchdog_probe_interval_s: 30.0\ncron.output_max_bytes: 2048.0\n");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.config.gateway.loop_watchdog_probe_interval,
        Duration::from_secs(30)
    );
    assert_eq!(loaded.config.cron.output_max_bytes, 2048);
}

#[test]
fn bad_values_of_other_types_warn_once_each() {
    let loaded = load_text(
        "timezone: Mars/Olympus\ncron.catch_up_missed: maybe\ncron.max_parallel_jobs: 0\n\
         cron.output_max_bytes: 1023\ncron.script_timeout_seconds: 2592001\n",
    );
    let keys: Vec<&str> = loaded.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "timezone",
            "cron.catch_up_missed",
            "cron.max_parallel_jobs",
            "cron.script_timeout_seconds",
            "cron.output_max_bytes"
        ]
    );
    assert_eq!(loaded.config, Config::default());
}

#[test]
fn max_parallel_jobs_accepts_null_and_unbounded() {
    for text in [
        "cron.max_parallel_jobs: null\n",
        "cron: {max_parallel_jobs: unbounded}\n",
    ] {
        let loaded = load_text(text);
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert_eq!(loaded.config.cron.max_parallel_jobs, None);
    }
}

#[test]
fn only_near_misses_of_our_keys_and_odd_sections_warn() {
    let loaded = load_text(
        "colour: blue\ncron.max_paralel_jobs: 2\ngateway:\n  extra: 1\n  loop_watchdog: false\n\
         model: {default: gpt}\ncron: {provider: hermes-cron, requre_restart_safe_scope: true}\n\
         gatewy: {loop_watchdog_max_strikes: 5}\nloop_watchdog_max_strikes: 4\n",
    );
    let keys: Vec<&str> = loaded.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "cron.max_paralel_jobs",
            "cron.requre_restart_safe_scope",
            "gatewy.loop_watchdog_max_strikes",
            "loop_watchdog_max_strikes"
        ]
    );
    for (warning, ours) in loaded.warnings.iter().zip([
        "cron.max_parallel_jobs",
        "cron.require_restart_safe_scope",
        "gateway.loop_watchdog_max_strikes",
        "gateway.loop_watchdog_max_strikes",
    ]) {
        let wanted = format!("did you mean `{ours}`");
        assert!(warning.message.contains(&wanted), "{}", warning.message);
    }
    assert!(!loaded.config.gateway.loop_watchdog);
    assert!(!loaded.config.cron.require_restart_safe_scope);

    let loaded = load_text("cron: 5\ncron.output_retention: 9\n");
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert_eq!(loaded.warnings[0].key, "cron");
    assert_eq!(loaded.config.cron.output_retention, 9);
}

/// A Hermes home's config.yaml: every key of Hermes 0.19.0's DEFAULT_CONFIG,
/// as Hermes writes it (`timezone: ''`, `cron.max_parallel_jobs: null`,
/// `cron.output_retention: 50`, hundreds of keys that are not ours).
#[test]
fn a_hermes_config_loads_without_a_warning() {
    let text = include_str!("../../../core/src/config/testdata/hermes-0.19.0-default-config.yaml");
    let loaded = load_text(text);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // Hermes's defaults of the keys both read are ours too (50 outputs kept).
    assert_eq!(loaded.config, Config::default());
}

/// The values Hermes's `config set` writes for our keys (YAML 1.1 words,
/// quoted numbers, fractional seconds) load as meant.
#[test]
fn hermes_spellings_load() {
    let loaded = load_text(
        "timezone: europe/london\n\
         cron: {require_restart_safe_scope: 'on', catch_up_missed: No, max_parallel_jobs: '20'}\n\
         gateway:\n  loop_watchdog: 'off'\n  loop_watchdog_probe_interval_s: '2.5'\n  \
         loop_watchdog_probe_timeout_s: 2.5\n  loop_watchdog_max_strikes: '5'\n",
    );
    let c = loaded.config;
    assert_eq!(c.timezone.as_deref(), Some("Europe/London"));
    assert!(c.cron.require_restart_safe_scope);
    assert!(!c.cron.catch_up_missed);
    assert_eq!(c.cron.max_parallel_jobs, Some(20));
    assert!(!c.gateway.loop_watchdog);
    assert_eq!(
        c.gateway.loop_watchdog_probe_interval,
        Duration::from_millis(2500)
    );
    assert_eq!(
        c.gateway.loop_watchdog_probe_timeout,
        Duration::from_millis(2500)
    );
    assert_eq!(c.gateway.loop_watchdog_max_strikes, 5);
    // The one value Hermes would not read the same way is said once.
    let keys: Vec<&str> = loaded.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(keys, ["timezone"], "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].message.contains("Europe/London"));

    let loaded = load_text("gateway: {loop_watchdog_max_strikes: 5.0, loop_watchdog: YES}\n");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.config.gateway.loop_watchdog_max_strikes, 5);
    assert!(loaded.config.gateway.loop_watchdog);
}

#[test]
fn bad_seconds_warn_once_and_use_the_default() {
    let key = "gateway.loop_watchdog_probe_timeout_s";
    for (yaml, shown) in [
        (".nan", ".nan"),
        (".inf", ".inf"),
        ("0.5", "0.5"),
        ("600.5", "600.5"),
        ("1e300", "1e300"),
        ("'nan'", "\"nan\""),
        ("off", "\"off\""),
        ("~", "null"),
    ] {
        let text = format!("gateway: {{loop_watchdog_probe_timeout_s: {yaml}}}\n");
        let warning = one_warning(&text, key);
        assert!(
            warning.message.contains(shown),
            "{text}: {}",
            warning.message
        );
        assert!(warning.message.contains("1 to 600"), "{}", warning.message);
        assert!(
            warning.message.contains("default 10"),
            "{}",
            warning.message
        );
        let config = load_text(&text).config;
        assert_eq!(
            config.gateway.loop_watchdog_probe_timeout,
            Duration::from_secs(10)
        );
    }
}

#[test]
fn malformed_yaml_is_a_syntax_error_with_line_and_column() {
    let (_dir, path) = file("cron:\n  output_retention: 5\n  bad: [1, 2\n");
    let err = load(&path, &zones()).unwrap_err();
    let ConfigError::Syntax { line, column, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(*line >= 3, "{err}");
    let shown = err.to_string();
    let prefix = format!("{}:{line}:{column}: ", path.display());
    assert!(shown.starts_with(&prefix), "{shown}");
    let repeated = format!(" at line {line} column {column}");
    assert!(!shown.contains(&repeated), "{shown}");

    let (_dir, path) = file("a: 1\n b: 2\n");
    let err = load(&path, &zones()).unwrap_err();
    assert!(
        matches!(err, ConfigError::Syntax { line: 2, .. }),
        "{err:?}"
    );
}

#[test]
fn documents_that_are_not_mappings_are_refused_naming_the_file() {
    for text in [
        "- a\n- b\n",
        "42\n",
        "just a string\n",
        "[cron.output_retention]\n",
    ] {
        let (_dir, path) = file(text);
        let err = load(&path, &zones()).unwrap_err();
        assert!(
            matches!(err, ConfigError::Syntax { .. }),
            "{text:?}: {err:?}"
        );
        assert!(err.to_string().contains("config.yaml"), "{err}");
    }
}

#[test]
fn duplicate_keys_are_refused() {
    for text in [
        "cron.output_retention: 1\ncron.output_retention: 2\n",
        "cron:\n  a: 1\n  a: 2\n",
        "timezone: UTC\ntimezone: Europe/Berlin\n",
        "cron:\n  output_retention: 1\ncron:\n  output_retention: 2\n",
    ] {
        let (_dir, path) = file(text);
        let err = load(&path, &zones()).unwrap_err();
        assert!(err.to_string().contains("duplicate"), "{text:?}: {err}");
    }
}

/// Another program's key given twice (Hermes's own `model:`) is PyYAML's
/// business, which keeps the last: it never stops hermes-cron.
#[test]
fn a_duplicate_key_of_hermes_is_not_ours_to_refuse() {
    let text = "model:\n  default: a\nmodel:\n  default: b\ncron:\n  output_retention: 7\n";
    let (_dir, path) = file(text);
    let loaded = load(&path, &zones()).unwrap();
    assert_eq!(loaded.config.cron.output_retention, 7);
}

#[test]
fn fuzzish_inputs_never_panic() {
    let deep = "[".repeat(10_000);
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
                c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
                e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
    let inputs: Vec<Vec<u8>> = vec![
        deep.clone().into_bytes(),
        format!("cron.output_retention: {deep}").into_bytes(),
        bomb.as_bytes().to_vec(),
        b"\xff\xfe\x00garbage".to_vec(),
        b"\x00\x01\x02".to_vec(),
        b"---\na: 1\n---\nb: 2\n".to_vec(),
        b"? [complex, key]\n: 1\n".to_vec(),
        b"cron: {? [x] : 1}\n".to_vec(),
        b"1: 2\ntrue: 3\nnull: 4\n".to_vec(),
        b"<<: {cron.output_retention: 4}\n".to_vec(),
        b"timezone: !!binary aGVsbG8=\n".to_vec(),
        b"cron.output_retention: 0x10\n".to_vec(),
        b"cron.output_retention: +.inf\n".to_vec(),
        b"\t\t: :\n".to_vec(),
        b"'unterminated\n".to_vec(),
        (0..5_000)
            .map(|i| format!("k{i}: {i}\n"))
            .collect::<String>()
            .into_bytes(),
    ];
    for bytes in inputs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        fs::write(&path, &bytes).unwrap();
        // Either outcome is fine; a panic fails the test.
        let _ = load(&path, &zones());
    }
}

#[test]
fn a_directory_in_place_of_the_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(dir.path(), &zones()).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err:?}");
}

/// Found by `tests/fuzz` (config target): a tagged empty key. YAML's empty
/// key "" is an unknown key like any other, and not a near miss of ours: no
/// warning, no panic, defaults everywhere.
#[test]
fn fuzz_empty_tagged_key_is_ignored() {
    let loaded = load_bytes(Path::new("c.yaml"), b"!!2*&\t:\n =========\t\t", &zones()).unwrap();
    assert_eq!(loaded.config, Config::default());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn load_bytes_is_load_without_the_file() {
    let text = "cron:\n  output_retention: 7\n  output_retentoin: 1\n";
    let (_dir, path) = file(text);
    let from_file = load(&path, &zones()).unwrap();
    let from_bytes = load_bytes(&path, text.as_bytes(), &zones()).unwrap();
    assert_eq!(from_bytes.config, from_file.config);
    assert_eq!(from_bytes.warnings, from_file.warnings);
    let err = load_bytes(Path::new("c.yaml"), b"a: [\n", &zones()).unwrap_err();
    assert!(err.to_string().starts_with("c.yaml:"), "{err}");
}
