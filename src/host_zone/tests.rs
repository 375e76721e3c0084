//! The host's zones: the `TZ`, `/etc/timezone` and `/etc/localtime`
//! readers, and a zoneinfo directory read through the core's zone table (a
//! fixture directory made here, and the real host database when it exists).
//! The readers are tested with the compiled-in zones (the names they find do
//! not depend on the host); zones are compared by name and origin.

use super::*;
use crate::schedule::tzif_fixture::rule_only;
use crate::schedule::{Timestamp, ZoneOrigin, ZoneTable, compiled_in_zone, first_difference};
use chrono::{Offset, TimeDelta, TimeZone};

fn zones() -> ZoneTable {
    ZoneTable::compiled_in_only()
}

fn name(zone: Result<Option<Tz>, String>) -> Result<Option<&'static str>, String> {
    zone.map(|z| z.map(Tz::name))
}

fn utc(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn offset(zone: Tz, at: &str) -> i32 {
    zone.offset_at(utc(at)).fix().local_minus_utc()
}

#[test]
fn tz_variable_forms() {
    assert_eq!(
        name(from_tz_var("Europe/Berlin", &zones())),
        Ok(Some("Europe/Berlin"))
    );
    assert_eq!(
        name(from_tz_var(":America/Toronto", &zones())),
        Ok(Some("America/Toronto"))
    );
    assert_eq!(
        name(from_tz_var("europe/london", &zones())),
        Ok(Some("Europe/London"))
    );
    assert_eq!(
        name(from_tz_var("/usr/share/zoneinfo/Pacific/Chatham", &zones())),
        Ok(Some("Pacific/Chatham"))
    );
    assert_eq!(name(from_tz_var("", &zones())), Ok(None));
    assert_eq!(name(from_tz_var(":/etc/localtime", &zones())), Ok(None));
}

#[test]
fn a_posix_tz_string_is_the_system_zone_as_it_is() {
    for value in ["CET-1CEST,M3.5.0,M10.5.0/3", ":CET-1CEST,M3.5.0,M10.5.0/3"] {
        let zone = from_tz_var(value, &zones()).unwrap().unwrap();
        assert_eq!(zone.name(), "CET-1CEST,M3.5.0,M10.5.0/3");
        assert_eq!(zone.origin(), ZoneOrigin::Posix);
        assert_eq!(offset(zone, "2026-07-01T12:00:00Z"), 7_200);
        assert_eq!(offset(zone, "2026-12-01T12:00:00Z"), 3_600);
    }
    let zone = from_tz_var("<+0530>-5:30", &zones()).unwrap().unwrap();
    assert_eq!(offset(zone, "2026-07-01T12:00:00Z"), 19_800);
}

#[test]
fn a_tz_value_that_names_no_zone_is_refused_with_the_reason() {
    let why = from_tz_var("CET-1CEST,M3.5.0", &zones()).unwrap_err();
    assert!(why.contains("POSIX TZ string"), "{why}");
    assert!(why.contains("Europe/Berlin"), "{why}");
    let why = from_tz_var("Mars/Olympus", &zones()).unwrap_err();
    assert!(why.contains("\"Mars/Olympus\""), "{why}");
    let why = from_tz_var("/etc/some-file", &zones()).unwrap_err();
    assert!(why.contains("outside a zoneinfo directory"), "{why}");
}

#[test]
fn etc_timezone_takes_the_first_real_line() {
    assert_eq!(
        name(from_etc_timezone("# comment\n\nEurope/Berlin\n", &zones())),
        Ok(Some("Europe/Berlin"))
    );
    assert_eq!(name(from_etc_timezone("# nothing\n", &zones())), Ok(None));
    assert!(from_etc_timezone("nonsense\n", &zones()).is_err());
}

#[test]
fn localtime_link_targets() {
    let link = |p: &str| from_localtime_link(Path::new(p), &zones()).map(Tz::name);
    assert_eq!(
        link("/usr/share/zoneinfo/Europe/Berlin"),
        Some("Europe/Berlin")
    );
    assert_eq!(link("../usr/share/zoneinfo/posix/UTC"), Some("UTC"));
    assert_eq!(
        link("/var/db/timezone/zoneinfo/Australia/Lord_Howe"),
        Some("Australia/Lord_Howe")
    );
    assert_eq!(link("/etc/some-file"), None);
}

#[test]
fn system_zone_always_answers() {
    // Whatever the host says, a zone comes back (UTC at worst).
    let host = table();
    let found = find_system_zone(&host);
    assert!(["TZ", "/etc/timezone", "/etc/localtime", "default"].contains(&found.source));
    assert_eq!(system_zone(&host).name(), found.zone.name());
}

/// A zoneinfo directory whose `Europe/Berlin` is really Tokyo: a copy of
/// the host's `Asia/Tokyo` when there is one, else a TZif written here.
fn berlin_is_tokyo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("Europe")).unwrap();
    let tokyo = std::fs::read(Path::new(DEFAULT_ZONEINFO).join("Asia/Tokyo"))
        .unwrap_or_else(|_| rule_only(32_400, "JST", "JST-9"));
    std::fs::write(dir.path().join("Europe/Berlin"), tokyo).unwrap();
    std::fs::write(dir.path().join("UTC"), rule_only(0, "UTC", "UTC0")).unwrap();
    dir
}

#[test]
fn the_host_rules_are_used_over_the_compiled_in_ones() {
    let dir = berlin_is_tokyo();
    let host = ZoneTable::new(Box::new(ZoneDir::new(dir.path())));
    let berlin = host.parse("Europe/Berlin").unwrap();
    assert_eq!(berlin.origin(), ZoneOrigin::Host);
    assert_eq!(offset(berlin, "2026-07-01T12:00:00Z"), 32_400);
    assert_eq!(offset(berlin, "2026-01-01T12:00:00Z"), 32_400);
    // Case-insensitive through the directory walk (no tzdata.zi here).
    let lower = host.parse("EUROPE/BERLIN").unwrap();
    assert_eq!(
        (lower.name(), lower.origin()),
        ("Europe/Berlin", ZoneOrigin::Host)
    );
    // The compiled-in copy disagrees, from the first instant.
    let compiled = compiled_in_zone("Europe/Berlin").unwrap();
    let from = utc("2026-06-01T00:00:00Z");
    let d = first_difference(berlin, compiled, from, from + TimeDelta::days(730)).unwrap();
    assert_eq!(d.at, from);
    assert_eq!(d.left.to_string(), "JST");
    assert_eq!(d.right.to_string(), "CEST");
}

#[test]
fn a_zone_missing_from_the_host_comes_from_the_compiled_in_copy() {
    let dir = berlin_is_tokyo();
    let host = ZoneTable::new(Box::new(ZoneDir::new(dir.path())));
    let toronto = host.parse("America/Toronto").unwrap();
    assert_eq!(toronto.origin(), ZoneOrigin::CompiledIn);
    assert_eq!(offset(toronto, "2026-07-01T12:00:00Z"), -14_400);
    // No database at all.
    let none = ZoneTable::new(Box::new(ZoneDir::new("/nonexistent/zoneinfo")));
    let tokyo = none.parse("asia/tokyo").unwrap();
    assert_eq!(
        (tokyo.name(), tokyo.origin()),
        ("Asia/Tokyo", ZoneOrigin::CompiledIn)
    );
    assert!(!ZoneDir::new("/nonexistent/zoneinfo").exists());
    assert!(ZoneDir::new(dir.path()).exists());
}

#[test]
fn files_that_are_not_tzif_are_not_zones() {
    let dir = berlin_is_tokyo();
    std::fs::write(dir.path().join("zone.tab"), "# not a zone\n").unwrap();
    let files = ZoneDir::new(dir.path());
    assert!(files.tzif("zone.tab").is_none());
    assert!(files.tzif("Europe").is_none());
    assert!(files.tzif("Europe/Berlin").is_some());
    let mut names = files.names();
    names.sort();
    assert_eq!(names, ["Europe/Berlin", "UTC"]);
}

#[test]
fn names_and_version_come_from_tzdata_zi() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tzdata.zi"),
        "# version 2026f\n# ddeps\nR E 1981 ma - Mar lSu 1u 1 S\nZ Europe/Berlin 0:53:28 - LMT 1893 Ap\n1 c CE%sT\nL Europe/Berlin Arctic/Longyearbyen\n",
    )
    .unwrap();
    let files = ZoneDir::new(dir.path());
    assert_eq!(files.names(), ["Europe/Berlin", "Arctic/Longyearbyen"]);
    assert_eq!(files.version(), Some(("2026f".to_string(), "tzdata.zi")));
    std::fs::remove_file(dir.path().join("tzdata.zi")).unwrap();
    std::fs::write(dir.path().join("+VERSION"), "2024a\n").unwrap();
    assert_eq!(files.version(), Some(("2024a".to_string(), "+VERSION")));
    std::fs::remove_file(dir.path().join("+VERSION")).unwrap();
    assert_eq!(files.version(), None);
}

#[test]
fn dpkg_status_gives_the_installed_tzdata_version() {
    let status = "Package: tzdata-legacy\nStatus: install ok installed\nVersion: 1\n\n\
                  Package: tzdata\nStatus: install ok installed\nPriority: required\nVersion: 2025b-0+deb12u2\n\n\
                  Package: other\nVersion: 3\n";
    assert_eq!(
        dpkg_version(status, "tzdata").as_deref(),
        Some("2025b-0+deb12u2")
    );
    assert_eq!(
        dpkg_version(
            "Package: tzdata\nStatus: deinstall ok config-files\nVersion: 1\n",
            "tzdata"
        ),
        None
    );
}

/// The real host database, when there is one: the zones the DST tests use
/// have the same rules as the compiled-in copy over 2026-2027 (tzdata
/// 2025b..2026f agree there), read both as UTC and as wall time.
#[test]
fn the_host_database_agrees_with_the_compiled_in_copy_on_the_dst_test_zones() {
    let files = ZoneDir::new(DEFAULT_ZONEINFO);
    if !files.exists() {
        eprintln!("no {DEFAULT_ZONEINFO}: skipped");
        return;
    }
    let host = ZoneTable::new(Box::new(files));
    for name in [
        "Europe/Berlin",
        "Europe/London",
        "America/New_York",
        "America/Toronto",
        "Australia/Lord_Howe",
        "Pacific/Chatham",
        "Africa/Cairo",
    ] {
        let ours = host.parse(name).unwrap();
        assert_eq!(ours.origin(), ZoneOrigin::Host, "{name}");
        let compiled = compiled_in_zone(name).unwrap();
        let (from, until) = (utc("2026-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z"));
        assert_eq!(
            first_difference(ours, compiled, from, until),
            None,
            "{name}"
        );
        let mut t = from;
        while t < until {
            let wall = t.naive_utc();
            let fixed = |r: chrono::LocalResult<chrono::DateTime<Tz>>| r.map(|d| d.fixed_offset());
            assert_eq!(
                fixed(ours.from_local_datetime(&wall)),
                fixed(compiled.from_local_datetime(&wall)),
                "{name} {wall}"
            );
            t += TimeDelta::minutes(30);
        }
    }
}
