//! `run JOB [--wait] [--foreground]` and `spawn`.

use super::args::SpawnArgs;
use super::context::Ctx;
use super::fail::{Exit, failure, usage};
use super::wait_cmd::{LedgerChanges, describe_end, runtime};
use hermes_cron::clock::monotonic;
use hermes_cron::db::Db;
use hermes_cron::dispatch::{Attach, Dispatched, Launcher, Requirement};
use hermes_cron::dispatch::{SpawnError, SpawnRequest, spawn_worker};
use hermes_cron::exit;
use hermes_cron::ids::ExecutionId;
use hermes_cron::ledger::{self, ExecState, Execution};
use hermes_cron::process::{Owner, OwnerRole};
use hermes_cron::reconcile;
use hermes_cron::schedule;
use hermes_cron::store;
use hermes_cron::tick::{ClaimContext, claim_manual};
use nix::sys::signal::{SigHandler, Signal, signal};
use std::process::Child;
use std::time::Duration;

/// Wait until the row is terminal. The worker is our child: reap it, and if
/// it is gone while the row is not terminal, settle the row: still `claimed`
/// by us (`claimer`), the worker never adopted it; else the dead-owner check.
fn wait_terminal(
    ctx: &Ctx,
    db: &Db,
    id: &ExecutionId,
    claimer: Owner,
    mut child: Option<Child>,
) -> anyhow::Result<Execution> {
    let mut changes = LedgerChanges::watch(ctx)?;
    let mut exited_at = None;
    loop {
        let (row, _) = ledger::get_execution(db.conn(), id)?
            .ok_or_else(|| failure(format!("execution {id} vanished from the ledger")))?;
        if row.state.is_terminal() {
            if let Some(c) = child.as_mut() {
                let _ = c.wait();
            }
            return Ok(row);
        }
        if let Some(c) = child.as_mut()
            && exited_at.is_none()
            && let Some(status) = c.try_wait()?
        {
            exited_at = Some(monotonic());
            settle_reaped(ctx, db, id, claimer, c.id(), status)?;
        }
        if exited_at
            .is_some_and(|t| monotonic().saturating_duration_since(t) > Duration::from_secs(1))
        {
            reconcile::sweep(db, ctx.now())?;
        }
        changes.next();
    }
}

/// Our worker `pid` for row `id` ended with `status`: settle the row.
fn settle_reaped(
    ctx: &Ctx,
    db: &Db,
    id: &ExecutionId,
    claimer: Owner,
    pid: u32,
    status: std::process::ExitStatus,
) -> anyhow::Result<()> {
    let w = reconcile::ReapedWorker {
        by: claimer,
        pid,
        status: Some(std::os::unix::process::ExitStatusExt::into_raw(status)),
        released: true,
    };
    reconcile::reaped(db, id, w, ctx.now())?;
    Ok(())
}

/// Without `--wait`: stay until the worker has adopted its row (or ended),
/// at most [`ADOPT_WAIT`]. The row is `claimed` by us until then, and any
/// dead-owner check (another `run`, `tick`, a gateway's startup sweep) that
/// found us gone would resolve it `unknown` before the worker could run it.
fn wait_adopted(
    ctx: &Ctx,
    db: &Db,
    id: &ExecutionId,
    claimer: Owner,
    mut child: Child,
) -> anyhow::Result<()> {
    let mut changes = LedgerChanges::watch(ctx)?;
    let deadline = monotonic() + ADOPT_WAIT;
    while monotonic() < deadline {
        let (row, _) = ledger::get_execution(db.conn(), id)?
            .ok_or_else(|| failure(format!("execution {id} vanished from the ledger")))?;
        if row.state != ExecState::Claimed {
            break;
        }
        if let Some(status) = child.try_wait()? {
            settle_reaped(ctx, db, id, claimer, child.id(), status)?;
            break;
        }
        changes.next();
    }
    Ok(())
}

/// How long `run` (without `--wait`) waits for its worker to adopt the row.
const ADOPT_WAIT: Duration = Duration::from_secs(10);

pub fn run(ctx: &mut Ctx, key: &str, wait: bool, foreground: bool) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let zone = ctx.fallback_zone()?;
    let launcher = Launcher::from_env(&ctx.home, &config)?;
    let mut db = ctx.open_db()?;
    reconcile::sweep(&db, ctx.now())?;
    let job = store::resolve_job(db.conn(), key)?;
    super::jobs_cmd::warn_unenforced(&job);
    let claim_ctx = ClaimContext {
        home: &ctx.home,
        config: &config,
        fallback_zone: zone,
        owner: hermes_cron::process::owner(OwnerRole::Cli),
        host: hermes_cron::cluster::Host::this(),
        now: ctx.now(),
    };
    let report = claim_manual(&mut db, &claim_ctx, &job)?;
    if let Some(n) = report.not_run.first() {
        println!("{} {}: {}", n.id, n.state, n.reason);
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
            if !foreground {
                match &unit {
                    Some(u) => println!("{} started {mode} in {u}", claimed.id),
                    None => println!("{} started {mode}", claimed.id),
                }
            }
            child
        }
        Dispatched::Refused { message, .. } => {
            return Err(Exit {
                code: exit::SCOPE_UNAVAILABLE,
                message: format!("{}: {message}", claimed.id),
            }
            .into());
        }
        Dispatched::NotSpawned { message, .. } => return Err(failure(message)),
    };
    if !(wait || foreground) {
        wait_adopted(ctx, &db, &claimed.id, claimed.owner, child)?;
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
    let row = wait_terminal(ctx, &db, &claimed.id, claimed.owner, Some(child))?;
    eprintln!("{}", describe_end(&row));
    Ok(if row.state == ExecState::Succeeded {
        exit::OK
    } else {
        exit::FAILURE
    })
}

pub fn spawn(ctx: &mut Ctx, a: SpawnArgs) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let launcher = Launcher::from_env(&ctx.home, &config)?;
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
        &ctx.home, &config, &launcher, &db, &req, &ctx.clock,
    )) {
        Ok(s) => {
            if a.json {
                println!(
                    "{}",
                    serde_json::json!({
                        "execution": s.execution, "mode": s.mode, "unit": s.unit,
                        "cause": s.cause.as_ref().map(|c| c.code), "pid": s.child.id(),
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
        }) => {
            if a.json {
                println!(
                    "{}",
                    serde_json::json!({
                        "execution": execution, "error": "refused", "cause": cause.code,
                        "message": message, "exit_code": exit::SCOPE_UNAVAILABLE,
                    })
                );
            }
            Err(Exit {
                code: exit::SCOPE_UNAVAILABLE,
                message: format!("{execution}: {message}"),
            }
            .into())
        }
        Err(SpawnError::Invalid(m)) => Err(usage(m)),
        Err(e) => Err(e.into()),
    }
}
