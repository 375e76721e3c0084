//! `run JOB [--wait] [--foreground]` and `spawn`.

use super::args::SpawnArgs;
use super::context::Ctx;
use super::fail::{failure, not_started, refused, usage};
use super::wait_cmd::{describe_end, end_json, follow, runtime};
use hermes_cron::dispatch::{Attach, Dispatched, Requirement};
use hermes_cron::dispatch::{SpawnError, SpawnRequest, spawn_worker};
use hermes_cron::exit;
use hermes_cron::ledger::{ExecState, Execution};
use hermes_cron::reconcile;
use hermes_cron::schedule;
use hermes_cron::store;
use hermes_cron::tick::claim_manual;
use nix::sys::signal::{SigHandler, Signal, signal};
use std::time::Duration;

/// How long `run` (without `--wait`) waits for its worker to adopt the row.
const ADOPT_WAIT: Duration = Duration::from_secs(10);

pub(super) fn run(
    ctx: &mut Ctx,
    key: &str,
    wait: bool,
    foreground: bool,
    json: bool,
) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let zone = ctx.fallback_zone()?;
    let launcher = ctx.launcher()?;
    let mut db = ctx.open_db()?;
    // A claim nobody will start is left to a gateway or a tick.
    reconcile::sweep(&db, &ctx.host.name, None, ctx.now())?;
    let job = store::resolve_job(db.conn(), key)?;
    super::jobs_cmd::warn_unenforced(&job);
    let report = claim_manual(&mut db, &ctx.claim_ctx(&config, zone), &job)?;
    if let Some(n) = report.not_run.first() {
        if json {
            let object = serde_json::json!({
                "execution": n.id, "job_id": n.job_id, "state": n.state,
                "reason_code": n.reason_code, "reason": n.reason,
            });
            println!("{object}");
        } else {
            println!("{} {}: {}", n.id, n.state, n.reason);
        }
        return Ok(exit::FAILURE);
    }
    let Some(claimed) = report.claimed.first() else {
        return Err(failure("the manual run was not recorded"));
    };
    let attach = if foreground {
        Attach::Foreground
    } else {
        Attach::Detached
    };
    let dispatched = runtime()?.block_on(launcher.dispatch(
        &db,
        claimed,
        Requirement::None,
        attach,
        ctx.now(),
    ))?;
    let child = match dispatched {
        Dispatched::Started {
            mode, unit, child, ..
        } => {
            if json && !(wait || foreground) {
                let object = serde_json::json!({
                    "execution": claimed.id, "job_id": job.id, "mode": mode, "unit": unit,
                });
                println!("{object}");
            } else if !foreground && !json {
                match &unit {
                    Some(u) => println!("{} started {mode} in {u}", claimed.id),
                    None => println!("{} started {mode}", claimed.id),
                }
            }
            child
        }
        Dispatched::Refused { message, cause } => {
            return Err(refused(claimed.id.as_str(), &message, &cause));
        }
        Dispatched::NotSpawned { message, .. } => return Err(failure(message)),
    };
    let ours = Some((child, claimed.owner));
    if !(wait || foreground) {
        // Until the worker adopts it the row is `claimed` by us, and any
        // dead-owner check (another `run`, `tick`, a gateway's startup
        // sweep) that found us gone would resolve it `unknown` first.
        let adopted = |r: &Execution| r.state != ExecState::Claimed;
        follow(ctx, &db, &claimed.id, ours, adopted, Some(ADOPT_WAIT))?;
        return Ok(exit::OK);
    }
    if foreground {
        // Ctrl-C reaches the worker too (same process group): it stops the
        // job and records the outcome, which we then read.
        // SAFETY: setting a signal to ignore installs no handler code.
        unsafe {
            let _ = signal(Signal::SIGINT, SigHandler::SigIgn);
            let _ = signal(Signal::SIGTERM, SigHandler::SigIgn);
        }
    }
    let row = follow(ctx, &db, &claimed.id, ours, |r| r.state.is_terminal(), None)?;
    if json {
        println!("{}", end_json(&row));
    } else {
        eprintln!("{}", describe_end(&row));
    }
    Ok(if row.state == ExecState::Succeeded {
        exit::OK
    } else {
        exit::FAILURE
    })
}

pub(super) fn spawn(ctx: &mut Ctx, a: SpawnArgs, json: bool) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let launcher = ctx.launcher()?;
    let db = ctx.open_db()?;
    let env = hermes_cron::job::parse_env(&a.env)?;
    let pass_env = hermes_cron::job::parse_pass_env(&a.pass_env)?;
    if let Some(f) = a.env_file.iter().find(|f| !f.is_absolute()) {
        return Err(usage(format!(
            "--env-file: {} is not an absolute path",
            f.display()
        )));
    }
    let timeout = a
        .timeout
        .as_deref()
        .map(schedule::parse_duration)
        .transpose()
        .map_err(|e| usage(format!("--timeout: {e}")))?;
    let req = SpawnRequest {
        name: a.name.clone(),
        argv: a.command.clone(),
        env,
        env_files: a.env_file.clone(),
        pass_env,
        workdir: a.workdir.clone(),
        timeout,
        require_scope: a.require_scope,
        log_file: a
            .log_file
            .as_deref()
            .map(std::path::absolute)
            .transpose()
            .map_err(|e| usage(format!("--log-file: {e}")))?,
    };
    match runtime()?.block_on(spawn_worker(
        &ctx.home,
        &config,
        &launcher,
        &db,
        &ctx.host.name,
        &req,
        &ctx.clock,
    )) {
        Ok(s) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "execution": s.execution, "mode": s.mode, "unit": s.unit,
                        "cause": s.cause.as_ref().map(|c| c.code), "pid": s.pid,
                        "worker_pid": s.child.id(),
                    })
                );
            } else {
                println!(
                    "{}\t{}\t{}",
                    s.execution,
                    s.mode,
                    s.unit.as_deref().unwrap_or("-")
                );
            }
            Ok(exit::OK)
        }
        Err(SpawnError::Refused {
            execution,
            message,
            cause,
        }) => Err(refused(execution.as_str(), &message, &cause)),
        Err(SpawnError::NotStarted { execution, message }) => {
            Err(not_started(execution.as_str(), message))
        }
        Err(SpawnError::Invalid(m)) => Err(usage(m)),
        Err(e) => Err(e.into()),
    }
}
