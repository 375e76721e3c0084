//! Job definitions in `cron/cron.db`: reading and writing the `jobs` table.

mod jobs;

pub use jobs::{
    JobLookupError, StoreError, delete_job, due_jobs, get_job, insert_job, list_jobs, next_due_at,
    reboot_jobs, resolve_job, update_job, update_job_schedule_state,
};
