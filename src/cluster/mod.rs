//! Several hosts, one ledger: this host's identity (`host.rs`), its lease
//! (`lease.rs`: the `hosts` table, renewed from a thread of the gateway) and
//! what it knows of the others. The judgements are pure
//! (`hermes_cron_core::cluster`, `hermes_cron_core::reconcile::judge_lost_row`);
//! resolving a lost host's rows is a reconciler pass (`reconcile::lost_hosts`).

mod host;
mod lease;

pub use hermes_cron_core::cluster::{HostLease, HostState, LeasePolicy, LeaseView, judge_lease};
pub use host::{HOST_ENV, Host, LABELS_ENV};
pub(crate) use lease::lease_policy;
pub use lease::{Leases, database_now, read_leases};
pub use lease::{Renewal, mark_lost};
