//! The one place an imported schedule is validated: `Schedule::parse` in the
//! job's zone at the import's `now`, then its first fire. Pure.

use crate::schedule::{Fire, Schedule, ScheduleError, Timestamp, Tz};

/// A schedule that parsed, and its first fire after `now`.
#[derive(Clone, Debug)]
pub(super) struct Checked {
    pub(super) schedule: Schedule,
    pub(super) next: Option<Fire>,
}

/// Parse `text` in `zone`; intervals are anchored at `now`, as `add` does.
pub(super) fn check(text: &str, now: Timestamp, zone: Tz) -> Result<Checked, ScheduleError> {
    let schedule = Schedule::parse(text, now, zone)?;
    let next = schedule.next_after(now, zone, now);
    Ok(Checked { schedule, next })
}
