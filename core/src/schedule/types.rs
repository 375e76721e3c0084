//! The schedule module's public types ([`Schedule`], [`Fire`], [`DstNote`],
//! [`Timestamp`]) and the thin [`Schedule`] methods that hand each job to the
//! file that owns it: grammar and stored form (`grammar.rs`), fires and DST
//! (`fires.rs`), anchored periods (`interval.rs`), phrases for people
//! (`describe.rs`).
//!
//! Invariant: a `Schedule` holds no `now` and no zone; the same value gives the
//! same fires for the same `(after, zone, anchor)`.

use super::Tz;
use super::cron_expr::CronSchedule;
use super::error::ScheduleError;
use super::{describe, fires, grammar, interval};
use chrono::{DateTime, NaiveDateTime, Utc};
use std::time::Duration;

/// A point in time, in UTC: what the ledger stores and every schedule
/// computes. (Not a monotonic `std::time::Instant`: this one is wall time.)
pub type Timestamp = DateTime<Utc>;

/// A parsed schedule in a form that is stored and re-parsed without `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A cron expression (5 or 6 fields, macros and phrases compile to this).
    Cron(CronSchedule),
    /// A fixed period, anchored at the job's anchor instant.
    Every { period: Duration },
    /// A one-shot at an absolute instant. `wanted` is the wall time asked
    /// for when it fell in a DST gap (`at` is then the first instant after
    /// the gap), so the fire can say so; None otherwise.
    Once {
        at: Timestamp,
        wanted: Option<NaiveDateTime>,
    },
    /// Once each time the gateway starts.
    Reboot,
    /// Whenever another scheduler says: the job's `next_run_at` is set from
    /// outside (a Hermes job's, by the provider sync) and the schedule itself
    /// names no instant. Stored as `@external`; users cannot type it.
    External,
}

/// What DST did to one fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DstNote {
    /// The fire is at the wall time the schedule names.
    Exact,
    /// The wanted wall time fell in a spring-forward gap; the fire moved to the first valid instant after it.
    MovedByGap { wanted: NaiveDateTime },
    /// The wall time occurs twice (fall-back); `pass` is 1 for the first occurrence, 2 for the second.
    RepeatedHour { pass: u8 },
}

/// One fire of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fire {
    /// When it fires.
    pub at: Timestamp,
    /// The same instant on the job's wall clock.
    pub local: DateTime<Tz>,
    /// What DST did to it.
    pub dst: DstNote,
}

impl Schedule {
    /// Parse user text. `now` resolves relative one-shots (`in 30s`); `zone`
    /// resolves naive ISO-8601 instants.
    pub fn parse(text: &str, now: Timestamp, zone: Tz) -> Result<Schedule, ScheduleError> {
        grammar::parse(text, now, zone)
    }

    /// The stored form: re-parseable by [`Schedule::from_canonical`] without `now`.
    pub fn canonical(&self) -> String {
        grammar::canonical(self)
    }

    /// Parse the stored form.
    pub fn from_canonical(text: &str) -> Result<Schedule, ScheduleError> {
        grammar::from_canonical(text)
    }

    /// The first fire strictly after `after`. `anchor` is the origin of
    /// `Every` periods (the job's creation or re-anchor instant); other kinds
    /// ignore it. `Reboot` never fires from the clock (None). A cron
    /// expression's wall times are read in `zone` under the DST policy in
    /// `fires.rs`.
    pub fn next_after(&self, after: Timestamp, zone: Tz, anchor: Timestamp) -> Option<Fire> {
        match self {
            Schedule::Cron(cron) => fires::next_cron_fire(cron, after, zone),
            Schedule::Every { period } => {
                interval::next_fire(*period, anchor, after).map(|at| fires::fire_at(at, zone))
            }
            Schedule::Once { at, wanted } => {
                (*at > after).then(|| fires::once_fire(*at, *wanted, zone))
            }
            Schedule::Reboot | Schedule::External => None,
        }
    }

    /// Whether the schedule fires more than once.
    pub fn is_recurring(&self) -> bool {
        matches!(self, Schedule::Cron(_) | Schedule::Every { .. })
    }

    /// The period around the fire at `slot` (the gap to the following fire),
    /// used for the misfire grace. None for one-shots and `@reboot`.
    ///
    /// For cron it is the real time to the next fire: a daily job is 24h,
    /// but 23h from the fire before a spring-forward and 25h from the fire
    /// before a fall-back. For `Every` it is the period.
    pub fn period_at(&self, slot: Timestamp, zone: Tz, anchor: Timestamp) -> Option<Duration> {
        match self {
            Schedule::Every { period } => Some(*period),
            Schedule::Cron(_) => fires::gap_to_next(slot, self.next_after(slot, zone, anchor)),
            Schedule::Once { .. } | Schedule::Reboot | Schedule::External => None,
        }
    }

    /// A short human phrase for `list` (`weekdays at 09:00`, `every 5m`).
    pub fn describe(&self) -> String {
        describe::describe(self)
    }
}
