//! One worker's life: wait for go, adopt the row, run the command
//! (`command.rs`), write the terminal row. A worker given a stage line
//! instead holds its row ahead of the instant and starts at its release
//! (`staged.rs`).
//!
//! The worker exits 0 when the job succeeded and 1 when its outcome (failed,
//! timed out, cancelled) was recorded; its own failures use the 12x codes in
//! [`crate::exit`], which no job outcome maps to.

use super::args::WorkerArgs;
use super::command::{
    Opened, block_handled_signals, cannot_start, not_started, open_run, prepare, say, spawn_job,
    supervise_and_record,
};
use super::go::{Heard, wait_for_go};
use super::patience;
use crate::clock::Clock;
use crate::exit;
use crate::ledger::{self, ExecState, RowOwner, Taking};
use crate::text::Chain;
use nix::sys::signal::{SigHandler, Signal, signal};

/// Run the worker; returns its exit code. Everything it logs is inside a
/// `run{execution=…}` span.
pub fn run(args: WorkerArgs) -> i32 {
    let span = tracing::info_span!("run", execution = %args.execution);
    span.in_scope(|| run_in(args))
}

fn run_in(mut args: WorkerArgs) -> i32 {
    let staged = match wait_for_go() {
        Heard::GiveUp => return exit::OK,
        Heard::Go => false,
        Heard::GoPlaced(go) => {
            args.place(go);
            false
        }
        Heard::Stage(go) => {
            args.place(go);
            true
        }
    };
    // Our launcher may have ignored these (a foreground `run` ignores Ctrl-C
    // while it waits); ignored signals are never delivered, so take them back.
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: restoring the default disposition installs no handler code.
        let _ = unsafe { signal(sig, SigHandler::SigDfl) };
    }
    if !staged {
        // Blocked to be waited for synchronously, before any thread exists.
        // A staged worker blocks them at its release: until then a signal
        // ends it like any process, before its command started.
        block_handled_signals();
    }
    let opened = match open_run(&args) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    if staged {
        return super::staged::run_staged(&opened, &args);
    }
    let Opened {
        clock,
        db,
        id,
        row,
        me,
        ..
    } = &opened;
    crate::crash::point("worker_before_adopt");
    let claimer = row.owner.clone().unwrap_or_else(|| RowOwner::stored(""));
    let adopt = |_attempt| {
        ledger::adopt(
            db.conn(),
            id,
            &claimer,
            &Taking {
                worker: *me,
                mode: args.mode,
                cause: args.cause,
                unit: args.unit.as_deref(),
                at: clock.now(),
            },
        )
    };
    let adopted = row.state == ExecState::Claimed
        && match patience::retry("adopt the row", say, adopt) {
            Ok(adopted) => adopted,
            Err(e) => {
                say(format!("cannot adopt the row: {}", Chain(&e)));
                return exit::WORKER_LEDGER;
            }
        };
    if !adopted {
        say(format!("row is {} and not ours to run; exiting", row.state));
        return exit::WORKER_NOT_OURS;
    }
    crate::crash::point("worker_after_adopt");
    execute(&opened, args.tee)
}

fn execute(a: &Opened, tee: bool) -> i32 {
    let prepared = match prepare(a) {
        Ok(p) => p,
        Err(why) => return not_started(a, why.to_string()),
    };
    let (child, reader) = match spawn_job(&a.spec, &prepared.env) {
        Ok(pair) => pair,
        Err(e) => return not_started(a, cannot_start(&a.spec, &e)),
    };
    supervise_and_record(a, child, reader, prepared, tee, None)
}
