//! What the launcher tells a worker: its home and run on the command line,
//! and its placement on the go or stage line (`go.rs`).

use crate::ledger::DispatchMode;
use hermes_cron_core::placement::CauseCode;
use std::path::PathBuf;

/// What the launcher tells a worker: its run, and (for launchers that
/// write a bare go) how it was placed.
#[derive(Clone, Debug)]
pub struct WorkerArgs {
    pub home: PathBuf,
    pub execution: String,
    /// Replaced by the go line's placement when it carries one.
    pub mode: DispatchMode,
    /// Why the mode is not `scoped`.
    pub cause: Option<CauseCode>,
    pub unit: Option<String>,
    /// Also copy the job's output to the worker's stdout.
    pub tee: bool,
    /// This host's name (a late outcome names it).
    pub host: String,
    /// SIGTERM to SIGKILL when the command is stopped (the knob).
    pub kill_grace: std::time::Duration,
}

impl WorkerArgs {
    /// Take the placement the launcher's line gave.
    pub(super) fn place(&mut self, go: crate::worker::Go) {
        self.mode = go.mode;
        self.cause = go.cause;
        self.unit = go.unit;
    }
}
