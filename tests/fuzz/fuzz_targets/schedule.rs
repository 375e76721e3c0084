//! The schedule grammar: `Schedule::parse` and `from_canonical` on arbitrary
//! text never panic; whatever parses round-trips through its canonical form
//! and walks `next_after` strictly forward.
#![no_main]

use chrono::{DateTime, TimeDelta};
use hermes_cron::schedule::{Schedule, Tz, parse_duration, parse_zone};
use libfuzzer_sys::fuzz_target;

/// Zones with odd transitions: 30-minute and 45-minute offsets, midnight gaps.
const ZONES: [Tz; 8] = [
    Tz::UTC,
    Tz::Europe__Berlin,
    Tz::America__New_York,
    Tz::Australia__Lord_Howe,
    Tz::Pacific__Chatham,
    Tz::Africa__Cairo,
    Tz::America__Santiago,
    Tz::Pacific__Apia,
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let zone = ZONES[usize::from(data[0]) % ZONES.len()];
    // `now` anywhere from 1970 to ~2240, in 2-second steps.
    let secs = i64::from(u32::from_le_bytes([data[1], data[2], data[3], data[4]])) * 2;
    let now = DateTime::from_timestamp(secs, 0).expect("in range");
    let Ok(text) = std::str::from_utf8(&data[5..]) else {
        return;
    };
    let _ = parse_duration(text);
    let _ = parse_zone(text);
    let _ = Schedule::from_canonical(text);
    let Ok(schedule) = Schedule::parse(text, now, zone) else {
        return;
    };
    let stored = schedule.canonical();
    let back = Schedule::from_canonical(&stored)
        .unwrap_or_else(|e| panic!("{text:?} -> {stored:?} does not read back: {e}"));
    assert_eq!(back, schedule, "{text:?} -> {stored:?}");
    let _ = schedule.describe();
    let mut after = now;
    for _ in 0..20 {
        let Some(fire) = schedule.next_after(after, zone, now) else {
            break;
        };
        assert!(
            fire.at > after,
            "{text:?} in {zone}: {fire:?} is not after {after}"
        );
        let _ = schedule.period_at(fire.at, zone, now);
        after = fire.at;
    }
    // From an arbitrary instant near `now`, too (not only from fires).
    let odd = now + TimeDelta::seconds(i64::from(data[0]) * 977);
    if let Some(fire) = schedule.next_after(odd, zone, now) {
        assert!(fire.at > odd);
    }
});
