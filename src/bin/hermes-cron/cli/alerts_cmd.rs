//! `alerts`: the outbox, newest first: each delivery (an alert or a ping to
//! one destination), its state, and every attempt with its result. URLs are
//! shown with their host only.

use super::context::Ctx;
use super::render::{Table, cell, local, utc};
use hermes_cron::alert::redacted_url;
use hermes_cron::ledger::{self, DeliveryView};
use serde_json::{Value, json};

const MAX_LIMIT: usize = 100_000;

fn target(d: &DeliveryView) -> String {
    if d.destination == "command" {
        d.target.clone()
    } else {
        redacted_url(&d.target)
    }
}

fn delivery_json(d: &DeliveryView) -> Value {
    let attempts: Vec<Value> = d
        .attempts
        .iter()
        .map(|a| {
            json!({
                "attempt": a.attempt,
                "started_at": utc(a.started_at),
                "ended_at": a.ended_at.map(utc),
                "ok": a.ok,
                "result": a.result,
                "execution_id": a.execution_id,
            })
        })
        .collect();
    json!({
        "id": d.id,
        "job_id": d.job_id,
        "job_name": d.job_name,
        "execution_id": d.execution_id,
        "kind": d.kind,
        "destination": d.destination,
        "target": target(d),
        "state": d.state,
        "created_at": utc(d.created_at),
        "next_attempt_at": d.next_attempt_at.map(utc),
        "delivered_at": d.delivered_at.map(utc),
        "event": d.event,
        "attempts": attempts,
    })
}

pub(super) fn alerts(
    ctx: &mut Ctx,
    job: Option<&str>,
    limit: usize,
    json: bool,
) -> anyhow::Result<i32> {
    let Some(db) = ctx.open_existing_db()? else {
        println!("{}", if json { "[]" } else { "no alerts yet" });
        return Ok(hermes_cron::exit::OK);
    };
    let rows = ledger::list_deliveries(db.conn(), job, limit.clamp(1, MAX_LIMIT))?;
    if json {
        let all: Vec<Value> = rows.iter().map(delivery_json).collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(hermes_cron::exit::OK);
    }
    if rows.is_empty() {
        println!("no alerts yet");
        return Ok(hermes_cron::exit::OK);
    }
    let zones = ctx.job_zones(db.conn())?;
    let mut t = Table::new(&[
        "CREATED",
        "JOB",
        "KIND",
        "TO",
        "STATE",
        "TRIES",
        "LAST RESULT",
    ]);
    for d in &rows {
        let last = d
            .attempts
            .last()
            .map(|a| a.result.clone().unwrap_or_else(|| "(in progress)".into()))
            .unwrap_or_else(|| "-".into());
        t.row(vec![
            local(d.created_at, zones.of(d.job_id.as_deref())),
            cell(&d.job_name, 32),
            d.kind.clone(),
            format!("{} {}", d.destination, cell(&target(d), 48)),
            d.state.clone(),
            d.attempts.len().to_string(),
            cell(&last, 60),
        ]);
    }
    print!("{}", t.render());
    Ok(hermes_cron::exit::OK)
}

/// `gateway-failed`: the user unit's `OnFailure=` hook.
pub(super) fn gateway_failed(ctx: &mut Ctx, unit: Option<&str>, json: bool) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let launcher = ctx.launcher()?;
    let db = ctx.open_db()?;
    // systemd (251+) tells an OnFailure= unit how the failed one ended.
    let monitor = |k: &str| std::env::var(format!("MONITOR_{k}")).ok();
    let mut detail: Vec<String> = unit.map(|u| format!("unit {u}")).into_iter().collect();
    for (key, label) in [
        ("SERVICE_RESULT", "result"),
        ("EXIT_CODE", "exit"),
        ("EXIT_STATUS", "status"),
    ] {
        if let Some(v) = monitor(key).filter(|v| !v.is_empty()) {
            detail.push(format!("{label} {v}"));
        }
    }
    let report = super::wait_cmd::runtime()?.block_on(hermes_cron::alerts::gateway_failed(
        &ctx.home,
        &config,
        &launcher,
        &db,
        &ctx.host.name,
        &detail.join(", "),
        &ctx.clock,
    ))?;
    if json {
        println!(
            "{}",
            json!({"queued": report.queued, "begun": report.begun,
                   "http_ok": report.http_ok, "http_failed": report.http_failed})
        );
    } else if report.queued == 0 {
        println!("no alert destination configured (cron.alert_command, cron.alert_webhook)");
    } else {
        println!(
            "gateway_failed alert queued for {} destination(s); {} delivery attempt(s) begun, {} HTTP ok, {} failed (`hermes-cron alerts`)",
            report.queued, report.begun, report.http_ok, report.http_failed
        );
    }
    Ok(hermes_cron::exit::OK)
}
