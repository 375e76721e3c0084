//! The ledger reads behind the page, in one read transaction (a consistent
//! snapshot): the shown jobs' light columns (never a command or an
//! environment, and no schedule is parsed), the rows of the window (the
//! last hour, 24 hours or 7 days) and the active ones (newest first, at most
//! [`MAX_RUNS`]), and for each job shown its newest rows and its failures of
//! the last 24 hours and 7 days. The same SQL on both backends.

use crate::db::{Conn, Row, SqlResult, from_ms, to_ms};
use crate::params;
use crate::schedule::{Timestamp, Tz, ZoneTable};
use hermes_cron_core::page::model::{FAILURE_STATES, Failures, RECENT};
use hermes_cron_core::page::select::by_name;
use hermes_cron_core::page::{JobView, PageJob, PageRun, Window};
use hermes_cron_core::run::ExecState;

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
    e.claimed_at, e.started_at, e.finished_at, e.dispatch_mode, e.reason_code, e.usage,
    j.id IS NULL AS orphan,
    (e.output_path IS NOT NULL AND COALESCE(e.output_bytes, 0) > 0) AS has_output";

fn run_from_row(r: &Row) -> SqlResult<PageRun> {
    let ms = |col: &str| -> SqlResult<Option<Timestamp>> {
        Ok(r.get::<_, Option<i64>>(col)?.map(from_ms))
    };
    let state: String = r.get("state")?;
    Ok(PageRun {
        id: r.get("id")?,
        job_id: r.get("job_id")?,
        job_name: r.get("job_name")?,
        // A state this build does not know (a newer writer) shows as unknown.
        state: state.parse().unwrap_or(ExecState::Unknown),
        attempt: r.get::<_, i64>("attempt")?.clamp(0, i64::from(u32::MAX)) as u32,
        scheduled_for: ms("scheduled_for")?,
        claimed_at: from_ms(r.get("claimed_at")?),
        started_at: ms("started_at")?,
        finished_at: ms("finished_at")?,
        mode: r
            .get::<_, Option<String>>("dispatch_mode")?
            .and_then(|m| m.parse().ok()),
        reason_code: r.get("reason_code")?,
        orphan: r.get("orphan")?,
        has_output: r.get("has_output")?,
        usage: r
            .get::<_, Option<String>>("usage")?
            .and_then(|text| serde_json::from_str(&text).ok())
            .map(|u| hermes_cron_core::run::usage::tokens_and_cost(&u)),
    })
}

/// The jobs shown: every job when at most `cap`; otherwise those with a row
/// in the window or an active one first, then the others by name, up to
/// `cap` (the rule of `hermes_cron_core::page::select`, applied in SQL so a
/// home with many jobs never holds them all in memory here).
fn chosen_jobs(
    conn: &Conn,
    since: Timestamp,
    cap: usize,
    zones: &Zones,
) -> SqlResult<Vec<PageJob>> {
    conn.query_map(
        "SELECT id, name, schedule_text, tz, state, pause_reason, next_run_at, managed FROM jobs
         ORDER BY id IN (SELECT job_id FROM executions
                         WHERE job_id IS NOT NULL
                           AND (finished_at >= ?1 OR state IN ('claimed', 'staged', 'running'))) DESC,
                  lower(name), id
         LIMIT ?2",
        params![to_ms(since), cap as i64],
        |r| {
            let view = match r.get::<_, String>("state")?.as_str() {
                "paused" => JobView::Paused {
                    reason: r.get("pause_reason")?,
                },
                "completed" => JobView::Completed,
                _ => JobView::Active,
            };
            let tz: Option<String> = r.get("tz")?;
            Ok(PageJob {
                id: r.get("id")?,
                name: r.get("name")?,
                schedule: r.get("schedule_text")?,
                zone: zones.0.zone_or(tz.as_deref(), zones.1),
                tz,
                view,
                next_fire: r.get::<_, Option<i64>>("next_run_at")?.map(from_ms),
                managed: r.get("managed")?,
                recent: Vec::new(),
                failures: Failures::default(),
            })
        },
    )
}

/// Rows that ended inside the window, and the active ones, newest first.
/// (`e.id || ''`: sorting by the primary key itself would walk the whole
/// ledger in key order; sorting by an expression of it, the finish and active
/// indexes find the window's rows, then they are sorted. SQLite's idiom is
/// `+e.id`, which PostgreSQL does not read for text.)
fn window_runs(conn: &Conn, since: Timestamp) -> SqlResult<(Vec<PageRun>, bool)> {
    let mut runs = conn.query_map(
        &format!(
            "SELECT {RUN_COLUMNS} FROM executions e LEFT JOIN jobs j ON j.id = e.job_id
             WHERE e.finished_at >= ?1 OR e.state IN ('claimed', 'staged', 'running')
             ORDER BY e.id || '' DESC LIMIT ?2"
        ),
        params![to_ms(since), MAX_RUNS as i64 + 1],
        run_from_row,
    )?;
    let capped = runs.len() > MAX_RUNS;
    runs.truncate(MAX_RUNS);
    Ok((runs, capped))
}

/// The job's newest [`RECENT`] rows, newest first.
fn newest_runs(conn: &Conn, job_id: &str) -> SqlResult<Vec<PageRun>> {
    conn.query_map(
        &format!(
            "SELECT {RUN_COLUMNS} FROM executions e LEFT JOIN jobs j ON j.id = e.job_id
             WHERE e.job_id = ?1 ORDER BY e.id DESC LIMIT ?2"
        ),
        params![job_id, RECENT as i64],
        run_from_row,
    )
}

/// The job's runs that ended in a [`FAILURE_STATES`] state in the last 24
/// hours and the last 7 days (the finish index finds them).
fn failures(conn: &Conn, job_id: &str, now: Timestamp) -> SqlResult<Failures> {
    let states: Vec<String> = FAILURE_STATES
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect();
    conn.query_row(
        &format!(
            "SELECT COALESCE(SUM(CASE WHEN finished_at >= ?2 THEN 1 ELSE 0 END), 0) AS day,
                    COUNT(*) AS week
             FROM executions
             WHERE job_id = ?1 AND finished_at >= ?3 AND state IN ({})",
            states.join(", ")
        ),
        params![
            job_id,
            to_ms(now - Window::Day.span()),
            to_ms(now - Window::Week.span())
        ],
        |r| {
            Ok(Failures {
                day: r.get::<_, i64>("day")?.max(0) as u64,
                week: r.get::<_, i64>("week")?.max(0) as u64,
            })
        },
    )
}

/// The table the jobs' zone names are read in, and the page's zone for a
/// job without one.
pub(super) type Zones<'a> = (&'a ZoneTable, Tz);

/// Everything the page shows, as of `now`, with at most `cap` jobs.
pub(super) fn read(
    conn: &Conn,
    now: Timestamp,
    window: Window,
    cap: usize,
    zones: &Zones,
) -> SqlResult<Rows> {
    conn.snapshot(|conn| {
        let jobs_total = conn
            .query_row("SELECT COUNT(*) AS n FROM jobs", params![], |r| {
                r.get::<_, i64>("n")
            })?
            .max(0) as usize;
        let since = now - window.span();
        let (runs, runs_capped) = window_runs(conn, since)?;
        let mut jobs = chosen_jobs(conn, since, cap, zones)?;
        jobs.sort_by(by_name);
        for job in &mut jobs {
            job.recent = newest_runs(conn, &job.id)?;
            job.failures = failures(conn, &job.id, now)?;
        }
        Ok(Rows {
            jobs,
            jobs_total,
            runs,
            runs_capped,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::test_backends::on_both;

    fn job(conn: &Conn, id: &str, name: &str) {
        conn.execute(
            "INSERT INTO jobs (id, name, schedule_text, schedule, argv, anchor, created_at, updated_at)
             VALUES (?1, ?2, 'every 1m', 'every 60s', '[]', 0, 0, 0)",
            params![id, name],
        )
        .unwrap();
    }

    fn row(conn: &Conn, id: &str, job: Option<&str>, finished: Timestamp) {
        conn.execute(
            "INSERT INTO executions (id, job_id, job_name, source, state, spec, claimed_at, finished_at)
             VALUES (?1, ?2, 'x', 'schedule', 'succeeded', '{}', ?3, ?3)",
            params![id, job, to_ms(finished)],
        )
        .unwrap();
    }

    #[test]
    fn over_the_cap_jobs_that_ran_come_first_then_by_name() {
        on_both(|db| over_the_cap(db.conn()));
    }

    fn over_the_cap(c: &Conn) {
        let now = chrono::DateTime::UNIX_EPOCH + chrono::TimeDelta::days(400);
        for (id, name) in [("1", "a"), ("2", "B"), ("3", "c"), ("4", "d"), ("5", "e")] {
            job(c, id, name);
        }
        row(c, "r1", Some("4"), now - chrono::TimeDelta::hours(1));
        row(c, "r2", Some("5"), now - chrono::TimeDelta::hours(30));
        row(c, "r3", None, now - chrono::TimeDelta::hours(2));
        let rows = read(
            c,
            now,
            Window::Day,
            3,
            &(&ZoneTable::compiled_in_only(), Tz::UTC),
        )
        .unwrap();
        let names: Vec<_> = rows.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a", "B", "d"]);
        assert_eq!(rows.jobs_total, 5);
        // The row of `d` and the one of no job are in the window; `e`'s is not.
        let ids: Vec<_> = rows
            .runs
            .iter()
            .map(|r| (r.id.as_str(), r.orphan))
            .collect();
        assert_eq!(ids, [("r3", true), ("r1", false)]);
        assert_eq!(rows.jobs[2].last().map(|r| r.id.as_str()), Some("r1"));
        let all = read(
            c,
            now,
            Window::Day,
            10,
            &(&ZoneTable::compiled_in_only(), Tz::UTC),
        )
        .unwrap();
        assert_eq!(all.jobs.len(), 5);
    }
}
