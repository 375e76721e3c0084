//! What operators see: status, doctor (its findings: `finding.rs`),
//! metrics, retention; whether a job's program is there (`program.rs`).

pub mod cluster;
pub mod doctor;
mod finding;
pub mod metrics;
mod program;
pub mod prune;
pub mod status;

pub use program::{Missing, program_missing};
