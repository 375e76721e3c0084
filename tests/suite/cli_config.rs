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
