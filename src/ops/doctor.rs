//! `doctor`: a read-only check of the whole home. Each finding names the
//! job (when there is one), what is wrong, and the fix. Gathering reads the
//! database (opened read-only), the heartbeat and the filesystem; every check
//! is a small function of what was gathered and `now`.

use super::status::GatewayHealth;
use crate::config::Config;
use crate::db::{JournalMode, from_ms, to_ms};
use crate::job::{Job, JobState};
use crate::ledger::{DispatchMode, ExecState};
use crate::schedule::Timestamp;
use crate::systemd::{Delegation, unenforced};
use hermes_cron_core::health::{Capability, CapabilityMode};
use rusqlite::Connection;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A job overdue by more than this is reported.
pub(crate) const OVERDUE: chrono::Duration = chrono::Duration::minutes(15);
/// A row claimed longer ago than this, and still `claimed`, is stuck.
pub(crate) const STUCK_CLAIM: chrono::Duration = chrono::Duration::minutes(2);
/// How far back `unknown` and degraded rows are looked for.
pub(crate) const RECENT: chrono::Duration = chrono::Duration::days(7);

/// One problem and its fix.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Stable code, e.g. `gateway_not_running`.
    pub code: &'static str,
    pub job_id: Option<String>,
    pub job_name: Option<String>,
    pub problem: String,
    pub fix: String,
}

fn finding(
    code: &'static str,
    job: Option<&Job>,
    problem: String,
    fix: impl Into<String>,
) -> Finding {
    Finding {
        code,
        job_id: job.map(|j| j.id.to_string()),
        job_name: job.map(|j| j.name.clone()),
        problem,
        fix: fix.into(),
    }
}

/// What the checks look at.
pub struct Gathered<'a> {
    pub home_root: &'a Path,
    pub gateway: GatewayHealth,
    pub capability_now: &'a Capability,
    pub config: &'a Config,
    pub jobs: &'a [Job],
    pub journal: Option<&'a JournalMode>,
    /// Paths whose modes are checked: the home, `cron/`, the db, `config.yaml`.
    pub private_paths: Vec<PathBuf>,
    /// Which cgroup controllers the user manager has for scopes.
    pub delegation: &'a Delegation,
    pub now: Timestamp,
}

pub(crate) fn check_gateway(g: &Gathered<'_>) -> Vec<Finding> {
    match g.gateway {
        GatewayHealth::Running => vec![],
        GatewayHealth::NotRunning => vec![finding(
            "gateway_not_running",
            None,
            "no gateway is running on this home: nothing claims due jobs".into(),
            "start it with `hermes-cron gateway`, or install the user unit and `systemctl --user enable --now hermes-cron-gateway.service`",
        )],
        GatewayHealth::Stalled => vec![finding(
            "gateway_stalled",
            None,
            "the gateway's event loop has stopped making progress (its heartbeat counter is stale)"
                .into(),
            "restart it (`systemctl --user restart hermes-cron-gateway.service`); its loop watchdog should do so itself and leave a dump in logs/",
        )],
    }
}

pub(crate) fn check_scope(g: &Gathered<'_>) -> Vec<Finding> {
    if g.capability_now.mode == CapabilityMode::Scoped {
        return vec![];
    }
    let detail = g.capability_now.detail.clone().unwrap_or_default();
    // The cause's text carries the fix too; the finding gives it on its own line.
    let detail = detail
        .split("; fix:")
        .next()
        .unwrap_or_default()
        .to_string();
    vec![finding(
        "scope_unavailable",
        None,
        format!(
            "restart-safe scopes are unavailable ({}): {detail}",
            g.capability_now.cause.map_or("unknown", |c| c.as_str())
        ),
        crate::dispatch::fix_text(),
    )]
}

pub(crate) fn check_overdue(g: &Gathered<'_>) -> Vec<Finding> {
    g.jobs
        .iter()
        .filter(|j| j.state == JobState::Active)
        .filter_map(|j| {
            let due = j.next_run_at?;
            (g.now - due > OVERDUE).then(|| {
                finding(
                    "job_overdue",
                    Some(j),
                    format!("due since {due} and not claimed ({} overdue)", crate::schedule::format_duration((g.now - due).to_std().unwrap_or_default())),
                    "make sure a gateway is running (`hermes-cron status`); it claims overdue slots per the job's catch-up policy",
                )
            })
        })
        .collect()
}

pub(crate) fn check_programs(g: &Gathered<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for j in g.jobs.iter().filter(|j| j.state != JobState::Completed) {
        if let Some(dir) = &j.workdir
            && !dir.is_dir()
        {
            out.push(finding(
                "workdir_missing",
                Some(j),
                format!("its workdir {} does not exist", dir.display()),
                format!("create it, or `hermes-cron edit {} --workdir DIR`", j.id),
            ));
        }
        if j.shell || j.argv.is_empty() {
            continue;
        }
        let program = &j.argv[0];
        let found = if program.contains('/') {
            let p = Path::new(program);
            let p = match (&j.workdir, p.is_relative()) {
                (Some(d), true) => d.join(p),
                _ => p.to_path_buf(),
            };
            std::fs::metadata(&p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
        } else {
            which::which(program).is_ok()
        };
        if !found {
            out.push(finding(
                "program_missing",
                Some(j),
                format!("its program {program:?} is not found or not executable"),
                format!(
                    "install it, or `hermes-cron edit {} -- CMD...` with a full path",
                    j.id
                ),
            ));
        }
    }
    out
}

pub(crate) fn check_permissions(g: &Gathered<'_>) -> Vec<Finding> {
    g.private_paths
        .iter()
        .filter_map(|p| {
            let mode = std::fs::metadata(p).ok()?.mode() & 0o777;
            (mode & 0o077 != 0).then(|| {
                let want = if p.is_dir() { "700" } else { "600" };
                finding(
                    "home_permissions",
                    None,
                    format!("{} has mode {mode:04o}: other users can read job commands, environments and outputs", p.display()),
                    format!("chmod {want} {}", p.display()),
                )
            })
        })
        .collect()
}

pub(crate) fn check_journal(g: &Gathered<'_>) -> Vec<Finding> {
    match g.journal {
        Some(JournalMode::Rollback { mode, .. }) => vec![finding(
            "database_not_wal",
            None,
            format!(
                "the ledger uses the {mode} journal, not WAL (WAL is unavailable there, e.g. on a network filesystem): readers block writers, so long reads delay claims and workers' writes, and busy ledgers may fail ticks"
            ),
            format!(
                "move the home ({}) to a local filesystem",
                g.home_root.display()
            ),
        )],
        _ => vec![],
    }
}

/// The checks that read the ledger.
pub fn check_ledger(conn: &Connection, g: &Gathered<'_>) -> rusqlite::Result<Vec<Finding>> {
    let mut out = Vec::new();
    let since = to_ms(g.now - RECENT);
    let by_id = |id: &str| g.jobs.iter().find(|j| j.id.as_str() == id);
    // Last terminal run failed, per job.
    for j in g.jobs {
        let last: Option<(String, String, Option<i32>, Option<i64>)> = conn
            .prepare_cached(
                "SELECT id, state, exit_code, finished_at FROM executions
                 WHERE job_id = ?1 AND state IN ('succeeded','failed','timed_out','cancelled','unknown')
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([j.id.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .ok();
        if let Some((id, state, code, at)) = last
            && (state == ExecState::Failed.as_str() || state == ExecState::TimedOut.as_str())
        {
            out.push(finding(
                    "last_run_failed",
                    Some(j),
                    format!(
                        "its last run {id} {state}{} at {}",
                        code.map(|c| format!(" (exit {c})")).unwrap_or_default(),
                        at.map_or("-".into(), |a| from_ms(a).to_string())
                    ),
                    format!("`hermes-cron logs {id}` shows its output; `hermes-cron run {} --wait` tries again", j.id),
                ));
        }
    }
    // Unknown rows in the last week.
    let mut stmt = conn.prepare_cached(
        "SELECT job_id, job_name, COUNT(*) FROM executions
         WHERE state = 'unknown' AND claimed_at >= ?1 GROUP BY job_id, job_name",
    )?;
    for row in stmt.query_map([since], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })? {
        let (id, name, n) = row?;
        let job = id.as_deref().and_then(by_id);
        let mut f = finding(
            "unknown_runs",
            job,
            format!(
                "{n} run(s) in the last 7 days ended `unknown`: their worker or claimer died before recording an outcome"
            ),
            format!(
                "read the reasons with `hermes-cron runs {} --state unknown`; unknown runs are never retried automatically (side effects may have happened)",
                id.as_deref().unwrap_or(&name)
            ),
        );
        if job.is_none() {
            f.job_name = Some(name);
            f.job_id = id;
        }
        out.push(f);
    }
    // Degraded runs where a scope is required now.
    let mut stmt = conn.prepare_cached(
        "SELECT job_id, COUNT(*) FROM executions
         WHERE dispatch_mode = ?2 AND claimed_at >= ?1 AND job_id IS NOT NULL GROUP BY job_id",
    )?;
    for row in stmt.query_map(
        rusqlite::params![since, DispatchMode::Degraded.as_str()],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
    )? {
        let (id, n) = row?;
        let Some(j) = by_id(&id) else { continue };
        if j.require_scope || g.config.cron.require_restart_safe_scope {
            out.push(finding(
                "degraded_while_required",
                Some(j),
                format!("{n} run(s) in the last 7 days ran degraded (not restart-safe), though a scope is now required for it"),
                "they ran before the requirement was set, or elsewhere; check `hermes-cron runs` and that scopes work (`hermes-cron status`)",
            ));
        }
    }
    // Rows stuck in claimed.
    let stuck: i64 = conn
        .prepare_cached(
            "SELECT COUNT(*) FROM executions WHERE state = 'claimed' AND claimed_at < ?1",
        )?
        .query_row([to_ms(g.now - STUCK_CLAIM)], |r| r.get(0))?;
    if stuck > 0 {
        out.push(finding(
            "stuck_claimed",
            None,
            format!("{stuck} row(s) have been `claimed` for over 2 minutes without a worker adopting them"),
            "restart the gateway (its startup sweep resolves them) or run `hermes-cron tick`, which resolves rows whose claimer died",
        ));
    }
    Ok(out)
}

/// Resource limits the host will not enforce.
fn check_limits(g: &Gathered<'_>) -> Vec<Finding> {
    g.jobs
        .iter()
        .filter(|j| j.state != JobState::Completed)
        .flat_map(|job| {
            unenforced(&job.resources, g.delegation).into_iter().map(move |why| {
                finding(
                    "limit_not_enforced",
                    Some(job),
                    why,
                    "run the gateway where the user manager has the controller delegated (the unified cgroup layout; `cat /sys/fs/cgroup/user.slice/user-$UID.slice/user@$UID.service/cgroup.controllers` lists it), or drop the limit with `hermes-cron edit`",
                )
            })
        })
        .collect()
}

/// Every check that needs no database.
pub fn check_all(g: &Gathered<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(check_limits(g));
    out.extend(check_gateway(g));
    out.extend(check_scope(g));
    out.extend(check_overdue(g));
    out.extend(check_programs(g));
    out.extend(check_permissions(g));
    out.extend(check_journal(g));
    out
}
