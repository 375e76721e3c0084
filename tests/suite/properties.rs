//! Property tests over the entry points that read user text (issue 8 item 3;
//! the cargo-fuzz targets in `tests/fuzz` hit the same ones for longer).
//!
//! - Schedules: `Schedule::parse` never panics on arbitrary strings or on
//!   grammar-shaped ones; whatever parses reads back from its canonical form
//!   (`from_canonical` and `parse`), and `next_after` walks strictly forward.
//! - Config: `load_bytes` never panics on arbitrary or YAML-shaped bytes, and
//!   whatever loads holds only values in range; in-range values load as given.
//! - Import: the crontab and jobs.json readers never panic; a plan keeps its
//!   invariants, also against existing jobs (their names are never reused,
//!   their Hermes jobs never imported again); one malformed crontab line
//!   anywhere refuses the whole file (no half-import), and without it the
//!   same file imports every entry; one malformed jobs.json record anywhere
//!   is skipped alone and every other entry is imported.
//!
//! - The committed fuzz corpus (`tests/fuzz/corpus/<target>/`) replays clean
//!   through the fuzz targets' own checks (`tests/fuzz/checks.rs`), so every
//!   input the fuzzer kept, crashes it found included, is a regression test.
//!
//! Case counts are small (the whole file runs in a few seconds); the fuzz
//! targets do the long runs.

use chrono::DateTime;
use hermes_cron::config::{ConfigError, load_bytes};
use hermes_cron::import::{
    ExistingJob, ImportContext, ImportError, ImportPlan, SkipCode, detect_and_parse, import_file,
    parse_crontab, parse_hermes_jobs,
};
use hermes_cron::schedule::{Schedule, Timestamp, Tz, ZoneOrigin, ZoneTable};
use proptest::prelude::*;
use proptest::sample::select;
use std::collections::HashSet;
use std::path::Path;

// The fuzz targets' own checks, shared with the cargo-fuzz crate
// (`tests/fuzz/`, outside the workspace), which includes the same file by
// path: the one `#[path]` of the suite.
#[path = "../fuzz/checks.rs"]
mod fuzz_checks;

const ZONES: [Tz; 6] = [
    Tz::UTC,
    Tz::Europe__Berlin,
    Tz::America__New_York,
    Tz::Australia__Lord_Howe,
    Tz::Pacific__Chatham,
    Tz::Africa__Cairo,
];

/// The zone table the properties read names in: the host's, as the
/// binaries make it (host rules first, compiled-in for what it lacks).
fn zones() -> ZoneTable {
    hermes_cron::host_zone::table()
}

/// Zones whose rules are loaded at run time: POSIX TZ strings (northern and
/// southern DST, a half-hour offset, a 30-minute shift) and, when the host
/// has them, the host's TZif files of the zones above.
fn loaded_zones() -> Vec<Tz> {
    let zones = zones();
    let posix = [
        "CET-1CEST,M3.5.0,M10.5.0/3",
        "NZST-12NZDT,M9.5.0,M4.1.0/3",
        "<+0330>-3:30",
        "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
        "EST5EDT,M3.2.0,M11.1.0",
    ];
    let host = ZONES.iter().map(|z| z.name());
    posix
        .into_iter()
        .chain(host)
        .map(|name| zones.parse(name).unwrap())
        .filter(|z| z.origin() != ZoneOrigin::CompiledIn)
        .collect()
}

fn zone() -> impl Strategy<Value = Tz> {
    let mut zones = ZONES.to_vec();
    zones.extend(loaded_zones());
    select(zones)
}

/// 1970..2100, to the second.
fn instant() -> impl Strategy<Value = Timestamp> {
    (0i64..4_102_444_800).prop_map(|s| DateTime::from_timestamp(s, 0).unwrap())
}

fn words(list: &[&'static str]) -> impl Strategy<Value = String> + Clone + use<> {
    select(list.to_vec()).prop_map(str::to_string)
}

// ---------------------------------------------------------------------------
// Grammar-shaped schedule text.

fn cron_item() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("*".to_string()),
        (0u32..70).prop_map(|n| n.to_string()),
        (0u32..70, 0u32..70).prop_map(|(a, b)| format!("{a}-{b}")),
        (0u32..70).prop_map(|n| format!("*/{n}")),
        (0u32..40, 0u32..40, 0u32..12).prop_map(|(a, b, s)| format!("{a}-{b}/{s}")),
        words(&[
            "L", "LW", "15W", "31W", "?", "MON", "fri", "JAN", "dec", "5L", "1#2", "MON#L", "+MON",
            "SUN-SAT", "mon-fri", "7", "0-7", "FRI-SUN", "1#6", "0/5", "L-3", "W",
        ]),
        "[0-9A-Za-z*/#,?+-]{1,6}",
    ]
}

fn cron_expr() -> impl Strategy<Value = String> {
    let field = prop::collection::vec(cron_item(), 1..4).prop_map(|v| v.join(","));
    prop::collection::vec(field, 3..8).prop_map(|v| v.join(" "))
}

fn macro_text() -> impl Strategy<Value = String> {
    words(&[
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
        "@reboot",
        "@DAILY",
        "@fortnightly",
        "@",
        "@reboot now",
    ])
}

fn time_of_day() -> impl Strategy<Value = String> {
    prop_oneof![
        words(&[
            "8am", "8:30am", "8 am", "12pm", "12am", "0am", "13pm", "08:00", "17:30", "24:00",
            "9:60", "9:5", "noon", "midnight", "9", "nine",
        ]),
        (0u32..30, 0u32..70).prop_map(|(h, m)| format!("{h}:{m:02}")),
        (0u32..15, select(vec!["am", "pm", "AM", " pm"])).prop_map(|(h, s)| format!("{h}{s}")),
    ]
}

fn phrase() -> impl Strategy<Value = String> {
    let days = words(&[
        "day",
        "daily",
        "weekday",
        "weekdays",
        "weekend",
        "weekends",
        "mon",
        "monday",
        "Mondays",
        "tues",
        "thurs",
        "mon,wed",
        "sun, sat",
        "wed , mon ,wed",
        "funday",
        "hour",
        "minute",
        "mon,,wed",
    ]);
    (
        prop::bool::ANY,
        days,
        prop::option::of(Just("at")),
        prop::option::of(time_of_day()),
        prop::option::of(words(&["sharp", "at", "9am"])),
    )
        .prop_map(|(every, days, at, time, extra)| {
            let mut out = Vec::new();
            if every {
                out.push("every".to_string());
            }
            out.push(days);
            out.extend(at.map(str::to_string));
            out.extend(time);
            out.extend(extra);
            out.join(" ")
        })
}

fn interval_or_delay() -> impl Strategy<Value = String> {
    let unit = words(&["s", "m", "h", "d", "x", "", " minutes", " hours", "ms", "y"]);
    let part = (0u64..200_000, unit).prop_map(|(n, u)| format!("{n}{u}"));
    (
        words(&["every ", "in ", "", "Every ", "every -", "in +"]),
        prop::collection::vec(part, 1..3),
    )
        .prop_map(|(head, parts)| format!("{head}{}", parts.join("")))
}

fn iso_text() -> impl Strategy<Value = String> {
    (
        words(&["", "at "]),
        1900i32..3100,
        0u32..14,
        0u32..33,
        0u32..26,
        0u32..62,
        words(&["T", " "]),
        words(&[
            "", ":00", ":59", ":60", "Z", "+02:00", "-05:30", ".5Z", "+14:00", "+25:00",
        ]),
    )
        .prop_map(|(at, y, mo, d, h, mi, sep, tail)| {
            format!("{at}{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}{tail}")
        })
}

fn schedule_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => cron_expr(),
        1 => macro_text(),
        2 => phrase(),
        2 => interval_or_delay(),
        2 => iso_text(),
        1 => words(&["noon", "midnight", "hourly", "daily", "every hour", "every minute", "tomorrow", "", "   "]),
    ]
}

/// Whatever parsed reads back, and walks forward without repeating itself.
fn check_parsed(
    schedule: &Schedule,
    text: &str,
    now: Timestamp,
    zone: Tz,
) -> Result<(), TestCaseError> {
    let stored = schedule.canonical();
    let back = Schedule::from_canonical(&stored);
    prop_assert_eq!(
        back.as_ref().ok(),
        Some(schedule),
        "{:?} -> {:?}: {:?}",
        text,
        stored,
        back
    );
    let reparsed = Schedule::parse(&stored, now, zone);
    prop_assert_eq!(
        reparsed.as_ref().ok(),
        Some(schedule),
        "{:?} -> {:?}",
        text,
        stored
    );
    let mut after = now;
    let mut seen = HashSet::new();
    for _ in 0..50 {
        let Some(fire) = schedule.next_after(after, zone, now) else {
            break;
        };
        prop_assert!(
            fire.at > after,
            "{:?} in {}: {:?} not after {}",
            text,
            zone,
            fire,
            after
        );
        prop_assert!(
            seen.insert(fire.at),
            "{:?} in {}: {} twice",
            text,
            zone,
            fire.at
        );
        prop_assert_eq!(fire.local.naive_utc(), fire.at.naive_utc());
        after = fire.at;
    }
    if !schedule.is_recurring() {
        prop_assert!(
            seen.len() <= 1,
            "{:?}: a one-shot fired {} times",
            text,
            seen.len()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn schedule_parse_never_panics_on_arbitrary_text(text in any::<String>(), now in instant(), zone in zone()) {
        let _ = Schedule::from_canonical(&text);
        if let Ok(schedule) = Schedule::parse(&text, now, zone) {
            check_parsed(&schedule, &text, now, zone)?;
        }
    }

    #[test]
    fn parsed_schedules_round_trip_and_walk_forward(text in schedule_text(), now in instant(), zone in zone()) {
        let _ = Schedule::from_canonical(&text);
        if let Ok(schedule) = Schedule::parse(&text, now, zone) {
            check_parsed(&schedule, &text, now, zone)?;
        }
    }
}

/// Anywhere in chrono's range, the ends included.
fn instant_anywhere() -> impl Strategy<Value = Timestamp> {
    let (min, max) = (
        DateTime::<chrono::Utc>::MIN_UTC.timestamp(),
        DateTime::<chrono::Utc>::MAX_UTC.timestamp(),
    );
    prop_oneof![
        (min..=max).prop_map(|s| DateTime::from_timestamp(s, 0).unwrap()),
        (0i64..200_000).prop_map(move |s| DateTime::from_timestamp(max - s, 0).unwrap()),
        (0i64..200_000).prop_map(move |s| DateTime::from_timestamp(min + s, 0).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// `next_after` and `period_at` never panic, wherever in time they are
    /// asked (regression: `wall.rs` panicked within a day of `MAX_UTC`).
    #[test]
    fn next_after_never_panics_anywhere_in_time(
        text in schedule_text(),
        now in instant(),
        after in instant_anywhere(),
        anchor in instant_anywhere(),
        zone in zone(),
    ) {
        if let Ok(schedule) = Schedule::parse(&text, now, zone)
            && let Some(fire) = schedule.next_after(after, zone, anchor)
        {
            prop_assert!(fire.at > after);
            let _ = schedule.period_at(fire.at, zone, anchor);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Cron expressions that are valid by construction all parse.
    #[test]
    fn valid_cron_expressions_parse(
        minute in 0u32..60,
        hour in prop_oneof![Just("*".to_string()), (0u32..24).prop_map(|h| h.to_string()), (1u32..24).prop_map(|s| format!("*/{s}")), (0u32..12, 12u32..24).prop_map(|(a, b)| format!("{a}-{b}"))],
        dom in prop_oneof![Just("*".to_string()), (1u32..29).prop_map(|d| d.to_string()), Just("L".to_string())],
        dow in prop_oneof![Just("*".to_string()), (0u32..8).prop_map(|d| d.to_string()), Just("1-5".to_string()), (0u32..7, 1u32..6).prop_map(|(d, n)| format!("{d}#{n}"))],
        now in instant(),
        zone in zone(),
    ) {
        let text = format!("{minute} {hour} {dom} * {dow}");
        let schedule = Schedule::parse(&text, now, zone);
        prop_assert!(schedule.is_ok(), "{:?}: {:?}", text, schedule);
        check_parsed(&schedule.unwrap(), &text, now, zone)?;
    }
}

// ---------------------------------------------------------------------------
// Zones: names and POSIX TZ strings.

/// POSIX-TZ-shaped text: a name, an offset, maybe a DST name, offset and rules.
fn posix_text() -> impl Strategy<Value = String> {
    let name = words(&["CET", "EST", "AB", "<+0330>", "<-03>", "UTC", "X1", "<>"]);
    let offset = prop_oneof![
        (-30i32..30).prop_map(|h| h.to_string()),
        (-30i32..30, 0u32..70).prop_map(|(h, m)| format!("{h}:{m:02}")),
        words(&["", "+", "-", "5:", "1:2:3", "24:00:01"]),
    ];
    let day = prop_oneof![
        (0u32..14, 0u32..7, 0u32..8).prop_map(|(m, w, d)| format!("M{m}.{w}.{d}")),
        (0u32..370).prop_map(|n| format!("J{n}")),
        (0u32..370).prop_map(|n| n.to_string()),
    ];
    let time = prop_oneof![
        Just(String::new()),
        (-200i32..200).prop_map(|h| format!("/{h}")),
        words(&["/2:30", "/25", "/", "/-1"]),
    ];
    let rule = (day, time).prop_map(|(d, t)| format!("{d}{t}"));
    let dst = prop_oneof![
        Just(String::new()),
        (name.clone(), rule.clone(), rule).prop_map(|(n, a, b)| format!("{n},{a},{b}")),
        name.clone(),
    ];
    (name, offset, dst).prop_map(|(n, o, d)| format!("{n}{o}{d}"))
}

/// A zone that parses reads back by its name in the same table (a job
/// stores the name), and answers for any instant and any wall time without
/// panicking.
fn check_zone(text: &str, at: Timestamp) -> Result<(), TestCaseError> {
    use chrono::{Offset, TimeZone};
    let zones = zones();
    let Ok(zone) = zones.parse(text) else {
        return Ok(());
    };
    prop_assert_eq!(zones.parse(zone.name()).ok(), Some(zone), "{:?}", text);
    let offset = zone.offset_at(at).fix().local_minus_utc();
    prop_assert!(offset.abs() < 86_400, "{:?}: offset {}", text, offset);
    let _ = zone.from_local_datetime(&at.naive_utc());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn zone_names_never_panic_and_read_back_by_name(text in any::<String>(), at in instant_anywhere()) {
        check_zone(&text, at)?;
    }

    #[test]
    fn posix_tz_strings_never_panic_and_read_back_by_name(text in posix_text(), at in instant_anywhere()) {
        check_zone(&text, at)?;
    }
}

// ---------------------------------------------------------------------------
// Config.

const CONFIG_KEYS: [&str; 15] = [
    "timezone",
    "cron.path",
    "cron.env",
    "cron.require_restart_safe_scope",
    "cron.catch_up_missed",
    "cron.max_parallel_jobs",
    "cron.script_timeout_seconds",
    "cron.output_retention",
    "cron.output_max_bytes",
    "cron.ledger_retention",
    "cron.heartbeat_interval_s",
    "gateway.loop_watchdog",
    "gateway.loop_watchdog_probe_interval_s",
    "gateway.loop_watchdog_probe_timeout_s",
    "gateway.loop_watchdog_max_strikes",
];

fn yaml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0u64..3_000_000).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        words(&[
            ".nan",
            ".inf",
            "-.inf",
            "1e300",
            "-1e300",
            "2.5",
            "30.0",
            "0x1F",
            "0o17",
            "1_000",
            "+5",
            "unbounded",
            "system",
            "Europe/Paris",
            "Mars/Olympus",
            "'5'",
            "\"x\"",
            "true",
            "false",
            "yes",
            "no",
            "null",
            "~",
            "",
            "[1, 2]",
            "{a: 1}",
            "&a 5",
            "*a",
            "!!binary aGk=",
            "!tag x",
            "[",
            "{",
            "'open",
            "|\n  block",
            ">-\n  folded",
            "99999999999999999999999999",
            "/usr/local/bin:/usr/bin:/bin",
            "'/opt/bin::/bin'",
            "relative/bin",
            "{TZ: Europe/Berlin, N: 5, F: 2.5e300, B: yes}",
            "{1X: a, HERMES_HOME: b, PATH: c, OK: [1], E: ~, T: !t x}",
            "{A: 1, A: 2, <<: {B: 3}, <<: [{C: 4}, {C: 5}], <<: 6}",
            "{\"bad name\": 1, ? [k] : v, 7: x, true: y}",
            "{NUL: \"a\\0b\"}",
            "\n      TZ: UTC\n      X_TOKEN: s3cr3t",
        ]),
        "[ -~]{0,12}",
    ]
}

fn yaml_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(CONFIG_KEYS.to_vec()).prop_map(str::to_string),
        1 => words(&["cron", "gateway", "", "\"\"", "? complex", "cron.bogus", "timezon", "<<"]),
        1 => "[a-z_.]{1,10}",
    ]
}

/// One top-level line or a nested section, in dotted or nested form.
fn yaml_entry() -> impl Strategy<Value = String> {
    prop_oneof![
        (yaml_key(), yaml_value()).prop_map(|(k, v)| format!("{k}: {v}")),
        (
            words(&["cron", "gateway", "other"]),
            prop::collection::vec((yaml_key(), yaml_value()), 0..4),
            words(&["  ", "    ", "\t", " "]),
        )
            .prop_map(|(section, entries, indent)| {
                let mut out = format!("{section}:");
                for (key, value) in entries {
                    let leaf = key.rsplit('.').next().unwrap_or_default().to_string();
                    out.push_str(&format!("\n{indent}{leaf}: {value}"));
                }
                out
            }),
        words(&["# comment", "---", "...", "- item", "%YAML 1.2", ""]),
    ]
}

fn yaml_document() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(yaml_entry(), 0..8)
        .prop_map(|lines| (lines.join("\n") + "\n").into_bytes())
}

fn check_loaded(bytes: &[u8]) -> Result<(), TestCaseError> {
    let zones = zones();
    match load_bytes(Path::new("config.yaml"), bytes, &zones) {
        Ok(loaded) => {
            let bad = loaded.config.keys_out_of_range(&zones);
            prop_assert!(bad.is_empty(), "out of range after load: {:?}", bad);
            for warning in &loaded.warnings {
                let named = format!("`{}`", warning.key);
                prop_assert!(warning.message.contains(&named), "{:?}", warning);
            }
        }
        Err(ConfigError::Syntax { line, column, .. }) => {
            prop_assert!(line >= 1 && column >= 1, "positions are 1-based");
        }
        Err(ConfigError::Invalid(message)) => prop_assert!(!message.is_empty()),
        Err(other) => prop_assert!(false, "load_bytes did IO? {:?}", other),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn config_load_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check_loaded(&bytes)?;
    }

    #[test]
    fn config_load_never_panics_on_yaml_shaped_bytes(bytes in yaml_document()) {
        check_loaded(&bytes)?;
    }

    /// In-range values load exactly as written, dotted or nested, no warning.
    #[test]
    fn in_range_values_load_as_written(
        retention in 1u32..=100_000,
        strikes in 1u32..=1000,
        timeout in 1u64..=2_592_000,
        dotted in any::<bool>(),
    ) {
        let text = if dotted {
            format!("cron.output_retention: {retention}\ngateway.loop_watchdog_max_strikes: {strikes}\ncron.script_timeout_seconds: {timeout}.0\n")
        } else {
            format!("cron:\n  output_retention: {retention}\n  script_timeout_seconds: {timeout}\ngateway:\n  loop_watchdog_max_strikes: {strikes}\n")
        };
        let loaded = load_bytes(Path::new("c.yaml"), text.as_bytes(), &zones()).unwrap();
        prop_assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        prop_assert_eq!(loaded.config.cron.output_retention, retention);
        prop_assert_eq!(loaded.config.gateway.loop_watchdog_max_strikes, strikes);
        prop_assert_eq!(loaded.config.cron.script_timeout_seconds, timeout);
    }

    /// Of `cron.env`, valid entries load as written, each bad one is
    /// dropped alone with one warning naming the key and the entry, and
    /// nothing else warns.
    #[test]
    fn cron_env_keeps_the_good_entries_and_drops_each_bad_one(
        entries in prop::collection::vec((
            prop_oneof![
                3 => "[A-Z_][A-Z0-9_]{0,6}",
                1 => select(vec!["1X", "A-B", "HERMES_HOME", "HERMES_CRON_X", "PATH", "a b"])
                    .prop_map(str::to_string),
            ],
            prop_oneof![
                3 => "[a-z0-9/:.@ ]{0,10}",
                1 => select(vec!["~", "[1]", "{a: 1}", "!t x"]).prop_map(str::to_string),
            ],
        ), 0..8),
        dotted in any::<bool>(),
    ) {
        let mut names: Vec<&str> = Vec::new();
        let mut unique = Vec::new();
        for (name, value) in &entries {
            if !names.contains(&name.as_str()) {
                names.push(name);
                unique.push((name.clone(), value.clone()));
            }
        }
        let body: Vec<String> = unique
            .iter()
            .map(|(k, v)| {
                let quoted = if v.starts_with(['~', '[', '{', '!']) { v.clone() } else { format!("'{v}'") };
                format!("\"{k}\": {quoted}")
            })
            .collect();
        let text = if dotted {
            format!("cron.env: {{{}}}\n", body.join(", "))
        } else {
            format!("cron:\n  env: {{{}}}\n", body.join(", "))
        };
        let loaded = load_bytes(Path::new("c.yaml"), text.as_bytes(), &zones()).unwrap();
        let good = |name: &str, value: &str| {
            let is_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            is_name
                && name != "PATH"
                && name != "HERMES_HOME"
                && !name.starts_with("HERMES_CRON_")
                && !value.starts_with(['~', '[', '{', '!'])
        };
        let want: Vec<(String, String)> = unique.iter().filter(|(k, v)| good(k, v)).cloned().collect();
        prop_assert_eq!(&loaded.config.cron.env.0, &want, "{}", text);
        let dropped: Vec<&String> = unique.iter().filter(|(k, v)| !good(k, v)).map(|(k, _)| k).collect();
        prop_assert_eq!(loaded.warnings.len(), dropped.len(), "{:?}", loaded.warnings);
        for (warning, name) in loaded.warnings.iter().zip(dropped) {
            prop_assert_eq!(&warning.key, "cron.env");
            let named = format!("entry `{name}` dropped");
            prop_assert!(warning.message.contains(&named), "{}", warning.message);
        }
    }
}

// ---------------------------------------------------------------------------
// Import.

fn now() -> Timestamp {
    "2026-05-01T10:00:00Z".parse().unwrap()
}

/// The plan invariants (`src/import/plan.rs`), job zones read in `zones`
/// (the table the plan was made with).
fn check_plan(plan: &ImportPlan, zone: Tz, zones: &ZoneTable) -> Result<(), TestCaseError> {
    let mut names = HashSet::new();
    for job in &plan.jobs {
        prop_assert!(
            names.insert(job.name.clone()),
            "duplicate name {:?}",
            job.name
        );
        let job_zone = match &job.tz {
            Some(name) => zones
                .parse(name)
                .map_err(|e| TestCaseError::fail(e.to_string()))?,
            None => zone,
        };
        let schedule = Schedule::parse(&job.schedule, now(), job_zone);
        prop_assert!(schedule.is_ok(), "{:?}: {:?}", job.schedule, schedule);
        let next = schedule.unwrap().next_after(now(), job_zone, now());
        prop_assert_eq!(&job.next, &next, "{:?}", job.schedule);
        prop_assert!(!job.argv.is_empty() && !job.origin.is_empty());
    }
    Ok(())
}

/// Lines that import as one job each, whatever surrounds them.
const GOOD_ENTRIES: [&str; 8] = [
    "0 3 * * * /usr/local/bin/backup --all",
    "*/5 * * * * date >> /tmp/log 2>&1",
    "@daily true",
    "@reboot echo booted",
    "30 2 * * 1-5 run-report",
    "0 9 * * mon#1 echo first monday",
    "0 0 L * * echo 50\\% done",
    "15 14 1 * * /bin/echo monthly",
];

/// Lines that change no job and are never an error.
const QUIET_LINES: [&str; 8] = [
    "",
    "# m h dom mon dow command",
    "PATH=/usr/bin:/bin",
    "MAILTO=ann@example.com",
    "CRON_TZ=Europe/Berlin",
    "TZ=America/New_York",
    "CRON_TZ=",
    "   ",
];

/// Lines that make the whole crontab malformed.
const BAD_LINES: [&str; 8] = [
    "61 * * * * echo bad minute",
    "0 25 * * * echo bad hour",
    "@fortnightly echo",
    "0 8 * * *",
    "0 8 * * funday echo",
    "CRON_TZ=Mars/Olympus",
    "0 0 31 2 * echo never",
    "* * * echo too few",
];

fn crontab_line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => words(&GOOD_ENTRIES),
        4 => words(&QUIET_LINES),
        1 => words(&BAD_LINES),
        1 => words(&["0 0 * * * echo % stdin", "SHELL=/bin/bash", "SHELL=/bin/sh", "A = 'quoted'", "\"B\"=\"x\"", "@reboot", "#", "\u{feff}0 1 * * * bom"]),
        1 => (cron_expr(), "[ -~]{0,20}").prop_map(|(expr, cmd)| format!("{expr} {cmd}")),
        1 => "[ -~]{0,30}",
    ]
}

/// A script job (importable as it is) with some fields replaced or removed.
fn job_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{Value, json};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u64..2000).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|x| json!(x)),
        words(&[
            "0 9 * * *",
            "61 * * * *",
            "every 5m",
            "2026-12-01T08:00:00Z",
            "2020-01-01T00:00:00",
            "cron",
            "interval",
            "once",
            "scheduled",
            "paused",
            "completed",
            "backup.sh",
            "/bin/true",
            "x.py",
            "Europe/Berlin",
            "Mars/Olympus",
            "/tmp",
            "relative/dir",
            "local",
            "telegram",
            "",
            "2026-05-02T10:00:00.250000+02:00",
            "@daily",
            "30m",
        ])
        .prop_map(Value::String),
        Just(json!([])),
        Just(json!({"times": 3, "completed": 1})),
    ];
    let schedule = prop_oneof![
        leaf.clone(),
        (
            words(&["cron", "interval", "once", "weird"]),
            leaf.clone(),
            prop::collection::btree_map(
                words(&["expr", "minutes", "run_at", "display"]),
                leaf.clone(),
                0..3
            ),
        )
            .prop_map(|(kind, _, fields)| {
                let mut map = serde_json::Map::new();
                map.insert("kind".into(), Value::String(kind));
                map.extend(fields);
                Value::Object(map)
            }),
    ];
    let key = words(&[
        "id",
        "name",
        "prompt",
        "skills",
        "script",
        "no_agent",
        "enabled",
        "state",
        "timezone",
        "workdir",
        "deliver",
        "repeat",
        "last_run_at",
        "schedule_display",
        "schedule",
    ]);
    (
        0usize..1000,
        prop::option::weighted(0.2, schedule),
        prop::collection::btree_map(key.clone(), leaf, 0..2),
        prop::collection::vec(key, 0..2),
    )
        .prop_map(|(i, schedule, replace, remove)| {
            let Value::Object(mut job) = script_job(i) else {
                unreachable!()
            };
            if let Some(schedule) = schedule {
                job.insert("schedule".into(), schedule);
            }
            job.extend(replace);
            for key in remove {
                job.remove(&key);
            }
            Value::Object(job)
        })
}

fn script_job(i: usize) -> serde_json::Value {
    let schedules = [
        serde_json::json!({"kind": "cron", "expr": "0 9 * * *"}),
        serde_json::json!({"kind": "interval", "minutes": 30}),
        serde_json::json!({"kind": "once", "run_at": "2026-12-01T08:00:00Z"}),
    ];
    serde_json::json!({
        "id": format!("{i:012x}"),
        "name": format!("job {i}"),
        "script": "/usr/local/bin/report.sh",
        "no_agent": true,
        "schedule": schedules[i % 3],
        "enabled": true,
        "state": "scheduled",
    })
}

fn bad_job() -> impl Strategy<Value = serde_json::Value> {
    select(vec![
        serde_json::json!({"id": "bad000000001", "script": "/bin/true", "no_agent": true, "schedule": {"kind": "cron", "expr": "61 * * * *"}}),
        serde_json::json!({"id": "bad000000002", "script": "/bin/true", "no_agent": true, "schedule": {"kind": "weird"}}),
        serde_json::json!({"id": "bad000000003", "script": "/bin/true", "no_agent": true, "schedule": {"kind": "interval", "minutes": "ten"}}),
        serde_json::json!({"id": "bad000000004", "script": "/bin/true", "no_agent": true, "timezone": "Mars/Olympus", "schedule": {"kind": "interval", "minutes": 5}}),
        serde_json::json!("not an object"),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn import_never_panics_on_arbitrary_text(text in any::<String>(), zone in zone()) {
        let zones = zones();
        for name in ["crontab", "/etc/crontab", "jobs.json"] {
            if let Ok(plan) = detect_and_parse(name, &text, now(), zone, &zones) {
                check_plan(&plan, zone, &zones)?;
            }
        }
    }

    #[test]
    fn import_never_panics_on_crontab_shaped_text(lines in prop::collection::vec(crontab_line(), 0..12), zone in zone()) {
        let zones = zones();
        let text = lines.join("\n");
        if let Ok(plan) = parse_crontab(&text, now(), zone, &zones) {
            check_plan(&plan, zone, &zones)?;
        }
        if let Ok(plan) = detect_and_parse("/etc/cron.d/x", &text, now(), zone, &zones) {
            check_plan(&plan, zone, &zones)?;
        }
    }

    #[test]
    fn import_never_panics_on_jobs_json_shaped_text(jobs in prop::collection::vec(job_json(), 0..6), bare in any::<bool>(), zone in zone()) {
        let zones = zones();
        let text = if bare {
            serde_json::Value::Array(jobs).to_string()
        } else {
            serde_json::json!({"jobs": jobs}).to_string()
        };
        if let Ok(plan) = parse_hermes_jobs(&text, now(), zone, &zones) {
            check_plan(&plan, zone, &zones)?;
        }
    }

    /// One malformed line anywhere refuses the whole crontab, naming that
    /// line; without it, every entry is imported.
    #[test]
    fn a_bad_crontab_line_anywhere_imports_nothing(
        good in prop::collection::vec(prop_oneof![words(&GOOD_ENTRIES), words(&QUIET_LINES)], 0..12),
        bad in words(&BAD_LINES),
        at in any::<prop::sample::Index>(),
        zone in zone(),
    ) {
        let zones = zones();
        let entries = good.iter().filter(|l| GOOD_ENTRIES.contains(&l.as_str())).count();
        let plan = parse_crontab(&good.join("\n"), now(), zone, &zones);
        prop_assert!(plan.is_ok(), "{:?}", plan);
        let plan = plan.unwrap();
        prop_assert_eq!(plan.jobs.len(), entries, "{:?}", plan);
        check_plan(&plan, zone, &zones)?;

        let index = at.index(good.len() + 1);
        let mut lines = good.clone();
        lines.insert(index, bad.clone());
        match parse_crontab(&lines.join("\n"), now(), zone, &zones) {
            Err(ImportError::Line { line, .. }) => prop_assert_eq!(line, index + 1, "{:?}", bad),
            other => prop_assert!(false, "{:?} at line {} gave {:?}", bad, index + 1, other),
        }
    }

    /// One malformed job anywhere is skipped alone, as malformed; every
    /// other job is imported. A file in which nothing is a job object is
    /// refused as a whole.
    #[test]
    fn a_bad_job_anywhere_is_skipped_alone(count in 0usize..8, bad in bad_job(), at in any::<prop::sample::Index>(), zone in zone()) {
        let zones = zones();
        let mut jobs: Vec<serde_json::Value> = (0..count).map(script_job).collect();
        let plan = parse_hermes_jobs(&serde_json::json!({"jobs": jobs}).to_string(), now(), zone, &zones);
        prop_assert!(plan.is_ok(), "{:?}", plan);
        let plan = plan.unwrap();
        prop_assert_eq!(plan.jobs.len(), count, "{:?}", plan);
        check_plan(&plan, zone, &zones)?;

        let index = at.index(count + 1);
        jobs.insert(index, bad.clone());
        let result = parse_hermes_jobs(&serde_json::json!({"jobs": jobs}).to_string(), now(), zone, &zones);
        if count == 0 && !bad.is_object() {
            prop_assert!(matches!(result, Err(ImportError::Shape { .. })), "{:?}", result);
            return Ok(());
        }
        prop_assert!(result.is_ok(), "{:?} refused the file: {:?}", bad, result);
        let plan = result.unwrap();
        check_plan(&plan, zone, &zones)?;
        prop_assert_eq!(plan.jobs.len(), count, "{:?}", plan);
        prop_assert_eq!(plan.skipped.len(), 1, "{:?}", plan.skipped);
        let label = bad["id"].as_str().map_or(format!("#{}", index + 1), str::to_string);
        prop_assert_eq!(&plan.skipped[0].origin, &format!("jobs.json job {label}"));
        prop_assert_eq!(plan.skipped[0].code, SkipCode::Malformed);
    }

    /// Against existing jobs: no imported name is an existing one, no
    /// existing Hermes id is imported again, and a probe never changes
    /// what is imported (only the notes).
    #[test]
    fn existing_jobs_keep_their_names_and_hermes_jobs(
        jobs in prop::collection::vec(job_json(), 0..6),
        taken in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 0..4),
        missing in any::<bool>(),
        zone in zone(),
    ) {
        let zones = zones();
        let text = serde_json::json!({"jobs": jobs}).to_string();
        // The names and ids of some of the jobs, as if imported before.
        let existing: Vec<ExistingJob> = taken
            .iter()
            .enumerate()
            .filter(|_| !jobs.is_empty())
            .map(|(n, (at, with_id))| {
                let job = &jobs[at.index(jobs.len())];
                ExistingJob {
                    id: format!("existing-{n}"),
                    name: job["name"].as_str().unwrap_or("job 1").to_string(),
                    hermes_id: job["id"].as_str().filter(|_| *with_id).map(str::to_string),
                    managed: n % 2 == 1,
                }
            })
            .collect();
        let is_file = |_: &Path| !missing;
        let cx = ImportContext {
            existing: &existing,
            run_home: Some(Path::new("/srv/hermes")),
            is_file: Some(&is_file),
            ..ImportContext::new(now(), zone, &zones)
        };
        let Ok(plan) = import_file("jobs.json", &text, &cx) else {
            return Ok(());
        };
        check_plan(&plan, zone, &zones)?;
        for job in &plan.jobs {
            prop_assert!(existing.iter().all(|e| e.name != job.name), "{:?} reused", job.name);
            prop_assert!(
                existing.iter().all(|e| e.hermes_id.is_none() || e.hermes_id != job.hermes_id),
                "{:?} imported again", job.hermes_id
            );
        }
        let plain = import_file("jobs.json", &text, &ImportContext { is_file: None, ..cx }).unwrap();
        prop_assert_eq!(&plain.jobs, &plan.jobs);
        prop_assert_eq!(&plain.skipped, &plan.skipped);
    }
}

// ---------------------------------------------------------------------------
// The fuzz corpus, replayed.

/// Every file of `tests/fuzz/corpus/<target>/` through the target's check.
fn replay(target: &str, check: fn(&[u8], &ZoneTable)) {
    // One table for the corpus, as the fuzz targets keep one for their run.
    let zones = ZoneTable::compiled_in_only();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz/corpus")
        .join(target);
    let mut failed = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        count += 1;
        // The table stays usable after a failed check: its lock ignores
        // poisoning and each entry is written whole.
        let run = std::panic::AssertUnwindSafe(|| check(&bytes, &zones));
        if std::panic::catch_unwind(run).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(count > 0, "no corpus in {}", dir.display());
    assert!(
        failed.is_empty(),
        "{} of {count} inputs fail:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn fuzz_corpus_replays_clean_schedule() {
    replay("schedule", fuzz_checks::schedule);
}

#[test]
fn fuzz_corpus_replays_clean_config() {
    replay("config", fuzz_checks::config);
}

#[test]
fn fuzz_corpus_replays_clean_import() {
    replay("import", fuzz_checks::import);
}
