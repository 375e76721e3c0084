//! hermes-cron as the Hermes Agent's cron provider, the pure parts: reading
//! Hermes's `cron/jobs.json` ([`read_jobs_file`]) and the one-way sync of its
//! jobs into managed hermes-cron jobs ([`plan_sync`]), with backstops after Hermes's own limits
//! ([`HermesLimits`]), and the runs Hermes made by itself that the ledger
//! records ([`outside_runs`]). The IO (watching the
//! file, the store, installing the plugin) is the main crate's `provider`.

mod jobs_file;
mod limits;
mod outside;
mod sync;

pub use jobs_file::{HermesJob, JobsFile, JobsFileError, read_jobs_file};
pub use limits::HermesLimits;
pub use outside::{FIRE_SOURCE, HermesExecution, OutsideRun, id_for, outside_runs};
pub use sync::{
    DECLINED_EXIT, DELIVERY_FAILED_EXIT, Desired, FireCommand, Fired, SyncAt, SyncChange, plan_sync,
};
