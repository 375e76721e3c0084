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
/// reach the database (`error` says why).
pub fn status(
    me: &Host,
    conn: Option<&Conn>,
    error: Option<String>,
    database: String,
    gateway_view: Option<ClusterFile>,
    now: Timestamp,
) -> ClusterStatus {
    let (hosts, error) = match conn.map(|c| hosts(c, now)) {
        Some(Ok(h)) => (h, error),
        Some(Err(e)) => (Vec::new(), Some(crate::text::Chain(&e).to_string())),
        None => (Vec::new(), error),
    };
    ClusterStatus {
        host: me.name.clone(),
        labels: me.labels.clone(),
        database,
        gateway_view,
        reachable: error.is_none(),
        error,
        hosts,
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

/// `doctor`'s findings about the cluster.
pub fn findings(c: &ClusterStatus, now: Timestamp) -> Vec<Finding> {
    let mut out = Vec::new();
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
