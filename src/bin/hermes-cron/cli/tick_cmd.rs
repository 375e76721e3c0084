//! `tick`: one claim pass and the dispatch of what it claimed.

use super::context::Ctx;
use super::fail::failure;
use super::render::{Table, cell, utc};
use hermes_cron::dispatch::{Attach, Dispatched, Requirement};
use hermes_cron::ledger::{ClaimedRun, ExecState, ReasonCode};
use hermes_cron::reconcile;
use hermes_cron::tick::{ClaimReport, NotRun, claim_due};
use serde_json::json;

/// Most claim passes one `tick` makes.
const MAX_PASSES: usize = 1_000;

pub(super) fn tick(ctx: &mut Ctx, as_json: bool) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let zone = ctx.fallback_zone()?;
    if !ctx.home.cron_dir().is_dir() {
        return Err(failure(format!(
            "tick failed: {} does not exist; is --home right? (`add` creates it)",
            ctx.home.cron_dir().display()
        )));
    }
    // Everything that may fail for reasons other than the claim is settled
    // before the claim, so no claimed row is left waiting for a worker.
    let launcher = ctx.launcher()?;
    let mut db = ctx.open_db()?;
    // A pass of the gateway's: like it, never claim from a damaged ledger.
    db.check_whole()?;
    let now = ctx.now();
    let swept = reconcile::sweep(&db, &ctx.host.name, None, now)?;
    let claim_ctx = ctx.claim_ctx(&config, zone);
    // Claims of this host that never started and nobody will start: run
    // with this pass's claims, or missed (a tick is a gateway's pass); before
    // the claim, which would take such a claim for a run still going.
    let retaker = reconcile::Retaker {
        home: &ctx.home,
        owner: claim_ctx.owner,
        host: &ctx.host.name,
        catch_up_missed: config.cron.catch_up_missed,
        zones: &ctx.zones,
        fallback: zone,
    };
    let mut retaken = ClaimReport::default();
    for (row, why) in &swept.retake {
        let r = reconcile::retake(&db, &retaker, row, why, now)?;
        r.announce();
        match r {
            reconcile::Retaken::Run(found) => {
                let (row, spec) = *found;
                let run = ClaimedRun::taken_over(row, spec, claim_ctx.owner);
                retaken.claimed.push(run);
            }
            reconcile::Retaken::Missed(row, reason) => retaken.not_run.push(NotRun {
                id: row.id,
                job_id: row.job_id,
                job_name: row.job_name,
                scheduled_for: row.scheduled_for,
                state: ExecState::Missed,
                reason_code: ReasonCode::ClaimerDied,
                reason,
            }),
            reconcile::Retaken::Lost => {}
        }
    }
    // Passes until nothing more is due (a PostgreSQL pass takes a batch) or
    // another process holds the tick lock (it claims the rest); bounded, in
    // case a pass could ever leave its jobs due.
    let mut report: Option<ClaimReport> = None;
    for _ in 0..MAX_PASSES {
        let pass = claim_due(&mut db, &claim_ctx).map_err(|e| {
            let why = hermes_cron::db::explain(&e, &ctx.home.cron_dir())
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            anyhow::Error::from(e).context(format!("tick failed{why}"))
        })?;
        let Some(pass) = pass else { break };
        let more = pass.more_due;
        match report.as_mut() {
            Some(r) => r.absorb(pass),
            None => report = Some(pass),
        }
        if !more {
            break;
        }
    }
    // What this process took over it launches, whoever claims now.
    if report.is_none() && retaken.claimed.is_empty() {
        if as_json {
            println!("{}", json!({ "contended": true }));
        } else {
            println!("another tick is claiming right now; nothing to do");
        }
        return Ok(hermes_cron::exit::OK);
    }
    let report = {
        if let Some(pass) = report {
            retaken.absorb(pass);
        }
        retaken
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Each claimed run launched: (the run, what it came to, its mode, unit,
    // cause and message), told once for both forms of output.
    let mut started = Vec::new();
    for run in &report.claimed {
        let d = rt.block_on(launcher.dispatch(
            &db,
            run,
            Requirement::None,
            Attach::Detached,
            ctx.now(),
        ))?;
        let told = match d {
            Dispatched::Started {
                mode, cause, unit, ..
            } => ("started", Some(mode), unit, cause.map(|c| c.code), None),
            Dispatched::Refused { cause, message } => {
                ("refused", None, None, Some(cause.code), Some(message))
            }
            Dispatched::NotSpawned { message, .. } => ("failed", None, None, None, Some(message)),
        };
        started.push((run, told));
    }
    if as_json {
        let claimed: Vec<_> = started
            .iter()
            .map(|(run, (state, mode, unit, cause, message))| {
                json!({
                    "id": run.id, "job_id": run.job_id, "job_name": run.job_name,
                    "scheduled_for": run.scheduled_for.map(utc), "source": run.source,
                    "attempt": run.attempt, "dispatch": state, "mode": mode.map(|m| m.as_str()),
                    "unit": unit, "cause": cause, "message": message,
                })
            })
            .collect();
        let not_run = |state: hermes_cron::ledger::ExecState| -> Vec<_> {
            report
                .not_run
                .iter()
                .filter(|n| n.state == state)
                .cloned()
                .collect()
        };
        let resolved: Vec<_> = swept
            .resolved
            .iter()
            .filter_map(|r| {
                let (_, code, reason) = r.judgement.recorded()?;
                Some(json!({ "id": r.row.id, "job_name": r.row.job_name, "reason_code": code, "reason": reason }))
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "contended": false,
                "claimed": claimed,
                "skipped": not_run(hermes_cron::ledger::ExecState::Skipped),
                "missed": not_run(hermes_cron::ledger::ExecState::Missed),
                "resolved_unknown": resolved,
                "conflicts": report.conflicts,
            }))?
        );
        return Ok(hermes_cron::exit::OK);
    }
    let skipped = report
        .not_run
        .iter()
        .filter(|n| n.state == hermes_cron::ledger::ExecState::Skipped)
        .count();
    println!(
        "claimed {}, skipped {}, missed {}",
        report.claimed.len(),
        skipped,
        report.not_run.len() - skipped
    );
    let mut table = Table::new(&["EXECUTION", "JOB", "OUTCOME", "DETAIL"]);
    for (run, (state, mode, unit, cause, message)) in &started {
        let what = match mode {
            Some(mode) => format!("{state} {mode}"),
            None => state.to_string(),
        };
        let detail = (message.clone())
            .or_else(|| unit.clone())
            .or_else(|| cause.map(|c| c.to_string()))
            .unwrap_or_default();
        table.row(vec![
            run.id.to_string(),
            cell(&run.job_name, 32),
            what,
            detail,
        ]);
    }
    for n in &report.not_run {
        table.row(vec![
            n.id.to_string(),
            cell(&n.job_name, 32),
            n.state.to_string(),
            n.reason.clone(),
        ]);
    }
    for r in &swept.resolved {
        let Some((state, _, reason)) = r.judgement.recorded() else {
            continue;
        };
        table.row(vec![
            r.row.id.to_string(),
            cell(&r.row.job_name, 32),
            state.to_string(),
            reason.to_string(),
        ]);
    }
    if !started.is_empty() || !report.not_run.is_empty() || !swept.resolved.is_empty() {
        print!("{}", table.render());
    }
    Ok(hermes_cron::exit::OK)
}
