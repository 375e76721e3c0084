//! Staging a claimed run ahead of its instant: the same spawn, scope and
//! placement as a dispatch (`launcher.rs`), ending with the stage line
//! instead of the go line. The worker then holds its row (`staged`) until
//! [`StagedWorker::release`] writes one byte at the instant.
//!
//! Staging only prepares: a run it cannot prepare (its worker cannot be
//! spawned, or it would be refused for want of a scope) is [`Staged::Not`],
//! and the caller takes the claim back so the run is dispatched at its
//! instant through the usual path, which records what happens then.

use super::held::HeldWorker;
use super::launcher::Launcher;
use crate::ledger::DispatchMode;
use crate::tick::ClaimedRun;
use crate::worker::Go;
use hermes_cron_core::placement::{Cause, Placement, Requirement, place};
use std::process::Child;

/// A worker holding its row, waiting for its release.
#[derive(Debug)]
pub struct StagedWorker {
    held: HeldWorker,
    pub mode: DispatchMode,
    pub unit: Option<String>,
    pub cause: Option<Cause>,
}

/// What staging a run came to.
#[derive(Debug)]
pub enum Staged {
    Held(StagedWorker),
    /// Not staged; why, in words. Nothing was recorded.
    Not(String),
}

impl StagedWorker {
    /// The worker's pid.
    pub fn pid(&self) -> u32 {
        self.held.pid()
    }

    /// Release it: its command starts now. `Err`: the worker is gone (reaped).
    pub fn release(self) -> std::io::Result<Child> {
        self.held.release_staged()
    }
}

impl Launcher {
    /// Prepare `run` ahead of its instant.
    pub async fn stage(&self, run: &ClaimedRun) -> Staged {
        let required = self.requirement(run, Requirement::None);
        let held = match self.spawn_held(run, super::Attach::Detached) {
            Ok(held) => held,
            Err(e) => return Staged::Not(format!("cannot spawn the worker: {e}")),
        };
        let (scope, maybe_moved) = match self.try_scope(&held, run).await {
            Ok(unit) => (Ok(unit), false),
            Err(no) => (Err(no.cause), no.maybe_moved),
        };
        let (held, go, cause) = match place(scope, required) {
            Placement::Scoped(unit) => {
                crate::crash::point("after_scope_created");
                let go = Go::scoped(unit);
                (held, go, None)
            }
            Placement::Degraded(cause) => {
                let held = if maybe_moved {
                    // The scope's start may have moved it late: a fresh one.
                    held.abandon();
                    match self.spawn_held(run, super::Attach::Detached) {
                        Ok(fresh) => fresh,
                        Err(e) => return Staged::Not(format!("cannot spawn the worker: {e}")),
                    }
                } else {
                    held
                };
                super::launcher::warn_degraded_once(&cause);
                let go = Go::degraded(cause.code);
                (held, go, Some(cause))
            }
            Placement::Refused { message, .. } => {
                held.abandon();
                return Staged::Not(format!("would be refused: {message}"));
            }
        };
        stage_line(held, go, cause)
    }
}

/// Write the stage line; a worker that died at its gate is not staged.
fn stage_line(mut held: HeldWorker, go: Go, cause: Option<Cause>) -> Staged {
    if let Err(e) = held.stage(&go) {
        held.abandon();
        return Staged::Not(format!("cannot write the stage line: {e}"));
    }
    crate::crash::point("after_stage_line");
    Staged::Held(StagedWorker {
        held,
        mode: go.mode,
        unit: go.unit,
        cause,
    })
}
