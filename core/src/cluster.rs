//! Several gateways on several hosts sharing one ledger (PostgreSQL): host
//! names and labels, the lease each gateway renews, and how a lease is
//! judged. Pure: `now` is passed in (the database server's clock, so hosts
//! whose clocks disagree still agree on whose lease has expired).
//!
//! A host's lease is a row of `hosts`: `live` while its gateway renews it
//! every [`LeasePolicy::renew_every`], `stopped` when the gateway stopped
//! cleanly, `lost` once a surviving gateway found it expired and resolved
//! its rows (`reconcile::judge_lost_row`); see `src/cluster/lease.rs` for a
//! gateway that finds its own lease `lost`.

use crate::schedule::{Timestamp, format_duration};
use std::time::Duration;

/// Longest host name or label.
pub const MAX_NAME: usize = 64;

/// Whether `c` may be in a host name or a label: `A-Z a-z 0-9 . : -`.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-')
}

/// Whether `s` can name a host or a label (and so a pin, `--on`): 1 to 64
/// characters of `A-Z a-z 0-9 . : -`. No SQL `LIKE` wildcard can occur.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_NAME && s.chars().all(name_char)
}

/// A system host name made valid: other characters become `-`, cut to
/// [`MAX_NAME`]; `localhost` when nothing is left.
pub fn host_name_from_system(raw: &str) -> String {
    let cleaned: String = raw
        .trim()
        .chars()
        .map(|c| if name_char(c) { c } else { '-' })
        .take(MAX_NAME)
        .collect();
    if cleaned.is_empty() {
        "localhost".into()
    } else {
        cleaned
    }
}

/// Labels from a comma- or space-separated list; the invalid ones apart.
pub fn parse_labels(text: &str) -> (Vec<String>, Vec<String>) {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for l in text
        .split([',', ' '])
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        if valid_name(l) {
            if !ok.iter().any(|o: &String| o == l) {
                ok.push(l.to_string());
            }
        } else {
            bad.push(l.to_string());
        }
    }
    (ok, bad)
}

/// `cron.database`: a PostgreSQL connection string (a `postgresql://` or
/// `postgres://` URL, or `key=value` pairs), trimmed; one holding a password
/// is refused: `config.yaml` is printed by `config show` and read by Hermes
/// too. A password goes in `PGPASSWORD`, or the whole string in
/// `HERMES_CRON_DATABASE`, both in the gateway's environment.
pub fn check_database(text: &str) -> Result<String, &'static str> {
    let text = text.trim();
    let is_url = text.starts_with("postgresql://") || text.starts_with("postgres://");
    if !is_url && !text.contains('=') {
        return Err("is not a PostgreSQL connection string");
    }
    if text.chars().any(char::is_control) {
        return Err("contains a control character");
    }
    let has_password = if is_url {
        let rest = text.split_once("://").map_or("", |(_, r)| r);
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        let in_userinfo = authority
            .rsplit_once('@')
            .is_some_and(|(user, _)| user.contains(':'));
        let in_query = rest
            .split_once('?')
            .is_some_and(|(_, q)| q.split('&').any(|kv| kv.starts_with("password=")));
        in_userinfo || in_query
    } else {
        text.split_whitespace()
            .any(|kv| kv.trim_start().starts_with("password"))
    };
    if has_password {
        return Err(
            "holds a password (config.yaml is shown by `config show`; give it in \
             PGPASSWORD, or the whole string in HERMES_CRON_DATABASE)",
        );
    }
    Ok(text.to_string())
}

/// How long a lease lasts and how often it is renewed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeasePolicy {
    /// How long a lease lasts unrenewed.
    pub ttl: Duration,
    /// How often its gateway renews it.
    pub renew_every: Duration,
}

impl LeasePolicy {
    /// The default: a 15 s lease, renewed every 3 s.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(15);

    /// A lease of `ttl` (at least 1 s), renewed five times per lease.
    pub fn with_ttl(ttl: Duration) -> LeasePolicy {
        let ttl = ttl.max(Duration::from_secs(1));
        LeasePolicy {
            ttl,
            renew_every: ttl / 5,
        }
    }

    /// The instant a lease renewed at `now` runs out.
    pub fn until(&self, now: Timestamp) -> Timestamp {
        now + chrono::Duration::from_std(self.ttl).unwrap_or(chrono::Duration::seconds(15))
    }
}

impl Default for LeasePolicy {
    fn default() -> LeasePolicy {
        LeasePolicy::with_ttl(LeasePolicy::DEFAULT_TTL)
    }
}

/// The state of a host's lease row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostState {
    /// Its gateway renews the lease.
    Live,
    /// Its lease expired and a survivor resolved its rows.
    Lost,
    /// Its gateway stopped cleanly.
    Stopped,
}

crate::text_enum_impls!(HostState, "host state", {
    Live => "live", Lost => "lost", Stopped => "stopped",
});
crate::text_enum_serde!(HostState);

/// One host's lease row, as read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HostLease {
    /// The host's name.
    pub host: String,
    /// Its labels (what `--on` may name besides the host).
    pub labels: Vec<String>,
    /// The gateway process that holds it (`gateway:pid:start`).
    pub gateway: Option<String>,
    /// The row's state.
    pub state: HostState,
    /// When the lease runs out (the database's clock).
    pub lease_until: Timestamp,
    /// When it was last renewed (the database's clock).
    pub renewed_at: Timestamp,
    /// When its gateway registered (the database's clock).
    pub started_at: Timestamp,
    /// When a survivor declared it lost (None: never, or registered again since).
    pub lost_at: Option<Timestamp>,
    /// The host whose gateway found it expired.
    pub lost_by: Option<String>,
    /// The version of the gateway that last wrote it.
    pub version: String,
}

/// What a lease says at `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseView {
    /// Renewed in time.
    Live {
        /// How long it is still valid.
        left: Duration,
    },
    /// Not renewed: a survivor resolves the host's rows.
    Expired {
        /// How long ago it ran out.
        ago: Duration,
    },
    /// Declared lost.
    Lost {
        /// When (None: not recorded).
        at: Option<Timestamp>,
        /// The host whose gateway declared it (None: not recorded).
        by: Option<String>,
    },
    /// Its gateway stopped cleanly.
    Stopped,
}

impl LeaseView {
    /// One word: `live`, `expired`, `lost`, `stopped`.
    pub fn word(&self) -> &'static str {
        match self {
            LeaseView::Live { .. } => "live",
            LeaseView::Expired { .. } => "expired",
            LeaseView::Lost { .. } => "lost",
            LeaseView::Stopped => "stopped",
        }
    }

    /// In words, for `status` and `doctor`.
    pub fn describe(&self) -> String {
        match self {
            LeaseView::Live { left } => format!("live, {} left", format_duration(*left)),
            LeaseView::Expired { ago } => {
                format!("expired {} ago, not yet resolved", format_duration(*ago))
            }
            LeaseView::Lost { at, by } => format!(
                "lost{}{}",
                at.map_or(String::new(), |a| format!(
                    " at {}",
                    a.format("%Y-%m-%dT%H:%M:%SZ")
                )),
                by.as_deref()
                    .map_or(String::new(), |b| format!(", resolved by {b}"))
            ),
            LeaseView::Stopped => "stopped cleanly".into(),
        }
    }
}

/// Judge `lease` at `now`.
pub fn judge_lease(lease: &HostLease, now: Timestamp) -> LeaseView {
    match lease.state {
        HostState::Stopped => LeaseView::Stopped,
        HostState::Lost => LeaseView::Lost {
            at: lease.lost_at,
            by: lease.lost_by.clone(),
        },
        HostState::Live => match (lease.lease_until - now).to_std() {
            Ok(left) if lease.lease_until > now => LeaseView::Live { left },
            _ => LeaseView::Expired {
                ago: (now - lease.lease_until).to_std().unwrap_or_default(),
            },
        },
    }
}

/// The leases a survivor must resolve now: live rows of other hosts whose
/// lease has run out.
pub fn expired_hosts<'a>(leases: &'a [HostLease], me: &str, now: Timestamp) -> Vec<&'a HostLease> {
    leases
        .iter()
        .filter(|l| l.host != me && matches!(judge_lease(l, now), LeaseView::Expired { .. }))
        .collect()
}

/// What a worker on a host declared lost reported after a survivor had
/// recorded its run `unknown` (`host_lost`): kept beside the row, which
/// stays as the survivor decided (`runs --json` `late_outcome`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LateOutcome {
    /// The host whose worker reported it.
    pub host: Option<String>,
    /// The state the worker would have recorded.
    pub state: String,
    /// Its reason code, as text.
    pub reason_code: Option<String>,
    /// Its reason, in words.
    pub reason: Option<String>,
    /// The command's exit status (None: killed by a signal, or never started).
    pub exit_code: Option<i32>,
    /// The signal that killed the command (None: it was not killed).
    pub signal: Option<i32>,
    /// How long the command ran, in milliseconds.
    pub duration_ms: Option<u64>,
    /// When the worker reported it.
    pub finished_at: Timestamp,
}

/// What a gateway on a shared (PostgreSQL) ledger knows of its own
/// connection and lease, written by its lease thread to
/// `state/hermes-cron-cluster.json` after every renewal or failure; `status`
/// and `doctor` read it (they may themselves be unable to reach the
/// database).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClusterFile {
    /// This host's name.
    pub host: String,
    /// This host's labels.
    pub labels: Vec<String>,
    /// The database, its password hidden.
    pub database: String,
    /// The gateway that writes this file (`gateway:pid:start`).
    pub gateway: String,
    /// Whether the last attempt to renew the lease reached the database.
    pub reachable: bool,
    /// When the database stopped answering (our clock); None while reachable.
    pub unreachable_since: Option<Timestamp>,
    /// Why, when it does not answer.
    pub error: Option<String>,
    /// The last successful renewal (our clock).
    pub renewed_at: Option<Timestamp>,
    /// When the lease that renewal gave runs out (the database's clock).
    pub lease_until: Option<Timestamp>,
    /// How many times the survivors had declared this host lost and it
    /// registered again.
    pub times_lost: u64,
    /// Written at (our clock).
    pub updated_at: Option<Timestamp>,
}

/// Whether a gateway may declare other hosts lost: only after it has held
/// its own lease without a break for a whole lease (`holding` long). When
/// the database was out of reach for everyone, every lease has run out;
/// the first gateway back waits for the others to renew theirs before it
/// judges them.
pub fn may_resolve_others(holding: Option<Duration>, policy: &LeasePolicy) -> bool {
    holding.is_some_and(|h| h >= policy.ttl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(s: i64) -> Timestamp {
        chrono::Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap()
    }

    fn lease(host: &str, state: HostState, until: i64) -> HostLease {
        HostLease {
            host: host.into(),
            labels: vec![],
            gateway: Some("gateway:1:1".into()),
            state,
            lease_until: at(until),
            renewed_at: at(until - 15),
            started_at: at(0),
            lost_at: None,
            lost_by: None,
            version: String::new(),
        }
    }

    #[test]
    fn a_gateway_back_from_an_outage_waits_a_lease_before_judging_others() {
        let p = LeasePolicy::with_ttl(Duration::from_secs(10));
        assert!(!may_resolve_others(None, &p));
        assert!(!may_resolve_others(Some(Duration::from_secs(9)), &p));
        assert!(may_resolve_others(Some(Duration::from_secs(10)), &p));
    }

    #[test]
    fn names_and_labels() {
        assert!(valid_name("node-1.example.org"));
        assert!(valid_name("gpu:a100"));
        assert!(!valid_name(""));
        assert!(!valid_name("a_b"), "LIKE wildcard");
        assert!(!valid_name("a%"));
        assert!(!valid_name(&"x".repeat(65)));
        assert_eq!(host_name_from_system(" my_box\n"), "my-box");
        assert_eq!(host_name_from_system(""), "localhost");
        let (ok, bad) = parse_labels("gpu, eu-west  gpu,bad_label");
        assert_eq!(ok, vec!["gpu".to_string(), "eu-west".to_string()]);
        assert_eq!(bad, vec!["bad_label".to_string()]);
    }

    #[test]
    fn a_lease_expires_after_its_ttl_and_only_live_ones_are_resolved() {
        let p = LeasePolicy::with_ttl(Duration::from_secs(10));
        assert_eq!(p.renew_every, Duration::from_secs(2));
        assert_eq!(p.until(at(0)), at(10));
        let l = lease("b", HostState::Live, 10);
        assert!(matches!(judge_lease(&l, at(9)), LeaseView::Live { .. }));
        assert_eq!(
            judge_lease(&l, at(12)),
            LeaseView::Expired {
                ago: Duration::from_secs(2)
            }
        );
        let all = vec![
            lease("a", HostState::Live, 0),
            l.clone(),
            lease("c", HostState::Stopped, 0),
            lease("d", HostState::Lost, 0),
            lease("e", HostState::Live, 100),
        ];
        let expired: Vec<&str> = expired_hosts(&all, "a", at(12))
            .iter()
            .map(|l| l.host.as_str())
            .collect();
        assert_eq!(
            expired,
            vec!["b"],
            "never itself, never stopped or lost ones"
        );
    }
    #[test]
    fn a_database_is_a_connection_string_without_a_password() {
        for ok in [
            "postgresql://cron@db.example/ledger",
            "  postgres://cron@db:5433/ledger?sslmode=disable ",
            "host=/run/postgresql user=cron dbname=ledger",
        ] {
            assert_eq!(check_database(ok).unwrap(), ok.trim());
        }
        for bad in [
            "postgresql://cron:s3cret@db/ledger",
            "postgresql://db/ledger?password=s3cret",
            "host=db user=cron password=s3cret",
            "host=db password = s3cret",
        ] {
            let why = check_database(bad).unwrap_err();
            assert!(why.contains("password") && !why.contains("s3cret"), "{why}");
        }
        assert!(check_database("/var/lib/cron.db").is_err());
        assert!(check_database("host=db\nuser=x").is_err());
    }
}
