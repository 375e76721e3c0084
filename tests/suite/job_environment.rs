//! A job's environment is defined, the same for a manual `run`, a scheduled
//! run and a `spawn`: a base (account, PATH, LANG, the session bus), the
//! job's env files, passed variables and `--env`, and its ids. Nothing of
//! the environment of the process that starts the run reaches the job unless
//! the job names it (`--pass-env`).

use crate::support::TestHome;
use crate::support::rows::execution_id_in;
use crate::support::waiting::SETTLE_TIMEOUT;
use std::time::Duration;

/// A job that prints its whole environment.
fn add_env_printer(h: &TestHome, name: &str, schedule: &str, flags: &[&str]) -> String {
    h.add(name, schedule, flags, &["env"])
}

fn vars(text: &str) -> Vec<(&str, &str)> {
    text.lines().filter_map(|l| l.split_once('=')).collect()
}

fn value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    vars(text)
        .into_iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[test]
fn a_secret_of_the_caller_reaches_neither_a_manual_nor_a_scheduled_run() {
    let h = TestHome::new();
    add_env_printer(&h, "envp", "every 1h", &[]);
    let out = h
        .cmd(&["run", "envp", "--wait"])
        .env("MY_SECRET_TOKEN", "abc")
        .env("LANG", "xx_XX.UTF-8")
        .run()
        .ok();
    let row = h
        .row(&execution_id_in(&out.stdout))
        .expect("the manual row");
    let manual = h.output_of(&row);
    assert_eq!(value(&manual, "MY_SECRET_TOKEN"), None, "{manual}");
    assert_eq!(value(&manual, "LANG"), Some("C.UTF-8"), "{manual}");

    // Scheduled: a gateway started with the secret in its environment.
    add_env_printer(&h, "every-second", "every 1s", &[]);
    let mut gw = h.gateway(&[("MY_SECRET_TOKEN", "abc")]);
    gw.wait_ready();
    // The first run that ends (the next is already staged by then).
    let run = h.wait_until("a finished run of every-second", SETTLE_TIMEOUT, || {
        h.runs(Some("every-second"))
            .into_iter()
            .find(|r| r["terminal"] == true)
    });
    gw.stop();
    let scheduled = h.output_of(&run);
    assert_eq!(run["source"], "schedule", "{run:#}");
    assert_eq!(value(&scheduled, "MY_SECRET_TOKEN"), None, "{scheduled}");

    // The same names, in both: the environment does not depend on who started the run.
    let names = |text: &str| {
        let mut n: Vec<String> = vars(text).iter().map(|(k, _)| k.to_string()).collect();
        n.sort();
        n
    };
    assert_eq!(names(&manual), names(&scheduled));
    for name in [
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "PATH",
        "LANG",
        "HERMES_HOME",
    ] {
        assert!(value(&manual, name).is_some(), "{name} missing: {manual}");
    }
    assert_eq!(
        value(&manual, "HERMES_HOME"),
        Some(h.path().to_str().unwrap())
    );
    assert_eq!(
        value(&manual, "HERMES_CRON_EXECUTION_ID"),
        row["id"].as_str()
    );
}

#[test]
fn pass_env_env_file_and_env_layer_in_that_order() {
    let h = TestHome::new();
    let file = h.scratch().join("secrets.env");
    std::fs::write(
        &file,
        "# read when the job runs\nFROM_FILE=file\nOVERRIDDEN=file\nexport QUOTED=\"a b\"\n",
    )
    .unwrap();
    add_env_printer(
        &h,
        "layered",
        "every 1h",
        &[
            "--env-file",
            file.to_str().unwrap(),
            "--pass-env",
            "CALLER_VALUE",
            "--pass-env",
            "NOT_SET_ANYWHERE",
            "--env",
            "OVERRIDDEN=env",
        ],
    );
    let out = h
        .cmd(&["run", "layered", "--wait"])
        .env("CALLER_VALUE", "from the caller")
        .env("OVERRIDDEN", "caller")
        .run()
        .ok();
    let row = h.row(&execution_id_in(&out.stdout)).unwrap();
    let text = h.output_of(&row);
    assert_eq!(value(&text, "FROM_FILE"), Some("file"), "{text}");
    assert_eq!(value(&text, "QUOTED"), Some("a b"), "{text}");
    assert_eq!(
        value(&text, "CALLER_VALUE"),
        Some("from the caller"),
        "{text}"
    );
    assert_eq!(value(&text, "NOT_SET_ANYWHERE"), None, "{text}");
    assert_eq!(value(&text, "OVERRIDDEN"), Some("env"), "{text}");

    // The file is read when the job runs, not when it was added.
    std::fs::write(&file, "FROM_FILE=changed\n").unwrap();
    let out = h.run(&["run", "layered", "--wait"]).ok();
    let text = h.output_of(&h.row(&execution_id_in(&out.stdout)).unwrap());
    assert_eq!(value(&text, "FROM_FILE"), Some("changed"), "{text}");

    let shown = h.run(&["show", "layered", "--json"]).ok().json();
    assert_eq!(shown["pass_env"][0], "CALLER_VALUE", "{shown:#}");
    assert_eq!(shown["env_files"][0], file.to_str().unwrap(), "{shown:#}");
}

#[test]
fn an_unreadable_env_file_fails_the_run_without_starting_the_command() {
    let h = TestHome::new();
    let marker = h.scratch().join("ran");
    let missing = h.scratch().join("missing.env");
    h.add(
        "needs-file",
        "every 1h",
        &["--env-file", missing.to_str().unwrap()],
        &["touch", marker.to_str().unwrap()],
    );
    let out = h.run(&["run", "needs-file", "--wait"]);
    assert_eq!(out.code(), 1, "{out}");
    let row = h.wait_terminal(&execution_id_in(&out.stdout), Duration::from_secs(30));
    assert_eq!(row["state"], "failed", "{row:#}");
    assert_eq!(row["reason_code"], "exec_failed", "{row:#}");
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains("--env-file") && reason.contains("missing.env"),
        "{reason}"
    );
    assert!(!marker.exists(), "the command ran");
    let refused = h.run(&[
        "add",
        "--name",
        "rel",
        "--schedule",
        "every 1h",
        "--env-file",
        "rel.env",
        "--",
        "true",
    ]);
    assert_eq!(refused.code(), 2, "{refused}");
    assert!(refused.stderr.contains("--env-file"), "{refused}");
}

#[test]
fn spawned_workers_get_the_same_defined_environment() {
    let h = TestHome::new();
    let out = h
        .cmd(&[
            "spawn",
            "--name",
            "kanban",
            "--pass-env",
            "KEEP",
            "--env",
            "TASK=7",
            "--json",
            "--",
            "env",
        ])
        .env("KEEP", "kept")
        .env("MY_SECRET_TOKEN", "abc")
        .run()
        .ok();
    let execution = out.json()["execution"].as_str().unwrap().to_string();
    let row = h.wait_terminal(&execution, Duration::from_secs(30));
    let text = h.output_of(&row);
    assert_eq!(value(&text, "KEEP"), Some("kept"), "{text}");
    assert_eq!(value(&text, "TASK"), Some("7"), "{text}");
    assert_eq!(value(&text, "MY_SECRET_TOKEN"), None, "{text}");
    assert_eq!(value(&text, "HERMES_CRON_JOB_ID"), None, "{text}");
}

/// What a job starts with beyond its environment is defined too: a run
/// started by `run` from a shell gets the gateway's umask, nice value and
/// limits, as a scheduled run does, not the shell's (issue 23).
#[test]
fn a_manual_run_starts_with_the_gateways_umask_nice_and_limits_not_the_callers() {
    let h = TestHome::new();
    h.add(
        "attrs",
        "every 2s",
        &["--shell"],
        &["echo \"$(umask) $(nice) $(ulimit -S -n) $(ulimit -S -s) $(ulimit -S -c)\""],
    );
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let scheduled = h.wait_until("a scheduled run", SETTLE_TIMEOUT, || {
        h.runs_of("attrs")
            .into_iter()
            .find(|r| r["terminal"] == true && r["source"] == "schedule")
    });
    let gateways = h.output_of(&scheduled).trim().to_string();
    let callers = "0077 7 200 4096 1";
    assert_ne!(
        gateways, callers,
        "the test needs a gateway unlike the shell"
    );
    let line = format!(
        "umask 077; ulimit -S -n 200; ulimit -S -s 4096; ulimit -S -c 1; exec nice -n 7 {} run attrs --wait",
        crate::support::cli::bin().display()
    );
    let out = h.shell(&line).run();
    assert_eq!(out.code(), 0, "{out}");
    let manual = h
        .runs_of("attrs")
        .into_iter()
        .rfind(|r| r["source"] == "manual")
        .expect("the manual run's row");
    assert_eq!(
        h.output_of(&manual).trim(),
        gateways,
        "the manual run started as the shell ({callers}), not as the gateway\n{}",
        h.worker_log()
    );
    gw.stop();
}
