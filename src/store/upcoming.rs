//! The jobs due ahead of now, for staging: the upcoming instants with how
//! many jobs share each, the jobs of one instant, and what the release at
//! the instant checks about a job. Both read the partial
//! index `jobs_due` (active jobs by `next_run_at`), so they cost the same
//! with 100 jobs or 100,000.

use super::jobs::{COLUMNS, HostFilter, StoreError, query_jobs};
use crate::db::{Conn, SqlResult, from_ms, to_ms};
use crate::ids::JobId;
use crate::job::{Job, JobState, Overlap};
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::staging::Upcoming;

/// The instants in `(after, until]` at which active jobs are due, earliest
/// first, at most `limit`, each with its number of jobs; only jobs `host`
/// may run (unpinned, or pinned to it).
pub(crate) fn upcoming_instants(
    conn: &Conn,
    after: Timestamp,
    until: Timestamp,
    limit: usize,
    host: &HostFilter,
) -> Result<Vec<Upcoming>, StoreError> {
    Ok(conn.query_map(
        &format!(
            "SELECT next_run_at, COUNT(*) FROM jobs
              WHERE state = 'active' AND next_run_at IS NOT NULL
                AND next_run_at > ?1 AND next_run_at <= ?2 AND {}
              GROUP BY next_run_at ORDER BY next_run_at LIMIT ?3",
            HostFilter::sql("jobs", 4)
        ),
        params![
            to_ms(after),
            to_ms(until),
            limit as i64,
            host.host,
            host.labels
        ],
        |r| {
            Ok(Upcoming {
                at: from_ms(r.get(0)?),
                jobs: r.get::<_, i64>(1)?.max(0) as usize,
            })
        },
    )?)
}

/// Active jobs due exactly at `at`, at most `limit`, that have no run
/// claimed ahead and not yet started (one staged run per job at a time);
/// only jobs `host` may run.
pub(crate) fn stageable_jobs_at(
    conn: &Conn,
    at: Timestamp,
    limit: usize,
    host: &HostFilter,
) -> Result<Vec<Job>, StoreError> {
    query_jobs(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM jobs j
              WHERE j.state = 'active' AND j.next_run_at = ?1 AND {}
                AND NOT EXISTS (
                    SELECT 1 FROM staged_claims s JOIN executions e ON e.id = s.execution_id
                     WHERE s.job_id = j.id AND e.state IN ('claimed', 'staged'))
              ORDER BY j.id LIMIT ?2",
            HostFilter::sql("j", 3)
        ),
        params![to_ms(at), limit as i64, host.host, host.labels],
    )
}

/// What the release of a staged run checks about its job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JobNow {
    pub updated_at: Timestamp,
    pub state: JobState,
    pub overlap: Overlap,
}

/// The job `id` as the release checks it (None: removed). Reads three
/// columns: no schedule is parsed on the way to an instant.
pub(crate) fn job_now(conn: &Conn, id: &JobId) -> SqlResult<Option<JobNow>> {
    conn.query_opt(
        "SELECT updated_at, state, pause_reason, overlap FROM jobs WHERE id = ?1",
        params![id.as_str()],
        |r| {
            let state = match r.get::<_, String>(1)?.as_str() {
                "paused" => JobState::Paused { reason: r.get(2)? },
                "completed" => JobState::Completed,
                _ => JobState::Active,
            };
            Ok(JobNow {
                updated_at: from_ms(r.get(0)?),
                state,
                // An unreadable policy is the default one, as `add` gives.
                overlap: r.get::<_, String>(3)?.parse().unwrap_or_default(),
            })
        },
    )
}
