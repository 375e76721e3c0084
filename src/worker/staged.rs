//! A worker staged ahead of its instant. Given a stage line instead of a go
//! line, it does everything that can be done before the instant, then holds:
//!
//! 1. `stage`: `claimed -> staged`, its pid, start time and placement on the
//!    row (the row is the worker's from here on);
//! 2. prepares the command: its environment, its output file;
//! 3. waits for the release byte on its pipe ([`wait_for_release`]);
//! 4. released: forks the command at once, then records `staged -> running`
//!    (`start`, `started_at` = the instant the command's process exists), and
//!    from there is an ordinary run (`run.rs`: supervise, record the end). A
//!    ledger that cannot take the start within the worker's patience never
//!    stops the command: the start is recorded, with its time, before the end;
//! 5. EOF instead of the release: its gateway went away, or took the run
//!    back (it then moved the row itself first): `withdraw` the row if it
//!    is still ours, and exit without running anything.
//!
//! Nothing that decides whether the command runs is done here: the job's
//! pause, edit or removal and its overlap policy are checked by the gateway
//! at the instant, before it releases.

use super::args::WorkerArgs;
use super::command::{
    Opened, block_handled_signals, cannot_start, not_started, prepare, record_start, say,
    spawn_job, supervise_and_record,
};
use super::go::{stdin_to_null, wait_for_release};
use super::patience;
use crate::clock::Clock;
use crate::exit;
use crate::ledger::{self, ExecState, RowOwner, Taking};
use crate::text::Chain;

/// The staged run of `o`, placed as `args` say; returns the exit code.
pub(super) fn run_staged(o: &Opened, args: &WorkerArgs) -> i32 {
    if o.row.state != ExecState::Claimed {
        say(format!(
            "row is {} and not ours to stage; exiting",
            o.row.state
        ));
        return exit::WORKER_NOT_OURS;
    }
    crate::crash::point("worker_before_stage");
    let claimer = o.row.owner.clone().unwrap_or_else(|| RowOwner::stored(""));
    let stage = |_attempt| {
        let s = Taking {
            worker: o.me,
            mode: args.mode,
            cause: args.cause,
            unit: args.unit.as_deref(),
            at: o.clock.now(),
        };
        ledger::stage(o.db.conn(), &o.id, &claimer, &s)
    };
    match patience::retry("stage the row", say, stage) {
        Ok(true) => {}
        Ok(false) => {
            say("the row was moved on before we staged it; exiting");
            return exit::WORKER_NOT_OURS;
        }
        Err(e) => {
            say(format!("cannot stage the row: {}", Chain(&e)));
            return exit::WORKER_LEDGER;
        }
    }
    crate::crash::point("worker_after_stage");
    let prepared = prepare(o);
    if !wait_for_release() {
        return withdraw(o);
    }
    block_handled_signals();
    stdin_to_null();
    let prepared = match prepared {
        Ok(p) => p,
        Err(why) => return started_without_command(o, why.to_string()),
    };
    let (child, reader) = match spawn_job(&o.spec, &prepared.env) {
        Ok(pair) => pair,
        Err(e) => return started_without_command(o, cannot_start(&o.spec, &e)),
    };
    let started_at = o.clock.now();
    crate::crash::point("worker_after_fork");
    // The start need not reach the disk before the run goes on: lost (the
    // host crashed), the row reads `staged` and its dead worker makes it
    // `unknown`, the same record a worker dying here gets. The terminal
    // write syncs it with itself. (`stage` before it is synced: lost, the row
    // would read `claimed` and be taken back and run again.)
    // (SQLite's; a database server keeps its own log.)
    if let Some(c) = o.db.conn().sqlite() {
        let _ = c.pragma_update(None, "synchronous", "NORMAL");
    }
    let start = |_attempt| ledger::start(o.db.conn(), &o.id, &o.me, started_at);
    let recorded = patience::retry("record the start", say, start);
    if let Some(c) = o.db.conn().sqlite() {
        let _ = c.pragma_update(None, "synchronous", "FULL");
    }
    let pending_start = match recorded {
        Ok(true) => None,
        Ok(false) => {
            // Nothing but this worker moves a released row: someone judged
            // us dead. The row is not ours to run; the command must not be.
            say("the row was moved on while we started; stopping the command");
            let _ = crate::process::signal_group(child.id(), nix::sys::signal::Signal::SIGKILL);
            return exit::WORKER_NOT_OURS;
        }
        Err(e) => {
            // The command has started: a ledger delay never stops it. Its
            // start is recorded, with its time, before its end.
            say(format!(
                "cannot record the start yet ({}); the command runs on, and its start is recorded with its end",
                Chain(&e)
            ));
            Some(started_at)
        }
    };
    crate::crash::point("worker_after_start");
    supervise_and_record(o, child, reader, prepared, args.tee, pending_start)
}

/// Released, but the command could not be started: record the start, then
/// how it ended (`failed`, `exec_failed`), as an unstaged run records it.
fn started_without_command(a: &Opened, why: String) -> i32 {
    match record_start(a, a.clock.now()) {
        Ok(()) => not_started(a, why),
        Err(code) => code,
    }
}

/// Not released: take the run back if the row is still ours; never run it.
fn withdraw(o: &Opened) -> i32 {
    crate::crash::point("worker_before_withdraw");
    let me = o.me.to_string();
    let take_back = |_attempt| ledger::withdraw(o.db.conn(), &o.id, ExecState::Staged, Some(&me));
    match patience::retry("withdraw the row", say, take_back) {
        Ok(true) => say("not released (the gateway went away or took the run back); withdrawn"),
        Ok(false) => {}
        Err(e) => say(format!("cannot withdraw the row: {}", Chain(&e))),
    }
    exit::OK
}
