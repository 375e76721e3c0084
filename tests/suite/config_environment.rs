//! The config's part of every run's environment: `cron.path` is the PATH of
//! the base, and `cron.env` comes after the base and before the job's own
//! layers (`--env-file`, `--pass-env`, `--env`), for a scheduled run, a
//! manual `run` and a `spawn` alike. Both are taken when the run is claimed:
//! an edit of the config after that does not change the occurrence. A bad
//! `cron.env` entry is dropped alone, with one warning; secret-looking values
//! are redacted wherever the config is shown.

use crate::support::TestHome;
use crate::support::cli::{warnings_about, worker_bin};
use crate::support::rows::execution_id_in;
use crate::support::waiting::SETTLE_TIMEOUT;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

fn value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The output of `run JOB --wait`, which must succeed.
fn manual_output(h: &TestHome, job: &str) -> String {
    let out = h.run(&["run", job, "--wait"]).ok();
    let row = h
        .row(&execution_id_in(&out.stdout))
        .expect("the manual row");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    h.output_of(&row)
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

const CONFIG: &str = "\
# Hermes's keys and ours, side by side
model: {default: gpt-5}
cron:
  provider: hermes-cron
  path: /usr/bin:/bin:/usr/local/bin
  env:
    TZ: Europe/Berlin
    FROM_CONFIG: config
    FILE_WINS: config
    ENV_WINS: config
    WORKERS: 4
    DEBUG: true
    LANG: de_DE.UTF-8
";

#[test]
fn cron_env_reaches_a_manual_a_scheduled_and_a_spawned_run_before_the_jobs_own() {
    let h = TestHome::new();
    h.write_config(CONFIG);
    let file = h.scratch().join("job.env");
    std::fs::write(&file, "FILE_WINS=file\n").unwrap();
    let job_flags = [
        "--env-file",
        file.to_str().unwrap(),
        "--env",
        "ENV_WINS=job",
    ];
    let check = |text: &str, how: &str| {
        for (name, want) in [
            ("TZ", "Europe/Berlin"),
            ("FROM_CONFIG", "config"),
            ("WORKERS", "4"),
            ("DEBUG", "true"),
            // cron.env is laid over the base's LANG.
            ("LANG", "de_DE.UTF-8"),
            ("PATH", "/usr/bin:/bin:/usr/local/bin"),
        ] {
            assert_eq!(value(text, name), Some(want), "{how}: {name}\n{text}");
        }
        assert_eq!(value(text, "FILE_WINS"), Some("file"), "{how}\n{text}");
        assert_eq!(value(text, "ENV_WINS"), Some("job"), "{how}\n{text}");
    };

    h.add("envp", "every 1h", &job_flags, &["env"]);
    check(&manual_output(&h, "envp"), "manual");

    h.add("every-second", "every 1s", &job_flags, &["env"]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    // The first run that ends (the next is already staged by then).
    let row = h.wait_until("a finished run of every-second", SETTLE_TIMEOUT, || {
        h.runs(Some("every-second"))
            .into_iter()
            .find(|r| r["terminal"] == true)
    });
    gw.stop();
    assert_eq!(row["source"], "schedule", "{row:#}");
    check(&h.output_of(&row), "scheduled");

    let mut spawn_args = vec!["spawn", "--name", "kanban"];
    spawn_args.extend(job_flags);
    spawn_args.extend(["--json", "--", "env"]);
    let out = h.run(&spawn_args).ok();
    let execution = out.json()["execution"].as_str().unwrap().to_string();
    let row = h.wait_terminal(&execution, Duration::from_secs(30));
    check(&h.output_of(&row), "spawned");
}

#[test]
fn cron_path_is_the_jobs_path_and_a_program_found_only_there_runs() {
    let h = TestHome::new();
    let tools = h.scratch().join("tools");
    std::fs::create_dir(&tools).unwrap();
    executable(
        &tools.join("only-here"),
        "#!/bin/sh\necho \"only-here ran with PATH=$PATH\"\n",
    );

    // Not on the default PATH: `add` refuses it, naming the PATH it searched.
    let out = h
        .run(&[
            "add",
            "--name",
            "tool",
            "--schedule",
            "every 1h",
            "--",
            "only-here",
        ])
        .fails_with(2);
    assert!(out.stderr.contains("/usr/local/bin:/usr/bin:/bin"), "{out}");
    assert!(out.stderr.contains("cron.path"), "{out}");

    let path = format!("{}:/usr/bin:/bin", tools.display());
    h.config_set("cron.path", &path);
    h.add("tool", "every 1h", &[], &["only-here"]);
    let text = manual_output(&h, "tool");
    assert_eq!(text.trim(), format!("only-here ran with PATH={path}"));

    // The job's own PATH still wins, and is where its program is looked up.
    h.add(
        "own-path",
        "every 1h",
        &["--env", "PATH=/usr/bin:/bin"],
        &["env"],
    );
    assert_eq!(
        value(&manual_output(&h, "own-path"), "PATH"),
        Some("/usr/bin:/bin")
    );
    let out = h
        .run(&[
            "add",
            "--name",
            "own-tool",
            "--schedule",
            "every 1h",
            "--env",
            "PATH=/usr/bin:/bin",
            "--",
            "only-here",
        ])
        .fails_with(2);
    assert!(out.stderr.contains("PATH /usr/bin:/bin"), "{out}");

    // `doctor` looks it up where the run will.
    let doctor = h.run(&["doctor", "--json"]).json();
    let missing: Vec<&serde_json::Value> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "program_missing")
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
    h.run(&["config", "unset", "cron.path"]).ok();
    let doctor = h.run(&["doctor", "--json"]).json();
    let missing = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "program_missing")
        .unwrap_or_else(|| panic!("{doctor:#}"));
    assert_eq!(missing["job_name"], "tool", "{missing:#}");
}

#[test]
fn an_invalid_entry_is_dropped_with_one_warning_and_the_others_reach_the_run() {
    let h = TestHome::new();
    h.write_config(
        "cron:\n  path: bin:/usr/bin\n  env:\n    GOOD: kept\n    1BAD: x\n    \
         HERMES_HOME: /elsewhere\n    NESTED: {a: 1}\n    ALSO_GOOD: 2\n",
    );
    h.add("envp", "every 1h", &[], &["env"]);
    let out = h.run(&["run", "envp", "--wait"]).ok();
    for entry in ["1BAD", "HERMES_HOME", "NESTED"] {
        assert_eq!(
            warnings_about(&out.stderr, &format!("`cron.env`: entry `{entry}` dropped")),
            1,
            "{entry}\n{out}"
        );
    }
    assert_eq!(warnings_about(&out.stderr, "`cron.path`"), 1, "{out}");
    assert_eq!(warnings_about(&out.stderr, "config key"), 4, "{out}");
    let text = h.output_of(&h.row(&execution_id_in(&out.stdout)).unwrap());
    assert_eq!(value(&text, "GOOD"), Some("kept"), "{text}");
    assert_eq!(value(&text, "ALSO_GOOD"), Some("2"), "{text}");
    assert_eq!(value(&text, "1BAD"), None, "{text}");
    assert_eq!(value(&text, "HERMES_HOME"), h.path().to_str(), "{text}");
    assert_eq!(
        value(&text, "PATH"),
        Some("/usr/local/bin:/usr/bin:/bin"),
        "{text}"
    );
}

#[test]
fn show_and_config_get_redact_secret_values_and_the_run_gets_them() {
    let h = TestHome::new();
    let secret = "ghp_R3alS3cretValue0123";
    // A proxy URL with a password is a secret whatever its name.
    let password = "pr0xyPassw0rd";
    h.write_config(&format!(
        "cron:\n  env:\n    GITHUB_TOKEN: {secret}\n    HTTPS_PROXY: 'http://proxy.example:3128'\n    \
         ALL_PROXY: 'http://me:{password}@proxy.example:3128'\n    1_API_KEY: {secret}\n"
    ));
    for args in [
        vec!["config", "show"],
        vec!["config", "get", "cron.env"],
        vec!["config", "get", "cron.env.GITHUB_TOKEN"],
        vec!["config", "get", "cron.env.ALL_PROXY"],
    ] {
        let out = h.run(&args).ok();
        for hidden in [secret, password] {
            assert!(!out.stdout.contains(hidden), "{args:?}: {out}");
            assert!(!out.stderr.contains(hidden), "{args:?}: {out}");
        }
        assert!(out.stdout.contains("<redacted>"), "{args:?}: {out}");
        // The bad entry is named in one warning, its value never.
        assert_eq!(
            warnings_about(&out.stderr, "`1_API_KEY`"),
            1,
            "{args:?}: {out}"
        );
    }
    let out = h.run(&["config", "get", "cron.env"]).ok();
    assert_eq!(
        out.line(),
        "{GITHUB_TOKEN: <redacted>, HTTPS_PROXY: 'http://proxy.example:3128', \
         ALL_PROXY: <redacted>}"
    );
    let out = h.run(&["config", "get", "cron.env.HTTPS_PROXY"]).ok();
    assert_eq!(out.line(), "http://proxy.example:3128");
    let out = h.run(&["config", "set", "cron.env.NEW_TOKEN", secret]).ok();
    assert_eq!(out.line(), "cron.env.NEW_TOKEN = <redacted>");

    h.add("envp", "every 1h", &[], &["env"]);
    let out = h.run(&["run", "envp", "--wait"]).ok();
    assert!(
        !out.stdout.contains(secret) && !out.stderr.contains(secret),
        "{out}"
    );
    let text = h.output_of(&h.row(&execution_id_in(&out.stdout)).unwrap());
    assert_eq!(value(&text, "GITHUB_TOKEN"), Some(secret), "{text}");
    assert_eq!(value(&text, "NEW_TOKEN"), Some(secret), "{text}");
    assert_eq!(
        value(&text, "ALL_PROXY"),
        Some(format!("http://me:{password}@proxy.example:3128").as_str()),
        "{text}"
    );
}

#[test]
fn config_set_takes_one_variable_and_refuses_the_whole_mapping() {
    let h = TestHome::new();
    h.write_config("# mine\ncron:\n  provider: hermes-cron\n");
    let out = h
        .run(&["config", "set", "cron.env", "TZ=Europe/Berlin"])
        .fails_with(2);
    assert!(out.stderr.contains("cron.env.NAME VALUE"), "{out}");
    assert!(out.stderr.contains("    TZ: Europe/Berlin"), "{out}");
    h.config_set("cron.env.TZ", "Europe/Berlin");
    h.config_set("cron.env.FLAG", "off");
    assert_eq!(
        std::fs::read_to_string(h.config_file()).unwrap(),
        "# mine\ncron:\n  provider: hermes-cron\n  env:\n    TZ: Europe/Berlin\n    FLAG: 'off'\n"
    );
    h.add("envp", "every 1h", &[], &["env"]);
    let text = manual_output(&h, "envp");
    assert_eq!(value(&text, "TZ"), Some("Europe/Berlin"), "{text}");
    assert_eq!(value(&text, "FLAG"), Some("off"), "{text}");
    let out = h.run(&["config", "unset", "cron.env"]).ok();
    assert_eq!(out.line(), "cron.env = {} (default)");
    assert_eq!(
        std::fs::read_to_string(h.config_file()).unwrap(),
        "# mine\ncron:\n  provider: hermes-cron\n"
    );
    let text = manual_output(&h, "envp");
    assert_eq!(value(&text, "TZ"), None, "{text}");
}

/// The config is read when the run is claimed and the values are stored on
/// its row: a worker that starts after the config changed still runs the
/// occurrence with the values of its claim.
#[test]
fn an_edit_of_the_config_after_the_claim_does_not_change_that_occurrence() {
    let mut h = TestHome::new();
    h.write_config("cron:\n  path: /usr/bin:/bin\n  env:\n    WHEN: claimed\n");
    // Between the claim and the worker's start, the config is rewritten.
    let editing = h.scratch().join("editing-worker");
    executable(
        &editing,
        &format!(
            "#!/bin/sh\nprintf 'cron:\\n  env:\\n    WHEN: edited\\n' > {}\nexec {} \"$@\"\n",
            h.config_file().display(),
            worker_bin().display()
        ),
    );
    h.set_env("HERMES_CRON_WORKER", &editing);
    h.add("envp", "every 1h", &[], &["env"]);
    let text = manual_output(&h, "envp");
    assert_eq!(value(&text, "WHEN"), Some("claimed"), "{text}");
    assert_eq!(value(&text, "PATH"), Some("/usr/bin:/bin"), "{text}");
    // The next claim reads the edited config.
    let text = manual_output(&h, "envp");
    assert_eq!(value(&text, "WHEN"), Some("edited"), "{text}");
    assert_eq!(
        value(&text, "PATH"),
        Some("/usr/local/bin:/usr/bin:/bin"),
        "{text}"
    );
}
