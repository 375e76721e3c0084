//! The `hosts` table: each gateway's lease, read and written.
//!
//! A gateway registers its host at start (`live`, a fresh lease, its own
//! process as `gateway`), renews the lease every [`LeasePolicy::renew_every`]
//! from a thread of its own (so a long dispatch burst on the event loop
//! never lets it lapse), and marks it `stopped` when it stops cleanly.
//! Leases are timed by the database's clock ([`database_now`]): on
//! PostgreSQL the server's, so hosts whose clocks disagree still agree on
//! whose lease has run out.
//!
//! Declaring another host `lost` is a compare-and-set on the lease it was
//! seen with (`state = 'live' AND lease_until = ?`): of several survivors,
//! one wins, and it resolves the host's rows in the same transaction
//! (`reconcile::lost_hosts`). A renewal that finds its own host `lost` (cut
//! off, or frozen, past its lease) registers again: the survivors' decisions
//! stand, and from then on the host claims as before.

use super::host::Host;
use crate::db::{Conn, Row, SqlError, SqlResult, from_ms, to_ms};
use crate::params;
use crate::process::Owner;
use crate::schedule::Timestamp;
use hermes_cron_core::cluster::{HostLease, HostState, LeasePolicy};
use std::time::Duration;

/// The lease policy: a lease of `ttl` (the test knob), else 15 s.
pub(crate) fn lease_policy(ttl: Option<Duration>) -> LeasePolicy {
    ttl.map(LeasePolicy::with_ttl).unwrap_or_default()
}

/// The database's clock: PostgreSQL's server clock; for SQLite (one host),
/// `ours`.
pub fn database_now(conn: &Conn, ours: Timestamp) -> SqlResult<Timestamp> {
    if !conn.caps().server_clock {
        return Ok(ours);
    }
    conn.query_row(
        "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now_ms",
        params![],
        |r| r.get::<_, i64>("now_ms"),
    )
    .map(from_ms)
}

const COLUMNS: &str =
    "host, labels, gateway, state, lease_until, renewed_at, started_at, lost_at, lost_by, version";

fn lease_from_row(r: &Row) -> SqlResult<HostLease> {
    let labels: String = r.get("labels")?;
    let state: String = r.get("state")?;
    Ok(HostLease {
        host: r.get("host")?,
        labels: labels
            .split(',')
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        gateway: r.get("gateway")?,
        state: state
            .parse::<HostState>()
            .map_err(|e| SqlError::Column(format!("hosts.state: {e}")))?,
        lease_until: from_ms(r.get("lease_until")?),
        renewed_at: from_ms(r.get("renewed_at")?),
        started_at: from_ms(r.get("started_at")?),
        lost_at: r.get::<_, Option<i64>>("lost_at")?.map(from_ms),
        lost_by: r.get("lost_by")?,
        version: r.get("version")?,
    })
}

/// Every host that ever registered, by name.
pub fn read_leases(conn: &Conn) -> SqlResult<Vec<HostLease>> {
    conn.query_map(
        &format!("SELECT {COLUMNS} FROM hosts ORDER BY host"),
        params![],
        lease_from_row,
    )
}

/// What a renewal found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renewal {
    Renewed,
    /// The survivors declared this host lost (by `by`); it registered again.
    WasLost {
        by: Option<String>,
    },
    /// Another gateway process registered under this host's name.
    Replaced {
        by: Option<String>,
    },
}

/// This gateway's lease.
#[derive(Clone, Debug)]
pub struct Leases {
    pub host: Host,
    pub gateway: Owner,
    pub policy: LeasePolicy,
}

impl Leases {
    /// Register this host: `live`, a fresh lease from `now`.
    pub fn register(&self, conn: &Conn, now: Timestamp) -> SqlResult<()> {
        conn.execute(
            "INSERT INTO hosts (host, labels, gateway, state, lease_until, renewed_at, started_at,
                 lost_at, lost_by, version)
             VALUES (?1, ?2, ?3, 'live', ?4, ?5, ?5, NULL, NULL, ?6)
             ON CONFLICT (host) DO UPDATE SET labels = excluded.labels,
                 gateway = excluded.gateway, state = 'live', lease_until = excluded.lease_until,
                 renewed_at = excluded.renewed_at, started_at = excluded.started_at,
                 lost_at = NULL, lost_by = NULL, version = excluded.version",
            params![
                self.host.name,
                self.host.labels.join(","),
                self.gateway.to_string(),
                to_ms(self.policy.until(now)),
                to_ms(now),
                env!("CARGO_PKG_VERSION"),
            ],
        )?;
        Ok(())
    }

    /// Renew the lease at `now` (registering again when the survivors had
    /// declared this host lost).
    pub fn renew(&self, conn: &Conn, now: Timestamp) -> SqlResult<Renewal> {
        let n = conn.execute(
            "UPDATE hosts SET lease_until = ?3, renewed_at = ?4
             WHERE host = ?1 AND gateway = ?2 AND state = 'live'",
            params![
                self.host.name,
                self.gateway.to_string(),
                to_ms(self.policy.until(now)),
                to_ms(now)
            ],
        )?;
        if n == 1 {
            return Ok(Renewal::Renewed);
        }
        let row = conn.query_opt(
            &format!("SELECT {COLUMNS} FROM hosts WHERE host = ?1"),
            params![self.host.name],
            lease_from_row,
        )?;
        let me = self.gateway.to_string();
        match row {
            Some(l) if l.gateway.as_deref() != Some(me.as_str()) && l.state == HostState::Live => {
                Ok(Renewal::Replaced { by: l.gateway })
            }
            Some(l) => {
                self.register(conn, now)?;
                Ok(Renewal::WasLost { by: l.lost_by })
            }
            None => {
                self.register(conn, now)?;
                Ok(Renewal::WasLost { by: None })
            }
        }
    }

    /// The gateway stops cleanly: its lease ends now (nothing of it is left
    /// to resolve: it recorded its own claims before stopping).
    pub fn stop(&self, conn: &Conn, now: Timestamp) -> SqlResult<()> {
        conn.execute(
            "UPDATE hosts SET state = 'stopped', lease_until = ?3, renewed_at = ?3
             WHERE host = ?1 AND gateway = ?2 AND state = 'live'",
            params![self.host.name, self.gateway.to_string(), to_ms(now)],
        )?;
        Ok(())
    }
}

/// Declare `lease` lost, as the survivor `by` at `now`: a compare-and-set
/// on the lease as it was seen. False: it was renewed, stopped, or another
/// survivor declared it first.
pub fn mark_lost(conn: &Conn, lease: &HostLease, by: &str, now: Timestamp) -> SqlResult<bool> {
    let n = conn.execute(
        "UPDATE hosts SET state = 'lost', lost_at = ?3, lost_by = ?4
         WHERE host = ?1 AND state = 'live' AND lease_until = ?2 AND lease_until < ?3",
        params![lease.host, to_ms(lease.lease_until), to_ms(now), by],
    )?;
    Ok(n == 1)
}
