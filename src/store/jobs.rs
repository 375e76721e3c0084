//! The `jobs` table: insert, read, resolve by id or name, update, delete, and
//! the due-job query the tick uses (indexed on `next_run_at`, so its cost does
//! not grow with the number of jobs defined).

use crate::db::{Conn, Params, Row, SqlError};
use crate::db::{from_ms, to_ms};
use crate::ids::JobId;
use crate::job::{CatchUp, Env, Job, JobState, Overlap, Resources};
use crate::params;
use crate::schedule::{Schedule, Timestamp};
use std::path::PathBuf;
use std::time::Duration;

/// Failed to read or write job definitions.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error")]
    Sql(#[from] SqlError),
    #[error("job {id} has a stored {field} that no longer parses: {message}")]
    Corrupt {
        id: String,
        field: &'static str,
        message: String,
    },
}

/// JOB did not name exactly one job.
#[derive(Debug, thiserror::Error)]
pub enum JobLookupError {
    #[error("no job with id or name {0:?}; `hermes-cron list --all` shows every job")]
    NotFound(String),
    #[error("{name:?} names {} jobs; use an id:\n{}", candidates.len(), candidates.iter().map(|(id, sched)| format!("  {id}  {sched}")).collect::<Vec<_>>().join("\n"))]
    Ambiguous {
        name: String,
        /// (id, schedule) of each job with that name.
        candidates: Vec<(String, String)>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub(super) const COLUMNS: &str =
    "id, name, schedule_text, schedule, tz, argv, shell, env, workdir, timeout_s,
    overlap, catch_up, retries, retry_backoff_s, memory_max, cpu_weight, tasks_max, require_scope,
    state, pause_reason, anchor, next_run_at, created_at, updated_at, hermes_id, env_files,
    pass_env, idle_timeout_s, managed, alerts, run_on";

fn corrupt(id: &str, field: &'static str, message: impl ToString) -> StoreError {
    StoreError::Corrupt {
        id: id.to_string(),
        field,
        message: message.to_string(),
    }
}

fn job_from_row(row: &Row) -> Result<Job, StoreError> {
    let id: String = row.get("id")?;
    let schedule_text: String = row.get("schedule")?;
    let schedule =
        Schedule::from_canonical(&schedule_text).map_err(|e| corrupt(&id, "schedule", e))?;
    let argv: Vec<String> = serde_json::from_str(&row.get::<_, String>("argv")?)
        .map_err(|e| corrupt(&id, "argv", e))?;
    let env: Env =
        serde_json::from_str(&row.get::<_, String>("env")?).map_err(|e| corrupt(&id, "env", e))?;
    let env_files: Vec<PathBuf> = serde_json::from_str(&row.get::<_, String>("env_files")?)
        .map_err(|e| corrupt(&id, "env_files", e))?;
    let pass_env: Vec<String> = serde_json::from_str(&row.get::<_, String>("pass_env")?)
        .map_err(|e| corrupt(&id, "pass_env", e))?;
    let overlap: Overlap = row
        .get::<_, String>("overlap")?
        .parse::<Overlap>()
        .map_err(|e| corrupt(&id, "overlap", e.to_string()))?;
    let catch_up: Option<CatchUp> = row
        .get::<_, Option<String>>("catch_up")?
        .map(|c| c.parse::<CatchUp>())
        .transpose()
        .map_err(|e| corrupt(&id, "catch_up", e.to_string()))?;
    let alerts: crate::alert::JobAlerts = serde_json::from_str(&row.get::<_, String>("alerts")?)
        .map_err(|e| corrupt(&id, "alerts", e))?;
    let state = match row.get::<_, String>("state")?.as_str() {
        "active" => JobState::Active,
        "paused" => JobState::Paused {
            reason: row.get("pause_reason")?,
        },
        "completed" => JobState::Completed,
        other => return Err(corrupt(&id, "state", other)),
    };
    let secs = |v: Option<i64>| v.map(|s| Duration::from_secs(s.max(0) as u64));
    let count = |v: Option<i64>| v.map(|n| n.max(0) as u64);
    Ok(Job {
        name: row.get("name")?,
        schedule_text: row.get("schedule_text")?,
        schedule,
        tz: row.get("tz")?,
        argv,
        shell: row.get("shell")?,
        env,
        env_files,
        pass_env,
        workdir: row.get::<_, Option<String>>("workdir")?.map(PathBuf::from),
        timeout: secs(row.get("timeout_s")?),
        idle_timeout: secs(row.get("idle_timeout_s")?),
        overlap,
        catch_up,
        retries: row.get::<_, i64>("retries")?.clamp(0, u32::MAX as i64) as u32,
        retry_backoff: secs(Some(row.get("retry_backoff_s")?)).unwrap_or_default(),
        resources: Resources {
            memory_max: count(row.get("memory_max")?),
            cpu_weight: count(row.get("cpu_weight")?),
            tasks_max: count(row.get("tasks_max")?),
        },
        require_scope: row.get("require_scope")?,
        hermes_id: row.get("hermes_id")?,
        managed: row.get("managed")?,
        run_on: row.get("run_on")?,
        alerts,
        state,
        anchor: from_ms(row.get("anchor")?),
        next_run_at: row.get::<_, Option<i64>>("next_run_at")?.map(from_ms),
        created_at: from_ms(row.get("created_at")?),
        updated_at: from_ms(row.get("updated_at")?),
        id: JobId::from_string(id),
    })
}

pub(super) fn query_jobs(
    conn: &Conn,
    sql: &str,
    params: Params<'_>,
) -> Result<Vec<Job>, StoreError> {
    conn.query(sql, params)?.iter().map(job_from_row).collect()
}

struct Encoded {
    argv: String,
    env: String,
    env_files: String,
    pass_env: String,
    workdir: Option<String>,
    pause_reason: Option<String>,
    alerts: String,
}

fn encode(job: &Job) -> Encoded {
    Encoded {
        argv: serde_json::to_string(&job.argv).unwrap_or_else(|_| "[]".into()),
        env: serde_json::to_string(&job.env).unwrap_or_else(|_| "[]".into()),
        env_files: serde_json::to_string(&job.env_files).unwrap_or_else(|_| "[]".into()),
        pass_env: serde_json::to_string(&job.pass_env).unwrap_or_else(|_| "[]".into()),
        workdir: job
            .workdir
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        pause_reason: match &job.state {
            JobState::Paused { reason } => reason.clone(),
            _ => None,
        },
        alerts: serde_json::to_string(&job.alerts).unwrap_or_else(|_| "{}".into()),
    }
}

/// Insert or update: both statements take the same 31 parameters, in
/// [`COLUMNS`] order (the update leaves `created_at`, ?23, alone; it still
/// names it, cast, since PostgreSQL must know every parameter's type).
fn write_job(conn: &Conn, sql: &str, job: &Job) -> Result<usize, StoreError> {
    let e = encode(job);
    Ok(conn.execute(
        sql,
        params![
            job.id.as_str(),
            job.name,
            job.schedule_text,
            job.schedule.canonical(),
            job.tz,
            e.argv,
            job.shell,
            e.env,
            e.workdir,
            job.timeout.map(|d| d.as_secs() as i64),
            job.overlap.as_str(),
            job.catch_up.map(|c| c.as_str()),
            job.retries,
            job.retry_backoff.as_secs() as i64,
            job.resources.memory_max.map(|v| v as i64),
            job.resources.cpu_weight.map(|v| v as i64),
            job.resources.tasks_max.map(|v| v as i64),
            job.require_scope,
            job.state.as_str(),
            e.pause_reason,
            to_ms(job.anchor),
            job.next_run_at.map(to_ms),
            to_ms(job.created_at),
            to_ms(job.updated_at),
            job.hermes_id,
            e.env_files,
            e.pass_env,
            job.idle_timeout.map(|d| d.as_secs() as i64),
            job.managed,
            e.alerts,
            job.run_on,
        ],
    )?)
}

/// Store a new job.
pub fn insert_job(conn: &Conn, job: &Job) -> Result<(), StoreError> {
    write_job(
        conn,
        &format!(
            "INSERT INTO jobs ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
             ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29,
             ?30, ?31)"
        ),
        job,
    )?;
    conn.notify_jobs_changed()?;
    Ok(())
}

/// Rewrite every field of an existing job. Returns false when it is gone.
pub fn update_job(conn: &Conn, job: &Job) -> Result<bool, StoreError> {
    let n = write_job(
        conn,
        "UPDATE jobs SET name = ?2, schedule_text = ?3, schedule = ?4, tz = ?5, argv = ?6,
         shell = ?7, env = ?8, workdir = ?9, timeout_s = ?10, overlap = ?11, catch_up = ?12,
         retries = ?13, retry_backoff_s = ?14, memory_max = ?15, cpu_weight = ?16,
         tasks_max = ?17, require_scope = ?18, state = ?19, pause_reason = ?20, anchor = ?21,
         next_run_at = ?22, updated_at = ?24, hermes_id = ?25, env_files = ?26,
         pass_env = ?27, idle_timeout_s = ?28, managed = ?29, alerts = ?30, run_on = ?31
         WHERE id = ?1 AND CAST(?23 AS BIGINT) IS NOT NULL",
        job,
    )?;
    conn.notify_jobs_changed()?;
    Ok(n == 1)
}

/// After a claim: the job's next slot, anchor and state.
pub(crate) fn update_job_schedule_state(
    conn: &Conn,
    id: &JobId,
    next_run_at: Option<Timestamp>,
    anchor: Timestamp,
    state: &JobState,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE jobs SET next_run_at = ?2, anchor = ?3, state = ?4 WHERE id = ?1",
        params![
            id.as_str(),
            next_run_at.map(to_ms),
            to_ms(anchor),
            state.as_str()
        ],
    )?;
    Ok(())
}

/// One job by id.
pub(crate) fn get_job(conn: &Conn, id: &JobId) -> Result<Option<Job>, StoreError> {
    Ok(query_jobs(
        conn,
        &format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1"),
        params![id.as_str()],
    )?
    .pop())
}

/// The job named by `key`: an exact id; else the one job with that name,
/// then with that Hermes job id, then with that name whatever its case (several
/// matches are refused, listing them).
pub fn resolve_job(conn: &Conn, key: &str) -> Result<Job, JobLookupError> {
    if let Some(job) = get_job(conn, &JobId::from_string(key))? {
        return Ok(job);
    }
    let lookups = [
        "SELECT {COLUMNS} FROM jobs WHERE name = ?1 ORDER BY id",
        "SELECT {COLUMNS} FROM jobs WHERE hermes_id = ?1 ORDER BY id",
        "SELECT {COLUMNS} FROM jobs WHERE lower(name) = lower(?1) ORDER BY id",
    ];
    for sql in lookups {
        let mut found = query_jobs(conn, &sql.replace("{COLUMNS}", COLUMNS), params![key])?;
        match found.len() {
            0 => continue,
            1 => return Ok(found.remove(0)),
            _ => {
                return Err(JobLookupError::Ambiguous {
                    name: key.to_string(),
                    candidates: found
                        .iter()
                        .map(|j| (j.id.to_string(), j.schedule_text.clone()))
                        .collect(),
                });
            }
        }
    }
    Err(JobLookupError::NotFound(key.to_string()))
}

/// The job other than `except` whose name is `name` in any case, if any:
/// names are how users call jobs ([`resolve_job`] reads them in any case),
/// so `add` and `edit --name` keep them unique.
pub fn job_named(conn: &Conn, name: &str, except: &JobId) -> Result<Option<Job>, StoreError> {
    Ok(query_jobs(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM jobs WHERE lower(name) = lower(?1) AND id <> ?2 ORDER BY id LIMIT 1"
        ),
        params![name, except.as_str()],
    )?
    .pop())
}

/// Jobs in creation order; `all` includes paused and completed ones.
pub fn list_jobs(conn: &Conn, all: bool) -> Result<Vec<Job>, StoreError> {
    let filter = if all { "" } else { "WHERE state = 'active'" };
    query_jobs(
        conn,
        &format!("SELECT {COLUMNS} FROM jobs {filter} ORDER BY id"),
        params![],
    )
}

/// Active `@reboot` jobs in creation order. Chosen by their stored schedule
/// text, so a gateway start parses only these (a parsed cron expression holds
/// about 5 KB; parsing 10,000 of them left ~50 MB on the gateway's heap).
pub(crate) fn reboot_jobs(conn: &Conn, host: &HostFilter) -> Result<Vec<Job>, StoreError> {
    query_jobs(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM jobs WHERE state = 'active' AND schedule = ?1 AND {} ORDER BY id",
            HostFilter::sql("jobs", 2)
        ),
        params![Schedule::Reboot.canonical(), host.host, host.labels],
    )
}

/// Active jobs whose next slot is at or before `now`, oldest slot first.
pub(crate) fn due_jobs(
    conn: &Conn,
    now: Timestamp,
    limit: usize,
    host: &HostFilter,
) -> Result<Vec<Job>, StoreError> {
    query_jobs(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM jobs
             WHERE state = 'active' AND next_run_at IS NOT NULL AND next_run_at <= ?1 AND {}
             ORDER BY next_run_at LIMIT ?2",
            HostFilter::sql("jobs", 3)
        ),
        params![to_ms(now), limit as i64, host.host, host.labels],
    )
}

/// The earliest next slot of any active job.
pub(crate) fn next_due_at(conn: &Conn, host: &HostFilter) -> Result<Option<Timestamp>, StoreError> {
    let ms: Option<i64> = conn
        .query_opt(
            &format!(
                "SELECT MIN(next_run_at) FROM jobs
                 WHERE state = 'active' AND next_run_at IS NOT NULL AND {}",
                HostFilter::sql("jobs", 1)
            ),
            params![host.host, host.labels],
            |r| r.get(0),
        )?
        .flatten();
    Ok(ms.map(from_ms))
}

/// The jobs the Hermes provider sync keeps.
pub(crate) fn managed_jobs(conn: &Conn) -> Result<Vec<Job>, StoreError> {
    query_jobs(
        conn,
        &format!("SELECT {COLUMNS} FROM jobs WHERE managed = 1 ORDER BY id"),
        params![],
    )
}

/// Remove a job. Its ledger rows stay for history. Returns false when it was gone.
pub fn delete_job(conn: &Conn, id: &JobId) -> Result<bool, StoreError> {
    conn.execute(
        "DELETE FROM retry_queue WHERE job_id = ?1",
        params![id.as_str()],
    )?;
    conn.execute(
        "DELETE FROM alert_incidents WHERE job_id = ?1",
        params![id.as_str()],
    )?;
    let gone = conn.execute("DELETE FROM jobs WHERE id = ?1", params![id.as_str()])? == 1;
    conn.notify_jobs_changed()?;
    Ok(gone)
}

/// Which pinned jobs a host may claim: those pinned to its name or to one of
/// its labels, and every job not pinned at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFilter {
    /// The host's name.
    pub host: String,
    /// Its labels as `,a,b,` (empty: `,,`).
    pub labels: String,
}

impl HostFilter {
    pub fn new(host: &str, labels: &[String]) -> HostFilter {
        HostFilter {
            host: host.to_string(),
            labels: format!(",{},", labels.join(",")),
        }
    }

    /// The condition on `alias.run_on`, with the host's name as parameter
    /// `?first` and its labels as `?first+1`. Pins and labels are made of
    /// `[A-Za-z0-9.:-]` (`hermes_cron_core::cluster::valid_name`), so no
    /// LIKE wildcard can occur in them.
    pub fn sql(alias: &str, first: usize) -> String {
        format!(
            "({alias}.run_on IS NULL OR {alias}.run_on = ?{first} OR ?{} LIKE '%,' || {alias}.run_on || ',%')",
            first + 1
        )
    }
}

/// What the lateness watch reads of a job: its schedule unparsed (most
/// checks hit a cache and never parse it).
#[derive(Clone, Debug)]
pub(crate) struct LateRow {
    pub id: String,
    pub name: String,
    /// The stored (canonical) schedule.
    pub schedule: String,
    pub tz: Option<String>,
    pub anchor: Timestamp,
    pub updated_at: Timestamp,
    pub alerts: crate::alert::JobAlerts,
    /// When its newest run that started did.
    pub last_start: Option<Timestamp>,
}

/// Each active job a lateness check may concern: all of them when
/// `global` (the config sends alerts somewhere), else those with alert
/// settings of their own.
pub(crate) fn for_each_late_candidate(
    conn: &Conn,
    global: bool,
    mut f: impl FnMut(LateRow),
) -> Result<(), StoreError> {
    let filter = if global { "" } else { "AND j.alerts != '{}'" };
    conn.for_each(
        &format!(
            "SELECT j.id, j.name, j.schedule, j.tz, j.anchor, j.updated_at, j.alerts,
                 (SELECT e.started_at FROM executions e
                  WHERE e.job_id = j.id AND e.started_at IS NOT NULL
                  ORDER BY e.id DESC LIMIT 1) AS last_start
             FROM jobs j WHERE j.state = 'active' AND j.schedule != '@external' {filter}"
        ),
        params![],
        |r| {
            let id: String = r.get("id")?;
            let alerts = match serde_json::from_str(&r.get::<_, String>("alerts")?) {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(
                        "lateness check skips job {id}: {}",
                        corrupt(&id, "alerts", e)
                    );
                    return Ok(());
                }
            };
            f(LateRow {
                name: r.get("name")?,
                schedule: r.get("schedule")?,
                tz: r.get("tz")?,
                anchor: from_ms(r.get("anchor")?),
                updated_at: from_ms(r.get("updated_at")?),
                alerts,
                last_start: r.get::<_, Option<i64>>("last_start")?.map(from_ms),
                id,
            });
            Ok(())
        },
    )?;
    Ok(())
}
