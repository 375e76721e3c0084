//! What each fuzz target checks on one input, shared by the cargo-fuzz
//! targets (`fuzz_targets/*.rs`) and by the ordinary suite, which replays the
//! committed corpus through the same checks (`tests/suite/properties.rs`,
//! `fuzz_corpus_replays_clean`). A check panics on a violated property.
//! Each takes the zone table zone names are read in: one for the whole run
//! (its interned rules are never freed, so a table per input would grow
//! without bound; one table bounds the POSIX strings it loads).

use chrono::{DateTime, TimeDelta};
use hermes_cron_core::config::{ConfigError, Secrets, get, key_table, load_bytes, show, validated};
use hermes_cron_core::import::{
    ExistingJob, ImportContext, ImportPlan, detect_and_parse, import_file,
};
use hermes_cron_core::schedule::{Schedule, Timestamp, Tz, ZoneTable, parse_duration};
use std::collections::HashSet;
use std::path::Path;

/// Zones with odd transitions: 30- and 45-minute offsets, midnight gaps.
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

/// The schedule grammar. Input: a zone byte, 4 bytes of `now` (2-second
/// steps from 1970, so up to ~2240), then the text. `Schedule::parse` and
/// `from_canonical` never panic; whatever parses round-trips through its
/// canonical form and walks `next_after` strictly forward.
pub(super) fn schedule(data: &[u8], zones: &ZoneTable) {
    if data.len() < 5 {
        return;
    }
    let zone = ZONES[usize::from(data[0]) % ZONES.len()];
    let secs = i64::from(u32::from_le_bytes([data[1], data[2], data[3], data[4]])) * 2;
    let now = DateTime::from_timestamp(secs, 0).expect("in range");
    let Ok(text) = std::str::from_utf8(&data[5..]) else {
        return;
    };
    let _ = parse_duration(text);
    let _ = zones.parse(text);
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
        assert!(
            fire.at > odd,
            "{text:?} in {zone}: {fire:?} is not after {odd}"
        );
    }
}

/// The config loader on arbitrary bytes: never panics; whatever loads holds
/// only values in range (a `cron.path` of absolute directories, `cron.env`
/// entries with valid names and values) and names the key in each warning;
/// `get` of every key and `show` answer; a refusal is a syntax error or an
/// invalid file, never IO.
pub(super) fn config(data: &[u8], zones: &ZoneTable) {
    let path = Path::new("config.yaml");
    match load_bytes(path, data, zones) {
        Ok(loaded) => {
            let bad = loaded.config.keys_out_of_range(zones);
            assert!(bad.is_empty(), "out of range after load: {bad:?}");
            // Every warning names its key (which may be YAML's empty key "").
            for warning in &loaded.warnings {
                let named = format!("`{}`", warning.key);
                assert!(warning.message.contains(&named), "{warning:?}");
            }
            let validated = validated(path, Some(data), zones).expect("loads as load_bytes did");
            for key in key_table() {
                get(&validated, key.name, Secrets::Revealed).expect("every key has a value");
            }
            let _ = show(&validated, Secrets::Revealed);
        }
        Err(ConfigError::Syntax { .. } | ConfigError::Invalid(_)) => {}
        Err(other) => panic!("load_bytes does no IO, yet: {other:?}"),
    }
}

const IMPORT_NAMES: [&str; 4] = [
    "crontab",
    "/etc/crontab",
    "/etc/cron.d/backup",
    "/home/ann/.hermes/cron/jobs.json",
];

/// The importer. Input: a flags byte (bits 0-1: the file name, so user or
/// system crontab or jobs.json; bit 2: UTC or Berlin; bit 3: against
/// existing jobs, with every file missing), then the text. Never panics, and
/// a plan keeps its invariants (every schedule parses in its zone, names are
/// unique and none is an existing job's, no existing Hermes id is imported
/// again).
pub(super) fn import(data: &[u8], zones: &ZoneTable) {
    if data.is_empty() {
        return;
    }
    let Ok(text) = std::str::from_utf8(&data[1..]) else {
        return;
    };
    let name = IMPORT_NAMES[usize::from(data[0] & 3)];
    let zone = if data[0] & 4 == 0 {
        Tz::UTC
    } else {
        Tz::Europe__Berlin
    };
    let now = DateTime::from_timestamp(1_780_000_000, 0).expect("in range");
    if data[0] & 8 == 0 {
        if let Ok(plan) = detect_and_parse(name, text, now, zone, zones) {
            check_plan(&plan, now, zone, zones);
        }
        return;
    }
    let existing: Vec<ExistingJob> = ["backup", "disk", "job 1", "x"]
        .iter()
        .enumerate()
        .map(|(i, name)| ExistingJob {
            id: format!("existing-{i}"),
            name: name.to_string(),
            hermes_id: Some(format!("{i:012x}")),
            managed: i == 0,
        })
        .collect();
    let missing = |_: &Path| false;
    let cx = ImportContext {
        existing: &existing,
        run_home: Some(Path::new("/srv/hermes")),
        user_home: Some(Path::new("/home/ann")),
        is_file: Some(&missing),
        ..ImportContext::new(now, zone, zones)
    };
    if let Ok(plan) = import_file(name, text, &cx) {
        check_plan(&plan, now, zone, zones);
        for job in &plan.jobs {
            assert!(
                existing.iter().all(|e| e.name != job.name),
                "existing name {:?} reused",
                job.name
            );
            assert!(
                existing.iter().all(|e| e.hermes_id != job.hermes_id),
                "Hermes job {:?} imported again",
                job.hermes_id
            );
        }
    }
}

fn check_plan(plan: &ImportPlan, now: Timestamp, zone: Tz, zones: &ZoneTable) {
    let mut names = HashSet::new();
    for job in &plan.jobs {
        assert!(
            names.insert(job.name.as_str()),
            "duplicate name {:?}",
            job.name
        );
        let job_zone = job
            .tz
            .as_deref()
            .map_or(zone, |z| zones.parse(z).expect("plan zone"));
        let parsed = Schedule::parse(&job.schedule, now, job_zone);
        assert!(
            parsed.is_ok(),
            "{:?} does not parse: {parsed:?}",
            job.schedule
        );
    }
}
