//! Fixed-period schedules: `every 30s`, `every 5m`, `every 2h`, `every 1d`,
//! `every 1h30m`, `every 5 minutes`, and a bare `30m`. Pure.
//!
//! Fires are `anchor + k * period` for k >= 1, so they do not drift with
//! processing delays and ignore DST entirely (`every 1d` is 86 400 s of real
//! time, not "same wall time tomorrow"; use `daily at ...` for that).
//! The period is whole seconds from 1s to 366d; a bare number is refused
//! (`every 30` could mean seconds or minutes).

use super::duration::{self, BareNumber};
use super::error::Rejection;
use super::instant::Timestamp;
use chrono::TimeDelta;
use std::time::Duration;

/// The longest period accepted.
pub(crate) const MAX_PERIOD: Duration = Duration::from_secs(366 * 86_400);

/// Parse the period of `every <period>` or a bare `30m`.
pub(crate) fn parse_period(text: &str) -> Result<Duration, Rejection> {
    let period = duration::parse_span(text, BareNumber::NeedsUnit)?;
    check_period(text.trim(), period)?;
    Ok(period)
}

/// Refuse a zero or absurd period; `text` is how the user wrote it.
pub(crate) fn check_period(text: &str, period: Duration) -> Result<(), Rejection> {
    if period.is_zero() {
        return Err(Rejection::new(
            text,
            format!("period {text:?} is zero; use at least 1s"),
        ));
    }
    if period > MAX_PERIOD {
        return Err(Rejection::new(
            text,
            format!(
                "period {text:?} is longer than {}",
                duration::format_duration(MAX_PERIOD)
            ),
        ));
    }
    Ok(())
}

/// The first `anchor + k * period` (k >= 1) strictly after `after`.
/// None for a zero period or past the end of time.
pub(crate) fn next_fire(
    period: Duration,
    anchor: Timestamp,
    after: Timestamp,
) -> Option<Timestamp> {
    let period_nanos = i128::try_from(period.as_nanos()).ok()?;
    if period_nanos == 0 {
        return None;
    }
    let elapsed = after.signed_duration_since(anchor);
    let elapsed_nanos =
        i128::from(elapsed.num_seconds()) * 1_000_000_000 + i128::from(elapsed.subsec_nanos());
    let k = if elapsed_nanos < 0 {
        1
    } else {
        elapsed_nanos / period_nanos + 1
    };
    let offset_nanos = k.checked_mul(period_nanos)?;
    let secs = i64::try_from(offset_nanos.div_euclid(1_000_000_000)).ok()?;
    let nanos = u32::try_from(offset_nanos.rem_euclid(1_000_000_000)).ok()?;
    anchor.checked_add_signed(TimeDelta::new(secs, nanos)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn periods_parse() {
        assert_eq!(parse_period("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_period("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_period("2h").unwrap(), Duration::from_secs(7_200));
        assert_eq!(parse_period("1d").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_period("1h30m").unwrap(), Duration::from_secs(5_400));
        assert_eq!(parse_period("5 minutes").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_period("366d").unwrap(), MAX_PERIOD);
    }

    #[test]
    fn zero_absurd_and_bare_periods_are_refused() {
        let r = parse_period("0s").unwrap_err();
        assert_eq!(r.token, "0s");
        assert!(r.reason.contains("zero"), "{}", r.reason);
        let r = parse_period("367d").unwrap_err();
        assert_eq!(r.token, "367d");
        assert!(r.reason.contains("366d"), "{}", r.reason);
        assert_eq!(parse_period("30").unwrap_err().token, "30");
        assert_eq!(parse_period("5x").unwrap_err().token, "x");
    }

    #[test]
    fn anchored_walk_every_30s() {
        let anchor = utc("2026-01-01T00:00:00Z");
        let period = Duration::from_secs(30);
        let mut after = anchor;
        for k in 1..=10 {
            let next = next_fire(period, anchor, after).unwrap();
            assert_eq!(next, anchor + TimeDelta::seconds(30 * k));
            after = next;
        }
    }

    #[test]
    fn fires_are_strictly_after_and_on_the_grid() {
        let anchor = utc("2026-01-01T00:00:10Z");
        let period = Duration::from_secs(30);
        // Before the anchor: the first fire is one period after it.
        assert_eq!(
            next_fire(period, anchor, utc("2025-12-31T00:00:00Z")),
            Some(utc("2026-01-01T00:00:40Z"))
        );
        // Off-grid: the next grid point.
        assert_eq!(
            next_fire(period, anchor, utc("2026-01-01T00:05:11Z")),
            Some(utc("2026-01-01T00:05:40Z"))
        );
        // On a grid point: the one after.
        assert_eq!(
            next_fire(period, anchor, utc("2026-01-01T00:05:40Z")),
            Some(utc("2026-01-01T00:06:10Z"))
        );
        assert_eq!(next_fire(Duration::ZERO, anchor, anchor), None);
    }
}
