//! Durations as people type them, and back: `30s`, `5m`, `2h`, `1d`, `1h30m`,
//! unit words (`5 minutes`), and, where the caller allows it, a bare number of
//! seconds. Pure text <-> [`Duration`].
//!
//! Invariants: units appear largest first and at most once (`1h30m`, not
//! `30m1h`); the result is whole seconds; [`format_duration`] writes the
//! shortest form [`parse_duration`] reads back to the same value (sub-second
//! parts are dropped).

use super::error::{Rejection, ScheduleError};
use std::time::Duration;

/// Whether a number without a unit is accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BareNumber {
    /// `90` means 90 seconds (`--timeout 90`).
    Seconds,
    /// `90` is refused with a hint (`every 90` could mean anything).
    NeedsUnit,
}

/// Units, largest first: the canonical letter, seconds per unit, the words read as it.
const UNITS: [(&str, u64, &[&str]); 4] = [
    ("d", 86_400, &["d", "day", "days"]),
    ("h", 3_600, &["h", "hr", "hrs", "hour", "hours"]),
    ("m", 60, &["m", "min", "mins", "minute", "minutes"]),
    ("s", 1, &["s", "sec", "secs", "second", "seconds"]),
];

const UNIT_HINT: &str = "use s, m, h or d";

/// Parse a duration such as `30s`, `5m`, `2h`, `1d`, `1h30m`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, ScheduleError> {
    parse_span(text, BareNumber::Seconds).map_err(|r| ScheduleError::duration(text, r))
}

/// Format a duration the way `parse_duration` reads it (`90s` -> `1m30s`).
pub fn format_duration(d: Duration) -> String {
    let mut left = d.as_secs();
    if left == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    for (unit, size, _) in UNITS {
        let count = left / size;
        if count > 0 {
            out.push_str(&format!("{count}{unit}"));
            left -= count * size;
        }
    }
    out
}

/// Parse a duration; whitespace inside is ignored (`1h 30m`, `5 minutes`).
pub(crate) fn parse_span(text: &str, bare: BareNumber) -> Result<Duration, Rejection> {
    let compact: String = text.split_whitespace().collect();
    if compact.is_empty() {
        return Err(Rejection::new(
            text,
            "empty duration; use e.g. 30s, 5m, 2h, 1d or 1h30m",
        ));
    }
    if compact.bytes().all(|b| b.is_ascii_digit()) {
        return match bare {
            BareNumber::Seconds => number(&compact, &compact).map(Duration::from_secs),
            BareNumber::NeedsUnit => Err(Rejection::new(
                compact.clone(),
                format!(
                    "{compact:?} needs a unit: {compact}s, {compact}m, {compact}h or {compact}d"
                ),
            )),
        };
    }
    let lower = compact.to_ascii_lowercase();
    let is_digit = |i: usize| lower.as_bytes().get(i).is_some_and(u8::is_ascii_digit);
    let mut total: u64 = 0;
    let mut previous_rank: Option<usize> = None;
    let mut i = 0;
    while i < lower.len() {
        let start = i;
        while is_digit(i) {
            i += 1;
        }
        let digits_end = i;
        while i < lower.len() && !is_digit(i) {
            i += 1;
        }
        // Digits are ASCII, so these cuts are on char boundaries.
        let piece = &compact[start..i];
        let unit = &lower[digits_end..i];
        if digits_end == start {
            return Err(Rejection::new(
                piece,
                format!("expected a number before {piece:?} in {compact:?}"),
            ));
        }
        let digits = &compact[start..digits_end];
        if unit.is_empty() {
            return Err(Rejection::new(
                digits,
                format!("missing unit after {digits:?} in {compact:?}; {UNIT_HINT}"),
            ));
        }
        let unit_typed = &compact[digits_end..i];
        if unit.starts_with(['.', ',']) {
            return Err(Rejection::new(
                piece,
                format!(
                    "{piece:?} in {compact:?} has a fraction; combine whole units instead, e.g. 1h30m"
                ),
            ));
        }
        let Some(rank) = UNITS.iter().position(|(_, _, words)| words.contains(&unit)) else {
            return Err(Rejection::new(
                unit_typed,
                format!("unknown unit {unit_typed:?} in {piece:?}; {UNIT_HINT}"),
            ));
        };
        if previous_rank.is_some_and(|prev| rank <= prev) {
            return Err(Rejection::new(
                unit_typed,
                format!(
                    "unit {unit_typed:?} in {compact:?} repeats or follows a smaller unit; write larger units first, e.g. 1h30m"
                ),
            ));
        }
        previous_rank = Some(rank);
        let count = number(digits, &compact)?;
        total = count
            .checked_mul(UNITS[rank].1)
            .and_then(|secs| secs.checked_add(total))
            .ok_or_else(|| too_large(&compact))?;
    }
    Ok(Duration::from_secs(total))
}

fn number(digits: &str, whole: &str) -> Result<u64, Rejection> {
    digits.parse().map_err(|_| too_large(whole))
}

fn too_large(whole: &str) -> Rejection {
    Rejection::new(whole, format!("{whole:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> u64 {
        parse_duration(text).unwrap().as_secs()
    }

    #[test]
    fn reads_each_unit_and_combinations() {
        assert_eq!(secs("30s"), 30);
        assert_eq!(secs("5m"), 300);
        assert_eq!(secs("2h"), 7_200);
        assert_eq!(secs("1d"), 86_400);
        assert_eq!(secs("1h30m"), 5_400);
        assert_eq!(secs("1d2h3m4s"), 93_784);
        assert_eq!(secs("1H30M"), 5_400);
        assert_eq!(secs("1h 30m"), 5_400);
        assert_eq!(secs("5 minutes"), 300);
        assert_eq!(secs("2hours"), 7_200);
    }

    #[test]
    fn bare_number_is_seconds_for_parse_duration() {
        assert_eq!(secs("90"), 90);
        assert_eq!(secs("0"), 0);
    }

    #[test]
    fn bare_number_needs_a_unit_when_asked() {
        let err = parse_span("30", BareNumber::NeedsUnit).unwrap_err();
        assert_eq!(err.token, "30");
        assert!(err.reason.contains("30m"), "{}", err.reason);
    }

    #[test]
    fn unknown_unit_names_the_unit_and_the_piece() {
        let err = parse_duration("5x").unwrap_err();
        assert_eq!(err.token, "x");
        assert_eq!(
            err.message,
            "invalid duration \"5x\": unknown unit \"x\" in \"5x\"; use s, m, h or d"
        );
        assert_eq!(parse_duration("1h5w").unwrap_err().token, "w");
    }

    #[test]
    fn other_rejections_name_their_token() {
        assert_eq!(parse_duration("").unwrap_err().token, "");
        assert_eq!(parse_duration("h").unwrap_err().token, "h");
        assert_eq!(parse_duration("30m1h").unwrap_err().token, "h");
        assert_eq!(parse_duration("1m1m").unwrap_err().token, "m");
        let err = parse_duration("1.5h").unwrap_err();
        assert_eq!(err.token, "1.");
        assert!(err.message.contains("fraction"), "{}", err.message);
        let err = parse_duration("99999999999999999999s").unwrap_err();
        assert!(err.message.contains("too large"), "{}", err.message);
        let err = parse_duration("18446744073709551615d").unwrap_err();
        assert!(err.message.contains("too large"), "{}", err.message);
    }

    #[test]
    fn formats_the_shortest_form_and_round_trips() {
        assert_eq!(format_duration(Duration::from_secs(0)), "0s");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_secs(3_600)), "1h");
        assert_eq!(format_duration(Duration::from_secs(86_400)), "1d");
        assert_eq!(format_duration(Duration::from_secs(93_784)), "1d2h3m4s");
        assert_eq!(format_duration(Duration::from_millis(1_500)), "1s");
        for s in [1, 59, 60, 61, 3_599, 3_601, 86_399, 86_401, 31_622_400] {
            let d = Duration::from_secs(s);
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
    }
}
