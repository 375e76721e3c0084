//! The only place that reads the clock.
//!
//! Everything else takes `now` as an argument. Tests move time without sleeping
//! through `HERMES_CRON_NOW` (see [`TEST_NOW_ENV`]), which only this module reads.

use chrono::{DateTime, Utc};
use std::time::Duration;

/// Test-only clock override. Either an RFC 3339 instant (`2026-03-29T00:00:00Z`),
/// which freezes the clock there, or a signed offset in seconds from the real
/// clock (`+18000`, `-60`), which moves it. Not for production use.
pub(crate) const TEST_NOW_ENV: &str = "HERMES_CRON_NOW";

/// A source of the current instant.
pub trait Clock: Send + Sync {
    /// The current instant, UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// How the clock is moved, parsed once from the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shift {
    None,
    Frozen(DateTime<Utc>),
    Offset(chrono::Duration),
}

/// `HERMES_CRON_NOW` holds something that is neither an instant nor an offset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{TEST_NOW_ENV}={value:?}: {why}; expected an RFC 3339 instant such as 2026-03-29T00:00:00Z or a signed offset in seconds such as +3600"
)]
pub struct ClockError {
    pub value: String,
    pub why: String,
}

/// The system clock, moved by `HERMES_CRON_NOW` when it is set.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    shift: Shift,
}

impl SystemClock {
    /// The system clock, honouring the test override in the environment.
    /// An override that does not parse is an error naming the variable.
    pub fn from_env() -> Result<Self, ClockError> {
        match std::env::var(TEST_NOW_ENV) {
            Ok(value) => parse_shift(&value).map(|shift| SystemClock { shift }),
            Err(_) => Ok(SystemClock { shift: Shift::None }),
        }
    }

    /// The plain system clock, ignoring the environment.
    pub fn real() -> Self {
        SystemClock { shift: Shift::None }
    }
}

fn parse_shift(value: &str) -> Result<Shift, ClockError> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(Shift::None);
    }
    let err = |why: String| ClockError {
        value: value.to_string(),
        why,
    };
    if let Some(rest) = value.strip_prefix(['+', '-']) {
        let secs: i64 = rest
            .parse()
            .map_err(|_| err("not a number of seconds".into()))?;
        let secs = if value.starts_with('-') { -secs } else { secs };
        return Ok(Shift::Offset(chrono::Duration::seconds(secs)));
    }
    DateTime::parse_from_rfc3339(value)
        .map(|at| Shift::Frozen(at.with_timezone(&Utc)))
        .map_err(|e| err(e.to_string()))
}

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // the one sanctioned clock read
    fn now(&self) -> DateTime<Utc> {
        match self.shift {
            Shift::None => Utc::now(),
            Shift::Frozen(at) => at,
            Shift::Offset(by) => Utc::now() + by,
        }
    }
}

/// A monotonic instant for measuring elapsed time and deadlines (never moved by tests).
#[allow(clippy::disallowed_methods)]
pub fn monotonic() -> std::time::Instant {
    std::time::Instant::now()
}

/// The monotonic clock as the runtime's instant: the event loop's deadlines.
#[allow(clippy::disallowed_methods)]
pub fn loop_now() -> tokio::time::Instant {
    tokio::time::Instant::now()
}

/// Time elapsed since `start` on the monotonic clock.
pub fn elapsed(start: std::time::Instant) -> Duration {
    monotonic().saturating_duration_since(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_frozen_instant_and_offsets() {
        let at = "2026-03-29T00:00:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(
            parse_shift("2026-03-29T00:00:00Z").unwrap(),
            Shift::Frozen(at)
        );
        assert_eq!(
            parse_shift("+3600").unwrap(),
            Shift::Offset(chrono::Duration::seconds(3600))
        );
        assert_eq!(
            parse_shift("-60").unwrap(),
            Shift::Offset(chrono::Duration::seconds(-60))
        );
        assert_eq!(parse_shift("").unwrap(), Shift::None);
    }

    #[test]
    fn rejects_garbage_naming_the_variable() {
        let err = parse_shift("tomorrow").unwrap_err().to_string();
        assert!(err.contains(TEST_NOW_ENV), "{err}");
    }
}
