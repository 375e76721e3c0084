//! Schedules: the grammar, the zone, and the pure fire computation.
//!
//! INTERFACE STUB: the schedule work replaces the bodies; the public API below
//! is what the rest of the crate uses. No clock reads and no IO in this module
//! (except `system_zone`, which reads the host's zone configuration).

use chrono::{DateTime, NaiveDateTime, Utc};
pub use chrono_tz::Tz;
use std::time::Duration;

/// An instant in UTC.
pub type Instant = DateTime<Utc>;

/// A parsed schedule in a form that is stored and re-parsed without `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A cron expression (5 or 6 fields, macros and phrases compile to this).
    Cron(CronSchedule),
    /// A fixed period, anchored at the job's anchor instant.
    Every { period: Duration },
    /// A one-shot at an absolute instant.
    Once { at: Instant },
    /// Once each time the gateway starts.
    Reboot,
}

/// A validated cron expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSchedule {
    /// The expression as stored, e.g. `0 8 * * *`.
    pub expr: String,
}

/// Why a schedule string, zone or duration was refused. Names the bad token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ScheduleError {
    /// The token that failed, as the user typed it.
    pub token: String,
    /// A full, user-facing message naming the token and what would be accepted.
    pub message: String,
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
    pub at: Instant,
    pub local: DateTime<Tz>,
    pub dst: DstNote,
}

impl Schedule {
    /// Parse user text. `now` resolves relative one-shots (`in 30s`); `zone`
    /// resolves naive ISO-8601 instants.
    pub fn parse(_text: &str, _now: Instant, _zone: Tz) -> Result<Schedule, ScheduleError> {
        todo!("schedule grammar")
    }

    /// The stored form: re-parseable by [`Schedule::from_canonical`] without `now`.
    pub fn canonical(&self) -> String {
        todo!("schedule canonical form")
    }

    /// Parse the stored form.
    pub fn from_canonical(_text: &str) -> Result<Schedule, ScheduleError> {
        todo!("schedule canonical parse")
    }

    /// The first fire strictly after `after`. `anchor` is the origin of
    /// `Every` periods (the job's creation or re-anchor instant); other kinds
    /// ignore it. `Reboot` never fires from the clock (None).
    pub fn next_after(&self, _after: Instant, _zone: Tz, _anchor: Instant) -> Option<Fire> {
        todo!("schedule next fire")
    }

    /// Whether the schedule fires more than once.
    pub fn is_recurring(&self) -> bool {
        matches!(self, Schedule::Cron(_) | Schedule::Every { .. })
    }

    /// The period around the fire at `slot` (the gap to the following fire),
    /// used for the misfire grace. None for one-shots and `@reboot`.
    pub fn period_at(&self, _slot: Instant, _zone: Tz, _anchor: Instant) -> Option<Duration> {
        todo!("schedule period")
    }
}

/// Parse an IANA zone name (`Europe/Berlin`, `UTC`).
pub fn parse_zone(_name: &str) -> Result<Tz, ScheduleError> {
    todo!("zone parse")
}

/// The host's zone: `TZ`, else `/etc/timezone`, else the `/etc/localtime` link, else UTC.
pub fn system_zone() -> Tz {
    todo!("system zone")
}

/// Parse a duration such as `30s`, `5m`, `2h`, `1d`, `1h30m`, or a bare number of seconds.
pub fn parse_duration(_text: &str) -> Result<Duration, ScheduleError> {
    todo!("duration parse")
}

/// Format a duration the way `parse_duration` reads it (`90s` -> `1m30s`).
pub fn format_duration(_d: Duration) -> String {
    todo!("duration format")
}
