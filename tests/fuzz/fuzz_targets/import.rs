//! The importer on arbitrary text, as a crontab, a system crontab and a
//! Hermes jobs.json: never panics, and a plan it returns keeps its invariants
//! (every schedule parses in its zone, names are unique).
#![no_main]

use chrono::DateTime;
use hermes_cron::import::{ImportPlan, detect_and_parse};
use hermes_cron::schedule::{Schedule, Tz, parse_zone};
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;

const NAMES: [&str; 4] = [
    "crontab",
    "/etc/crontab",
    "/etc/cron.d/backup",
    "/home/ann/.hermes/cron/jobs.json",
];

fn check(plan: &ImportPlan, now: hermes_cron::schedule::Instant, zone: Tz) {
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
            .map_or(zone, |z| parse_zone(z).expect("plan zone"));
        let parsed = Schedule::parse(&job.schedule, now, job_zone);
        assert!(
            parsed.is_ok(),
            "{:?} does not parse: {parsed:?}",
            job.schedule
        );
    }
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let Ok(text) = std::str::from_utf8(&data[1..]) else {
        return;
    };
    let name = NAMES[usize::from(data[0] & 3)];
    let zone = if data[0] & 4 == 0 {
        Tz::UTC
    } else {
        Tz::Europe__Berlin
    };
    let now = DateTime::from_timestamp(1_780_000_000, 0).expect("in range");
    if let Ok(plan) = detect_and_parse(name, text, now, zone) {
        check(&plan, now, zone);
    }
});
