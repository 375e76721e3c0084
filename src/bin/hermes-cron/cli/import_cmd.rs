//! `import FILE [--dry-run]`: a crontab or a Hermes `cron/jobs.json`. Every
//! job is validated first and all are inserted in one transaction, so an
//! error leaves nothing half-imported.

use super::context::Ctx;
use super::fail::{failure, usage};
use super::render::{Table, cell, local, utc};
use hermes_cron::ids::JobId;
use hermes_cron::import::detect_and_parse;
use hermes_cron::job::{Job, JobState};
use hermes_cron::store;
use serde_json::json;
use std::path::Path;

pub fn import(ctx: &mut Ctx, file: &Path, dry_run: bool, as_json: bool) -> anyhow::Result<i32> {
    let zone = ctx.fallback_zone()?;
    let now = ctx.now();
    let text = std::fs::read_to_string(file)
        .map_err(|e| failure(format!("cannot read {}: {e}", file.display())))?;
    let name = file.to_string_lossy();
    let plan = detect_and_parse(&name, &text, now, zone).map_err(|e| usage(e.to_string()))?;
    let mut jobs: Vec<Job> = Vec::with_capacity(plan.jobs.len());
    for imported in &plan.jobs {
        let mut job = imported
            .to_job_input()
            .build(JobId::generate(), now, zone)
            .map_err(|e| usage(format!("{}: {e}", imported.origin)))?;
        if !imported.enabled {
            job.state = JobState::Paused {
                reason: Some(format!("disabled in {}", imported.origin)),
            };
        }
        jobs.push(job);
    }
    if !dry_run && !jobs.is_empty() {
        let mut db = ctx.open_db()?;
        let tx = db.immediate()?;
        for job in &jobs {
            store::insert_job(&tx, job)?;
        }
        tx.commit()?;
    }
    let zone_of = |j: &Job| {
        j.tz.as_deref()
            .and_then(|t| hermes_cron::schedule::parse_zone(t).ok())
            .unwrap_or(zone)
    };
    if as_json {
        let items: Vec<_> = jobs
            .iter()
            .zip(&plan.jobs)
            .map(|(j, i)| {
                json!({
                    "id": (!dry_run).then(|| j.id.to_string()), "name": j.name, "schedule": j.schedule_text, "tz": j.tz,
                    "state": j.state.as_str(), "origin": i.origin,
                    "next_run_at": j.next_run_at.map(utc),
                })
            })
            .collect();
        let skipped: Vec<_> = plan
            .skipped
            .iter()
            .map(|s| json!({ "origin": s.origin, "reason": s.reason }))
            .collect();
        let notes: Vec<_> = plan
            .notes
            .iter()
            .map(|n| json!({ "origin": n.origin, "message": n.message }))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "dry_run": dry_run, "imported": items, "not_imported": skipped, "notes": notes,
            }))?
        );
        return Ok(hermes_cron::exit::OK);
    }
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
            i.origin.clone(),
        ]);
    }
    if !jobs.is_empty() {
        print!("{}", t.render());
    }
    for s in &plan.skipped {
        println!("not imported: {}: {}", s.origin, s.reason);
    }
    for n in &plan.notes {
        println!("note: {}: {}", n.origin, n.message);
    }
    println!(
        "{} {} job(s){}",
        if dry_run { "would import" } else { "imported" },
        jobs.len(),
        if plan.skipped.is_empty() {
            String::new()
        } else {
            format!(", {} not importable", plan.skipped.len())
        }
    );
    Ok(hermes_cron::exit::OK)
}
