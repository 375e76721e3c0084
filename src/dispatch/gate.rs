//! The gate between the gateway's loop and a staged launch: the launch
//! (`launcher.rs`) stages its worker, says which pid it holds, and waits at
//! the gate; at the run's instant the loop opens it with a [`Release`] (the
//! runs to stop first, for overlap `replace`), or drops it to take the run
//! back. Both ends live on the loop's one thread (the launch is a future the
//! loop polls), so the pid is a plain shared cell.

use crate::ledger::Execution;
use std::cell::Cell;
use std::rc::Rc;
use tokio::sync::oneshot;

/// What opens a gate: release the staged worker, after stopping `replace`.
#[derive(Debug, Default)]
pub struct Release {
    /// The previous runs of the job to stop first (overlap `replace`).
    pub replace: Vec<Execution>,
}

/// The loop's end: open it ([`Gate::open`]) or drop it (the run is taken
/// back: the launch closes its worker's pipe).
#[derive(Debug)]
pub struct Gate {
    open: oneshot::Sender<Release>,
    pid: Rc<Cell<Option<u32>>>,
}

/// The launch's end.
#[derive(Debug)]
pub struct Gated {
    open: oneshot::Receiver<Release>,
    pid: Rc<Cell<Option<u32>>>,
}

/// Whether a staged launch has reached its gate (its worker staged): from
/// then on it only waits, and no longer takes a place among the launches
/// the loop keeps in flight.
#[derive(Clone, Debug)]
pub struct AtGate(Rc<Cell<Option<u32>>>);

impl AtGate {
    /// Whether the launch waits at its gate.
    pub fn waiting(&self) -> bool {
        self.0.get().is_some()
    }
}

/// A new gate and the launch's end of it.
pub fn gate() -> (Gate, Gated) {
    let (tx, rx) = oneshot::channel();
    let pid = Rc::new(Cell::new(None));
    (
        Gate {
            open: tx,
            pid: pid.clone(),
        },
        Gated { open: rx, pid },
    )
}

impl Gate {
    /// The staged worker's pid, once its stage line is written.
    pub fn pid(&self) -> Option<u32> {
        self.pid.get()
    }

    /// Release the run (also when its launch has not reached the gate yet:
    /// it goes through as soon as it does).
    pub fn open(self, release: Release) {
        let _ = self.open.send(release);
    }
}

impl Gated {
    /// Whether its launch has reached it.
    pub fn at_gate(&self) -> AtGate {
        AtGate(self.pid.clone())
    }

    /// The worker `pid` is staged and waits here.
    pub(super) fn holds(&self, pid: u32) {
        self.pid.set(Some(pid));
    }

    /// Wait for the release; None when the gate was dropped.
    pub(super) async fn wait(self) -> Option<Release> {
        self.open.await.ok()
    }
}
