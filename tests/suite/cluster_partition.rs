//! One host cut off from the database for two lease periods, then healed.
//!
//! The test makes its own network: a namespace (`ip netns`) holding host-c,
//! joined to the root namespace by a veth pair with link-local addresses;
//! its own PostgreSQL server (`support::pg_server`), listening on the
//! root end. host-a and host-b (root namespace) and host-c (inside) reach it
//! over TCP. Cutting host-c off is taking its end of the link down, inside
//! its namespace; healing is bringing it back up. While cut off host-c
//! claims nothing and says so (`status`, `doctor`); its pinned runs keep
//! running, the survivors record them `unknown` (`host_lost`) once its lease
//! has run out, and when the link is back its workers' outcomes are kept as
//! late outcomes; no occurrence runs twice and every one is recorded.
//! Needs root (network namespaces), as `tests/run-all.sh` runs.

use crate::support::cluster::{Cluster, LEASE_MS, check_exactly_once, whole_second_after};
use crate::support::pg_server::PgServer;
use crate::support::waiting::wait_for_or;
use std::process::Command;
use std::time::Duration;

/// The root end's address (the server listens there) and the namespace's.
const SERVER_ADDR: &str = "169.254.77.1";
const HOST_C_ADDR: &str = "169.254.77.2";

fn run(argv: &[&str]) {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    assert!(
        out.status.success(),
        "{argv:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace joined to ours by a veth pair; removed on drop.
struct Netns {
    name: String,
    outer: String,
    inner: String,
}

impl Netns {
    fn new() -> Netns {
        let tag = std::process::id() % 100_000;
        let n = Netns {
            name: format!("hc-part-{tag}"),
            outer: format!("hco{tag}"),
            inner: format!("hci{tag}"),
        };
        let _ = Command::new("ip").args(["netns", "del", &n.name]).output();
        let _ = Command::new("ip").args(["link", "del", &n.outer]).output();
        run(&["ip", "netns", "add", &n.name]);
        run(&[
            "ip", "link", "add", &n.outer, "type", "veth", "peer", "name", &n.inner,
        ]);
        run(&["ip", "link", "set", &n.inner, "netns", &n.name]);
        run(&[
            "ip",
            "addr",
            "add",
            &format!("{SERVER_ADDR}/30"),
            "dev",
            &n.outer,
        ]);
        run(&["ip", "link", "set", &n.outer, "up"]);
        n.exec(&[
            "ip",
            "addr",
            "add",
            &format!("{HOST_C_ADDR}/30"),
            "dev",
            &n.inner,
        ]);
        n.exec(&["ip", "link", "set", &n.inner, "up"]);
        n.exec(&["ip", "link", "set", "lo", "up"]);
        n
    }

    fn exec(&self, argv: &[&str]) {
        let mut full = vec!["ip", "netns", "exec", &self.name];
        full.extend_from_slice(argv);
        run(&full);
    }

    fn wrapper(&self) -> Vec<&str> {
        vec!["ip", "netns", "exec", &self.name]
    }

    /// Cut the namespace off: its end of the link goes down.
    fn cut(&self) {
        self.exec(&["ip", "link", "set", &self.inner, "down"]);
    }

    fn heal(&self) {
        self.exec(&["ip", "link", "set", &self.inner, "up"]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
        let _ = Command::new("ip")
            .args(["link", "del", &self.outer])
            .output();
    }
}

#[test]
fn a_host_cut_off_for_two_lease_periods_and_healed_runs_nothing_twice_and_records_everything() {
    let net = Netns::new();
    let _server = PgServer::start(Some(SERVER_ADDR), &[], false);
    let base =
        format!("host={SERVER_ADDR} port=5432 user=postgres dbname=postgres connect_timeout=2");
    let url = crate::support::ledger::fresh_schema(&base);
    let mut c = Cluster::on(&url, &["host-a", "host-b", "host-c"]);
    let wrapper = net.wrapper();
    c.hosts[2] = std::mem::take(&mut c.hosts[2]).wrapped_in(&wrapper);

    let due = whole_second_after(Duration::from_secs(3));
    // Pinned to host-c, long: running there when it is cut off.
    c.add_jobs_on(
        "pinned",
        3,
        "every 1h",
        &c.command(12.0),
        due,
        Some("host-c"),
    );
    // Anyone's, short, every 2 s: claimed throughout, before, during and after the cut.
    c.add_jobs("tick", 10, "every 2s", &c.command(0.0), due);

    let mut gws: Vec<_> = c.hosts.iter().map(|h| h.gateway(&[])).collect();
    for g in &mut gws {
        g.wait_ready();
    }
    wait_for_or(
        "host-c's pinned runs to be running",
        Duration::from_secs(60),
        || {
            let rows = c.rows();
            (rows
                .iter()
                .filter(|r| r.state == "running" && r.host.as_deref() == Some("host-c"))
                .count()
                == 3)
                .then_some(())
        },
        || format!("{:?}\n{}", c.rows(), c.hosts[2].diag()),
    );

    net.cut();
    let cut_at = hermes_cron::clock::monotonic();
    // host-c notices and says so; the survivors find its lease expired.
    wait_for_or(
        "host-c's status to say it is cut off",
        Duration::from_secs(60),
        || {
            let out = c.hosts[2].cmd(&["status", "--json"]).run();
            let json: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
            (json["cluster"]["gateway_view"]["reachable"] == false && json["healthy"] == false)
                .then_some(())
        },
        || c.hosts[2].diag(),
    );
    let doctor = c.hosts[2].cmd(&["doctor", "--json"]).run();
    assert!(
        doctor.stdout.contains("database_unreachable"),
        "doctor names the partition\n{doctor}"
    );
    wait_for_or(
        "the survivors to declare host-c lost",
        Duration::from_secs(60),
        || (c.lease_states().get("host-c").map(String::as_str) == Some("lost")).then_some(()),
        || format!("{:?}\n{}", c.lease_states(), c.hosts[0].diag()),
    );
    let two_leases = Duration::from_millis(2 * LEASE_MS);
    if let Some(left) = two_leases.checked_sub(hermes_cron::clock::elapsed(cut_at)) {
        std::thread::sleep(left);
    }
    net.heal();

    wait_for_or(
        "host-c back: its lease live again",
        Duration::from_secs(60),
        || (c.lease_states().get("host-c").map(String::as_str) == Some("live")).then_some(()),
        || format!("{:?}\n{}", c.lease_states(), c.hosts[2].diag()),
    );
    // Its pinned workers ran on through the cut; their outcomes come late.
    wait_for_or(
        "the late outcomes of host-c's pinned runs",
        Duration::from_secs(90),
        || {
            let rows = c.rows();
            let lost: Vec<_> = rows
                .iter()
                .filter(|r| r.reason_code.as_deref() == Some("host_lost"))
                .collect();
            (!lost.is_empty() && lost.iter().all(|r| r.late.is_some())).then_some(())
        },
        || format!("{:?}\n{}", c.rows(), c.hosts[2].diag()),
    );
    for g in &mut gws {
        g.stop();
    }
    wait_for_or(
        "every row terminal",
        Duration::from_secs(90),
        || (c.active() == 0).then_some(()),
        || format!("{:?}", c.rows()),
    );
    let rows = check_exactly_once(&c);
    let lost: Vec<_> = rows
        .iter()
        .filter(|r| r.reason_code.as_deref() == Some("host_lost"))
        .collect();
    assert!(
        lost.iter()
            .all(|r| r.host.as_deref() == Some("host-c") && r.late.as_deref() == Some("succeeded")),
        "host-c's started runs: unknown (host_lost), each with its late outcome: {lost:?}"
    );
    // Which survivor claims a pass is whichever takes the tick lock first
    // (10 jobs are less than a batch, so one takes them all): together they
    // must have kept claiming, either may have taken every pass.
    let by_host = c.by_host();
    let survivors: u64 = ["host-a", "host-b"]
        .iter()
        .map(|h| by_host.get(*h).copied().unwrap_or(0))
        .sum();
    assert!(survivors > 0, "the survivors kept claiming: {by_host:?}");
    eprintln!("partition: {:?}, rows by host {by_host:?}", c.states());
}
