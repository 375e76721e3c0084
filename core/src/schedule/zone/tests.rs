//! Zones: names, the host-first lookup over a fixture database, POSIX TZ
//! strings, wall-time resolution of loaded rules against chrono-tz, and the
//! rules comparison. The fixture TZif files are written here, in memory.

use super::fixture::{rule_only, tzif};
use super::*;
use crate::schedule::{DstNote, Schedule, Timestamp};
use chrono::{DateTime, LocalResult, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc};
use std::collections::BTreeMap;

fn utc(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn wall(text: &str) -> NaiveDateTime {
    text.parse().unwrap()
}

fn offset(zone: Zone, at: &str) -> i32 {
    zone.offset_at(utc(at)).fix().local_minus_utc()
}

/// A fixture zone database.
struct Fixture(BTreeMap<String, Vec<u8>>);

impl ZoneFiles for Fixture {
    fn tzif(&self, name: &str) -> Option<Vec<u8>> {
        self.0.get(name).cloned()
    }
    fn names(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
}

fn table(files: &[(&str, Vec<u8>)]) -> ZoneTable {
    ZoneTable::new(Box::new(Fixture(
        files
            .iter()
            .map(|(name, bytes)| (name.to_string(), bytes.clone()))
            .collect(),
    )))
}

const BERLIN_RULE: &str = "CET-1CEST,M3.5.0,M10.5.0/3";

/// `name` read in a table with no host database (compiled-in rules, POSIX
/// strings).
fn parse_no_host(name: &str) -> Result<Zone, crate::schedule::ScheduleError> {
    ZoneTable::compiled_in_only().parse(name)
}

// --- names (no host database) ---

#[test]
fn reads_iana_names() {
    assert_eq!(
        parse_no_host("Europe/Berlin").unwrap(),
        Zone::Europe__Berlin
    );
    assert_eq!(parse_no_host("UTC").unwrap(), Zone::UTC);
    assert_eq!(
        parse_no_host(" America/Toronto ").unwrap(),
        Zone::America__Toronto
    );
    assert_eq!(
        parse_no_host(":Europe/Berlin").unwrap(),
        Zone::Europe__Berlin
    );
    assert_eq!(
        parse_no_host("Europe/Berlin").unwrap().origin(),
        ZoneOrigin::CompiledIn
    );
}

#[test]
fn reads_names_in_any_case_and_keeps_the_database_spelling() {
    assert_eq!(parse_no_host("utc").unwrap(), Zone::UTC);
    let london = parse_no_host("europe/london").unwrap();
    assert_eq!(london, Zone::Europe__London);
    assert_eq!(london.name(), "Europe/London");
}

#[test]
fn refusal_names_the_zone_and_suggests_a_match() {
    let err = parse_no_host("Berlin").unwrap_err();
    assert_eq!(err.token, "Berlin");
    assert_eq!(
        err.message,
        "unknown time zone \"Berlin\"; did you mean Europe/Berlin?"
    );
    let err = parse_no_host("Mars/Olympus").unwrap_err();
    assert_eq!(err.token, "Mars/Olympus");
    assert!(err.message.contains("IANA"), "{}", err.message);
    assert_eq!(parse_no_host("").unwrap_err().token, "");
    assert_eq!(parse_no_host(":").unwrap_err().token, ":");
}

#[test]
fn zones_are_interned_and_cheap_to_copy() {
    let zones = ZoneTable::compiled_in_only();
    let a = zones.parse("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
    let b = zones.parse(" CET-1CEST,M3.5.0,M10.5.0/3 ").unwrap();
    assert_eq!(a, b);
    assert!(std::mem::size_of::<Zone>() <= 16);
    assert!(std::mem::size_of::<ZoneOffset>() <= 32);
}

// --- POSIX TZ strings ---

#[test]
fn posix_strings_are_zones_with_their_own_rule() {
    let zone = parse_no_host(BERLIN_RULE).unwrap();
    assert_eq!(zone.origin(), ZoneOrigin::Posix);
    assert_eq!(zone.name(), BERLIN_RULE);
    assert_eq!(offset(zone, "2026-01-15T12:00:00Z"), 3_600);
    assert_eq!(offset(zone, "2026-07-15T12:00:00Z"), 7_200);
    assert_eq!(
        zone.offset_at(utc("2026-07-15T12:00:00Z")).to_string(),
        "CEST"
    );
    // Quoted numeric abbreviations, half-hour offsets.
    let tehran = parse_no_host("<+0330>-3:30").unwrap();
    assert_eq!(offset(tehran, "2026-07-15T12:00:00Z"), 12_600);
    assert_eq!(
        tehran.offset_at(utc("2026-07-15T12:00:00Z")).abbreviation(),
        "+0330"
    );
    // POSIX's sign: UTC-3 is three hours ahead of UTC.
    assert_eq!(
        offset(parse_no_host("UTC-3").unwrap(), "2026-07-15T12:00:00Z"),
        10_800
    );
}

#[test]
fn a_posix_berlin_matches_the_compiled_in_berlin_wall_and_utc() {
    let posix = parse_no_host(BERLIN_RULE).unwrap();
    same_rules_2026_2027(posix, Zone::Europe__Berlin);
}

#[test]
fn invalid_posix_strings_are_refused_naming_the_value_and_the_fix() {
    for text in [
        "CET-1CEST,M3.5.0",
        "CET-1CEST,M13.5.0,M10.5.0/3",
        "CET-25",
        "1CET",
    ] {
        let err = parse_no_host(text).unwrap_err();
        assert_eq!(err.token, text);
        assert!(
            err.message
                .starts_with(&format!("unknown time zone {text:?}")),
            "{}",
            err.message
        );
        assert!(err.message.contains("POSIX TZ string"), "{}", err.message);
        assert!(err.message.contains("Europe/Berlin"), "{}", err.message);
    }
}

// --- host rules over compiled-in ones (a fixture database) ---

#[test]
fn host_rules_are_used_over_the_compiled_in_ones() {
    // A host whose Europe/Berlin is really Tokyo.
    let host = table(&[("Europe/Berlin", rule_only(32_400, "JST", "JST-9"))]);
    let berlin = host.parse("Europe/Berlin").unwrap();
    assert_eq!(berlin.origin(), ZoneOrigin::Host);
    assert_eq!(berlin.name(), "Europe/Berlin");
    assert_eq!(offset(berlin, "2026-07-15T12:00:00Z"), 32_400);
    assert_eq!(
        berlin.offset_at(utc("2026-07-15T12:00:00Z")).to_string(),
        "JST"
    );
    // Any spelling finds the host's file and keeps its name.
    let lower = host.parse("europe/berlin").unwrap();
    assert_eq!(lower, berlin);
    assert_eq!(lower.name(), "Europe/Berlin");
    // The compiled-in copy is still there to compare with.
    let compiled = compiled_in_zone("europe/berlin").unwrap();
    assert_eq!(offset(compiled, "2026-07-15T12:00:00Z"), 7_200);
    // Fires follow the host's rules.
    let daily = Schedule::parse("0 9 * * *", utc("2026-07-01T00:00:00Z"), berlin).unwrap();
    let fire = daily
        .next_after(
            utc("2026-07-01T00:00:00Z"),
            berlin,
            utc("2026-07-01T00:00:00Z"),
        )
        .unwrap();
    assert_eq!(fire.at, utc("2026-07-01T00:00:00Z") + TimeDelta::hours(24));
    assert_eq!(fire.local.format("%H:%M %Z").to_string(), "09:00 JST");
}

#[test]
fn a_zone_the_host_lacks_comes_from_the_compiled_in_copy() {
    let host = table(&[("Europe/Berlin", rule_only(32_400, "JST", "JST-9"))]);
    let toronto = host.parse("America/Toronto").unwrap();
    assert_eq!(toronto.origin(), ZoneOrigin::CompiledIn);
    assert_eq!(toronto, Zone::America__Toronto);
    assert_eq!(
        host.parse("america/toronto").unwrap(),
        Zone::America__Toronto
    );
    // No host database at all: everything compiled in.
    let none = ZoneTable::compiled_in_only();
    assert!(!none.has_host_database());
    assert_eq!(none.parse("Europe/Berlin").unwrap(), Zone::Europe__Berlin);
}

#[test]
fn tables_are_independent_and_a_job_zone_falls_back_when_it_does_not_read() {
    // The same name reads as each table's rules: no table sees another's.
    let host = table(&[("Europe/Berlin", rule_only(32_400, "JST", "JST-9"))]);
    let none = ZoneTable::compiled_in_only();
    assert_eq!(
        host.parse("Europe/Berlin").unwrap().origin(),
        ZoneOrigin::Host
    );
    assert_eq!(none.parse("Europe/Berlin").unwrap(), Zone::Europe__Berlin);
    assert_eq!(
        host.parse("Europe/Berlin").unwrap().origin(),
        ZoneOrigin::Host
    );
    // `zone_or`: the name's zone, else the fallback (none given, or unknown).
    let berlin = host.zone_or(Some("Europe/Berlin"), Zone::UTC);
    assert_eq!(offset(berlin, "2026-07-15T12:00:00Z"), 32_400);
    assert_eq!(host.zone_or(None, Zone::Asia__Tokyo), Zone::Asia__Tokyo);
    assert_eq!(host.zone_or(Some("Mars/Olympus"), Zone::UTC), Zone::UTC);
}

#[test]
fn a_zone_only_the_host_has_is_found_in_any_case() {
    let host = table(&[("America/Nowhere_Land", rule_only(-18_000, "EST", "EST5"))]);
    let zone = host.parse("AMERICA/NOWHERE_LAND").unwrap();
    assert_eq!(zone.name(), "America/Nowhere_Land");
    assert_eq!(zone.origin(), ZoneOrigin::Host);
    // Suggestions include the host's names.
    let err = host.parse("Nowhere_Land").unwrap_err();
    assert!(
        err.message.contains("did you mean America/Nowhere_Land?"),
        "{}",
        err.message
    );
}

#[test]
fn names_that_leave_the_database_are_not_read() {
    let host = table(&[("../../etc/passwd", rule_only(3_600, "BAD", "BAD-1"))]);
    for name in ["../../etc/passwd", "/etc/passwd", "Europe//Berlin", "./UTC"] {
        assert!(host.parse(name).is_err(), "{name}");
    }
}

#[test]
fn a_corrupt_host_file_falls_back_to_the_compiled_in_copy() {
    let host = table(&[("Europe/Berlin", b"not a TZif file".to_vec())]);
    assert_eq!(host.parse("Europe/Berlin").unwrap(), Zone::Europe__Berlin);
}

#[test]
fn host_rules_with_transitions_and_no_footer_keep_the_last_type() {
    // 2026 only: CEST from 03-29 01:00Z to 10-25 01:00Z, then CET for good.
    let bytes = tzif(
        &[(1_774_746_000, 1), (1_792_890_000, 0)],
        &[(3_600, false, "CET"), (7_200, true, "CEST")],
        "",
    );
    let host = table(&[("Test/Berlin2026", bytes)]);
    let zone = host.parse("Test/Berlin2026").unwrap();
    assert_eq!(offset(zone, "2026-01-01T00:00:00Z"), 3_600);
    assert_eq!(offset(zone, "2026-03-29T01:00:00Z"), 7_200);
    assert_eq!(offset(zone, "2026-10-25T00:59:59Z"), 7_200);
    assert_eq!(offset(zone, "2026-10-25T01:00:00Z"), 3_600);
    assert_eq!(offset(zone, "2030-07-01T00:00:00Z"), 3_600);
    assert_eq!(
        zone.from_local_datetime(&wall("2026-03-29T02:30:00")),
        LocalResult::None
    );
    let LocalResult::Ambiguous(first, second) =
        zone.from_local_datetime(&wall("2026-10-25T02:30:00"))
    else {
        panic!("not ambiguous")
    };
    assert_eq!(first.with_timezone(&Utc), utc("2026-10-25T00:30:00Z"));
    assert_eq!(second.with_timezone(&Utc), utc("2026-10-25T01:30:00Z"));
}

#[test]
fn loaded_rules_give_the_same_fires_as_the_compiled_in_ones() {
    let host = table(&[("Europe/Berlin", rule_only(3_600, "CET", BERLIN_RULE))]);
    let loaded = host.parse("Europe/Berlin").unwrap();
    assert_eq!(loaded.origin(), ZoneOrigin::Host);
    let (from, until) = (utc("2026-01-01T00:00:00Z"), utc("2027-01-01T00:00:00Z"));
    for text in [
        "30 2 * * *",
        "0,30 2 * * *",
        "*/15 * * * *",
        "30 */2 * * *",
        "0 1-3 * * *",
        "2026-03-29T02:30",
        "every 1d",
    ] {
        let s = Schedule::parse(text, from, loaded).unwrap();
        let walk = |zone: Zone| {
            let mut out = Vec::new();
            let mut after = from;
            while let Some(fire) = s.next_after(after, zone, from) {
                if fire.at > until {
                    break;
                }
                after = fire.at;
                out.push((fire.at, fire.dst, fire.local.format("%F %T %Z").to_string()));
            }
            out
        };
        assert_eq!(walk(loaded), walk(Zone::Europe__Berlin), "{text:?}");
    }
}

/// Every 30 minutes of 2026-2027, as wall time and as UTC: same answers.
fn same_rules_2026_2027(a: Zone, b: Zone) {
    let mut t = utc("2026-01-01T00:00:00Z");
    while t < utc("2028-01-01T00:00:00Z") {
        let naive = t.naive_utc();
        let fixed = |r: LocalResult<DateTime<Zone>>| r.map(|d| d.fixed_offset());
        assert_eq!(
            fixed(a.from_local_datetime(&naive)),
            fixed(b.from_local_datetime(&naive)),
            "wall {naive}"
        );
        assert_eq!(
            a.offset_from_utc_datetime(&naive).fix(),
            b.offset_from_utc_datetime(&naive).fix(),
            "utc {naive}"
        );
        t += TimeDelta::minutes(30);
    }
}

// --- comparing rules ---

#[test]
fn identical_rules_have_no_difference() {
    let posix = parse_no_host(BERLIN_RULE).unwrap();
    let (from, until) = (utc("2026-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z"));
    assert_eq!(
        first_difference(posix, Zone::Europe__Berlin, from, until),
        None
    );
}

#[test]
fn a_different_zone_differs_at_once() {
    let host = table(&[("Europe/Berlin", rule_only(32_400, "JST", "JST-9"))]);
    let berlin = host.parse("Europe/Berlin").unwrap();
    let from = utc("2026-05-01T00:00:00.250Z");
    let d = first_difference(
        berlin,
        Zone::Europe__Berlin,
        from,
        from + TimeDelta::days(730),
    )
    .unwrap();
    assert_eq!(d.at, utc("2026-05-01T00:00:00Z"));
    assert_eq!(
        (d.left.to_string(), d.right.to_string()),
        ("JST".into(), "CEST".into())
    );
}

#[test]
fn a_transition_moved_by_minutes_is_found_to_the_second() {
    // Spring forward at 02:30 local instead of 02:00: half an hour apart.
    let late = parse_no_host("CET-1CEST,M3.5.0/2:30,M10.5.0/3").unwrap();
    let (from, until) = (utc("2026-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z"));
    let d = first_difference(late, Zone::Europe__Berlin, from, until).unwrap();
    assert_eq!(d.at, utc("2026-03-29T01:00:00Z"));
    assert_eq!(d.left.fix().local_minus_utc(), 3_600);
    assert_eq!(d.right.fix().local_minus_utc(), 7_200);
    // A difference after the window is not reported.
    assert_eq!(
        first_difference(
            late,
            Zone::Europe__Berlin,
            from,
            utc("2026-03-29T01:00:00Z")
        ),
        None
    );
}

#[test]
fn a_one_shot_in_a_gap_is_marked_moved_only_in_the_zone_that_moved_it() {
    let now = utc("2026-03-01T00:00:00Z");
    let s = Schedule::parse("2026-03-29T01:30", now, Zone::Europe__London).unwrap();
    let fire = s.next_after(now, Zone::Europe__London, now).unwrap();
    assert_eq!(fire.at, utc("2026-03-29T01:00:00Z"));
    assert_eq!(
        fire.dst,
        DstNote::MovedByGap {
            wanted: wall("2026-03-29T01:30:00")
        }
    );
    // The same instant read in another zone is an ordinary time there.
    let fire = s.next_after(now, Zone::UTC, now).unwrap();
    assert_eq!(fire.dst, DstNote::Exact);
    // The stored form keeps it.
    let stored = s.canonical();
    assert_eq!(stored, "at 2026-03-29T01:00:00Z wanted 2026-03-29T01:30:00");
    assert_eq!(Schedule::from_canonical(&stored).unwrap(), s);
}
