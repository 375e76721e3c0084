//! What operators see: status, doctor, metrics, retention.

pub mod cluster;
pub mod doctor;
pub mod metrics;
pub mod prune;
pub mod status;
