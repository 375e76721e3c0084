//! `wait EXECUTION` and `stop EXECUTION`: a run seen from outside, whoever
//! started it (a `spawn`, the gateway, a `run`). The wait wakes on the
//! ledger's own writes; it also resolves, as the reconciler does, a row whose
//! worker died without recording, so it never waits forever.

use super::context::Ctx;
use super::fail::{failure, usage};
use hermes_cron::clock::{elapsed, monotonic};
use hermes_cron::db::{Db, DbWatcher};
use hermes_cron::dispatch::stop_run;
use hermes_cron::ids::ExecutionId;
use hermes_cron::ledger::{self, ExecState, Execution};
use hermes_cron::process::Owner;
use hermes_cron::reconcile;
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::time::Duration;

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Blocks until the ledger may have changed or [`RECHECK`] passed: the waits
/// below wake on the worker's own writes, and look again on the period only
/// for what no write announces (the worker died without recording).
pub(super) struct LedgerChanges {
    rt: tokio::runtime::Runtime,
    watcher: DbWatcher,
}

/// How often a wait looks again with no database change.
const RECHECK: Duration = Duration::from_millis(250);

impl LedgerChanges {
    pub(super) fn watch(ctx: &Ctx) -> anyhow::Result<LedgerChanges> {
        let rt = runtime()?;
        let dir = ctx.home.cron_dir();
        let watcher = rt
            .block_on(async { DbWatcher::new(&dir) })
            .unwrap_or_else(|_| DbWatcher::disabled());
        Ok(LedgerChanges { rt, watcher })
    }

    pub(super) fn next(&mut self) {
        self.rt.block_on(self.watcher.next_look(RECHECK));
    }
}

/// One line about how a run ended.
pub(super) fn describe_end(row: &Execution) -> String {
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

/// Follow row `id` until `done` says so, or `limit` passed: woken by the
/// ledger's own writes. A worker of ours (`ours`: the child and the claimer
/// it must find) that exits is settled as its launcher settles a reaped
/// worker; a row whose worker died without a word is resolved as the
/// gateway would (at once with no child of ours, a second after ours ended
/// otherwise), so the wait never outlasts the run.
pub(super) fn follow(
    ctx: &Ctx,
    db: &Db,
    id: &ExecutionId,
    mut ours: Option<(Child, Owner)>,
    done: impl Fn(&Execution) -> bool,
    limit: Option<Duration>,
) -> anyhow::Result<Execution> {
    let mut changes = LedgerChanges::watch(ctx)?;
    let deadline = limit.map(|l| monotonic() + l);
    let mut exited_at = None;
    loop {
        let r = row(db, id)?;
        if done(&r) || deadline.is_some_and(|d| monotonic() >= d) {
            if let Some((child, _)) = ours.as_mut()
                && r.state.is_terminal()
            {
                let _ = child.wait();
            }
            return Ok(r);
        }
        if let Some((child, claimer)) = ours.as_mut()
            && exited_at.is_none()
            && let Some(status) = child.try_wait()?
        {
            exited_at = Some(monotonic());
            let w = reconcile::ReapedWorker {
                by: *claimer,
                pid: child.id(),
                status: Some(ExitStatusExt::into_raw(status)),
                released: true,
            };
            reconcile::reaped(db, id, w, ctx.now())?;
            continue;
        }
        if ours.is_none() || exited_at.is_some_and(|t| elapsed(t) > Duration::from_secs(1)) {
            // A claim nobody will start is left to a gateway or a tick.
            reconcile::sweep(db, &ctx.host.name, None, ctx.now())?;
        }
        changes.next();
    }
}

/// How a run ended, as `wait`, `stop` and `run --wait` print it under `--json`.
pub(super) fn end_json(row: &Execution) -> serde_json::Value {
    serde_json::json!({
        "execution": row.id, "state": row.state, "exit_code": row.exit_code,
        "signal": row.signal, "reason_code": row.reason_code, "reason": row.reason,
    })
}

fn report(row: &Execution, json: bool) -> i32 {
    if json {
        println!("{}", end_json(row));
    } else {
        println!("{}", describe_end(row));
    }
    exit_code_of(row)
}

pub(super) fn wait(ctx: &mut Ctx, execution: &str, json: bool) -> anyhow::Result<i32> {
    let db = ctx
        .open_existing_db()?
        .ok_or_else(|| failure(format!("no ledger in {}", ctx.home.root().display())))?;
    let id = super::execution_ref::resolve(db.conn(), execution)?;
    let r = follow(ctx, &db, &id, None, |r| r.state.is_terminal(), None)?;
    Ok(report(&r, json))
}

pub(super) fn stop(ctx: &mut Ctx, execution: &str, json: bool) -> anyhow::Result<i32> {
    let db = ctx
        .open_existing_db()?
        .ok_or_else(|| failure(format!("no ledger in {}", ctx.home.root().display())))?;
    let id = super::execution_ref::resolve(db.conn(), execution)?;
    let r = row(&db, &id)?;
    if !r.state.is_terminal() {
        let manager = hermes_cron::systemd::session_manager(ctx.knobs.dbus_timeout);
        if !runtime()?.block_on(stop_run(Some(manager.as_ref()), &r, ctx.knobs.kill_grace)) {
            return Err(failure(format!(
                "execution {id} has no worker yet to stop; try again"
            )));
        }
    }
    let r = follow(ctx, &db, &id, None, |r| r.state.is_terminal(), None)?;
    // The stop did what it was asked: the run has ended. How it ended is in
    // the line (or object) printed, not in the exit code (`systemctl stop`).
    report(&r, json);
    Ok(hermes_cron::exit::OK)
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
