//! Alerts, the pure part: what an alert is about ([`AlertKind`]), a job's
//! rules and destinations as snapshotted on a run ([`AlertSpec`]), the
//! incident a job is in and how one outcome moves it ([`incident::step`]),
//! when a job is `late`, the event every destination receives, and how a
//! failed delivery is retried. No IO: the ledger (main crate,
//! `ledger/outbox.rs`) stores incidents and deliveries; the gateway
//! delivers them (`alerts/`).

mod delivery;
mod event;
mod incident;
mod kind;
mod late;
mod spec;

pub use delivery::{Destination, MAX_ATTEMPTS, next_attempt_after};
pub use event::{AlertEvent, AlertRun};
pub use incident::{Incident, Observed, observe, step};
pub use kind::{AlertKind, KindSet};
pub use late::late_deadline;
pub use spec::{
    AlertDefaults, AlertSpec, JobAlerts, MAX_ALERT_AFTER, check_url, parse_alert_after,
    redacted_url,
};
