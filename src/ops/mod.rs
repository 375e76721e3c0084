//! What operators see: status, doctor (its findings: `finding.rs`),
//! metrics, retention.

pub mod cluster;
pub mod doctor;
mod finding;
pub mod metrics;
pub mod prune;
pub mod status;
