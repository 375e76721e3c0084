//! `import FILE [--dry-run]`: a crontab or a Hermes `cron/jobs.json`. A file
//! that is malformed as a whole is refused before the home is touched; a
//! malformed jobs.json record is skipped alone (a `not imported` line). The
//! plan is made against the jobs that exist (their names are taken, their
//! Hermes jobs are not imported twice) inside the one transaction that
//! inserts every job, so an error leaves nothing half-imported.

use super::context::Ctx;
use super::fail::{failure, usage};
use super::render::{Table, cell, local, utc};
use hermes_cron::db::Conn as Connection;
use hermes_cron::ids::JobId;
use hermes_cron::import::{
    ExistingJob, ImportContext, ImportNote, ImportPlan, ImportedJob, SkipCode, import_file,
};
use hermes_cron::job::{FallbackZone, Job, JobState};
use hermes_cron::schedule::{Timestamp, Tz, ZoneTable};
use hermes_cron::store;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The longest note or reason printed on one line, in characters.
const MAX_LINE: usize = 2000;

/// What the plan is made from: the text and where everything is.
struct Input {
    name: String,
    text: String,
    /// The file's absolute path (finds the Hermes home of `cron/jobs.json`).
    path: Option<PathBuf>,
    run_home: PathBuf,
    user_home: Option<PathBuf>,
    now: Timestamp,
    zone: Tz,
}

impl Input {
    fn plan(&self, existing: &[ExistingJob], zones: &ZoneTable) -> anyhow::Result<ImportPlan> {
        let is_file = |p: &Path| p.is_file();
        let cx = ImportContext {
            now: self.now,
            default_zone: self.zone,
            zones,
            existing,
            path: self.path.as_deref(),
            run_home: Some(&self.run_home),
            user_home: self.user_home.as_deref(),
            is_file: Some(&is_file),
        };
        import_file(&self.name, &self.text, &cx).map_err(|e| usage(e.to_string()))
    }
}

fn existing_jobs(conn: &Connection) -> anyhow::Result<Vec<ExistingJob>> {
    Ok(store::list_jobs(conn, true)?
        .into_iter()
        .map(|j| ExistingJob {
            id: j.id.to_string(),
            name: j.name,
            hermes_id: j.hermes_id,
            managed: j.managed,
        })
        .collect())
}

/// The jobs of `plan` as they will be stored.
fn build(
    plan: &ImportPlan,
    now: Timestamp,
    zone: FallbackZone,
    zones: &ZoneTable,
) -> anyhow::Result<Vec<Job>> {
    let home: PathBuf = hermes_cron::process::account().home.into();
    plan.jobs
        .iter()
        .map(|imported: &ImportedJob| {
            let mut input = imported.to_job_input();
            input.default_workdir = Some(home.clone());
            let mut job = input
                .build(JobId::generate(), now, zone, zones)
                .map_err(|e| usage(format!("{}: {e}", imported.origin)))?;
            job.hermes_id = imported.hermes_id.clone();
            if !imported.enabled {
                job.state = JobState::Paused {
                    reason: imported
                        .pause_reason
                        .clone()
                        .or_else(|| Some(format!("disabled in {}", imported.origin))),
                };
            }
            Ok(job)
        })
        .collect()
}

pub(super) fn import(
    ctx: &mut Ctx,
    file: &Path,
    dry_run: bool,
    as_json: bool,
) -> anyhow::Result<i32> {
    let fallback = ctx.new_job_zone()?;
    let zone = fallback.zone();
    let text = std::fs::read_to_string(file)
        .map_err(|e| failure(format!("cannot read {}: {e}", file.display())))?;
    let input = Input {
        name: file.to_string_lossy().into_owned(),
        text,
        path: std::path::absolute(file).ok(),
        run_home: ctx.home.root().to_path_buf(),
        user_home: std::env::var_os("HOME").map(PathBuf::from),
        now: ctx.now(),
        zone,
    };
    // A file refused as a whole is refused before the home is touched.
    input.plan(&[], &ctx.zones)?;
    let (plan, jobs) = if dry_run {
        let existing = match ctx.open_existing_db()? {
            Some(db) => existing_jobs(db.conn())?,
            None => Vec::new(),
        };
        let plan = input.plan(&existing, &ctx.zones)?;
        let jobs = build(&plan, input.now, fallback, &ctx.zones)?;
        (plan, jobs)
    } else {
        let mut db = ctx.open_db()?;
        let tx = db.immediate()?;
        let plan = input.plan(&existing_jobs(&tx)?, &ctx.zones)?;
        let jobs = build(&plan, input.now, fallback, &ctx.zones)?;
        for job in &jobs {
            store::insert_job(&tx, job)?;
        }
        tx.commit()?;
        (plan, jobs)
    };
    if as_json {
        print_json(&plan, &jobs, dry_run)?;
    } else {
        print_text(&plan, &jobs, dry_run, zone, &ctx.zones);
    }
    Ok(hermes_cron::exit::OK)
}

fn print_json(plan: &ImportPlan, jobs: &[Job], dry_run: bool) -> anyhow::Result<()> {
    let items: Vec<_> = jobs
        .iter()
        .zip(&plan.jobs)
        .map(|(j, i)| {
            let pause_reason = match &j.state {
                JobState::Paused { reason } => reason.clone(),
                _ => None,
            };
            json!({
                "id": (!dry_run).then(|| j.id.to_string()), "name": j.name,
                "schedule": j.schedule_text, "tz": j.tz,
                "state": j.state.as_str(), "origin": i.origin,
                "next_run_at": j.next_run_at.map(utc),
                "hermes_id": j.hermes_id, "pause_reason": pause_reason,
            })
        })
        .collect();
    let skipped: Vec<_> = plan
        .skipped
        .iter()
        .map(|s| json!({ "origin": s.origin, "reason": s.reason, "code": s.code.as_str() }))
        .collect();
    let notes: Vec<_> = plan
        .notes
        .iter()
        .map(|n| {
            json!({
                "origin": n.origin, "message": n.message, "code": n.code.as_str(),
                "warning": n.code.is_warning(),
            })
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "dry_run": dry_run, "imported": items, "not_imported": skipped, "notes": notes,
        }))?
    );
    Ok(())
}

fn print_text(plan: &ImportPlan, jobs: &[Job], dry_run: bool, zone: Tz, zones: &ZoneTable) {
    let zone_of = |j: &Job| zones.zone_or(j.tz.as_deref(), zone);
    let mut t = Table::new(&["ID", "NAME", "SCHEDULE", "NEXT RUN", "STATE", "FROM"]);
    for (j, i) in jobs.iter().zip(&plan.jobs) {
        t.row(vec![
            if dry_run {
                "-".into()
            } else {
                j.id.to_string()
            },
            cell(&j.name, 32),
            cell(&j.schedule_text, 28),
            j.next_run_at.map_or("-".into(), |a| local(a, zone_of(j))),
            j.state.as_str().into(),
            cell(&i.origin, 200),
        ]);
    }
    if !jobs.is_empty() {
        print!("{}", t.render());
    }
    for s in &plan.skipped {
        println!(
            "not imported: {}: {}",
            cell(&s.origin, MAX_LINE),
            cell(&s.reason, MAX_LINE)
        );
    }
    let line = |n: &ImportNote| {
        let kind = if n.code.is_warning() {
            "warning"
        } else {
            "note"
        };
        let (origin, message) = (cell(&n.origin, MAX_LINE), cell(&n.message, MAX_LINE));
        println!("{kind}: {origin}: {message}");
    };
    plan.notes
        .iter()
        .filter(|n| !n.code.is_warning())
        .for_each(line);
    let malformed = plan
        .skipped
        .iter()
        .filter(|s| s.code == SkipCode::Malformed)
        .count();
    println!(
        "{} {} job(s){}{}",
        if dry_run { "would import" } else { "imported" },
        jobs.len(),
        if plan.skipped.is_empty() {
            String::new()
        } else {
            format!(", {} not importable", plan.skipped.len())
        },
        if malformed == 0 {
            String::new()
        } else {
            format!(" ({malformed} malformed)")
        }
    );
    // Warnings last, where they are seen.
    plan.notes
        .iter()
        .filter(|n| n.code.is_warning())
        .for_each(line);
}
