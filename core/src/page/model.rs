//! What the page is made from. The main crate reads these from the ledger
//! (only the columns shown: never a command, an environment or output).

use crate::run::{DispatchMode, ExecState};
use crate::schedule::{Timestamp, Tz};

/// A job's state, as the page shows it: the job's own.
pub use crate::job::JobState as JobView;

/// A job, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PageJob {
    /// The job's id.
    pub id: String,
    /// The job's name.
    pub name: String,
    /// The schedule as written (`daily at 8am`).
    pub schedule: String,
    /// The job's own zone, when it has one.
    pub tz: Option<String>,
    /// The zone its times are shown in: `tz`, else the page's.
    pub zone: crate::schedule::Tz,
    /// Active, paused or completed.
    pub view: JobView,
    /// Kept by the Hermes provider sync.
    pub managed: bool,
    /// The job's `next_run_at` (None: no next slot).
    pub next_fire: Option<Timestamp>,
    /// Its newest ledger rows, newest first (any state, at any time; at
    /// most [`RECENT`]).
    pub recent: Vec<PageRun>,
    /// Its runs that ended failed, timed out or unknown in the last 24 hours
    /// and the last 7 days.
    pub failures: Failures,
}

/// How many of a job's newest runs the page lists.
pub const RECENT: usize = 5;

/// The final states the page counts and marks as failures.
pub const FAILURE_STATES: [ExecState; 3] =
    [ExecState::Failed, ExecState::TimedOut, ExecState::Unknown];

/// A job's failed runs ([`FAILURE_STATES`]) of two windows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failures {
    /// Ended in the last 24 hours.
    pub day: u64,
    /// Ended in the last 7 days.
    pub week: u64,
}

impl PageJob {
    /// Its newest row.
    pub fn last(&self) -> Option<&PageRun> {
        self.recent.first()
    }
}

/// A ledger row, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRun {
    /// The row's id.
    pub id: String,
    /// The job it ran for (None: a run of no job).
    pub job_id: Option<String>,
    /// The job's name as the row has it.
    pub job_name: String,
    /// No job of the table has this row (a spawned worker, a removed job):
    /// it goes to the lane of those.
    pub orphan: bool,
    /// Where the row is in its life.
    pub state: ExecState,
    /// Which attempt at the slot, 1 first.
    pub attempt: u32,
    /// The slot it is for (None: no slot).
    pub scheduled_for: Option<Timestamp>,
    /// When it was claimed.
    pub claimed_at: Timestamp,
    /// When its worker adopted it (None: not yet, or never).
    pub started_at: Option<Timestamp>,
    /// When it reached a terminal state (None: not yet).
    pub finished_at: Option<Timestamp>,
    /// How its worker was started (None: not yet).
    pub mode: Option<DispatchMode>,
    /// Why it is in its state, as a code.
    pub reason_code: Option<String>,
    /// Its output was captured in the home (`runs/ID/output` serves it).
    pub has_output: bool,
    /// The model usage it reported, in short: tokens, and the cost when
    /// known (None: it reported none).
    pub usage: Option<(u64, Option<f64>)>,
}

impl PageRun {
    /// It ended in one of the [`FAILURE_STATES`].
    pub fn failed(&self) -> bool {
        FAILURE_STATES.contains(&self.state)
    }

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
    /// The facts above the timeline.
    pub header: PageHeader,
    /// The jobs with a lane and a table row, in name order.
    pub jobs: Vec<PageJob>,
    /// How many jobs there are in all (more than `jobs` when capped).
    pub jobs_total: usize,
    /// The rows of the window (or still active), newest first.
    pub runs: Vec<PageRun>,
    /// More rows than `runs` fell inside the window (the oldest were left out).
    pub runs_capped: bool,
    /// Times are shown in this zone (a job's own in its row and lane).
    pub zone: Tz,
    /// How much of the past the timeline shows.
    pub window: super::window::Window,
    /// The instant the page is made at: the window's end.
    pub now: Timestamp,
}
