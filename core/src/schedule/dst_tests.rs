//! DST scenarios for `Schedule::next_after` (test-only): the DST policy of
//! `fires.rs` (and docs/schedules.md)
//! on real 2026 transitions in America/Toronto, Europe/Berlin,
//! Australia/Lord_Howe (30-minute shift) and Pacific/Chatham (+12:45/+13:45).
//! The brute-force cross-check is in `dst_oracle.rs`.
//!
//! 2026 transitions used (checked with chrono-tz):
//! - Toronto: 03-08 02:00->03:00 (07:00Z); 11-01 02:00->01:00 (06:00Z).
//! - Berlin: 03-29 02:00->03:00 (01:00Z); 10-25 03:00->02:00 (01:00Z).
//! - Lord Howe: 04-05 02:00->01:30 (04-04 15:00Z); 10-04 02:00->02:30 (10-03 15:30Z).
//! - Chatham: 04-05 03:45->02:45 (04-04 14:00Z); 09-27 02:45->03:45 (09-26 14:00Z).

use super::Tz;
use super::{DstNote, Fire, Schedule, Timestamp};
use chrono::{NaiveDateTime, TimeDelta, Timelike};
use std::time::Duration;

pub(super) fn utc(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub(super) fn wall(text: &str) -> NaiveDateTime {
    text.parse().unwrap()
}

pub(super) fn schedule(text: &str) -> Schedule {
    Schedule::parse(text, utc("2026-01-01T00:00:00Z"), Tz::UTC).unwrap()
}

/// Every fire in (from, until], checking each step moves forward.
pub(super) fn walk(schedule: &Schedule, zone: Tz, from: Timestamp, until: Timestamp) -> Vec<Fire> {
    let anchor = from;
    let mut fires = Vec::new();
    let mut after = from;
    while let Some(fire) = schedule.next_after(after, zone, anchor) {
        assert!(fire.at > after, "{fire:?} is not after {after}");
        if fire.at > until {
            break;
        }
        after = fire.at;
        fires.push(fire);
    }
    fires
}

fn local_hm(fire: &Fire) -> (u32, u32) {
    (fire.local.hour(), fire.local.minute())
}

#[test]
fn toronto_9am_on_both_transition_days() {
    let s = schedule("0 9 * * *");
    let z = Tz::America__Toronto;
    let fires = walk(
        &s,
        z,
        utc("2026-03-08T00:00:00Z"),
        utc("2026-03-09T00:00:00Z"),
    );
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-03-08T13:00:00Z")); // 09:00 EDT
    assert_eq!(local_hm(&fires[0]), (9, 0));
    assert_eq!(fires[0].dst, DstNote::Exact);
    let fires = walk(
        &s,
        z,
        utc("2026-11-01T00:00:00Z"),
        utc("2026-11-02T00:00:00Z"),
    );
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-11-01T14:00:00Z")); // 09:00 EST
    assert_eq!(local_hm(&fires[0]), (9, 0));
    assert_eq!(fires[0].dst, DstNote::Exact);
}

#[test]
fn toronto_9am_walk_of_365_days_never_drifts() {
    let s = schedule("0 9 * * *");
    let z = Tz::America__Toronto;
    let from = utc("2026-01-01T05:00:00Z"); // local midnight
    let fires = walk(&s, z, from, utc("2027-01-01T05:00:00Z"));
    assert_eq!(fires.len(), 365);
    let mut day = wall("2026-01-01T00:00:00").date();
    for fire in &fires {
        assert_eq!(local_hm(fire), (9, 0), "{fire:?}");
        assert_eq!(fire.local.second(), 0);
        assert_eq!(fire.local.date_naive(), day, "one fire per day");
        assert_eq!(fire.dst, DstNote::Exact);
        day = day.succ_opt().unwrap();
    }
}

#[test]
fn berlin_0230_in_the_gap_runs_once_at_0300() {
    let s = schedule("30 2 * * *");
    let z = Tz::Europe__Berlin;
    let fires = walk(
        &s,
        z,
        utc("2026-03-28T12:00:00Z"),
        utc("2026-03-30T12:00:00Z"),
    );
    assert_eq!(fires.len(), 2);
    assert_eq!(fires[0].at, utc("2026-03-29T01:00:00Z"));
    assert_eq!(local_hm(&fires[0]), (3, 0));
    assert_eq!(
        fires[0].dst,
        DstNote::MovedByGap {
            wanted: wall("2026-03-29T02:30:00")
        }
    );
    assert_eq!(fires[1].at, utc("2026-03-30T00:30:00Z"));
    assert_eq!(fires[1].dst, DstNote::Exact);
}

#[test]
fn toronto_fall_back_wildcard_runs_both_passes_fixed_runs_once() {
    let z = Tz::America__Toronto;
    let from = utc("2026-11-01T04:00:00Z"); // 00:00 EDT
    let until = utc("2026-11-01T08:00:00Z"); // 03:00 EST
    let fires = walk(&schedule("*/30 * * * *"), z, from, until);
    let in_repeated: Vec<_> = fires.iter().filter(|f| f.local.hour() == 1).collect();
    assert_eq!(in_repeated.len(), 4);
    let passes: Vec<_> = in_repeated.iter().map(|f| f.dst.clone()).collect();
    assert_eq!(
        passes,
        [1, 1, 2, 2].map(|pass| DstNote::RepeatedHour { pass })
    );
    // Every 30 real minutes, no gap, no repeat.
    for pair in fires.windows(2) {
        assert_eq!(pair[1].at - pair[0].at, TimeDelta::minutes(30));
    }
    let once = walk(&schedule("30 1 * * *"), z, from, until);
    assert_eq!(once.len(), 1);
    assert_eq!(once[0].at, utc("2026-11-01T05:30:00Z"));
    assert_eq!(once[0].dst, DstNote::RepeatedHour { pass: 1 });
}

#[test]
fn fixed_time_from_inside_the_second_pass_waits_for_tomorrow() {
    let z = Tz::America__Toronto;
    let s = schedule("30 1 * * *");
    let anchor = utc("2026-01-01T00:00:00Z");
    for after in [
        "2026-11-01T05:30:00Z",
        "2026-11-01T06:10:00Z",
        "2026-11-01T06:30:00Z",
    ] {
        let next = s.next_after(utc(after), z, anchor).unwrap();
        assert_eq!(next.at, utc("2026-11-02T06:30:00Z"), "after {after}");
        assert_eq!(next.dst, DstNote::Exact);
    }
}

#[test]
fn minute_lists_with_a_fixed_hour_follow_the_hour_field_not_croner() {
    // Croner would run `0,30 1 * * *` in both passes; the hour is fixed, so once each.
    let z = Tz::America__Toronto;
    let fires = walk(
        &schedule("0,30 1 * * *"),
        z,
        utc("2026-11-01T04:00:00Z"),
        utc("2026-11-01T12:00:00Z"),
    );
    let at: Vec<_> = fires.iter().map(|f| f.at).collect();
    assert_eq!(
        at,
        [utc("2026-11-01T05:00:00Z"), utc("2026-11-01T05:30:00Z")]
    );
    // Croner would skip `*/15 2 * * *` in a gap; we run it once after the gap.
    let fires = walk(
        &schedule("*/15 2 * * *"),
        Tz::Europe__Berlin,
        utc("2026-03-28T12:00:00Z"),
        utc("2026-03-29T12:00:00Z"),
    );
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-03-29T01:00:00Z"));
    assert_eq!(
        fires[0].dst,
        DstNote::MovedByGap {
            wanted: wall("2026-03-29T02:00:00")
        }
    );
}

#[test]
fn a_time_named_right_after_the_gap_merges_with_the_moved_fire() {
    let fires = walk(
        &schedule("0 2,3 * * *"),
        Tz::Europe__Berlin,
        utc("2026-03-28T12:00:00Z"),
        utc("2026-03-29T12:00:00Z"),
    );
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-03-29T01:00:00Z"));
    assert!(matches!(fires[0].dst, DstNote::MovedByGap { .. }));
}

#[test]
fn lord_howe_half_hour_gap() {
    let z = Tz::Australia__Lord_Howe;
    let (from, until) = (utc("2026-10-03T12:00:00Z"), utc("2026-10-04T12:00:00Z"));
    // 02:30 exists (the clock jumps 02:00 -> 02:30): exact.
    let fires = walk(&schedule("30 2 * * *"), z, from, until);
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-10-03T15:30:00Z"));
    assert_eq!(fires[0].dst, DstNote::Exact);
    // 02:15 does not: moved to 02:30.
    let fires = walk(&schedule("15 2 * * *"), z, from, until);
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-10-03T15:30:00Z"));
    assert_eq!(local_hm(&fires[0]), (2, 30));
    assert_eq!(
        fires[0].dst,
        DstNote::MovedByGap {
            wanted: wall("2026-10-04T02:15:00")
        }
    );
    // Wildcard hour: 02:00 and 02:15 never happen; 15 real minutes apart throughout.
    let fires = walk(
        &schedule("*/15 * * * *"),
        z,
        utc("2026-10-03T14:00:00Z"),
        utc("2026-10-03T16:00:00Z"),
    );
    let walls: Vec<_> = fires.iter().map(local_hm).collect();
    assert!(walls.contains(&(1, 45)) && walls.contains(&(2, 30)));
    assert!(!walls.contains(&(2, 0)) && !walls.contains(&(2, 15)));
    for pair in fires.windows(2) {
        assert_eq!(pair[1].at - pair[0].at, TimeDelta::minutes(15));
    }
}

#[test]
fn lord_howe_half_hour_overlap() {
    let z = Tz::Australia__Lord_Howe;
    let (from, until) = (utc("2026-04-04T12:00:00Z"), utc("2026-04-05T12:00:00Z"));
    // 01:15 is before the repeated 01:30-02:00: once, exact.
    let fires = walk(&schedule("15 1 * * *"), z, from, until);
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-04-04T14:15:00Z"));
    assert_eq!(fires[0].dst, DstNote::Exact);
    // 01:45 is repeated: once, first pass.
    let fires = walk(&schedule("45 1 * * *"), z, from, until);
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-04-04T14:45:00Z"));
    assert_eq!(fires[0].dst, DstNote::RepeatedHour { pass: 1 });
    // Wildcard: 01:30 and 01:45 twice each, every 15 real minutes.
    let fires = walk(
        &schedule("*/15 * * * *"),
        z,
        utc("2026-04-04T13:59:00Z"),
        utc("2026-04-04T15:45:00Z"),
    );
    let seen: Vec<_> = fires.iter().map(|f| (local_hm(f), f.dst.clone())).collect();
    let pass = |p| DstNote::RepeatedHour { pass: p };
    assert_eq!(
        seen,
        [
            ((1, 0), DstNote::Exact),
            ((1, 15), DstNote::Exact),
            ((1, 30), pass(1)),
            ((1, 45), pass(1)),
            ((1, 30), pass(2)),
            ((1, 45), pass(2)),
            ((2, 0), DstNote::Exact),
            ((2, 15), DstNote::Exact), // 15:45Z, the end of the window
        ]
    );
    for pair in fires.windows(2) {
        assert_eq!(pair[1].at - pair[0].at, TimeDelta::minutes(15));
    }
}

#[test]
fn chatham_gap_and_overlap() {
    let z = Tz::Pacific__Chatham;
    // Gap 02:45 -> 03:45 on 09-27 (14:00Z on 09-26).
    let (from, until) = (utc("2026-09-26T00:00:00Z"), utc("2026-09-27T00:00:00Z"));
    let fires = walk(&schedule("0 3 * * *"), z, from, until);
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-09-26T14:00:00Z"));
    assert_eq!(local_hm(&fires[0]), (3, 45));
    assert_eq!(
        fires[0].dst,
        DstNote::MovedByGap {
            wanted: wall("2026-09-27T03:00:00")
        }
    );
    let fires = walk(&schedule("45 2 * * *"), z, from, until);
    assert_eq!(fires[0].at, utc("2026-09-26T14:00:00Z"));
    let fires = walk(&schedule("30 2 * * *"), z, from, until);
    assert_eq!(fires[0].at, utc("2026-09-26T13:45:00Z"));
    assert_eq!(fires[0].dst, DstNote::Exact);
    let fires = walk(
        &schedule("*/30 * * * *"),
        z,
        utc("2026-09-26T13:00:00Z"),
        utc("2026-09-26T15:00:00Z"),
    );
    let walls: Vec<_> = fires.iter().map(local_hm).collect();
    assert_eq!(walls, [(2, 0), (2, 30), (4, 0), (4, 30)]); // 15:00Z is 04:45
    // Overlap 03:45 -> 02:45 on 04-05 (14:00Z on 04-04).
    let (from, until) = (utc("2026-04-04T00:00:00Z"), utc("2026-04-05T00:00:00Z"));
    let fires = walk(&schedule("0 3 * * *"), z, from, until);
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0].at, utc("2026-04-04T13:15:00Z"));
    assert_eq!(fires[0].dst, DstNote::RepeatedHour { pass: 1 });
    let fires = walk(
        &schedule("*/30 * * * *"),
        z,
        utc("2026-04-04T13:00:00Z"),
        utc("2026-04-04T16:00:00Z"),
    );
    let pass = |p| DstNote::RepeatedHour { pass: p };
    let seen: Vec<_> = fires.iter().map(|f| (local_hm(f), f.dst.clone())).collect();
    assert_eq!(
        seen,
        [
            ((3, 0), pass(1)),
            ((3, 30), pass(1)),
            ((3, 0), pass(2)),
            ((3, 30), pass(2)),
            ((4, 0), DstNote::Exact),
            ((4, 30), DstNote::Exact),
        ]
    );
}

#[test]
fn a_whole_skipped_day_moves_a_fixed_time_to_the_next_midnight() {
    // Samoa skipped 2011-12-30 (-10:00 -> +14:00 at local midnight).
    let z = Tz::Pacific__Apia;
    let fires = walk(
        &schedule("0 9 * * *"),
        z,
        utc("2011-12-29T20:00:00Z"), // 2011-12-29 10:00 -10:00
        utc("2011-12-31T12:00:00Z"),
    );
    let seen: Vec<_> = fires
        .iter()
        .map(|f| (f.local.naive_local(), f.dst.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                wall("2011-12-31T00:00:00"),
                DstNote::MovedByGap {
                    wanted: wall("2011-12-30T09:00:00")
                }
            ),
            (wall("2011-12-31T09:00:00"), DstNote::Exact),
        ]
    );
}

#[test]
fn every_30s_is_anchored_and_ignores_dst() {
    let s = schedule("every 30s");
    let z = Tz::America__Toronto;
    let anchor = utc("2026-11-01T05:59:10Z");
    let mut after = anchor;
    let mut fires = Vec::new();
    for _ in 0..6 {
        let fire = s.next_after(after, z, anchor).unwrap();
        after = fire.at;
        fires.push(fire);
    }
    for (k, fire) in fires.iter().enumerate() {
        assert_eq!(fire.at, anchor + TimeDelta::seconds(30 * (k as i64 + 1)));
    }
    // 05:59:40Z is 01:59:40 EDT (pass 1); 06:00:10Z is 01:00:10 EST (pass 2).
    assert_eq!(fires[0].dst, DstNote::RepeatedHour { pass: 1 });
    assert_eq!(fires[1].dst, DstNote::RepeatedHour { pass: 2 });
    // From an off-grid instant, the next grid point.
    let next = s
        .next_after(utc("2026-11-01T07:00:01Z"), z, anchor)
        .unwrap();
    assert_eq!(next.at, utc("2026-11-01T07:00:10Z"));
    assert_eq!(next.dst, DstNote::Exact);
}

#[test]
fn one_shots_fire_once_and_reboot_never_from_the_clock() {
    let now = utc("2026-05-01T10:00:00Z");
    let s = Schedule::parse("in 30s", now, Tz::UTC).unwrap();
    let fire = s.next_after(now, Tz::UTC, now).unwrap();
    assert_eq!(fire.at, utc("2026-05-01T10:00:30Z"));
    assert_eq!(s.next_after(fire.at, Tz::UTC, now), None);
    assert!(!s.is_recurring());
    let naive = Schedule::parse("2026-12-01T08:00", now, Tz::Europe__Berlin).unwrap();
    let fire = naive.next_after(now, Tz::Europe__Berlin, now).unwrap();
    assert_eq!(fire.at, utc("2026-12-01T07:00:00Z"));
    assert_eq!(local_hm(&fire), (8, 0));
    assert_eq!(Schedule::Reboot.next_after(now, Tz::UTC, now), None);
    assert!(!Schedule::Reboot.is_recurring());
    assert!(schedule("every 5m").is_recurring() && schedule("@daily").is_recurring());
}

#[test]
fn period_at_is_the_real_time_to_the_next_fire() {
    let z = Tz::America__Toronto;
    let anchor = utc("2026-01-01T00:00:00Z");
    let daily = schedule("0 9 * * *");
    let hours = |slot: &str| {
        daily
            .period_at(utc(slot), z, anchor)
            .map(|d| d.as_secs() / 3_600)
    };
    assert_eq!(hours("2026-06-01T13:00:00Z"), Some(24));
    assert_eq!(hours("2026-03-07T14:00:00Z"), Some(23)); // into the spring-forward day
    assert_eq!(hours("2026-10-31T13:00:00Z"), Some(25)); // into the fall-back day
    let every = schedule("every 5m");
    assert_eq!(
        every.period_at(anchor, z, anchor),
        Some(Duration::from_secs(300))
    );
    let once = Schedule::parse("in 30s", anchor, z).unwrap();
    assert_eq!(once.period_at(anchor, z, anchor), None);
    assert_eq!(Schedule::Reboot.period_at(anchor, z, anchor), None);
}

/// Found by probing `next_after` at the ends of chrono's range (see
/// `wall.rs`): in a zone east of UTC the wall time of `MAX_UTC` does not
/// exist, and computing it panicked. Now there is simply no next fire.
#[test]
fn next_after_at_the_end_of_time_is_none_not_a_panic() {
    let end = chrono::DateTime::<chrono::Utc>::MAX_UTC;
    for text in ["* * * * * *", "daily at 8am", "0 0 29 2 *"] {
        let s = schedule(text);
        assert_eq!(s.next_after(end, Tz::Pacific__Chatham, end), None, "{text}");
        assert_eq!(s.next_after(end, Tz::UTC, end), None, "{text}");
    }
    let near = end - TimeDelta::hours(20);
    let s = schedule("* * * * *");
    assert_eq!(s.next_after(near, Tz::Pacific__Apia, near), None);
    // Croner searches up to the year 5000; before that, fires as usual.
    let far = utc("4999-06-01T12:00:00Z");
    assert_eq!(
        s.next_after(far, Tz::Pacific__Chatham, far).map(|f| f.at),
        Some(utc("4999-06-01T12:01:00Z"))
    );
}
