//! Job definitions in `cron/cron.db`: reading and writing the `jobs` table.

mod jobs;
mod upcoming;

pub use jobs::{
    HostFilter, JobLookupError, StoreError, delete_job, insert_job, job_named, list_jobs,
    resolve_job, update_job,
};

pub(crate) use jobs::{
    LateRow, due_jobs, for_each_late_candidate, get_job, managed_jobs, next_due_at, reboot_jobs,
    update_job_schedule_state,
};
pub(crate) use upcoming::{job_now, stageable_jobs_at, upcoming_instants};
