//! Exactly once when the ledger itself stumbles (issue 23, section 0), on a
//! PostgreSQL server of the test's own (`support::pg_server`): the server
//! stopped in the middle of runs and started again, and a server out of
//! connections. Counted as the crash tests count: rows = runs = side
//! effects (`check_exactly_once`), with a retry on every job, so a run
//! recorded stalled while it could not write (and run again) shows as a
//! second row for its slot.

use crate::support::cluster::{Cluster, check_exactly_once, wall_ms, whole_second_after};
use crate::support::ledger::fresh_schema;
use crate::support::pg_server::PgServer;
use crate::support::waiting::wait_for_or;
use hermes_cron::db::Db;
use hermes_cron::job::JobInput;
use hermes_cron::params;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `n` jobs `<prefix>-<i>` on `schedule` running `command` (through `sh`),
/// each with one retry, next due at `due_ms`.
fn add_retried_jobs(
    c: &Cluster,
    prefix: &str,
    n: usize,
    schedule: &str,
    command: &str,
    due_ms: i64,
) {
    let retried = JobInput {
        retries: Some(1),
        ..JobInput::default()
    };
    c.add_jobs_like(retried, prefix, n, schedule, command, due_ms);
}

/// The ledger's rows by state, through `db` (one connection the test keeps:
/// a server out of connections would refuse it a new one).
fn states(db: &Db) -> Value {
    let rows = db
        .conn()
        .query_map(
            "SELECT state, COUNT(*) FROM executions GROUP BY state",
            params![],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, u64>(1)?)),
        )
        .unwrap_or_default();
    Value::Object(rows.into_iter().map(|(k, v)| (k, Value::from(v))).collect())
}

/// Wait until `pred` holds of the ledger's states (by count), with `what`.
fn wait_states(db: &Db, what: &str, timeout: Duration, pred: impl Fn(&Value) -> bool) {
    wait_for_or(
        what,
        timeout,
        || pred(&states(db)).then_some(()),
        || format!("states: {}", states(db)),
    );
}

fn count(states: &Value, state: &str) -> u64 {
    states[state].as_u64().unwrap_or(0)
}

/// A gate in front of the worker (`HERMES_CRON_WORKER`): while `dir/open`
/// is missing, a worker the gateway starts waits there (saying so in
/// `dir/waiting`) before it opens the ledger; the test decides when.
fn gated_worker(dir: &Path) -> PathBuf {
    let script = dir.join("gated-worker");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile [ ! -e {dir}/open ]; do touch {dir}/waiting; sleep 0.02; done\nexec {worker} \"$@\"\n",
            dir = dir.display(),
            worker = crate::support::cli::worker_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("open"), "").unwrap();
    script
}

#[test]
fn postgresql_stopped_mid_run_and_started_again_loses_and_doubles_nothing() {
    let server = PgServer::durable(None);
    let mut c = Cluster::on(&fresh_schema(&server.url()), &["solo"]);
    let gate = c.hosts[0].scratch().join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    let worker = gated_worker(&gate);
    c.hosts[0] = std::mem::take(&mut c.hosts[0]).with_env("HERMES_CRON_WORKER", &worker);
    let host = &c.hosts[0];
    let ledger = c.db();
    // Workers stamp their rows every second: an outage of a few seconds is
    // several heartbeat intervals of silence.
    host.write_config("cron:\n  heartbeat_interval_s: 1\n");
    // Claims every second: the server goes away while runs go on, while
    // they record, and (the gate) while workers just started open the ledger.
    let due = whole_second_after(Duration::from_secs(2));
    add_retried_jobs(&c, "steady", 20, "every 1s", &c.command(0.5), due);
    let mut gw = host.gateway(&[]);
    gw.wait_ready();
    wait_states(
        &ledger,
        "40 runs to succeed",
        Duration::from_secs(60),
        |s| count(s, "succeeded") >= 40,
    );

    // Workers of the next claims wait at the gate; the server goes; they go on.
    std::fs::remove_file(gate.join("open")).unwrap();
    let _ = std::fs::remove_file(gate.join("waiting"));
    wait_for_or(
        "a worker at the gate",
        Duration::from_secs(30),
        || gate.join("waiting").exists().then_some(()),
        || gw.log(),
    );
    server.pause();
    let down = wall_ms();
    std::fs::write(gate.join("open"), "").unwrap();
    // The command reaches no database, and says so.
    let status = host.run(&["status", "--json"]).json();
    assert_eq!(status["healthy"], false, "{status:#}");
    assert_eq!(status["cluster"]["reachable"], false, "{status:#}");
    // What it could not read it does not print as zeros.
    assert_eq!(status["ledger_read"], false, "{status:#}");
    let text = host.cmd(&["status"]).run().stdout;
    assert!(
        text.contains("jobs:       unknown: the ledger could not be read"),
        "{text}"
    );
    // The outage lasts beyond the stall threshold (3 heartbeat intervals).
    gw.wait_log("cannot be reached", Duration::from_secs(30));
    while wall_ms() - down < 8_000 {
        std::thread::sleep(Duration::from_millis(200));
    }
    server.resume();

    // The test's own connection went with the server; a new one.
    let ledger = c.db();
    let succeeded_before = count(&states(&ledger), "succeeded");
    wait_states(
        &ledger,
        "40 more runs to succeed after the outage",
        Duration::from_secs(90),
        |s| count(s, "succeeded") >= succeeded_before + 40,
    );
    gw.stop();
    wait_states(
        &ledger,
        "every row to be settled",
        Duration::from_secs(60),
        |s| count(s, "claimed") + count(s, "running") + count(s, "staged") == 0,
    );
    let rows = check_exactly_once(&c);
    let bad: Vec<_> = rows
        .iter()
        .filter(|r| {
            matches!(
                r.reason_code.as_deref(),
                Some("stalled" | "worker_exited" | "claimer_died")
            ) || r.state == "unknown"
        })
        .collect();
    assert!(
        bad.is_empty(),
        "runs recorded as if the outage were their fault:\n{bad:#?}\n{}\nworkers:\n{}",
        gw.log(),
        host.worker_log()
    );
}

#[test]
fn a_postgresql_server_out_of_connections_queues_the_runs_and_loses_none() {
    // A superuser may use every slot but none more: about eight workers at
    // a time beside the gateway's own connections and the test's one.
    let server = PgServer::durable(Some(12));
    let c = Cluster::on(&fresh_schema(&server.url()), &["solo"]);
    let host = &c.hosts[0];
    let ledger = c.db();
    let due = whole_second_after(Duration::from_secs(3));
    add_retried_jobs(&c, "burst", 40, "every 1h", &c.command(1.0), due);
    let mut gw = host.gateway(&[]);
    gw.wait_ready();
    // The bound is said: by the gateway, by `status`, and `doctor` warns.
    assert!(
        gw.log().contains("holds at most 68 database connections"),
        "{}",
        gw.log()
    );
    let status = host.run(&["status", "--json"]).json();
    let connections = &status["cluster"]["connections"];
    assert_eq!(connections["this_host_at_most"], 68, "{status:#}");
    assert_eq!(connections["server_allows"], 9, "{status:#}");
    let doctor: Value =
        serde_json::from_str(&host.cmd(&["doctor", "--json"]).run().stdout).expect("doctor --json");
    assert!(
        doctor["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "database_connections_short"),
        "{doctor:#}"
    );
    wait_states(&ledger, "40 runs to end", Duration::from_secs(120), |s| {
        let ended: u64 = ["succeeded", "failed", "unknown", "timed_out", "missed"]
            .iter()
            .map(|k| count(s, k))
            .sum();
        ended >= 40
    });
    gw.stop();
    let rows = check_exactly_once(&c);
    let not_run: Vec<_> = rows.iter().filter(|r| r.state != "succeeded").collect();
    assert!(
        not_run.is_empty(),
        "every run waits for a connection and runs:\n{not_run:#?}"
    );
    assert_eq!(rows.len(), 40);
    let worker_log = host.worker_log();
    assert!(
        worker_log.contains("retrying until the database answers again"),
        "no worker had to wait for a connection: the test did not starve the server\n{worker_log}"
    );
}
