//! The ledger reads behind the page, in one read transaction (a consistent
//! snapshot): every job's light columns (never its command or environment,
//! and no schedule is parsed, so many jobs cost little), the rows of the
//! last 24 hours and the active ones (newest first, at most [`MAX_RUNS`]),
//! and the newest row of each job shown.

use crate::db::{from_ms, to_ms};
use crate::schedule::Timestamp;
use hermes_cron_core::page::select::{MAX_JOBS, choose};
use hermes_cron_core::page::timeline::WINDOW;
use hermes_cron_core::page::{JobView, PageJob, PageRun};
use hermes_cron_core::run::ExecState;
use rusqlite::{Connection, OptionalExtension, Row};

/// The most rows drawn.
pub(crate) const MAX_RUNS: usize = 10_000;

/// What the page shows.
pub(super) struct Rows {
    pub jobs: Vec<PageJob>,
    pub jobs_total: usize,
    pub runs: Vec<PageRun>,
    pub runs_capped: bool,
}

const RUN_COLUMNS: &str = "e.id, e.job_id, e.job_name, e.state, e.attempt, e.scheduled_for,
    e.claimed_at, e.started_at, e.finished_at, e.dispatch_mode, e.reason_code, j.id IS NULL";

fn run_from_row(r: &Row<'_>) -> rusqlite::Result<PageRun> {
    let ms = |i: usize| -> rusqlite::Result<Option<Timestamp>> {
        Ok(r.get::<_, Option<i64>>(i)?.map(from_ms))
    };
    let state: String = r.get(3)?;
    Ok(PageRun {
        id: r.get(0)?,
        job_id: r.get(1)?,
        job_name: r.get(2)?,
        // A state this build does not know (a newer writer) shows as unknown.
        state: state.parse().unwrap_or(ExecState::Unknown),
        attempt: r.get::<_, i64>(4)?.clamp(0, i64::from(u32::MAX)) as u32,
        scheduled_for: ms(5)?,
        claimed_at: from_ms(r.get(6)?),
        started_at: ms(7)?,
        finished_at: ms(8)?,
        mode: r.get::<_, Option<String>>(9)?.and_then(|m| m.parse().ok()),
        reason_code: r.get(10)?,
        orphan: r.get(11)?,
    })
}

fn all_jobs(conn: &Connection) -> rusqlite::Result<Vec<PageJob>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, name, schedule_text, tz, state, pause_reason, next_run_at, managed FROM jobs",
    )?;
    let rows = stmt.query_map([], |r| {
        let view = match r.get::<_, String>(4)?.as_str() {
            "paused" => JobView::Paused { reason: r.get(5)? },
            "completed" => JobView::Completed,
            _ => JobView::Active,
        };
        Ok(PageJob {
            id: r.get(0)?,
            name: r.get(1)?,
            schedule: r.get(2)?,
            tz: r.get(3)?,
            view,
            next_fire: r.get::<_, Option<i64>>(6)?.map(from_ms),
            managed: r.get(7)?,
            last: None,
        })
    })?;
    rows.collect()
}

/// Rows that ended inside the window, and the active ones, newest first.
fn window_runs(conn: &Connection, now: Timestamp) -> rusqlite::Result<(Vec<PageRun>, bool)> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS} FROM executions e LEFT JOIN jobs j ON j.id = e.job_id
         WHERE e.finished_at >= ?1 OR e.state IN ('claimed', 'running')
         ORDER BY e.id DESC LIMIT ?2"
    ))?;
    let mut runs = stmt
        .query_map(
            rusqlite::params![to_ms(now - WINDOW), MAX_RUNS as i64 + 1],
            run_from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let capped = runs.len() > MAX_RUNS;
    runs.truncate(MAX_RUNS);
    Ok((runs, capped))
}

fn newest_run(conn: &Connection, job_id: &str) -> rusqlite::Result<Option<PageRun>> {
    conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS} FROM executions e LEFT JOIN jobs j ON j.id = e.job_id
         WHERE e.job_id = ?1 ORDER BY e.id DESC LIMIT 1"
    ))?
    .query_row([job_id], run_from_row)
    .optional()
}

/// Everything the page shows, as of `now`.
pub(super) fn read(conn: &Connection, now: Timestamp) -> rusqlite::Result<Rows> {
    let tx = conn.unchecked_transaction()?;
    let jobs = all_jobs(&tx)?;
    let jobs_total = jobs.len();
    let (runs, runs_capped) = window_runs(&tx, now)?;
    let mut jobs = choose(jobs, &runs, MAX_JOBS);
    for job in &mut jobs {
        job.last = newest_run(&tx, &job.id)?;
    }
    Ok(Rows {
        jobs,
        jobs_total,
        runs,
        runs_capped,
    })
}
