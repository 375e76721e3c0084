//! One-shot schedules: `in 30s` (relative to `now`) and ISO-8601 instants
//! (`2026-12-01T08:00`, `2026-12-01 08:00:00`, `...Z`, `...+02:00`). Pure.
//!
//! - Stored as an absolute UTC instant, `at 2026-12-01T13:00:00Z`, so
//!   reading it back never needs `now` or the zone. A naive time that fell
//!   in a DST gap also keeps the wall time asked for:
//!   `at 2026-03-29T01:00:00Z wanted 2026-03-29T01:30:00`, so its fire is
//!   marked `MovedByGap` like a cron time's.
//! - `in D`: D from 1s to 366d; `now + D` is rounded up to the whole second
//!   so the stored form is exact and never early.
//! - A naive ISO time is in the job's zone. Inside a spring-forward gap it
//!   moves to the first real instant after the gap (as cron times do);
//!   inside a repeated hour it takes the first occurrence.
//! - An instant in the past is accepted here; it simply never fires
//!   (`next_after` returns None). Callers decide whether to warn.

use super::Tz;
use super::duration::{self, BareNumber};
use super::error::Rejection;
use super::fires::{self, DstNote};
use super::instant::Timestamp;
use super::interval::MAX_PERIOD;
use chrono::{
    DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, SecondsFormat, TimeDelta, Timelike,
    Utc,
};

const ISO_HINT: &str = "use e.g. 2026-12-01T08:00, 2026-12-01 08:00:00 or 2026-12-01T08:00Z";

/// `in <duration>`: `rest` is the duration.
pub(crate) fn parse_in(rest: &str, now: Timestamp) -> Result<Timestamp, Rejection> {
    let delay = duration::parse_span(rest, BareNumber::NeedsUnit)?;
    let typed = rest.trim();
    if delay.is_zero() {
        return Err(Rejection::new(
            typed,
            format!("delay {typed:?} is zero; use at least 1s"),
        ));
    }
    if delay > MAX_PERIOD {
        return Err(Rejection::new(
            typed,
            format!(
                "delay {typed:?} is longer than 366d; give a date instead, e.g. 2027-06-01T09:00"
            ),
        ));
    }
    let delay = TimeDelta::from_std(delay).map_err(|_| Rejection::new(typed, "delay too large"))?;
    let at = now
        .checked_add_signed(delay)
        .ok_or_else(|| Rejection::new(typed, format!("delay {typed:?} is too large")))?;
    Ok(ceil_to_second(at))
}

fn ceil_to_second(at: Timestamp) -> Timestamp {
    match at.with_nanosecond(0) {
        Some(floor) if floor != at => floor + TimeDelta::seconds(1),
        Some(floor) => floor,
        None => at,
    }
}

/// Whether `text` starts like an ISO date (`2026-12-01...`), for routing.
pub(crate) fn looks_like_iso(text: &str) -> bool {
    let b = text.trim().as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// An ISO-8601 instant; naive times are in `zone`. The second value is the
/// wall time asked for when it fell in a DST gap (the instant is then the
/// first one after the gap).
pub(crate) fn parse_iso(
    text: &str,
    zone: Tz,
) -> Result<(Timestamp, Option<NaiveDateTime>), Rejection> {
    let text = text.trim();
    let date_part = text.get(..10).unwrap_or(text);
    let date = NaiveDate::parse_from_str(date_part, "%Y-%m-%d").map_err(|_| {
        Rejection::new(
            date_part,
            format!("date {date_part:?} is not a real YYYY-MM-DD date"),
        )
    })?;
    let rest = text.get(10..).unwrap_or("");
    let Some(time_and_offset) = rest.strip_prefix(['T', 't', ' ']).map(str::trim_start) else {
        return Err(Rejection::new(
            text,
            format!("{text:?} needs a time after the date, joined by T or a space; {ISO_HINT}"),
        ));
    };
    let (time_part, offset) = split_offset(time_and_offset)?;
    let time_part = time_part.trim_end();
    let time = NaiveTime::parse_from_str(time_part, "%H:%M:%S")
        .or_else(|_| NaiveTime::parse_from_str(time_part, "%H:%M"))
        .map_err(|_| {
            Rejection::new(
                time_part,
                format!("time {time_part:?} is not HH:MM or HH:MM:SS; {ISO_HINT}"),
            )
        })?;
    let naive = NaiveDateTime::new(date, time);
    let at = match offset {
        Some(offset) => naive
            .and_local_timezone(offset)
            .single()
            .map(|at| (at.with_timezone(&Utc), None)),
        None => fires::local_instant(naive, zone).map(|(at, note)| match note {
            DstNote::MovedByGap { wanted } => (at, Some(wanted)),
            _ => (at, None),
        }),
    };
    at.ok_or_else(|| Rejection::new(text, format!("{text:?} is out of range")))
}

/// Split `08:00+02:00` into the time and its offset; `Z` is UTC.
fn split_offset(text: &str) -> Result<(&str, Option<FixedOffset>), Rejection> {
    if let Some(time) = text.strip_suffix(['Z', 'z']) {
        return Ok((time, FixedOffset::east_opt(0)));
    }
    let Some(sign_at) = text.find(['+', '-']) else {
        return Ok((text, None));
    };
    let (time, offset) = text.split_at(sign_at);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let digits: String = offset[1..].chars().filter(|c| *c != ':').collect();
    let bad = || {
        Rejection::new(
            offset,
            format!("offset {offset:?} is not +HH, +HH:MM or -HHMM"),
        )
    };
    if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let hours: i32 = digits[..2].parse().map_err(|_| bad())?;
    let minutes: i32 = digits
        .get(2..)
        .filter(|m| !m.is_empty())
        .map_or(Ok(0), str::parse)
        .map_err(|_| bad())?;
    if hours > 23 || minutes > 59 {
        return Err(bad());
    }
    let offset = FixedOffset::east_opt(sign * (hours * 3_600 + minutes * 60)).ok_or_else(bad)?;
    Ok((time, Some(offset)))
}

const WANTED: &str = " wanted ";
const WANTED_FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

/// The stored form: `at 2026-12-01T13:00:00Z`, plus ` wanted <wall time>`
/// when a DST gap moved it.
pub(crate) fn canonical(at: Timestamp, wanted: Option<NaiveDateTime>) -> String {
    let at = at.to_rfc3339_opts(SecondsFormat::AutoSi, true);
    match wanted {
        Some(wanted) => format!("at {at}{WANTED}{}", wanted.format(WANTED_FORMAT)),
        None => format!("at {at}"),
    }
}

/// Read a stored `at <RFC 3339>[ wanted <wall time>]`; `rest` follows `at`.
pub(crate) fn parse_canonical(rest: &str) -> Result<(Timestamp, Option<NaiveDateTime>), Rejection> {
    let rest = rest.trim();
    let (instant, wanted) = match rest.split_once(WANTED) {
        Some((instant, wanted)) => (instant.trim_end(), Some(wanted.trim())),
        None => (rest, None),
    };
    let at = DateTime::parse_from_rfc3339(instant)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|e| {
            Rejection::new(
                instant,
                format!("{instant:?} is not an RFC 3339 instant: {e}"),
            )
        })?;
    let wanted = match wanted {
        Some(text) => Some(
            NaiveDateTime::parse_from_str(text, WANTED_FORMAT).map_err(|_| {
                Rejection::new(
                    text,
                    format!("wanted time {text:?} is not YYYY-MM-DDTHH:MM:SS"),
                )
            })?,
        ),
        None => None,
    };
    Ok((at, wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn in_is_relative_to_now_and_rounded_up() {
        let now = utc("2026-05-01T10:00:00Z");
        assert_eq!(parse_in("30s", now).unwrap(), utc("2026-05-01T10:00:30Z"));
        assert_eq!(parse_in("2h", now).unwrap(), utc("2026-05-01T12:00:00Z"));
        let now = utc("2026-05-01T10:00:00.250Z");
        assert_eq!(parse_in("30s", now).unwrap(), utc("2026-05-01T10:00:31Z"));
    }

    #[test]
    fn in_refusals_name_the_token() {
        let now = utc("2026-05-01T10:00:00Z");
        assert_eq!(parse_in("0s", now).unwrap_err().token, "0s");
        assert_eq!(parse_in("400d", now).unwrap_err().token, "400d");
        assert_eq!(parse_in("30", now).unwrap_err().token, "30");
        assert_eq!(parse_in("5x", now).unwrap_err().token, "x");
    }

    #[test]
    fn iso_forms() {
        let z = Tz::America__Toronto; // -05:00 in December
        let want = utc("2026-12-01T13:00:00Z");
        for text in [
            "2026-12-01T08:00",
            "2026-12-01T08:00:00",
            "2026-12-01 08:00",
            "2026-12-01t08:00",
            "2026-12-01T13:00Z",
            "2026-12-01T13:00:00Z",
            "2026-12-01 14:00+01:00",
            "2026-12-01T08:00:00-0500",
            "2026-12-01T10:00-03",
        ] {
            assert!(looks_like_iso(text), "{text}");
            assert_eq!(parse_iso(text, z).unwrap(), (want, None), "{text}");
        }
    }

    #[test]
    fn naive_iso_in_a_gap_moves_forward_and_in_an_overlap_takes_the_first() {
        let z = Tz::Europe__Berlin;
        assert_eq!(
            parse_iso("2026-03-29T02:30", z).unwrap(),
            (
                utc("2026-03-29T01:00:00Z"),
                Some("2026-03-29T02:30:00".parse().unwrap())
            )
        );
        assert_eq!(
            parse_iso("2026-10-25T02:30", z).unwrap(),
            (utc("2026-10-25T00:30:00Z"), None)
        );
        // An explicit offset is an instant: no gap applies.
        assert_eq!(
            parse_iso("2026-03-29T02:30+01:00", z).unwrap(),
            (utc("2026-03-29T01:30:00Z"), None)
        );
    }

    #[test]
    fn iso_refusals_name_the_token() {
        let z = Tz::UTC;
        assert_eq!(
            parse_iso("2026-13-01T08:00", z).unwrap_err().token,
            "2026-13-01"
        );
        assert_eq!(
            parse_iso("2026-02-30T08:00", z).unwrap_err().token,
            "2026-02-30"
        );
        assert_eq!(parse_iso("2026-12-01T25:00", z).unwrap_err().token, "25:00");
        assert_eq!(parse_iso("2026-12-01T08:00+5", z).unwrap_err().token, "+5");
        assert_eq!(parse_iso("2026-12-01", z).unwrap_err().token, "2026-12-01");
        assert_eq!(
            parse_iso("2026-12-01X08:00", z).unwrap_err().token,
            "2026-12-01X08:00"
        );
    }

    #[test]
    fn canonical_round_trips() {
        let at = utc("2026-12-01T13:00:00Z");
        assert_eq!(canonical(at, None), "at 2026-12-01T13:00:00Z");
        assert_eq!(parse_canonical("2026-12-01T13:00:00Z").unwrap(), (at, None));
        let odd = utc("2026-12-01T13:00:00.5Z");
        assert_eq!(
            parse_canonical(&canonical(odd, None)[3..]).unwrap(),
            (odd, None)
        );
        assert!(parse_canonical("tomorrow").is_err());
        let moved = utc("2026-03-29T01:00:00Z");
        let wanted: NaiveDateTime = "2026-03-29T01:30:00".parse().unwrap();
        let stored = canonical(moved, Some(wanted));
        assert_eq!(stored, "at 2026-03-29T01:00:00Z wanted 2026-03-29T01:30:00");
        assert_eq!(
            parse_canonical(&stored[3..]).unwrap(),
            (moved, Some(wanted))
        );
        let err = parse_canonical("2026-03-29T01:00:00Z wanted soon").unwrap_err();
        assert_eq!(err.token, "soon");
    }
}
