//! A brute-force oracle for cron fires under the DST policy (test-only), and
//! the tests that every `next_after` walk, and every `next_after` from an
//! arbitrary instant, equals it around each 2026 transition in Toronto,
//! Berlin, Lord Howe and Chatham, for fixed-hour, wildcard-hour, list, range
//! and seconds patterns.
//!
//! The oracle shares no code with `fires.rs` or `wall.rs`: it steps the wall
//! clock minute by minute (or second by second), asks croner whether each
//! wall time matches and chrono what it is in the zone, and maps it by the
//! policy table; gap ends are found by stepping the wall clock forward.

use super::dst_tests::{schedule, utc, walk};
use super::{DstNote, Schedule, Timestamp};
use chrono::{LocalResult, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use std::collections::BTreeMap;

/// Every fire in (from, until] by brute force: each wall-clock minute (or
/// second) the pattern matches, mapped to instants by the policy, written
/// independently of `fires.rs` (gap ends found by stepping the wall clock).
fn oracle(
    s: &Schedule,
    zone: Tz,
    from: Timestamp,
    until: Timestamp,
    step: i64,
) -> Vec<(Timestamp, DstNote)> {
    let Schedule::Cron(cron) = s else {
        panic!("cron only")
    };
    let wildcard = cron.has_wildcard_hour();
    let pattern = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build()
        .parse(&cron.expr)
        .unwrap();
    let mut fires: BTreeMap<Timestamp, DstNote> = BTreeMap::new();
    let mut w = (from - TimeDelta::days(1)).naive_utc();
    let w_end = (until + TimeDelta::days(1)).naive_utc();
    while w <= w_end {
        if pattern.is_time_matching(&w).unwrap() {
            let found: Vec<(Timestamp, DstNote)> = match zone.from_local_datetime(&w) {
                LocalResult::Single(at) => vec![(at.with_timezone(&Utc), DstNote::Exact)],
                LocalResult::Ambiguous(first, second) => {
                    let mut v =
                        vec![(first.with_timezone(&Utc), DstNote::RepeatedHour { pass: 1 })];
                    if wildcard {
                        v.push((
                            second.with_timezone(&Utc),
                            DstNote::RepeatedHour { pass: 2 },
                        ));
                    }
                    v
                }
                LocalResult::None if wildcard => vec![],
                LocalResult::None => {
                    let mut after_gap = w;
                    loop {
                        after_gap += TimeDelta::minutes(1);
                        // These zones' gaps end on a whole minute, so the first
                        // wall minute that exists is the transition instant.
                        if let LocalResult::Single(at) = zone.from_local_datetime(&after_gap) {
                            let resumes = at.with_timezone(&Utc);
                            break vec![(resumes, DstNote::MovedByGap { wanted: w })];
                        }
                    }
                }
            };
            for (at, note) in found {
                fires.entry(at).or_insert(note);
            }
        }
        w += TimeDelta::seconds(step);
    }
    fires
        .into_iter()
        .filter(|(at, _)| *at > from && *at <= until)
        .collect()
}

#[test]
fn walks_equal_the_oracle_around_every_transition() {
    let windows = [
        (
            Tz::America__Toronto,
            "2026-03-07T12:00:00Z",
            "2026-03-09T12:00:00Z",
        ),
        (
            Tz::America__Toronto,
            "2026-10-31T12:00:00Z",
            "2026-11-02T12:00:00Z",
        ),
        (
            Tz::Europe__Berlin,
            "2026-03-28T12:00:00Z",
            "2026-03-30T12:00:00Z",
        ),
        (
            Tz::Europe__Berlin,
            "2026-10-24T12:00:00Z",
            "2026-10-26T12:00:00Z",
        ),
        (
            Tz::Australia__Lord_Howe,
            "2026-04-03T12:00:00Z",
            "2026-04-05T12:00:00Z",
        ),
        (
            Tz::Australia__Lord_Howe,
            "2026-10-02T12:00:00Z",
            "2026-10-04T12:00:00Z",
        ),
        (
            Tz::Pacific__Chatham,
            "2026-04-03T12:00:00Z",
            "2026-04-05T12:00:00Z",
        ),
        (
            Tz::Pacific__Chatham,
            "2026-09-25T12:00:00Z",
            "2026-09-27T12:00:00Z",
        ),
    ];
    let patterns = [
        "0 9 * * *",
        "30 2 * * *",
        "15 1 * * *",
        "45 1 * * *",
        "0 3 * * *",
        "*/30 * * * *",
        "*/15 * * * *",
        "0,30 1 * * *",
        "0,30 2 * * *",
        "*/10 2-3 * * *",
        "0 2,3 * * *",
        "45 */2 * * *",
        "0 0 * * *",
        "7 * * * *",
    ];
    for (zone, from, until) in windows {
        let ours = super::Tz::compiled_in(zone);
        let (from, until) = (utc(from), utc(until));
        for text in patterns {
            let s = schedule(text);
            let got: Vec<_> = walk(&s, ours, from, until)
                .into_iter()
                .map(|f| (f.at, f.dst))
                .collect();
            let want = oracle(&s, zone, from, until, 60);
            assert_eq!(got, want, "{text:?} in {zone} from {from}");
            // From arbitrary instants (not fires), next_after is the first oracle fire after it.
            let mut after = from;
            while after < until {
                let next = s.next_after(after, ours, from).map(|f| (f.at, f.dst));
                let expected = want.iter().find(|(at, _)| *at > after).cloned();
                if expected.is_some() {
                    assert_eq!(next, expected, "{text:?} in {zone} after {after}");
                }
                after += TimeDelta::seconds(7 * 60 + 13);
            }
        }
    }
}

#[test]
fn seconds_patterns_equal_the_oracle_in_an_overlap() {
    let zone = Tz::America__Toronto;
    let ours = super::Tz::compiled_in(zone);
    let (from, until) = (utc("2026-11-01T05:50:00Z"), utc("2026-11-01T06:10:00Z"));
    for text in ["*/20 * * * * *", "0 */5 1 * * *", "30 59 * * * *"] {
        let s = schedule(text);
        let got: Vec<_> = walk(&s, ours, from, until)
            .into_iter()
            .map(|f| (f.at, f.dst))
            .collect();
        assert_eq!(got, oracle(&s, zone, from, until, 1), "{text:?}");
    }
}
