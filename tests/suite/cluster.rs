//! Several hosts, one ledger: three gateways as three hosts (distinct
//! `HERMES_CRON_HOST`, their own homes) on one PostgreSQL schema of the
//! suite's server (`HERMES_CRON_TEST_PG`; `tests/run-all.sh` starts it).
//!
//! - a burst of due jobs runs exactly once, spread over the hosts;
//! - a gateway SIGKILLed mid-burst: its claimed-but-unstarted occurrences
//!   run elsewhere once, its started one ends `unknown` (`host_lost`) with
//!   its late outcome, none twice; it comes back and claims again;
//! - the partition test (a host cut off in a network namespace) is
//!   `cluster_partition.rs`.

use crate::support::cluster::{Cluster, LEASE_MS, check_exactly_once, whole_second_after};
use crate::support::gateway::Gateway;
use crate::support::waiting::wait_for_or;
use std::cell::RefCell;
use std::time::Duration;

const HOSTS: [&str; 3] = ["host-a", "host-b", "host-c"];

fn start(c: &Cluster, env: &[&[(&str, &str)]]) -> Vec<Gateway> {
    let mut gws: Vec<Gateway> = c
        .hosts
        .iter()
        .zip(env)
        .map(|(h, env)| h.gateway(env))
        .collect();
    for g in &mut gws {
        g.wait_ready();
    }
    gws
}

/// Wait until `count` rows exist and none is active.
fn settle(c: &Cluster, count: u64, timeout: Duration) {
    let last = RefCell::new(String::new());
    wait_for_or(
        &format!("{count} terminal rows"),
        timeout,
        || {
            let states = c.states();
            let total: u64 = states.values().sum();
            *last.borrow_mut() = format!("{states:?} by host {:?}", c.by_host());
            (total == count && c.active() == 0).then_some(())
        },
        || format!("last seen: {}\n{}", last.borrow(), c.hosts[0].diag()),
    );
}

#[test]
fn five_hundred_jobs_due_in_one_second_run_once_each_spread_over_three_hosts() {
    const JOBS: usize = 500;
    let c = Cluster::new(&HOSTS);
    let batch = [("HERMES_CRON_CLAIM_BATCH", "50")];
    let mut gws = start(&c, &[&batch, &batch, &batch]);
    let due = whole_second_after(Duration::from_secs(2));
    c.add_jobs("burst", JOBS, "every 1h", &c.command(0.0), due);
    settle(&c, JOBS as u64, Duration::from_secs(240));
    let rows = check_exactly_once(&c);
    assert!(rows.iter().all(|r| r.state == "succeeded"), "{rows:?}");
    assert_eq!(c.side_effect_counts().len(), JOBS, "each job ran once");
    let by_host = c.by_host();
    for h in HOSTS {
        assert!(
            by_host.get(h).copied().unwrap_or(0) > 0,
            "every host claimed part of the burst: {by_host:?}"
        );
    }
    eprintln!("500 same-second jobs over three hosts: {by_host:?}");
    for g in &mut gws {
        g.stop();
    }
    let leases = c.lease_states();
    assert!(
        leases.values().all(|s| s == "stopped"),
        "a clean stop leaves nothing to resolve: {leases:?}"
    );
}

#[test]
fn a_gateway_killed_mid_burst_leaves_its_claims_to_the_others_and_runs_nothing_twice() {
    const JOBS: usize = 90;
    let c = Cluster::new(&HOSTS);
    let batch: &[(&str, &str)] = &[("HERMES_CRON_CLAIM_BATCH", "15")];
    // host-c dies by SIGKILL right after releasing the first worker of its
    // first batch: that run has started; the rest of the batch is claimed
    // and never started (their held workers see EOF and exit untouched).
    let dying: &[(&str, &str)] = &[
        ("HERMES_CRON_CLAIM_BATCH", "15"),
        ("HERMES_CRON_CRASH_AT", "after_go"),
    ];
    let mut gws = start(&c, &[batch, batch, dying]);
    let due = whole_second_after(Duration::from_secs(2));
    // Long enough that host-c's started run is still going when the
    // survivors find its lease expired.
    c.add_jobs("burst", JOBS, "every 1h", &c.command(6.0), due);
    gws[2].wait_killed("after_go", Duration::from_secs(120));

    settle(&c, JOBS as u64, Duration::from_secs(240));
    let rows = check_exactly_once(&c);
    let leases = c.lease_states();
    assert_eq!(
        leases.get("host-c").map(String::as_str),
        Some("lost"),
        "{leases:?}"
    );
    let lost: Vec<_> = rows
        .iter()
        .filter(|r| r.reason_code.as_deref() == Some("host_lost"))
        .collect();
    assert!(
        !lost.is_empty() && lost.iter().all(|r| r.host.as_deref() == Some("host-c")),
        "host-c's started run ended unknown (host_lost): {rows:?}"
    );
    let taken: usize = gws[..2]
        .iter()
        .map(|g| crate::support::gateway::count(&g.log(), "taken over from a lost host"))
        .sum();
    assert!(
        taken >= 1,
        "host-c's unstarted claims were taken over and run elsewhere\n{}\n{}",
        gws[0].log(),
        gws[1].log()
    );
    assert_eq!(
        rows.iter().filter(|r| r.state == "succeeded").count() + lost.len(),
        JOBS,
        "every other occurrence succeeded, once: {rows:?}"
    );

    // Its worker finishes and reports: the row stays unknown, the late
    // outcome is kept beside it.
    wait_for_or(
        "the late outcome of host-c's started run",
        Duration::from_secs(60),
        || {
            let rows = c.rows();
            rows.iter()
                .filter(|r| r.reason_code.as_deref() == Some("host_lost"))
                .all(|r| r.late.as_deref() == Some("succeeded"))
                .then_some(())
        },
        || format!("{:?}", c.rows()),
    );
    let rows = check_exactly_once(&c);
    let lost_row = rows
        .iter()
        .find(|r| r.reason_code.as_deref() == Some("host_lost"))
        .unwrap();
    let json = c.hosts[0]
        .run(&["runs", "--json", "--limit", "1000"])
        .ok()
        .json();
    let shown = json
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == lost_row.id.as_str())
        .unwrap()
        .clone();
    assert_eq!(shown["state"], "unknown");
    assert_eq!(shown["host"], "host-c");
    assert_eq!(shown["late_outcome"]["state"], "succeeded", "{shown:#}");

    // host-c comes back: it registers again and claims like the others.
    let mut back = c.hosts[2].gateway(batch);
    back.wait_ready();
    wait_for_or(
        "host-c's lease to be live again",
        Duration::from_millis(LEASE_MS * 10),
        || (c.lease_states().get("host-c").map(String::as_str) == Some("live")).then_some(()),
        || format!("{:?}", c.lease_states()),
    );
    let due = whole_second_after(Duration::from_secs(1));
    c.add_jobs("after", 30, "every 1h", &c.command(0.0), due);
    settle(&c, JOBS as u64 + 30, Duration::from_secs(180));
    check_exactly_once(&c);
    let status = c.hosts[0].run(&["status", "--json"]).json();
    let hosts = status["cluster"]["hosts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(hosts.len(), 3, "status lists every host: {status:#}");
    back.stop();
    for g in &mut gws[..2] {
        g.stop();
    }
}

/// `cron.database` in `config.yaml` puts a home's ledger in PostgreSQL as
/// `HERMES_CRON_DATABASE` does (the variable wins); an invalid value (one
/// with a password) stops every command, naming the key and never the
/// password, rather than falling back to a SQLite file of its own.
#[test]
fn config_cron_database_keeps_the_ledger_in_postgresql_and_a_bad_one_stops_commands() {
    use crate::support::home::TestHome;
    use crate::support::ledger::{fresh_schema, pg_server};
    let url = fresh_schema(&pg_server());
    // The variable unset for this home (the PostgreSQL pass sets it).
    let h = TestHome::new().with_env("HERMES_CRON_DATABASE", "");
    crate::support::ledger::register(h.path(), &url);
    h.config_set("cron.database", &url);
    assert_eq!(
        h.run(&["config", "get", "cron.database"]).stdout.trim(),
        url
    );
    let id = h.add("on-pg", "every 1h", &[], &["true"]);
    assert!(
        !h.db_file().exists(),
        "a SQLite ledger was made beside the configured one"
    );
    let db = hermes_cron::db::Db::open_postgres(&url, false).unwrap();
    let found: Vec<String> = db
        .conn()
        .query_map("SELECT id FROM jobs", hermes_cron::params![], |r| {
            r.get("id")
        })
        .unwrap();
    assert_eq!(found, std::slice::from_ref(&id));
    let listed = h.run(&["list", "--json"]);
    assert!(listed.stdout.contains(&id), "{}", listed.stderr);

    h.write_config("cron:\n  database: postgresql://cron:s3cret@db.example/ledger\n");
    let out = h.run(&["list"]);
    assert_ne!(
        out.code(),
        0,
        "a bad cron.database was ignored: {}",
        out.stdout
    );
    assert!(
        out.stderr.contains("cron.database") && out.stderr.contains("password"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("s3cret"), "{}", out.stderr);
    assert!(!h.db_file().exists());
    let refused = h.run(&["config", "set", "cron.database", "host=db password=s3cret"]);
    assert_eq!(refused.code(), 2, "{}", refused.stderr);
    assert!(!refused.stderr.contains("s3cret"), "{}", refused.stderr);
}

/// A host's gateway sleeps toward its next due instant. When another host
/// edits a job, no file of this host changes (no inotify event): it is woken
/// by `NOTIFY` on the ledger's channel (its monitor period here is ten
/// minutes, the job's old next run a day away).
#[test]
fn a_job_edited_on_another_host_wakes_a_sleeping_gateway() {
    use crate::support::home::TestHome;
    use crate::support::ledger::{fresh_schema, pg_server};
    let url = fresh_schema(&pg_server());
    let here = TestHome::new()
        .on_database(&url)
        .with_env("HERMES_CRON_HOST", "host-a");
    let there = TestHome::new()
        .on_database(&url)
        .with_env("HERMES_CRON_HOST", "host-b");
    here.write_config("cron:\n  heartbeat_interval_s: 300\n");
    let id = there.add("later", "every 1d", &[], &["true"]);
    let mut gw = here.gateway(&[
        ("HERMES_CRON_HEARTBEAT_PERIOD_MS", "600000"),
        (
            "HERMES_CRON_LOG",
            "info,hermes_cron::daemon::event_loop=debug",
        ),
    ]);
    gw.wait_ready();
    gw.wait_log("sleeping until", Duration::from_secs(30));
    there.run(&["edit", &id, "--schedule", "every 3s"]).ok();
    let row = there.wait_until(
        "the job edited on host-b to run on host-a",
        Duration::from_secs(60),
        || {
            there
                .runs(Some(&id))
                .into_iter()
                .find(|r| r["state"] == "succeeded")
        },
    );
    assert_eq!(row["host"], "host-a");
    assert_eq!(gw.stop().code(), Some(0));
}

/// On a shared ledger the HTTP endpoint's `/healthz` is `status --json` with
/// the cluster: this host among the hosts, its lease live.
#[test]
fn healthz_on_a_shared_ledger_shows_every_host_and_its_lease() {
    use crate::support::http::get;
    let c = Cluster::new(&["host-a", "host-b"]);
    c.hosts[0].write_config("gateway:\n  http_listen: 127.0.0.1:0\n");
    let mut gws = start(&c, &[&[], &[]]);
    let addr = gws[0].http_addr();
    let hosts = wait_for_or(
        "both hosts live in /healthz",
        Duration::from_secs(60),
        || {
            let reply = get(addr, "/healthz");
            let json: serde_json::Value = serde_json::from_str(&reply.body).ok()?;
            let hosts = json["cluster"]["hosts"].as_array()?.clone();
            let live = hosts.iter().filter(|h| h["lease"] == "live").count();
            (reply.status == 200 && live == 2).then_some(hosts)
        },
        || get(addr, "/healthz").body,
    );
    let names: Vec<_> = hosts.iter().map(|h| h["host"].clone()).collect();
    assert_eq!(names, ["host-a", "host-b"]);
    for g in &mut gws {
        assert_eq!(g.stop().code(), Some(0));
    }
}
