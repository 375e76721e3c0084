//! The gateway on a shared (PostgreSQL) ledger: its lease, renewed from a
//! thread of its own, and the survivor's look at other hosts' leases in the
//! monitor period.
//!
//! The lease thread has its own connection: a dispatch burst that keeps the
//! event loop busy for seconds never lets the lease lapse, and a database
//! out of reach is noticed (and written to `state/hermes-cron-cluster.json`
//! for `status` and `doctor`) even while the loop is waiting on it. While
//! the database cannot be reached the gateway claims nothing (its claim
//! passes fail and back off); its workers keep running and retry their
//! final write until it returns.
//!
//! A gateway declares other hosts lost only after holding its own lease
//! without a break for a whole lease (`may_resolve_others`).
//!
//! ## Locking
//! The thread and the loop share one small mutex (the view), each holder
//! copying in or out at once; nothing is held across IO.

use crate::clock::Clock;
use crate::cluster::{Host, Leases, Renewal, database_now, lease_policy};
use crate::db::Db;
use crate::db::Location;
use crate::home::Home;
use crate::process::Owner;
use crate::text::Chain;
use hermes_cron_core::cluster::{ClusterFile, LeasePolicy, may_resolve_others};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Between attempts while the database is out of reach.
const RETRY_UNREACHABLE: Duration = Duration::from_millis(500);

#[derive(Debug, Default)]
struct View {
    file: ClusterFile,
    /// Since when the lease has been renewed without a break.
    holding_since: Option<Instant>,
}

pub(crate) struct Cluster {
    pub policy: LeasePolicy,
    view: Arc<Mutex<View>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Cluster {
    /// Start the lease thread for `home`'s shared ledger at `location`: it
    /// registers this host at once, then renews.
    pub(super) fn start(
        home: &Home,
        location: &Location,
        host: &Host,
        owner: Owner,
        clock: Arc<dyn Clock>,
        lease_ttl: Option<std::time::Duration>,
    ) -> std::io::Result<Cluster> {
        let policy = lease_policy(lease_ttl);
        let host = host.clone();
        for w in &host.warnings {
            tracing::warn!("{w}");
        }
        let view = Arc::new(Mutex::new(View {
            file: ClusterFile {
                host: host.name.clone(),
                labels: host.labels.clone(),
                database: location.describe(),
                gateway: owner.to_string(),
                ..ClusterFile::default()
            },
            holding_since: None,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let leases = Leases {
            host,
            gateway: owner,
            policy,
        };
        let thread = {
            let (view, stop) = (view.clone(), stop.clone());
            let (home, location) = (home.clone(), location.clone());
            std::thread::Builder::new()
                .name("hermes-cron-lease".into())
                .spawn(move || {
                    renew_loop(&home, &location, &leases, clock.as_ref(), &view, &stop)
                })?
        };
        Ok(Cluster {
            policy,
            view,
            stop,
            thread: Some(thread),
        })
    }

    /// Whether this gateway may declare other hosts lost now.
    pub(super) fn may_resolve_others(&self) -> bool {
        let holding = self
            .view
            .lock()
            .ok()
            .and_then(|v| v.holding_since)
            .map(|s| s.elapsed());
        may_resolve_others(holding, &self.policy)
    }

    /// Stop renewing and mark the lease `stopped` (a clean stop leaves
    /// nothing for the others to resolve).
    pub(super) fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn renew_loop(
    home: &Home,
    location: &Location,
    leases: &Leases,
    clock: &dyn Clock,
    view: &Mutex<View>,
    stop: &AtomicBool,
) {
    let mut db: Option<Db> = None;
    let mut registered = false;
    let mut was_reachable = true;
    while !stop.load(Ordering::SeqCst) {
        let result = (|| -> Result<Renewal, String> {
            if db.is_none() {
                db = Some(Db::open_at(location).map_err(|e| Chain(&e).to_string())?);
            }
            let conn = db.as_ref().expect("opened above").conn();
            let now = database_now(conn, clock.now()).map_err(|e| Chain(&e).to_string())?;
            if !registered {
                leases
                    .register(conn, now)
                    .map_err(|e| Chain(&e).to_string())?;
                registered = true;
                return Ok(Renewal::Renewed);
            }
            leases.renew(conn, now).map_err(|e| Chain(&e).to_string())
        })();
        let now = clock.now();
        let pause = match result {
            Ok(renewal) => {
                if !was_reachable {
                    tracing::warn!("the database answers again; claiming resumes");
                }
                was_reachable = true;
                match &renewal {
                    Renewal::Renewed => {}
                    Renewal::WasLost { by } => tracing::warn!(
                        "this host's lease had expired and {} declared it lost: its started runs were recorded unknown (host_lost) and its unstarted claims taken over; registered again (runs still going here record late outcomes)",
                        by.as_deref().unwrap_or("a survivor")
                    ),
                    Renewal::Replaced { by } => tracing::error!(
                        "another gateway ({}) registered under this host's name {:?}: two gateways must not share a host name (set HERMES_CRON_HOST)",
                        by.as_deref().unwrap_or("?"),
                        leases.host.name
                    ),
                }
                if let Ok(mut v) = view.lock() {
                    v.file.reachable = true;
                    v.file.unreachable_since = None;
                    v.file.error = None;
                    v.file.renewed_at = Some(now);
                    v.file.lease_until = Some(leases.policy.until(now));
                    if matches!(renewal, Renewal::WasLost { .. }) {
                        v.file.times_lost += 1;
                        v.holding_since = Some(crate::clock::monotonic());
                    }
                    v.holding_since.get_or_insert_with(crate::clock::monotonic);
                    v.file.updated_at = Some(now);
                }
                leases.policy.renew_every
            }
            Err(e) => {
                if was_reachable {
                    tracing::error!(
                        "the database cannot be reached ({e}); this gateway claims nothing until it answers (running workers keep running and record their outcomes later)"
                    );
                }
                was_reachable = false;
                db = None;
                if let Ok(mut v) = view.lock() {
                    v.file.reachable = false;
                    v.file.unreachable_since.get_or_insert(now);
                    v.file.error = Some(e);
                    v.holding_since = None;
                    v.file.updated_at = Some(now);
                }
                RETRY_UNREACHABLE
            }
        };
        let file = view.lock().map(|v| v.file.clone()).unwrap_or_default();
        let _ = crate::state_files::write_cluster(home, &file);
        let deadline = crate::clock::monotonic() + pause;
        while crate::clock::monotonic() < deadline && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50).min(pause));
        }
    }
    if let Some(db) = &db
        && let Ok(now) = database_now(db.conn(), clock.now())
    {
        let _ = leases.stop(db.conn(), now);
    }
}
