//! Security (issue 8): private files, a gateway that refuses a home it should
//! not trust, and secrets that never leak into what we print or write.
//! Arguments never reach a shell unless asked (`dispatch_worker`), a bus
//! socket of another user is refused as `wrong owner` (`systemd_scope`), and
//! hostile job names cannot inject unit directives (`dispatch_scoped`).

use crate::support::home::mode;
use crate::support::{PATIENCE, TestHome, wait_for};
use std::os::unix::fs::PermissionsExt;

/// Every directory hermes-cron makes in the home is 0700, every file 0600.
fn every_file_we_write_is_private(h: &TestHome) {
    h.config_set("cron.output_retention", "10");
    let id = h.add("echo", "every 1h", &[], &["echo", "hi"]);
    h.run(&["run", "echo", "--wait"]).ok();
    h.run(&["tick"]).ok();
    let gw = h.start(&["gateway"]);
    let home = h.path().to_path_buf();
    for written in ["state/hermes-cron.heartbeat", "state/hermes-cron.prom"] {
        wait_for(written, PATIENCE, || {
            home.join(written).exists().then_some(())
        });
    }
    let out_dir = home.join("cron/output").join(&id);
    let log = std::fs::read_dir(&out_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for dir in [
        home.clone(),
        home.join("cron"),
        home.join("cron/output"),
        out_dir,
        home.join("state"),
        home.join("logs"),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    let mut files = vec![
        home.join("config.yaml"),
        log,
        home.join("state/hermes-cron.heartbeat"),
        home.join("state/hermes-cron-lifecycle.jsonl"),
        home.join("state/hermes-cron.prom"),
        home.join("logs/hermes-cron-worker.log"),
    ];
    // The SQLite ledger and its tick lock (on PostgreSQL both are the
    // server's), and SQLite's own files while the gateway holds it open.
    if !crate::support::ledger::on_postgres() {
        files.push(home.join("cron/cron.db"));
        files.push(home.join("cron/.hermes-cron.tick.lock"));
    }
    files.extend(
        ["cron/cron.db-wal", "cron/cron.db-shm"]
            .map(|f| home.join(f))
            .into_iter()
            .filter(|f| f.exists()),
    );
    for file in files {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    drop(gw);
}

#[test]
fn the_home_and_every_file_we_write_are_private() {
    let h = TestHome::new().with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "100");
    every_file_we_write_is_private(&h);
}

/// Whatever the umask of whoever starts it: 000 lets every process make
/// files anyone may read and write, unless it sets their modes itself.
#[test]
fn the_home_and_every_file_we_write_are_private_under_umask_000() {
    // This test's process (nextest runs each in its own) and every command
    // it starts: the gateway, its workers.
    nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    let h = TestHome::new().with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "100");
    every_file_we_write_is_private(&h);
}

#[test]
fn the_gateway_refuses_a_home_writable_by_group_or_others() {
    let h = TestHome::new();
    h.add("a", "every 1h", &[], &["true"]);
    std::fs::set_permissions(h.path(), std::fs::Permissions::from_mode(0o775)).unwrap();
    let out = h.start(&["gateway"]).wait_within(PATIENCE);
    assert_eq!(out.code(), 2, "{out:#?}");
    assert!(
        out.stderr.contains("chmod 700"),
        "the refusal names the fix: {out:#?}"
    );
}

#[test]
fn the_gateway_refuses_a_home_owned_by_another_user() {
    let h = TestHome::new();
    h.add("a", "every 1h", &[], &["true"]);
    let nobody = 65534;
    std::os::unix::fs::chown(h.path(), Some(nobody), Some(nobody)).unwrap();
    let out = h.start(&["gateway"]).wait_within(PATIENCE);
    assert_eq!(out.code(), 2, "{out:#?}");
    assert!(
        out.stderr.contains("owned by uid 65534") && out.stderr.contains("chown"),
        "{out:#?}"
    );
    std::os::unix::fs::chown(h.path(), Some(0), Some(0)).unwrap();
}

#[test]
fn secret_environment_values_never_appear_in_output_logs_or_dumps() {
    const SECRET: &str = "hunter2-s3cr3t-value";
    let h = TestHome::new()
        .with_env("HERMES_CRON_LOG", "debug")
        .with_env("HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS", "1500");
    for (k, v) in [
        ("gateway.loop_watchdog_probe_interval_s", "1"),
        ("gateway.loop_watchdog_probe_timeout_s", "1"),
        ("gateway.loop_watchdog_max_strikes", "1"),
    ] {
        h.config_set(k, v);
    }
    // The config's variables for every run, too (`cron.env`): by name, and
    // a proxy URL with a password whatever its name.
    let proxy = format!("http://me:{SECRET}@proxy.example:3128");
    let mut set_out = String::new();
    for (k, v) in [
        ("cron.env.SERVICE_TOKEN", SECRET),
        ("cron.env.HTTPS_PROXY", proxy.as_str()),
    ] {
        let out = h.run(&["config", "set", k, v]).ok();
        set_out.push_str(&format!("{}{}", out.stdout, out.stderr));
    }
    let flags = [
        "--env",
        &format!("ALL_PROXY={proxy}"),
        "--env",
        &format!("API_TOKEN={SECRET}"),
        "--env",
        &format!("DB_PASSWORD={SECRET}"),
        "--env",
        &format!("aws_secret_access_key={SECRET}"),
        "--env",
        &format!("SIGNING_KEY={SECRET}"),
    ];
    // The job itself may print its environment: that output is the job's,
    // kept in its private output file, not ours to censor. It echoes a
    // harmless marker instead so the run is observable.
    h.add("secretive", "every 1s", &flags, &["echo", "ran"]);
    h.run(&["run", "secretive", "--wait"]).ok();
    let gw = h.start(&["gateway"]);
    let out = gw.wait_within(PATIENCE);
    assert_eq!(
        out.code(),
        75,
        "the wedge hook makes the watchdog fire: {out:#?}"
    );

    let mut seen = vec![
        ("show", h.run(&["show", "secretive"]).stdout),
        (
            "show --json",
            h.run(&["show", "secretive", "--json"]).stdout,
        ),
        ("list --json", h.run(&["list", "--json"]).stdout),
        ("runs --json", h.run(&["runs", "--json"]).stdout),
        ("gateway stderr", out.stderr.clone()),
        ("gateway stdout", out.stdout.clone()),
        ("config set", set_out),
        ("config show", h.run(&["config", "show"]).stdout),
        ("config get", h.run(&["config", "get", "cron.env"]).stdout),
    ];
    for dir in ["logs", "state"] {
        for f in std::fs::read_dir(h.path().join(dir)).unwrap().flatten() {
            seen.push((
                "a file under the home",
                String::from_utf8_lossy(&std::fs::read(f.path()).unwrap()).into_owned(),
            ));
        }
    }
    assert!(
        std::fs::read_dir(h.path().join("logs"))
            .unwrap()
            .flatten()
            .any(|f| f
                .file_name()
                .to_string_lossy()
                .starts_with("hermes-cron-watchdog-")),
        "a forensic dump was written"
    );
    for (what, text) in &seen {
        assert!(
            !text.contains(SECRET),
            "the secret leaked into {what}:\n{text}"
        );
    }
    let shown = &seen[0].1;
    assert!(shown.contains("API_TOKEN=<redacted>"), "{shown}");
}
