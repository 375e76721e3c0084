//! Tests of `cron.path` and `cron.env` through the real file: loading
//! (a bad `cron.env` entry dropped alone, with its own warning), `get` and
//! `show` (secret-looking values redacted), and `set`/`unset` of the whole
//! key and of one variable (`cron.env.NAME`), losslessly.

use super::super::*;
use super::edit_tests::{file, invalid_message, read, zones};
use hermes_cron_core::config::Secrets;
use hermes_cron_core::job::Env;
use hermes_cron_core::run::DEFAULT_PATH;

fn env(pairs: &[(&str, &str)]) -> Env {
    Env(pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

#[test]
fn both_keys_load_from_the_nested_and_the_dotted_form() {
    let (_dir, path) = file(
        "cron:\n  path: /opt/tools/bin:/usr/bin\n  env:\n    TZ: Europe/Berlin\n    \
         WORKERS: 4\n    DEBUG: true\n    RATIO: 0.5\n    EMPTY: ''\n",
    );
    let loaded = load(&path, &zones()).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.config.cron.path, "/opt/tools/bin:/usr/bin");
    assert_eq!(
        loaded.config.cron.env,
        env(&[
            ("TZ", "Europe/Berlin"),
            ("WORKERS", "4"),
            ("DEBUG", "true"),
            ("RATIO", "0.5"),
            ("EMPTY", ""),
        ])
    );
    // The dotted form wins, whole: its mapping replaces the nested one.
    let (_dir, path) = file(
        "cron.env: {A: dotted}\ncron.path: /dotted/bin\ncron:\n  env: {A: nested, B: nested}\n  \
         path: /nested/bin\n",
    );
    let loaded = load(&path, &zones()).unwrap();
    assert_eq!(loaded.config.cron.env, env(&[("A", "dotted")]));
    assert_eq!(loaded.config.cron.path, "/dotted/bin");
    // Unset, empty or null: the defaults, without a warning.
    for text in [
        "",
        "cron: {env: {}}\n",
        "cron:\n  env:\n",
        "cron: {env: ~}\n",
    ] {
        let (_dir, path) = file(text);
        let loaded = load(&path, &zones()).unwrap();
        assert!(
            loaded.warnings.is_empty(),
            "{text:?}: {:?}",
            loaded.warnings
        );
        assert_eq!(loaded.config.cron.path, DEFAULT_PATH, "{text:?}");
        assert!(loaded.config.cron.env.is_empty(), "{text:?}");
    }
}

#[test]
fn a_bad_entry_is_dropped_with_one_warning_and_the_others_used() {
    let (_dir, path) = file(
        "cron:\n  env:\n    GOOD: one\n    1BAD: x\n    HERMES_HOME: /elsewhere\n    \
         HERMES_CRON_JOB_NAME: x\n    PATH: /opt/bin\n    LIST: [a, b]\n    NESTED: {a: 1}\n    \
         NOTHING:\n    ALSO_GOOD: two\n",
    );
    let loaded = load(&path, &zones()).unwrap();
    assert_eq!(
        loaded.config.cron.env,
        env(&[("GOOD", "one"), ("ALSO_GOOD", "two")])
    );
    let entries = [
        "1BAD",
        "HERMES_HOME",
        "HERMES_CRON_JOB_NAME",
        "PATH",
        "LIST",
        "NESTED",
        "NOTHING",
    ];
    assert_eq!(
        loaded.warnings.len(),
        entries.len(),
        "{:?}",
        loaded.warnings
    );
    for (warning, entry) in loaded.warnings.iter().zip(entries) {
        assert_eq!(warning.key, "cron.env");
        assert!(
            warning
                .message
                .starts_with(&format!("config key `cron.env`: entry `{entry}` dropped: ")),
            "{}",
            warning.message
        );
    }
    assert!(loaded.warnings[3].message.contains("cron.path"));
    assert!(loaded.warnings[6].message.contains("`NOTHING: ''`"));
    let text = show(&path, &zones(), Secrets::Revealed).unwrap();
    let line = text.lines().find(|l| l.starts_with("cron.env:")).unwrap();
    assert!(line.ends_with("# file (invalid entries dropped)"), "{line}");
    assert!(line.contains("{GOOD: one, ALSO_GOOD: two}"), "{line}");
}

#[test]
fn a_bad_whole_value_falls_back_to_the_default_with_one_warning() {
    for (text, key, says) in [
        ("cron: {env: 'TZ=UTC'}\n", "cron.env", "is not a mapping"),
        ("cron: {env: [TZ=UTC]}\n", "cron.env", "is not a mapping"),
        ("cron: {path: 'bin:/usr/bin'}\n", "cron.path", "absolute"),
        (
            "cron: {path: '/usr/bin::/bin'}\n",
            "cron.path",
            "empty entry",
        ),
        ("cron: {path: ''}\n", "cron.path", "is empty"),
        ("cron: {path: 5}\n", "cron.path", "a string"),
        ("cron: {path: [/usr/bin]}\n", "cron.path", "a string"),
    ] {
        let (_dir, path) = file(text);
        let loaded = load(&path, &zones()).unwrap();
        assert_eq!(loaded.warnings.len(), 1, "{text:?}: {:?}", loaded.warnings);
        let warning = &loaded.warnings[0];
        assert_eq!(warning.key, key, "{text:?}");
        assert!(warning.message.contains(says), "{}", warning.message);
        assert!(
            warning.message.contains("using the default"),
            "{}",
            warning.message
        );
        assert_eq!(loaded.config.cron.path, DEFAULT_PATH);
        assert!(loaded.config.cron.env.is_empty());
        let line = show(&path, &zones(), Secrets::Revealed).unwrap();
        let line = line
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap()
            .to_string();
        assert!(line.ends_with("# file (invalid, default used)"), "{line}");
    }
}

#[test]
fn get_and_show_redact_secret_looking_values() {
    let secret = "ghp_0123456789abcdef";
    let (_dir, path) = file(&format!(
        "cron:\n  env:\n    GITHUB_TOKEN: {secret}\n    db_password: {secret}\n    \
         TZ: Europe/Berlin\n    HTTPS_PROXY: http://proxy.example:3128\n"
    ));
    let whole = get(&path, "cron.env", &zones(), Secrets::Revealed).unwrap();
    assert_eq!(
        whole,
        "{GITHUB_TOKEN: <redacted>, db_password: <redacted>, TZ: Europe/Berlin, \
         HTTPS_PROXY: 'http://proxy.example:3128'}"
    );
    assert_eq!(
        get(&path, "cron.env.GITHUB_TOKEN", &zones(), Secrets::Revealed).unwrap(),
        "<redacted>"
    );
    assert_eq!(
        get(&path, "cron.env.TZ", &zones(), Secrets::Revealed).unwrap(),
        "Europe/Berlin"
    );
    assert_eq!(
        get(&path, "cron.env.HTTPS_PROXY", &zones(), Secrets::Revealed).unwrap(),
        "http://proxy.example:3128"
    );
    let message =
        invalid_message(get(&path, "cron.env.NOPE", &zones(), Secrets::Revealed).unwrap_err());
    assert!(message.contains("`NOPE`"), "{message}");
    let shown = show(&path, &zones(), Secrets::Revealed).unwrap();
    assert!(!shown.contains(secret), "{shown}");
    let line = shown.lines().find(|l| l.starts_with("cron.env:")).unwrap();
    assert!(line.contains(&format!(" {whole}  # file")), "{shown}");
    assert_eq!(
        get(&path, "cron.path", &zones(), Secrets::Revealed).unwrap(),
        DEFAULT_PATH
    );
    // What `get` prints is YAML that reads back to the same variables
    // (but for the redacted ones).
    let (_dir, copy) = file(&format!("cron:\n  env: {whole}\n"));
    let reread = load(&copy, &zones()).unwrap().config.cron.env;
    assert_eq!(
        reread.0[2..],
        load(&path, &zones()).unwrap().config.cron.env.0[2..]
    );
}

#[test]
fn set_refuses_the_whole_mapping_and_says_what_to_write() {
    let text = "# mine\ncron: {provider: hermes-cron}\n";
    let (_dir, path) = file(text);
    for value in ["TZ=UTC", "{TZ: UTC}", ""] {
        let message = invalid_message(set(&path, "cron.env", value, &zones()).unwrap_err());
        assert!(message.contains("cron.env.NAME VALUE"), "{message}");
        assert!(
            message.contains("cron:\n  env:\n    TZ: Europe/Berlin\n"),
            "{message}"
        );
        assert!(message.contains(&path.display().to_string()), "{message}");
    }
    assert_eq!(read(&path), text);
}

#[test]
fn set_and_unset_cron_path() {
    let (_dir, path) = file("cron: {provider: hermes-cron}  # Hermes's\n");
    set(&path, "cron.path", "/opt/tools/bin:/usr/bin:/bin", &zones()).unwrap();
    assert_eq!(
        read(&path),
        "cron: {provider: hermes-cron, path: '/opt/tools/bin:/usr/bin:/bin'}  # Hermes's\n"
    );
    assert_eq!(
        get(&path, "cron.path", &zones(), Secrets::Revealed).unwrap(),
        "/opt/tools/bin:/usr/bin:/bin"
    );
    for bad in ["bin:/usr/bin", "/usr/bin:", "''", "~", "5"] {
        let message = invalid_message(set(&path, "cron.path", bad, &zones()).unwrap_err());
        assert!(message.contains("`cron.path`"), "{bad}: {message}");
        assert!(message.contains("absolute directories"), "{bad}: {message}");
    }
    unset(&path, "cron.path").unwrap();
    assert_eq!(read(&path), "cron: {provider: hermes-cron}  # Hermes's\n");
    assert_eq!(
        get(&path, "cron.path", &zones(), Secrets::Revealed).unwrap(),
        DEFAULT_PATH
    );
}

#[test]
fn one_variable_is_set_and_unset_touching_only_its_line() {
    let text = "# mine\nmodel: {default: x}\ncron:\n  provider: hermes-cron   # Hermes's\n  \
                env:\n    TZ: Europe/Berlin   # zone\n    DEBUG: true\ntail: 1\n";
    let (_dir, path) = file(text);
    set(&path, "cron.env.TZ", "UTC", &zones()).unwrap();
    set(&path, "cron.env.HTTPS_PROXY", "http://proxy:3128", &zones()).unwrap();
    set(&path, "cron.env.FLAG", "off", &zones()).unwrap();
    assert_eq!(
        read(&path),
        text.replace("TZ: Europe/Berlin   # zone", "TZ: UTC   # zone")
            .replace(
                "    DEBUG: true\n",
                "    DEBUG: true\n    HTTPS_PROXY: 'http://proxy:3128'\n    FLAG: 'off'\n"
            )
    );
    // Values are text: `off` stays the string, for both readers.
    assert_eq!(
        load(&path, &zones()).unwrap().config.cron.env,
        env(&[
            ("TZ", "UTC"),
            ("DEBUG", "true"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("FLAG", "off"),
        ])
    );
    for name in ["HTTPS_PROXY", "FLAG", "TZ", "DEBUG"] {
        unset(&path, &format!("cron.env.{name}")).unwrap();
    }
    // The emptied mapping goes; the section keeps Hermes's key.
    assert_eq!(
        read(&path),
        "# mine\nmodel: {default: x}\ncron:\n  provider: hermes-cron   # Hermes's\ntail: 1\n"
    );
    // Unsetting what is not there writes nothing.
    assert_eq!(unset(&path, "cron.env.TZ").unwrap(), ());
    assert_eq!(
        hermes_cron_core::config::unset(&path, Some(read(&path).as_bytes()), "cron.env.TZ")
            .unwrap(),
        None
    );
}

#[test]
fn a_variable_goes_where_the_mapping_is_and_a_new_one_makes_the_section() {
    // No file: the section and the mapping are made.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    set(&path, "cron.env.TZ", "Europe/Berlin", &zones()).unwrap();
    assert_eq!(read(&path), "cron:\n  env:\n    TZ: Europe/Berlin\n");
    unset(&path, "cron.env.TZ").unwrap();
    assert_eq!(read(&path), "{}\n");
    // A flow mapping keeps its style; a null `env:` becomes a mapping.
    for (before, after) in [
        (
            "cron: {env: {A: '1'}}\n",
            "cron: {env: {A: '1', TZ: Europe/Berlin}}\n",
        ),
        (
            "cron:\n  env:\n  x: 1\n",
            "cron:\n  env:\n    TZ: Europe/Berlin\n  x: 1\n",
        ),
        // The dotted form, which wins on load, is where it goes...
        (
            "cron.env:\n  A: '1'\n",
            "cron.env:\n  A: '1'\n  TZ: Europe/Berlin\n",
        ),
        // ... and into both when the file has both, so they agree.
        (
            "cron.env: {A: '1'}\ncron: {env: {B: '2'}}\n",
            "cron.env: {A: '1', TZ: Europe/Berlin}\ncron: {env: {B: '2', TZ: Europe/Berlin}}\n",
        ),
    ] {
        let (_dir, path) = file(before);
        set(&path, "cron.env.TZ", "Europe/Berlin", &zones()).unwrap();
        assert_eq!(read(&path), after, "{before:?}");
        assert_eq!(
            get(&path, "cron.env.TZ", &zones(), Secrets::Revealed).unwrap(),
            "Europe/Berlin"
        );
        unset(&path, "cron.env.TZ").unwrap();
        assert!(
            load(&path, &zones())
                .unwrap()
                .config
                .cron
                .env
                .0
                .iter()
                .all(|(k, _)| k != "TZ"),
            "{before:?}: {}",
            read(&path)
        );
    }
}

#[test]
fn a_variable_is_refused_for_a_bad_name_an_alias_or_a_mapping_that_is_not_one() {
    let text = "common: &common {A: '1'}\ncron:\n  env: *common\n";
    let (_dir, path) = file(text);
    let message = invalid_message(set(&path, "cron.env.TZ", "UTC", &zones()).unwrap_err());
    assert!(
        message.contains("`cron.env` in") && message.contains("alias"),
        "{message}"
    );
    let message = invalid_message(unset(&path, "cron.env.A").unwrap_err());
    assert!(message.contains("alias"), "{message}");
    assert_eq!(read(&path), text);
    let text = "cron:\n  env: TZ=UTC\n";
    let (_dir, path) = file(text);
    let message = invalid_message(set(&path, "cron.env.TZ", "UTC", &zones()).unwrap_err());
    assert!(message.contains("not a mapping"), "{message}");
    assert_eq!(read(&path), text);
    for (name, says) in [
        ("1X", "not a variable name"),
        ("A-B", "not a variable name"),
        ("", "not a variable name"),
        ("HERMES_HOME", "HERMES_CRON_*"),
        ("HERMES_CRON_EXECUTION_ID", "HERMES_CRON_*"),
        ("PATH", "cron.path"),
    ] {
        let key = format!("cron.env.{name}");
        let message = invalid_message(set(&path, &key, "x", &zones()).unwrap_err());
        assert!(message.contains(&format!("`{key}`")), "{message}");
        assert!(message.contains(says), "{name}: {message}");
    }
    assert_eq!(read(&path), text);
}

#[test]
fn unset_cron_env_removes_the_whole_mapping() {
    let text = "cron:\n  provider: hermes-cron\n  env:\n    A: '1'\n    B: '2'\nmodel: x\n";
    let (_dir, path) = file(text);
    unset(&path, "cron.env").unwrap();
    assert_eq!(read(&path), "cron:\n  provider: hermes-cron\nmodel: x\n");
    assert!(load(&path, &zones()).unwrap().config.cron.env.is_empty());
}
