//! `wait EXECUTION` and `stop EXECUTION`: a run seen from outside, whoever
//! started it (a `spawn`, the gateway, a `run`). The wait wakes on the
//! ledger's own writes; it also resolves, as the reconciler does, a row whose
//! worker died without recording, so it never waits forever.

use super::context::Ctx;
use super::fail::{failure, usage};
use hermes_cron::db::{Db, DbWatcher};
use hermes_cron::ids::ExecutionId;
use hermes_cron::ledger::{self, DispatchMode, ExecState, Execution};
use hermes_cron::process::signal_pid;
use hermes_cron::reconcile;
use nix::sys::signal::Signal;
use std::time::Duration;

pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Blocks until the ledger may have changed or [`RECHECK`] passed: the waits
/// below wake on the worker's own writes, and look again on the period only
/// for what no write announces (the worker died without recording).
pub struct LedgerChanges {
    rt: tokio::runtime::Runtime,
    watcher: DbWatcher,
}

/// How often a wait looks again with no database change.
const RECHECK: Duration = Duration::from_millis(250);

impl LedgerChanges {
    pub fn watch(ctx: &Ctx) -> anyhow::Result<LedgerChanges> {
        let rt = runtime()?;
        let dir = ctx.home.cron_dir();
        let watcher = rt
            .block_on(async { DbWatcher::new(&dir) })
            .unwrap_or_else(|_| DbWatcher::disabled());
        Ok(LedgerChanges { rt, watcher })
    }

    pub fn next(&mut self) {
        self.rt.block_on(self.watcher.next_look(RECHECK));
    }
}

/// One line about how a run ended.
pub fn describe_end(row: &Execution) -> String {
    let mut s = format!("{} {}", row.id, row.state);
    if let Some(code) = row.exit_code {
        s.push_str(&format!(" (exit {code})"));
    }
    if let Some(sig) = row.signal {
        s.push_str(&format!(" ({})", hermes_cron::process::signal_name(sig)));
    }
    if let Some(r) = &row.reason {
        s.push_str(&format!(": {r}"));
    }
    s
}

/// The exit code that reports how `row` ended: its command's code, 128 +
/// the signal that killed it, 0 for a success, 1 otherwise.
fn exit_code_of(row: &Execution) -> i32 {
    match (row.state, row.exit_code, row.signal) {
        (ExecState::Succeeded, _, _) => hermes_cron::exit::OK,
        (_, Some(code), _) => code,
        (_, None, Some(sig)) => 128 + sig,
        _ => hermes_cron::exit::FAILURE,
    }
}

fn row(db: &Db, id: &ExecutionId) -> anyhow::Result<Execution> {
    Ok(ledger::get_execution(db.conn(), id)?
        .ok_or_else(|| usage(format!("no execution {id}; `hermes-cron runs` lists them")))?
        .0)
}

/// Block until row `id` is terminal.
fn until_terminal(ctx: &Ctx, db: &Db, id: &ExecutionId) -> anyhow::Result<Execution> {
    let mut changes = LedgerChanges::watch(ctx)?;
    loop {
        let r = row(db, id)?;
        if r.state.is_terminal() {
            return Ok(r);
        }
        // A worker that died without a word: resolved, as the gateway would.
        reconcile::sweep(db, ctx.now())?;
        changes.next();
    }
}

fn report(row: &Execution, json: bool) -> i32 {
    if json {
        println!(
            "{}",
            serde_json::json!({
                "execution": row.id, "state": row.state, "exit_code": row.exit_code,
                "signal": row.signal, "reason_code": row.reason_code, "reason": row.reason,
            })
        );
    } else {
        println!("{}", describe_end(row));
    }
    exit_code_of(row)
}

pub fn wait(ctx: &mut Ctx, execution: &str, json: bool) -> anyhow::Result<i32> {
    let db = ctx
        .open_existing_db()?
        .ok_or_else(|| failure(format!("no ledger in {}", ctx.home.root().display())))?;
    let id = ExecutionId::from_string(execution);
    let r = until_terminal(ctx, &db, &id)?;
    Ok(report(&r, json))
}

pub fn stop(ctx: &mut Ctx, execution: &str, json: bool) -> anyhow::Result<i32> {
    let db = ctx
        .open_existing_db()?
        .ok_or_else(|| failure(format!("no ledger in {}", ctx.home.root().display())))?;
    let id = ExecutionId::from_string(execution);
    let r = row(&db, &id)?;
    if !r.state.is_terminal() {
        let worker = r
            .owner
            .as_ref()
            .and_then(|o| o.owner())
            .map(|o| o.process.pid);
        let stopped = match (r.dispatch_mode, &r.unit) {
            (Some(DispatchMode::Scoped), Some(unit)) => {
                let manager = hermes_cron::dispatch::session_manager();
                runtime()?.block_on(manager.stop_unit(unit)).is_ok()
            }
            _ => false,
        };
        if !stopped {
            let pid = r.pid.or(worker).ok_or_else(|| {
                failure(format!(
                    "execution {id} has no worker yet to stop; try again"
                ))
            })?;
            signal_pid(pid, Signal::SIGTERM)
                .map_err(|e| failure(format!("cannot signal worker pid {pid}: {e}")))?;
        }
    }
    let r = until_terminal(ctx, &db, &id)?;
    Ok(report(&r, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_say_how_the_command_ended() {
        let mut row = Execution::sample();
        row.state = ExecState::Failed;
        row.exit_code = Some(75);
        assert_eq!(exit_code_of(&row), 75);
        row.exit_code = None;
        row.signal = Some(9);
        assert_eq!(exit_code_of(&row), 137);
        row.signal = None;
        row.state = ExecState::Unknown;
        assert_eq!(exit_code_of(&row), 1);
        row.state = ExecState::Succeeded;
        assert_eq!(exit_code_of(&row), 0);
    }
}
