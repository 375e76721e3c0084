//! Wall clock <-> instant in a zone, with DST made explicit. Pure.
//!
//! [`resolve`] says what one wall-clock time is in a zone: one instant, two
//! (a fall-back repeats it; `first` is the earlier, pre-transition offset), or
//! none (a spring-forward gap skips it; `resumes` is the first real instant
//! after the gap, i.e. the transition itself). The transition is found by
//! bisection on the instant line, so gaps of any size and offsets with
//! seconds (historic LMT) are handled exactly.

use super::Tz;
use super::instant::Timestamp;
use chrono::{DateTime, LocalResult, NaiveDateTime, Offset, TimeZone, Utc};

/// What one wall-clock time is in a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WallTime {
    /// It happens once.
    Single(Timestamp),
    /// A fall-back repeats it: `first` on the earlier offset, then `second`.
    Repeated { first: Timestamp, second: Timestamp },
    /// A spring-forward gap skips it; the clock resumes at `resumes`.
    Skipped { resumes: Timestamp },
}

impl WallTime {
    /// The earliest instant whose wall clock reads at or after the wall time
    /// that was resolved. Monotone in the wall time, which is what lets a
    /// forward search stop early.
    pub(crate) fn earliest(self) -> Timestamp {
        match self {
            WallTime::Single(at) => at,
            WallTime::Repeated { first, .. } => first,
            WallTime::Skipped { resumes } => resumes,
        }
    }
}

/// Resolve a wall-clock time in `zone`. None only at the edges of chrono's range.
pub(crate) fn resolve(zone: Tz, wall: NaiveDateTime) -> Option<WallTime> {
    match zone.from_local_datetime(&wall) {
        LocalResult::Single(at) => Some(WallTime::Single(at.with_timezone(&Utc))),
        LocalResult::Ambiguous(first, second) => Some(WallTime::Repeated {
            first: first.with_timezone(&Utc),
            second: second.with_timezone(&Utc),
        }),
        LocalResult::None => {
            first_instant_reading_at_least(zone, wall).map(|resumes| WallTime::Skipped { resumes })
        }
    }
}

/// The wall-clock time in `zone` at `at`; None within a day of the ends of
/// chrono's range, where the wall time does not fit in a `NaiveDateTime`
/// (`naive_local` panics there).
pub(crate) fn wall_of(zone: Tz, at: Timestamp) -> Option<NaiveDateTime> {
    let offset = zone.offset_from_utc_datetime(&at.naive_utc()).fix();
    at.naive_utc().checked_add_offset(offset)
}

/// Which pass of a repeated wall-clock time `at` is: Some(1) for the first
/// (earlier offset), Some(2) for the second, None when its wall time occurs once.
pub(crate) fn repeated_pass(zone: Tz, at: Timestamp) -> Option<u8> {
    match resolve(zone, wall_of(zone, at)?)? {
        WallTime::Repeated { first, .. } if first == at => Some(1),
        WallTime::Repeated { second, .. } if second == at => Some(2),
        _ => None,
    }
}

/// The first instant (to the second) whose wall clock in `zone` reads at or
/// after `wall`. Used for a wall time inside a gap, where it is the transition.
fn first_instant_reading_at_least(zone: Tz, wall: NaiveDateTime) -> Option<Timestamp> {
    // No zone is more than a day off UTC, so these bound the answer:
    // the wall clock at `lo` is before `wall`, at `hi` at or after it.
    const MARGIN: i64 = 27 * 3_600;
    let naive_secs = wall.and_utc().timestamp();
    let mut lo = naive_secs.checked_sub(MARGIN)?;
    let mut hi = naive_secs.checked_add(MARGIN)?;
    let reads_at_least = |secs: i64| -> Option<bool> {
        let at = DateTime::from_timestamp(secs, 0)?;
        Some(wall_of(zone, at)? >= wall)
    };
    // Invariant: reads_at_least(lo) == false, reads_at_least(hi) == true.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if reads_at_least(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    DateTime::from_timestamp(hi, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn wall(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_opt(h, mi, 0)
            .unwrap()
    }

    fn utc(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn ordinary_time_is_single() {
        let got = resolve(Tz::Europe__Berlin, wall(2026, 6, 1, 9, 0)).unwrap();
        assert_eq!(got, WallTime::Single(utc("2026-06-01T07:00:00Z")));
    }

    #[test]
    fn gap_resumes_at_the_transition() {
        let got = resolve(Tz::Europe__Berlin, wall(2026, 3, 29, 2, 30)).unwrap();
        assert_eq!(
            got,
            WallTime::Skipped {
                resumes: utc("2026-03-29T01:00:00Z")
            }
        );
        // Chatham: 02:45 -> 03:45 (+12:45 -> +13:45).
        let got = resolve(Tz::Pacific__Chatham, wall(2026, 9, 27, 3, 0)).unwrap();
        assert_eq!(
            got,
            WallTime::Skipped {
                resumes: utc("2026-09-26T14:00:00Z")
            }
        );
    }

    #[test]
    fn overlap_is_repeated_in_order() {
        let got = resolve(Tz::America__Toronto, wall(2026, 11, 1, 1, 30)).unwrap();
        assert_eq!(
            got,
            WallTime::Repeated {
                first: utc("2026-11-01T05:30:00Z"),
                second: utc("2026-11-01T06:30:00Z"),
            }
        );
        assert_eq!(
            repeated_pass(Tz::America__Toronto, utc("2026-11-01T05:30:00Z")),
            Some(1)
        );
        assert_eq!(
            repeated_pass(Tz::America__Toronto, utc("2026-11-01T06:30:00Z")),
            Some(2)
        );
        assert_eq!(
            repeated_pass(Tz::America__Toronto, utc("2026-11-01T07:30:00Z")),
            None
        );
    }

    #[test]
    fn earliest_is_monotone_across_a_gap() {
        let zone = Tz::Australia__Lord_Howe; // 02:00 -> 02:30 on 2026-10-04
        let a = resolve(zone, wall(2026, 10, 4, 1, 59)).unwrap().earliest();
        let b = resolve(zone, wall(2026, 10, 4, 2, 10)).unwrap().earliest();
        let c = resolve(zone, wall(2026, 10, 4, 2, 30)).unwrap().earliest();
        assert!(a < b);
        assert_eq!(b, c);
        assert_eq!(b, utc("2026-10-03T15:30:00Z"));
    }

    /// Found by probing `next_after` at the ends of chrono's range: the wall
    /// time of an instant within a day of `MAX_UTC` in a zone east of UTC
    /// does not fit in a `NaiveDateTime`, and `naive_local` panicked.
    #[test]
    fn wall_of_at_the_end_of_time_is_none_not_a_panic() {
        let end = DateTime::<Utc>::MAX_UTC;
        assert_eq!(wall_of(Tz::Pacific__Chatham, end), None);
        assert_eq!(repeated_pass(Tz::Pacific__Chatham, end), None);
        assert_eq!(wall_of(Tz::UTC, end), Some(end.naive_utc()));
        let start = DateTime::<Utc>::MIN_UTC;
        assert_eq!(wall_of(Tz::America__New_York, start), None);
    }
}
