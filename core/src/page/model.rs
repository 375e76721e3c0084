//! What the page is made from. The main crate reads these from the ledger
//! (only the columns shown: never a command, an environment or output).

use crate::run::{DispatchMode, ExecState};
use crate::schedule::{Timestamp, Tz};

/// A job, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PageJob {
    pub id: String,
    pub name: String,
    /// The schedule as written (`daily at 8am`).
    pub schedule: String,
    /// The job's own zone, when it has one.
    pub tz: Option<String>,
    pub view: JobView,
    /// Kept by the Hermes provider sync.
    pub managed: bool,
    pub next_fire: Option<Timestamp>,
    /// Its newest ledger row (any state, at any time).
    pub last: Option<PageRun>,
}

/// A job's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobView {
    Active,
    Paused { reason: Option<String> },
    Completed,
}

/// A ledger row, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRun {
    pub id: String,
    pub job_id: Option<String>,
    pub job_name: String,
    /// No job of the table has this row (a spawned worker, a removed job):
    /// it goes to the lane of those.
    pub orphan: bool,
    pub state: ExecState,
    pub attempt: u32,
    pub scheduled_for: Option<Timestamp>,
    pub claimed_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub mode: Option<DispatchMode>,
    pub reason_code: Option<String>,
}

impl PageRun {
    /// How late it started: the slot to the start, when it has both and
    /// started after its slot.
    pub fn lateness_ms(&self) -> Option<i64> {
        let late = (self.started_at? - self.scheduled_for?).num_milliseconds();
        (late > 0).then_some(late)
    }
}

/// The gateway as `status` sees it, in a few facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageHeader {
    /// The host's name.
    pub host: String,
    /// What `/healthz` answers 200 for.
    pub healthy: bool,
    /// Label and value, in order (`gateway`, `running (pid 7, up 2h)`).
    pub facts: Vec<(String, String)>,
}

/// Everything one page shows.
#[derive(Clone, Debug)]
pub struct PageData {
    pub header: PageHeader,
    /// The jobs with a lane and a table row, in name order.
    pub jobs: Vec<PageJob>,
    /// How many jobs there are in all (more than `jobs` when capped).
    pub jobs_total: usize,
    /// The rows of the last 24 hours (or still active), newest first.
    pub runs: Vec<PageRun>,
    /// More rows than `runs` fell inside the window (the oldest were left out).
    pub runs_capped: bool,
    /// Times are shown in this zone.
    pub zone: Tz,
    pub now: Timestamp,
}
