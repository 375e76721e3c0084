//! What operators see of a cluster (several hosts on one PostgreSQL
//! ledger): every host and its lease, the rows each holds, whether this
//! host's gateway and this command reach the database; for `status`
//! (`cluster` in its JSON) and `doctor` (findings `database_unreachable`,
//! `host_lease_expired`, `host_lost`).

use super::finding::Finding;
use crate::cluster::{Host, database_now, judge_lease, read_leases};
use crate::db::{Conn, SqlResult};
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::cluster::{ClusterFile, HostLease};
use std::collections::BTreeMap;

/// How far back `doctor` reports hosts declared lost.
const RECENT_LOSS: chrono::Duration = chrono::Duration::days(7);

/// One host of the cluster.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HostStatus {
    pub host: String,
    pub labels: Vec<String>,
    /// `live`, `expired`, `lost` or `stopped`.
    pub lease: &'static str,
    pub lease_detail: String,
    pub lease_until: Timestamp,
    pub renewed_at: Timestamp,
    pub started_at: Timestamp,
    pub lost_at: Option<Timestamp>,
    pub lost_by: Option<String>,
    pub gateway: Option<String>,
    pub version: String,
    /// Its rows now `claimed` (or `staged`: a worker holds it, not started)
    /// and `running`.
    pub claimed: u64,
    pub running: u64,
}

/// The cluster as `status` shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClusterStatus {
    /// This host.
    pub host: String,
    pub labels: Vec<String>,
    /// The database, its password hidden.
    pub database: String,
    /// What this host's gateway last wrote of its connection and lease
    /// (None: no gateway has run here on this ledger).
    pub gateway_view: Option<ClusterFile>,
    /// Whether this command reached the database.
    pub reachable: bool,
    pub error: Option<String>,
    /// Every host that ever registered, by name (empty when unreachable).
    pub hosts: Vec<HostStatus>,
    /// The database connections this host may hold, and the server's.
    pub connections: Connections,
    /// The connection's TLS: encrypted, and what of the server is checked.
    pub tls: Option<LedgerTls>,
}

/// The database connections of a host, against what the server allows.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Connections {
    /// The most this host holds at once: its running workers' (the runs
    /// its gateway starts at once, `cron.max_parallel_jobs`) and the
    /// gateway's own.
    pub this_host_at_most: u32,
    /// What the server allows other than superusers (`max_connections`
    /// less `superuser_reserved_connections`); None when unreachable.
    pub server_allows: Option<u32>,
}

/// A ledger connection's TLS, as `status` and `doctor` say it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LedgerTls {
    /// `sslmode` (libpq's default when the string does not say: `prefer`).
    pub sslmode: &'static str,
    /// Every host is a Unix socket: nothing crosses a network.
    pub local: bool,
    /// Whether this command's connection is encrypted (None: it has none).
    pub encrypted: Option<bool>,
    /// What of the server's certificate is checked.
    pub checked: crate::db::TlsChecked,
}

/// The TLS of the ledger at `url`, and whether `conn` (this command's
/// connection to it, if it has one) is encrypted, as the server says.
fn ledger_tls(url: &str, conn: Option<&Conn>) -> Option<LedgerTls> {
    let (sslmode, local, checked) = crate::db::tls_of(url)?;
    let encrypted = conn.and_then(|c| {
        c.query_opt(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            params![],
            |r| r.get::<_, bool>("ssl"),
        )
        .ok()
        .flatten()
    });
    Some(LedgerTls {
        sslmode,
        local,
        encrypted,
        checked,
    })
}

/// What the server allows other than superusers.
fn server_allows(conn: &Conn) -> SqlResult<u32> {
    conn.query_row(
        "SELECT CAST(current_setting('max_connections') AS INTEGER)
              - CAST(current_setting('superuser_reserved_connections') AS INTEGER) AS n",
        params![],
        |r| r.get::<_, i64>("n"),
    )
    .map(|n| n.max(0) as u32)
}

impl ClusterStatus {
    /// This host's gateway cannot reach the database (by its own last word).
    pub fn gateway_cut_off(&self) -> bool {
        self.gateway_view.as_ref().is_some_and(|v| !v.reachable)
    }
}

/// Every host and its lease as seen now (the database's clock), with its
/// active rows counted.
pub fn hosts(conn: &Conn, ours: Timestamp) -> SqlResult<Vec<HostStatus>> {
    let now = database_now(conn, ours)?;
    let leases = read_leases(conn)?;
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (host, state, n) in conn.query_map(
        "SELECT host, state, COUNT(*) FROM executions
         WHERE state IN ('claimed', 'staged', 'running') AND host IS NOT NULL
         GROUP BY host, state",
        params![],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, u64>(2)?,
            ))
        },
    )? {
        counts.insert((host, state), n);
    }
    let count = |h: &str, s: &str| counts.get(&(h.to_string(), s.to_string())).copied();
    Ok(leases
        .into_iter()
        .map(|l: HostLease| {
            let view = judge_lease(&l, now);
            HostStatus {
                lease: view.word(),
                lease_detail: view.describe(),
                claimed: count(&l.host, "claimed").unwrap_or(0)
                    + count(&l.host, "staged").unwrap_or(0),
                running: count(&l.host, "running").unwrap_or(0),
                host: l.host,
                labels: l.labels,
                lease_until: l.lease_until,
                renewed_at: l.renewed_at,
                started_at: l.started_at,
                lost_at: l.lost_at,
                lost_by: l.lost_by,
                gateway: l.gateway,
                version: l.version,
            }
        })
        .collect())
}

/// The status of the cluster: `conn` is None when this command could not
/// reach the database (`error` says why); `runs_at_once`: this host's bound
/// (`CronConfig::parallel_bound`).
pub fn status(
    me: &Host,
    conn: Option<&Conn>,
    error: Option<String>,
    url: &str,
    gateway_view: Option<ClusterFile>,
    runs_at_once: u32,
    now: Timestamp,
) -> ClusterStatus {
    let (hosts, error) = match conn.map(|c| hosts(c, now)) {
        Some(Ok(h)) => (h, error),
        Some(Err(e)) => (Vec::new(), Some(crate::text::Chain(&e).to_string())),
        None => (Vec::new(), error),
    };
    let connections = Connections {
        this_host_at_most: runs_at_once + hermes_cron_core::config::GATEWAY_CONNECTIONS,
        server_allows: conn.and_then(|c| server_allows(c).ok()),
    };
    ClusterStatus {
        host: me.name.clone(),
        labels: me.labels.clone(),
        database: crate::db::Location::Postgres(url.to_string()).describe(),
        gateway_view,
        reachable: error.is_none(),
        error,
        hosts,
        connections,
        tls: ledger_tls(url, conn),
    }
}

/// The text form, appended to `status`.
pub fn render(c: &ClusterStatus, viewer: crate::schedule::Tz) -> String {
    let mut out = format!(
        "cluster:    this host {}{} on {}\n",
        c.host,
        if c.labels.is_empty() {
            String::new()
        } else {
            format!(" (labels {})", c.labels.join(","))
        },
        c.database
    );
    if let Some(v) = c.gateway_view.as_ref().filter(|v| !v.reachable) {
        out.push_str(&format!(
            "            CUT OFF: this host's gateway cannot reach the database{}: it claims nothing; its running workers keep running and record their outcomes when it returns ({})\n",
            v.unreachable_since
                .map(|s| format!(" since {}", crate::text::local_time(s, viewer)))
                .unwrap_or_default(),
            v.error.as_deref().unwrap_or("-")
        ));
    }
    if !c.reachable {
        out.push_str(&format!(
            "            this command cannot reach the database: {}\n",
            c.error.as_deref().unwrap_or("-")
        ));
    }
    if let Some(tls) = &c.tls {
        out.push_str(&format!("            connection: {}\n", describe_tls(tls)));
    }
    out.push_str(&format!(
        "            this host holds at most {} database connections (cron.max_parallel_jobs running workers and the gateway's {}){}\n",
        c.connections.this_host_at_most,
        hermes_cron_core::config::GATEWAY_CONNECTIONS,
        c.connections
            .server_allows
            .map(|n| format!("; the server allows {n}"))
            .unwrap_or_default()
    ));
    for h in &c.hosts {
        out.push_str(&format!(
            "  host {:<20} {:<8} {} ({} claimed, {} running){}\n",
            h.host,
            h.lease,
            h.lease_detail,
            h.claimed,
            h.running,
            if h.labels.is_empty() {
                String::new()
            } else {
                format!(" labels {}", h.labels.join(","))
            }
        ));
    }
    out
}

/// The connection's TLS in words.
fn describe_tls(tls: &LedgerTls) -> String {
    use crate::db::TlsChecked;
    let encrypted = match (tls.local, tls.encrypted) {
        (true, _) => "a Unix socket (no network)",
        (false, Some(true)) => "encrypted (TLS)",
        (false, Some(false)) => "NOT encrypted",
        (false, None) => "not connected",
    };
    let checked = match tls.checked {
        TlsChecked::ChainAndName => "the server's certificate and name verified",
        TlsChecked::Chain => "the server's certificate verified, not its name",
        TlsChecked::Nothing => "the server NOT verified",
    };
    format!("{encrypted}, {checked} (sslmode={})", tls.sslmode)
}

/// `doctor`'s findings about the cluster.
pub fn findings(c: &ClusterStatus, now: Timestamp) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(tls) = c.tls.as_ref().filter(|t| !t.local) {
        let clear = tls.encrypted == Some(false);
        if clear || tls.checked == crate::db::TlsChecked::Nothing {
            out.push(Finding {
                code: "ledger_not_verified",
                job_id: None,
                job_name: None,
                problem: format!(
                    "the shared ledger's connection is {}: job commands, their environments and the database password cross the network {}, and anyone in between could pose as the server and rewrite claims",
                    describe_tls(tls),
                    if clear { "in clear text" } else { "encrypted but to an unproven server" }
                ),
                fix: "set sslmode=verify-full and sslrootcert=<the CA's certificate> in cron.database (or HERMES_CRON_DATABASE), and `ssl = on` on the server".into(),
            });
        }
    }
    let live = c.hosts.iter().filter(|h| h.lease == "live").count().max(1) as u32;
    let wanted = live.saturating_mul(c.connections.this_host_at_most);
    if let Some(allows) = c.connections.server_allows.filter(|n| wanted > *n) {
        out.push(Finding {
            code: "database_connections_short",
            job_id: None,
            job_name: None,
            problem: format!(
                "{live} live host(s) may hold up to {} database connections each ({wanted} in all), and the server allows {allows}: at the busiest, runs wait for a connection and start late (they are never lost)",
                c.connections.this_host_at_most
            ),
            fix: "lower `cron.max_parallel_jobs` on the hosts, or raise `max_connections` on the server".into(),
        });
    }
    if c.gateway_cut_off() || !c.reachable {
        let who = if c.gateway_cut_off() {
            "this host's gateway"
        } else {
            "this command"
        };
        out.push(Finding {
            code: "database_unreachable",
            job_id: None,
            job_name: None,
            problem: format!(
                "{who} cannot reach the shared database {} ({}): this host claims nothing until it answers; its running workers keep running and retry their final write",
                c.database,
                c.gateway_view
                    .as_ref()
                    .and_then(|v| v.error.clone())
                    .or_else(|| c.error.clone())
                    .unwrap_or_else(|| "-".into())
            ),
            fix: "check the network path to the database server and the server itself; nothing needs restarting: the gateway reconnects by itself, and the other hosts keep claiming".into(),
        });
    }
    for h in &c.hosts {
        match h.lease {
            "expired" => out.push(Finding {
                code: "host_lease_expired",
                job_id: None,
                job_name: None,
                problem: format!(
                    "host {}'s lease {} ({} claimed, {} running rows): no surviving gateway has resolved it",
                    h.host, h.lease_detail, h.claimed, h.running
                ),
                fix: "start a gateway on another host (or on that one); a surviving gateway resolves it within a lease once its own lease has held for one".into(),
            }),
            "lost" if h.lost_at.is_some_and(|at| now - at < RECENT_LOSS) => out.push(Finding {
                code: "host_lost",
                job_id: None,
                job_name: None,
                problem: format!(
                    "host {} was {}: its started runs were recorded unknown (host_lost), its unstarted claims run elsewhere",
                    h.host, h.lease_detail
                ),
                fix: format!(
                    "see why its gateway stopped renewing (`hermes-cron status` on {}); `hermes-cron runs --state unknown` lists what it left, with late outcomes when its workers finished",
                    h.host
                ),
            }),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, lease: &'static str) -> HostStatus {
        let t = Timestamp::default();
        HostStatus {
            host: name.into(),
            labels: Vec::new(),
            lease,
            lease_detail: String::new(),
            lease_until: t,
            renewed_at: t,
            started_at: t,
            lost_at: None,
            lost_by: None,
            gateway: None,
            version: String::new(),
            claimed: 0,
            running: 0,
        }
    }

    fn cluster(hosts: Vec<HostStatus>, at_most: u32, allows: Option<u32>) -> ClusterStatus {
        ClusterStatus {
            host: "a".into(),
            labels: Vec::new(),
            database: "db".into(),
            gateway_view: None,
            reachable: true,
            error: None,
            hosts,
            connections: Connections {
                this_host_at_most: at_most,
                server_allows: allows,
            },
            tls: None,
        }
    }

    /// Live hosts times what each may hold, against what the server allows.
    #[test]
    fn doctor_says_when_the_hosts_may_want_more_connections_than_the_server_allows() {
        let codes = |c: &ClusterStatus| -> Vec<&str> {
            findings(c, Timestamp::default())
                .iter()
                .map(|f| f.code)
                .collect()
        };
        let three = vec![host("a", "live"), host("b", "live"), host("c", "stopped")];
        let short = cluster(three.clone(), 68, Some(97));
        assert_eq!(codes(&short), ["database_connections_short"]);
        let f = &findings(&short, Timestamp::default())[0];
        assert!(f.problem.contains("2 live host(s)") && f.problem.contains("136 in all"));
        assert!(f.fix.contains("cron.max_parallel_jobs") && f.fix.contains("max_connections"));
        assert!(codes(&cluster(three.clone(), 48, Some(97))).is_empty());
        assert!(
            codes(&cluster(three, 68, None)).is_empty(),
            "unknown: nothing said"
        );
    }
    /// A connection that crosses a network and does not prove the server.
    #[test]
    fn doctor_says_when_the_ledger_connection_is_not_verified() {
        use crate::db::TlsChecked;
        let with = |local, encrypted, checked| {
            let mut c = cluster(vec![host("a", "live")], 8, Some(97));
            c.tls = Some(LedgerTls {
                sslmode: "prefer",
                local,
                encrypted,
                checked,
            });
            findings(&c, Timestamp::default())
        };
        let clear = with(false, Some(false), TlsChecked::Nothing);
        assert_eq!(clear[0].code, "ledger_not_verified");
        assert!(
            clear[0].problem.contains("in clear text"),
            "{}",
            clear[0].problem
        );
        let unproven = with(false, Some(true), TlsChecked::Nothing);
        assert!(unproven[0].problem.contains("unproven server"));
        assert!(with(false, Some(true), TlsChecked::ChainAndName).is_empty());
        assert!(
            with(true, Some(false), TlsChecked::Nothing).is_empty(),
            "a Unix socket"
        );
    }
}
