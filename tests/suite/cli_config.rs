//! `config.yaml` through the real CLI (issue 2): set refuses bad values,
//! bad hand-written values load as the default with exactly one warning,
//! malformed YAML is exit 2 with file:line:column, set keeps unrelated keys
//! and writes 0600, unset restores the default.

use crate::support::TestHome;
use crate::support::cli::warnings_about;
use crate::support::home::mode;

const STRIKES: &str = "gateway.loop_watchdog_max_strikes";
const PROBE: &str = "gateway.loop_watchdog_probe_interval_s";

fn write_config(home: &TestHome, text: &str) {
    std::fs::create_dir_all(home.path()).unwrap();
    std::fs::write(home.config_file(), text).unwrap();
}

fn read_config(home: &TestHome) -> String {
    std::fs::read_to_string(home.config_file()).unwrap()
}

#[test]
fn set_refuses_nan_naming_the_key_and_writes_nothing() {
    let home = TestHome::new();
    for bad in ["nan", ".nan", ".inf", "0", "1001", "lots"] {
        let out = home.run(&["config", "set", STRIKES, bad]).fails_with(2);
        assert!(out.stderr.contains(STRIKES), "{bad}: {out}");
        assert!(out.stderr.contains("1 to 1000"), "{bad}: {out}");
        assert!(
            !home.config_file().exists(),
            "{bad}: refused set wrote a file"
        );
    }
    // With an existing file, a refused set leaves it byte-identical.
    write_config(&home, "# mine\ngateway: {loop_watchdog_max_strikes: 7}\n");
    home.run(&["config", "set", STRIKES, "nan"]).fails_with(2);
    assert_eq!(
        read_config(&home),
        "# mine\ngateway: {loop_watchdog_max_strikes: 7}\n"
    );
    let out = home
        .run(&["config", "set", "gateway.no_such_key", "1"])
        .fails_with(2);
    assert!(out.stderr.contains("gateway.no_such_key"), "{out}");
}

#[test]
fn an_infinite_hand_written_value_loads_as_the_default_with_exactly_one_warning() {
    let home = TestHome::new();
    write_config(&home, "gateway: {loop_watchdog_probe_interval_s: .inf}\n");

    let out = home.run(&["config", "get", PROBE]).ok();
    assert_eq!(out.line(), "30", "{out}");
    assert_eq!(
        warnings_about(&out.stderr, PROBE),
        1,
        "one warning naming the key\n{out}"
    );
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "and nothing else on stderr\n{out}"
    );

    // Any command that loads the config says it once, and still works.
    let out = home.run(&["list"]).ok();
    assert_eq!(warnings_about(&out.stderr, PROBE), 1, "{out}");
    let out = home
        .run(&["add", "--name", "a", "--schedule", "every 5m", "--", "true"])
        .ok();
    assert_eq!(warnings_about(&out.stderr, PROBE), 1, "{out}");

    let out = home.run(&["config", "show"]).ok();
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(PROBE))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains(" 30 ") && line.contains("invalid, default used"),
        "{line}"
    );
    assert_eq!(warnings_about(&out.stderr, PROBE), 1, "{out}");
}

#[test]
fn a_valid_file_gives_no_warnings() {
    let home = TestHome::new();
    write_config(&home, "gateway: {loop_watchdog_probe_interval_s: 45}\n");
    let out = home.run(&["config", "get", PROBE]).ok();
    assert_eq!(out.line(), "45");
    assert_eq!(out.stderr, "", "{out}");
}

#[test]
fn malformed_yaml_exits_2_with_file_line_and_column() {
    let home = TestHome::new();
    write_config(
        &home,
        "cron:\n  output_retention: 5\n  bad: [1, 2\ngateway: {}\n",
    );
    let prefix = format!("{}:", home.config_file().display());
    for args in [
        vec!["config", "get", STRIKES],
        vec!["config", "show"],
        vec!["config", "set", STRIKES, "5"],
        vec!["list"],
        vec!["add", "--name", "a", "--schedule", "every 5m", "--", "true"],
    ] {
        let out = home.run(&args).fails_with(2);
        let at = out
            .stderr
            .find(&prefix)
            .unwrap_or_else(|| panic!("{args:?} names the file\n{out}"));
        let rest = &out.stderr[at + prefix.len()..];
        let mut parts = rest.splitn(3, ':');
        let line: u32 = parts
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{out}"));
        let column: u32 = parts
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{out}"));
        assert!(line >= 3 && column >= 1, "{args:?}: {out}");
    }
    // The refused set did not clobber the file.
    assert!(read_config(&home).contains("bad: [1, 2"));
}

#[test]
fn set_keeps_unrelated_keys_and_writes_0600() {
    let home = TestHome::new();
    write_config(
        &home,
        "timezone: Asia/Tokyo\ncron:\n  output_retention: 7\ncolour: blue\n",
    );
    std::fs::set_permissions(
        home.config_file(),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let out = home.run(&["config", "set", STRIKES, "5"]).ok();
    assert!(out.stdout.contains(&format!("{STRIKES} = 5")), "{out}");
    assert_eq!(mode(&home.config_file()), 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "config.yaml")
        .collect();
    assert!(leftovers.is_empty(), "no temp files left: {leftovers:?}");

    assert_eq!(home.run(&["config", "get", STRIKES]).ok().line(), "5");
    assert_eq!(
        home.run(&["config", "get", "timezone"]).ok().line(),
        "Asia/Tokyo"
    );
    assert_eq!(
        home.run(&["config", "get", "cron.output_retention"])
            .ok()
            .line(),
        "7"
    );
    let text = read_config(&home);
    assert!(
        text.contains("colour: blue"),
        "unknown keys are kept:\n{text}"
    );

    // A fresh home: set creates it 0700 and the file 0600.
    let fresh = TestHome::new();
    fresh
        .run(&["config", "set", "cron.script_timeout_seconds", "600"])
        .ok();
    assert_eq!(mode(fresh.path()), 0o700);
    assert_eq!(mode(&fresh.config_file()), 0o600);
    assert_eq!(
        fresh
            .run(&["config", "get", "cron.script_timeout_seconds"])
            .ok()
            .line(),
        "600"
    );
}

#[test]
fn unset_restores_the_default_and_keeps_the_rest() {
    let home = TestHome::new();
    write_config(
        &home,
        "gateway.loop_watchdog_max_strikes: 9\ngateway:\n  loop_watchdog_max_strikes: 8\n  loop_watchdog: false\n",
    );
    assert_eq!(
        home.run(&["config", "get", STRIKES]).ok().line(),
        "9",
        "dotted wins"
    );
    let out = home.run(&["config", "unset", STRIKES]).ok();
    assert!(out.stdout.contains("3 (default)"), "{out}");
    assert_eq!(home.run(&["config", "get", STRIKES]).ok().line(), "3");
    assert_eq!(
        home.run(&["config", "get", "gateway.loop_watchdog"])
            .ok()
            .line(),
        "false"
    );
    let text = read_config(&home);
    assert!(!text.contains("max_strikes"), "both forms removed:\n{text}");
    // Unsetting again is a no-op success.
    home.run(&["config", "unset", STRIKES]).ok();
}

/// Regression: `config set K -3` was taken by clap as an unknown flag, so the
/// message named neither the key nor its range.
#[test]
fn regression_config_set_negative_value_is_refused_by_range_not_as_a_flag() {
    let home = TestHome::new();
    let out = home.run(&["config", "set", STRIKES, "-3"]).fails_with(2);
    assert!(out.stderr.contains(STRIKES), "{out}");
    assert!(out.stderr.contains("out of range"), "{out}");
    assert!(!home.config_file().exists());
}

/// Regression: `config get` and `config show` printed the default for an
/// invalid value without the warning every other command gives.
#[test]
fn regression_config_get_and_show_warn_about_an_invalid_value() {
    let home = TestHome::new();
    write_config(&home, "cron.output_retention: .nan\n");
    for args in [
        vec!["config", "get", "cron.output_retention"],
        vec!["config", "show"],
    ] {
        let out = home.run(&args).ok();
        assert_eq!(
            warnings_about(&out.stderr, "cron.output_retention"),
            1,
            "{args:?}: {out}"
        );
    }
}

/// A config.yaml as a Hermes user keeps it: comments, quoting that matters
/// to PyYAML (`'off'`, `"yes"`, `"2026-01-01"`, `'12:30'`), an anchor with an
/// alias and a merge key, flow and block mappings, a list, Hermes's own keys
/// next to ours.
const HERMES_CONFIG: &str = r#"# Hermes Agent configuration
# Kept by hand: `hermes config set` would drop these comments.

model:
  default: "gpt-5"          # the model every agent run uses
  provider: custom
  base_url: http://127.0.0.1:18766/v1

approvals:
  mode: 'off'               # quoted: a bare off is a boolean to PyYAML

security: {allow_lazy_installs: false, tirith_enabled: "yes"}

x-retry: &retry
  attempts: 3
  backoff_s: 2.5

delegation:
  <<: *retry
  max_iterations: 20

curator:
  retry: *retry
  since: "2026-01-01"
  window: '12:30'

timezone: Europe/Berlin  # Hermes and hermes-cron both read this

cron:
  provider: hermes-cron
  wrap_response: true
  # hermes-cron's own keys
  output_retention: 20
  max_parallel_jobs: 4

gateway: {strict: false, loop_watchdog: on}

platforms:
  - telegram
  - discord
"#;

/// `config set` and `unset` of several keys through the CLI change only the
/// lines of those keys: every other byte of the file is the same.
#[test]
fn set_and_unset_keep_a_hermes_config_byte_for_byte() {
    let home = TestHome::new();
    write_config(&home, HERMES_CONFIG);
    for (args, printed) in [
        (
            &["set", "gateway.loop_watchdog_probe_timeout_s", "2.5"][..],
            "gateway.loop_watchdog_probe_timeout_s = 2.5",
        ),
        (
            &["set", "gateway.loop_watchdog", "off"],
            "gateway.loop_watchdog = false",
        ),
        (
            &["set", "cron.output_retention", "30"],
            "cron.output_retention = 30",
        ),
        (
            &["set", "timezone", "europe/london"],
            "timezone = Europe/London",
        ),
        (
            &["set", "cron.require_restart_safe_scope", "yes"],
            "cron.require_restart_safe_scope = true",
        ),
        (
            &["unset", "cron.max_parallel_jobs"],
            "cron.max_parallel_jobs = unbounded (default)",
        ),
        (
            &["set", "gateway.loop_watchdog_max_strikes", "5"],
            "gateway.loop_watchdog_max_strikes = 5",
        ),
        (
            &["unset", "gateway.loop_watchdog_probe_timeout_s"],
            "gateway.loop_watchdog_probe_timeout_s = 10 (default)",
        ),
    ] {
        let out = home.run(&[&["config"], args].concat()).ok();
        assert_eq!(out.line(), printed, "{args:?}: {out}");
        assert_eq!(
            out.stderr, "",
            "no warning for Hermes's keys: {args:?}: {out}"
        );
    }
    let expected = HERMES_CONFIG
        .replace(
            "timezone: Europe/Berlin  # Hermes",
            "timezone: Europe/London  # Hermes",
        )
        .replace(
            "  output_retention: 20\n  max_parallel_jobs: 4\n",
            "  output_retention: 30\n  require_restart_safe_scope: true\n",
        )
        .replace(
            "gateway: {strict: false, loop_watchdog: on}",
            "gateway: {strict: false, loop_watchdog: false, loop_watchdog_max_strikes: 5}",
        );
    let text = read_config(&home);
    assert_eq!(text, expected);
    assert_eq!(mode(&home.config_file()), 0o600);
    // Line by line: only the four edited lines differ, and one is gone.
    let changed: Vec<(&str, &str)> = HERMES_CONFIG
        .lines()
        .filter(|l| !l.contains("max_parallel_jobs"))
        .zip(
            text.lines()
                .filter(|l| !l.contains("require_restart_safe_scope")),
        )
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed.len(), 3, "{changed:#?}");

    for (key, value) in [
        ("timezone", "Europe/London"),
        ("gateway.loop_watchdog", "false"),
        ("gateway.loop_watchdog_max_strikes", "5"),
        ("gateway.loop_watchdog_probe_timeout_s", "10"),
        ("cron.output_retention", "30"),
        ("cron.require_restart_safe_scope", "true"),
        ("cron.max_parallel_jobs", "unbounded"),
    ] {
        let out = home.run(&["config", "get", key]).ok();
        assert_eq!(out.line(), value, "{key}: {out}");
        assert_eq!(out.stderr, "", "{out}");
    }
    pyyaml_sees_only_the_edits(HERMES_CONFIG, &text);
}

/// When the hermes-agent venv is at hand (`HERMES_CRON_TEST_HERMES_VENV`, set
/// by `tests/run-all.sh`, else the development machine's): what PyYAML, and so
/// Hermes, reads from the edited file differs from what it read before only
/// in the edited keys, and the edited values have the intended types.
fn pyyaml_sees_only_the_edits(before: &str, after: &str) {
    let venv = std::env::var_os("HERMES_CRON_TEST_HERMES_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("/work/cache/hermes-venv"));
    let python = venv.join("bin/python");
    let python = python.exists().then_some(python);
    let Some(python) = python else {
        eprintln!("no Python with PyYAML: not re-checked with PyYAML");
        return;
    };
    let script = r#"
import sys, yaml
before = yaml.safe_load(open(sys.argv[1]))
after = yaml.safe_load(open(sys.argv[2]))
before["timezone"] = "Europe/London"
before["cron"]["output_retention"] = 30
del before["cron"]["max_parallel_jobs"]
before["cron"]["require_restart_safe_scope"] = True
before["gateway"]["loop_watchdog"] = False
before["gateway"]["loop_watchdog_max_strikes"] = 5
assert after == before, (after, before)
assert after["curator"]["since"] == "2026-01-01" and after["approvals"]["mode"] == "off"
assert after["security"]["tirith_enabled"] == "yes" and after["delegation"]["attempts"] == 3
print("same")
"#;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        dir.path().join("before.yaml"),
        dir.path().join("after.yaml"),
    );
    std::fs::write(&a, before).unwrap();
    std::fs::write(&b, after).unwrap();
    let out = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(out.status.success(), "PyYAML: {out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "same");
}

/// What `hermes config set` (Hermes 0.19.0) writes for our keys, and values
/// a user writes the way PyYAML reads them, load as meant.
#[test]
fn hermes_spellings_of_our_keys_load_as_meant() {
    let home = TestHome::new();
    // Written by `hermes config set` K V for each key below (verified).
    write_config(
        &home,
        "gateway:\n  loop_watchdog: false\n  loop_watchdog_probe_timeout_s: 2.5\n  \
         loop_watchdog_probe_interval_s: 20\n  loop_watchdog_max_strikes: 5\ncron:\n  \
         require_restart_safe_scope: true\n  max_parallel_jobs: 4\ntimezone: Europe/London\n",
    );
    for (key, value) in [
        ("gateway.loop_watchdog", "false"),
        ("gateway.loop_watchdog_probe_timeout_s", "2.5"),
        ("gateway.loop_watchdog_probe_interval_s", "20"),
        ("gateway.loop_watchdog_max_strikes", "5"),
        ("cron.require_restart_safe_scope", "true"),
        ("timezone", "Europe/London"),
    ] {
        let out = home.run(&["config", "get", key]).ok();
        assert_eq!(out.line(), value, "{key}: {out}");
        assert_eq!(out.stderr, "", "{out}");
    }
    // Hand-written YAML 1.1 spellings, quoted or not.
    write_config(
        &home,
        "gateway: {loop_watchdog: 'OFF', loop_watchdog_probe_interval_s: '2.5', \
         loop_watchdog_max_strikes: '5'}\ncron: {require_restart_safe_scope: on}\n",
    );
    for (key, value) in [
        ("gateway.loop_watchdog", "false"),
        ("gateway.loop_watchdog_probe_interval_s", "2.5"),
        ("gateway.loop_watchdog_max_strikes", "5"),
        ("cron.require_restart_safe_scope", "true"),
    ] {
        let out = home.run(&["config", "get", key]).ok();
        assert_eq!(out.line(), value, "{key}: {out}");
        assert_eq!(out.stderr, "", "{out}");
    }
    // `--tz europe/london` is accepted, and so is the same for `timezone`.
    let out = home
        .run(&["config", "set", "timezone", "europe/london"])
        .ok();
    assert_eq!(out.line(), "timezone = Europe/London", "{out}");
    assert!(read_config(&home).ends_with("timezone: Europe/London\n"));
    // A POSIX TZ string, as `--tz` takes it: written quoted (in a flow
    // mapping its commas would split it), used, and said once to be
    // unreadable by Hermes, which reads zone names only.
    let posix = "CET-1CEST,M3.5.0,M10.5.0/3";
    let out = home.run(&["config", "set", "timezone", posix]).ok();
    assert_eq!(out.line(), format!("timezone = {posix}"), "{out}");
    assert_eq!(warnings_about(&out.stderr, "POSIX TZ string"), 1, "{out}");
    assert!(read_config(&home).ends_with(&format!("timezone: '{posix}'\n")));
    let out = home
        .run(&["config", "set", "timezone", ":Europe/Berlin"])
        .ok();
    assert_eq!(out.line(), "timezone = Europe/Berlin", "{out}");
    assert_eq!(out.stderr, "", "{out}");
    // A bad fraction is still refused, naming the range.
    let out = home
        .run(&[
            "config",
            "set",
            "gateway.loop_watchdog_probe_timeout_s",
            "0.5",
        ])
        .fails_with(2);
    assert!(out.stderr.contains("from 1 to 600"), "{out}");
}

/// Only our keys are ours: Hermes's keys (hundreds) give no warning; a near
/// miss of one of ours gives exactly one, with the key it resembles.
#[test]
fn unknown_keys_warn_only_when_they_look_like_ours() {
    let home = TestHome::new();
    write_config(
        &home,
        "model: {default: gpt-5}\nagent: {max_turns: 90}\nsecurity: {tirith_enabled: false}\n\
         cron: {provider: hermes-cron, chronos: {portal_url: x}, wrap_response: true, \
         requre_restart_safe_scope: true}\ngateway: {strict: true, loop_watchdg: false}\n\
         loop_watchdog_max_strikes: 4\ncolour: blue\n",
    );
    let out = home.run(&["config", "get", "timezone"]).ok();
    for (typo, ours) in [
        (
            "cron.requre_restart_safe_scope",
            "cron.require_restart_safe_scope",
        ),
        ("gateway.loop_watchdg", "gateway.loop_watchdog"),
        (
            "loop_watchdog_max_strikes",
            "gateway.loop_watchdog_max_strikes",
        ),
    ] {
        let warned: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("warning: ") && l.contains(&format!("`{typo}`")))
            .collect();
        assert_eq!(warned.len(), 1, "{typo}: {out}");
        assert!(
            warned[0].contains(&format!("did you mean `{ours}`")),
            "{out}"
        );
    }
    assert_eq!(
        out.stderr.lines().count(),
        3,
        "nothing about Hermes's keys: {out}"
    );
    // `unset` cleans up a near miss, and leaves Hermes's keys alone.
    let out = home.run(&["config", "unset", "gateway.loop_watchdg"]).ok();
    assert_eq!(out.line(), "gateway.loop_watchdg removed", "{out}");
    let out = home
        .run(&["config", "unset", "agent.max_turns"])
        .fails_with(2);
    assert!(out.stderr.contains("not a hermes-cron key"), "{out}");
    assert!(read_config(&home).contains("agent: {max_turns: 90}"));
    assert!(read_config(&home).contains("gateway: {strict: true}"));
}

/// `config get` and `show` never print a token or a webhook or ping URL in
/// full (a URL keeps its scheme and host); `--reveal` does, for the owner.
#[test]
fn config_get_and_show_mask_secrets_unless_revealed() {
    let h = TestHome::new();
    let token = "tok-0123456789abcdef-secret";
    let hook = "https://hooks.example/services/T0K3N/s3cr3t?sig=abc";
    h.config_set("gateway.http_token", token);
    h.config_set("cron.alert_webhook", hook);
    let get = |args: &[&str]| h.run(args).ok().stdout;
    let shown = get(&["config", "get", "gateway.http_token"]);
    assert_eq!(
        shown.trim(),
        format!("<redacted: {} characters; --reveal shows it>", token.len())
    );
    assert_eq!(
        get(&["config", "get", "cron.alert_webhook"]).trim(),
        "https://hooks.example/<redacted>"
    );
    assert_eq!(
        get(&["config", "get", "gateway.http_token", "--reveal"]).trim(),
        token
    );
    assert_eq!(
        get(&["config", "get", "cron.alert_webhook", "--reveal"]).trim(),
        hook
    );
    for args in [
        &["config", "show"][..],
        &["config", "show", "--json"],
        &["--json", "config", "get", "gateway.http_token"],
        &[
            "config",
            "set",
            "gateway.ping_url",
            "https://ping.example/p/Secret-Path",
        ],
    ] {
        let out = get(args);
        for secret in [token, "T0K3N", "s3cr3t", "Secret-Path"] {
            assert!(!out.contains(secret), "{args:?} printed {secret}:\n{out}");
        }
    }
    let revealed = get(&["config", "show", "--reveal"]);
    assert!(
        revealed.contains(token) && revealed.contains(hook),
        "{revealed}"
    );
}
