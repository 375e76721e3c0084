//! DST against independent oracles (issue 8 item 2).
//!
//! For five zones with awkward transitions and 30 cron expressions and
//! phrases, our fire list over 2026-01-01..2027-12-31 (UTC instants in
//! (2026-01-01T00:00Z, 2028-01-01T00:00Z]) is compared with
//! - Python croniter (`tests/oracles/croniter_fires.py`, one python run per
//!   zone, JSON out): the whole range for expressions with at most 3,000
//!   fires in two years (daily, weekly, monthly, 6-hourly), else a window of
//!   26 hours on each side of every DST transition (hourly and sub-hourly:
//!   croniter takes ~60 us per fire);
//! - `systemd-analyze calendar --iterations`, for the expressions OnCalendar
//!   can express (translated below): whole range for expressions with at
//!   most ~120 fires in two years, else a window of 26 hours on each side of
//!   every DST transition (systemd-analyze takes ~0.5 ms per iteration).
//!
//! Our fires use the host's zone rules, as the product reads zones (the
//! oracles read the host's tzdata too); the classification of each instant
//! below uses chrono-tz's compiled-in copy directly, not our code.
//!
//! Every difference is classified (which oracle, which side has the fire,
//! what DST does at that instant, fixed or wildcard hour) and must match a
//! row of [`ALLOWED`], the table in `tests/oracles/DIFFERENCES.md` and the
//! docs/reliability.md, each with its reason. A difference matching
//! no row fails the test with the list; so does a row no longer observed
//! (the table must not outlive the behaviour it explains).
//!
//! The oracles are required: without python3 + croniter or systemd-analyze
//! the test fails and says what to install (tests/run-all.sh installs them).
//! `DST_ORACLES_VERBOSE=1` prints every difference, documented or not.
//! About 15 s on the 2-core machine (croniter and systemd-analyze are the
//! cost; croniter runs for all five zones at once, beside the rest).

use chrono::{DateTime, LocalResult, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use hermes_cron::schedule::{DstNote, Schedule, Timestamp, Zone, ZoneOrigin};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::Write;
use std::process::{Command, Stdio};

const ZONES: [Tz; 5] = [
    Tz::Europe__Berlin,
    Tz::America__New_York,
    Tz::Australia__Lord_Howe,
    Tz::Pacific__Chatham,
    Tz::Africa__Cairo,
];

/// What the user writes, and the plain 5-field cron expression the oracles
/// get, written by hand (phrases and macros are ours; the oracles see cron).
const CASES: [(&str, &str); 30] = [
    ("30 2 * * *", "30 2 * * *"),
    ("30 1 * * *", "30 1 * * *"),
    ("0,30 1 * * *", "0,30 1 * * *"),
    ("0,30 2 * * *", "0,30 2 * * *"),
    ("15 2 * * *", "15 2 * * *"),
    ("45 2 * * *", "45 2 * * *"),
    ("0 2 * * *", "0 2 * * *"),
    ("0 3 * * 0", "0 3 * * 0"),
    ("0,15,30,45 3 * * *", "0,15,30,45 3 * * *"),
    ("0 1-3 * * *", "0 1-3 * * *"),
    ("30 23 * * *", "30 23 * * *"),
    ("0 0 * * 5", "0 0 * * 5"),
    ("*/30 * * * *", "*/30 * * * *"),
    ("*/15 * * * *", "*/15 * * * *"),
    ("30 */2 * * *", "30 */2 * * *"),
    ("0 */6 * * *", "0 */6 * * *"),
    ("@hourly", "0 * * * *"),
    ("@daily", "0 0 * * *"),
    ("0 0 L * *", "0 0 L * *"),
    ("0 9 * * 1#1", "0 9 * * 1#1"),
    ("0 9 * * 1-5", "0 9 * * 1-5"),
    ("0 0 1 * *", "0 0 1 * *"),
    ("daily at 8am", "0 8 * * *"),
    ("weekdays at 9am", "0 9 * * 1-5"),
    ("every monday 9am", "0 9 * * 1"),
    ("mon,wed at 9:30", "30 9 * * 1,3"),
    ("noon", "0 12 * * *"),
    ("midnight", "0 0 * * *"),
    ("every day at 02:30", "30 2 * * *"),
    ("weekends at 12:30am", "30 0 * * 0,6"),
];

fn start() -> Timestamp {
    utc("2026-01-01T00:00:00Z")
}

fn end() -> Timestamp {
    utc("2028-01-01T00:00:00Z")
}

fn utc(text: &str) -> Timestamp {
    text.parse().unwrap()
}

// ---------------------------------------------------------------------------
// The allowed differences.

/// Which oracle disagrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Oracle {
    Croniter,
    Systemd,
}

/// Which side has the fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    /// We fire, the oracle does not.
    OnlyOurs,
    /// The oracle fires, we do not.
    OnlyOracle,
}

/// What DST does at the instant of the differing fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum At {
    /// An ordinary instant: its wall time occurs once.
    Ordinary,
    /// The first instant after a spring-forward gap (the transition),
    /// fired for a wall time that exists there (ours: `DstNote::Exact`), or,
    /// on the oracle's side, for a wall time in the gap it moved there.
    GapEnd,
    /// Ours only: the first instant after a gap, fired for a wall time inside
    /// the gap (`DstNote::MovedByGap`).
    MovedByGap,
    /// The first pass of a repeated (fall-back) wall time.
    FirstPass,
    /// The second pass of a repeated wall time.
    SecondPass,
}

/// How the hour field is written (`*`, `*/n`: wildcard; anything else: fixed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Hour {
    Fixed,
    Wildcard,
}

/// One kind of difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Kind {
    oracle: Oracle,
    side: Side,
    at: At,
    hour: Hour,
}

/// A documented policy difference (`tests/oracles/DIFFERENCES.md`).
struct Allowed {
    kind: Kind,
    reason: &'static str,
}

const fn allowed(oracle: Oracle, side: Side, at: At, hour: Hour, reason: &'static str) -> Allowed {
    Allowed {
        kind: Kind {
            oracle,
            side,
            at,
            hour,
        },
        reason,
    }
}

const ALLOWED: &[Allowed] = &[
    allowed(
        Oracle::Croniter,
        Side::OnlyOracle,
        At::SecondPass,
        Hour::Fixed,
        "a fixed-hour time in a repeated (fall-back) hour: croniter runs it on both passes; \
         we run it once, on the first pass",
    ),
    allowed(
        Oracle::Croniter,
        Side::OnlyOracle,
        At::GapEnd,
        Hour::Wildcard,
        "a stepped-hour time (`30 */2`, `0 */6`) inside a spring-forward gap: croniter moves \
         it to the end of the gap; we skip it, because an hour field written with `*` is a \
         wildcard (as in Vixie cron) and the next step runs as usual",
    ),
    allowed(
        Oracle::Systemd,
        Side::OnlyOurs,
        At::MovedByGap,
        Hour::Fixed,
        "a fixed-hour time inside a spring-forward gap: systemd skips it that day; we run it \
         once at the first instant after the gap (DstNote::MovedByGap)",
    ),
    allowed(
        Oracle::Systemd,
        Side::OnlyOurs,
        At::SecondPass,
        Hour::Wildcard,
        "a wildcard-hour time in a repeated hour: systemd runs it once, on the first pass; \
         we run it at every real instant, so on both passes",
    ),
    allowed(
        Oracle::Systemd,
        Side::OnlyOurs,
        At::GapEnd,
        Hour::Wildcard,
        "systemd 252 defect: it misses a wall time that exists at the first instant after a \
         gap that does not end on the hour (Chatham's 03:45, `*/15 * * * *`); we run it",
    ),
];

/// Expressions systemd 252 cannot compute around a transition (it gives up
/// with EDEADLK): compared with croniter only there. A give-up not listed
/// here fails the test.
const SYSTEMD_GIVES_UP: &[(Tz, &str)] = &[
    (Tz::Pacific__Chatham, "45 2 * * *"),
    (Tz::Africa__Cairo, "30 */2 * * *"),
    (Tz::Africa__Cairo, "0 */6 * * *"),
];

// ---------------------------------------------------------------------------
// Our side.

/// Our fires in (from, until], walking `next_after` from each fire; None
/// when there are more than `cap`.
fn our_fires(
    schedule: &Schedule,
    zone: Zone,
    from: Timestamp,
    until: Timestamp,
    cap: usize,
) -> Option<Vec<(i64, DstNote)>> {
    let mut out = Vec::new();
    let mut after = from;
    while let Some(fire) = schedule.next_after(after, zone, from) {
        assert!(fire.at > after, "{fire:?} is not after {after}");
        if fire.at > until {
            break;
        }
        if out.len() == cap {
            return None;
        }
        out.push((fire.at.timestamp(), fire.dst));
        after = fire.at;
    }
    Some(out)
}

/// Our fires over the whole range (`whole`), or, for an expression with
/// more than [`CRONITER_WHOLE_UP_TO`] fires, in the transition windows only.
struct Ours {
    fires: Vec<(i64, DstNote)>,
    whole: bool,
}

/// Our zone for an oracle's zone: the host's rules, as the product reads
/// them (the oracles read the host's tzdata too), else the compiled-in ones.
fn our_zone(zone: Tz) -> Zone {
    let ours = hermes_cron::host_zone::table().parse(zone.name()).unwrap();
    let host = std::path::Path::new(hermes_cron::host_zone::DEFAULT_ZONEINFO).join(zone.name());
    if std::env::var_os("TZDIR").is_none() && host.exists() {
        assert_eq!(ours.origin(), ZoneOrigin::Host, "{zone}");
    }
    ours
}

fn ours_for(schedule: &Schedule, zone: Tz) -> Ours {
    let tz = zone;
    let zone = our_zone(tz);
    match our_fires(schedule, zone, start(), end(), CRONITER_WHOLE_UP_TO) {
        Some(fires) => Ours { fires, whole: true },
        None => Ours {
            fires: transition_windows(tz)
                .into_iter()
                .flat_map(|(from, until)| {
                    our_fires(schedule, zone, from, until, usize::MAX).unwrap()
                })
                .collect(),
            whole: false,
        },
    }
}

fn parse(text: &str) -> Schedule {
    Schedule::parse(text, start(), Zone::UTC).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

// ---------------------------------------------------------------------------
// DST situation of an instant, from chrono-tz directly (not from our code).

fn situation(zone: Tz, at: i64) -> At {
    let instant = DateTime::from_timestamp(at, 0).unwrap();
    let offset = |t: Timestamp| zone.offset_from_utc_datetime(&t.naive_utc()).fix();
    let before = offset(instant - TimeDelta::seconds(1));
    let now = offset(instant);
    if now.local_minus_utc() > before.local_minus_utc() {
        return At::GapEnd;
    }
    let wall = instant.with_timezone(&zone).naive_local();
    match zone.from_local_datetime(&wall) {
        LocalResult::Ambiguous(first, _) if first.with_timezone(&Utc) == instant => At::FirstPass,
        LocalResult::Ambiguous(..) => At::SecondPass,
        _ => At::Ordinary,
    }
}

fn hour_kind(cron: &str) -> Hour {
    let hour = cron.split_whitespace().nth(1).unwrap();
    if hour.starts_with('*') {
        Hour::Wildcard
    } else {
        Hour::Fixed
    }
}

/// One difference, for messages.
struct Difference {
    kind: Kind,
    zone: Tz,
    text: &'static str,
    at: i64,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let instant = DateTime::from_timestamp(self.at, 0).unwrap();
        write!(
            f,
            "{:?} {:?} {:?} {:?}: {:?} in {} at {} ({})",
            self.kind.oracle,
            self.kind.side,
            self.kind.at,
            self.kind.hour,
            self.text,
            self.zone,
            instant.format("%Y-%m-%dT%H:%M:%SZ"),
            instant
                .with_timezone(&self.zone)
                .format("%Y-%m-%d %H:%M:%S %:z"),
        )
    }
}

fn compare(
    oracle: Oracle,
    zone: Tz,
    text: &'static str,
    cron: &str,
    ours: &[(i64, DstNote)],
    theirs: &[i64],
    out: &mut Vec<Difference>,
) {
    let notes: BTreeMap<i64, &DstNote> = ours.iter().map(|(at, note)| (*at, note)).collect();
    let ours: BTreeSet<i64> = notes.keys().copied().collect();
    let theirs: BTreeSet<i64> = theirs.iter().copied().collect();
    let hour = hour_kind(cron);
    for (side, only) in [
        (Side::OnlyOurs, ours.difference(&theirs)),
        (Side::OnlyOracle, theirs.difference(&ours)),
    ] {
        for &at in only {
            let at_kind = match notes.get(&at) {
                Some(DstNote::MovedByGap { .. }) if side == Side::OnlyOurs => At::MovedByGap,
                _ => situation(zone, at),
            };
            out.push(Difference {
                kind: Kind {
                    oracle,
                    side,
                    at: at_kind,
                    hour,
                },
                zone,
                text,
                at,
            });
        }
    }
}

// ---------------------------------------------------------------------------
// Oracle (a): croniter.

fn croniter_script() -> String {
    format!(
        "{}/tests/oracles/croniter_fires.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn require_croniter() {
    let probe = Command::new("python3")
        .args(["-c", "import croniter"])
        .output();
    match probe {
        Err(err) => panic!(
            "DST oracle: python3 is required ({err}); install python3 and \
             `pip install croniter==7.0.0` (tests/run-all.sh does)"
        ),
        Ok(out) if !out.status.success() => panic!(
            "DST oracle: Python croniter is required but `import croniter` failed:\n{}\n\
             run `pip install croniter==7.0.0` (tests/run-all.sh does)",
            String::from_utf8_lossy(&out.stderr)
        ),
        Ok(_) => {}
    }
}

/// A running croniter oracle for one zone.
struct CroniterRun {
    zone: Tz,
    child: std::process::Child,
}

/// Start croniter on every `(expression, windows)` of `zone`; it runs while
/// we compute our side and ask systemd.
fn croniter_start(zone: Tz, exprs: &[(&str, Vec<(Timestamp, Timestamp)>)]) -> CroniterRun {
    let exprs: Vec<serde_json::Value> = exprs
        .iter()
        .map(|(expr, windows)| {
            let windows: Vec<[i64; 2]> = windows
                .iter()
                .map(|(from, until)| [from.timestamp(), until.timestamp()])
                .collect();
            serde_json::json!({ "expr": expr, "windows": windows })
        })
        .collect();
    let request = serde_json::json!({ "zone": zone.name(), "exprs": exprs });
    let mut child = Command::new("python3")
        .arg(croniter_script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("DST oracle: cannot run python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    CroniterRun { zone, child }
}

/// croniter's fires for every expression, and its version.
fn croniter_finish(run: CroniterRun) -> (String, BTreeMap<String, Vec<i64>>) {
    let zone = run.zone;
    let out = run.child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "DST oracle: croniter_fires.py failed for {zone}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let version = reply["croniter"].as_str().unwrap_or("?").to_string();
    let mut fires = BTreeMap::new();
    for (expr, list) in reply["fires"].as_object().unwrap() {
        let list = list.as_array().unwrap_or_else(|| {
            panic!("DST oracle: croniter {version} refused {expr:?} in {zone}: {list}")
        });
        fires.insert(
            expr.clone(),
            list.iter().map(|v| v.as_i64().unwrap()).collect(),
        );
    }
    (version, fires)
}

// ---------------------------------------------------------------------------
// Oracle (b): systemd-analyze calendar.

const DAY_NAMES: [&str; 8] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// A cron time field (second, minute, hour) in OnCalendar syntax.
fn oncalendar_time(field: &str) -> Option<String> {
    let item = |item: &str| -> Option<String> {
        let (base, step) = match item.split_once('/') {
            Some((base, step)) => (base, Some(step.parse::<u32>().ok()?)),
            None => (item, None),
        };
        let base = match base.split_once('-') {
            _ if base == "*" && step.is_some() => "00".to_string(),
            _ if base == "*" => "*".to_string(),
            Some((a, b)) => format!(
                "{:02}..{:02}",
                a.parse::<u32>().ok()?,
                b.parse::<u32>().ok()?
            ),
            None => format!("{:02}", base.parse::<u32>().ok()?),
        };
        Some(match step {
            Some(step) => format!("{base}/{step}"),
            None => base,
        })
    };
    let items: Option<Vec<String>> = field.split(',').map(item).collect();
    Some(items?.join(","))
}

/// A 5-field cron expression as an OnCalendar spec in `zone`, or None where
/// OnCalendar cannot say the same thing (day-of-month OR day-of-week, `W`,
/// `#L`, `L` weekdays).
fn to_oncalendar(cron: &str, zone: Tz) -> Option<String> {
    let f: Vec<&str> = cron.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = f[..] else {
        return None;
    };
    let mut day = match dom {
        "*" => "*".to_string(),
        "L" => "~01".to_string(), // `*-*~01`: the last day of the month
        _ if dom.contains(['W', 'L', '?']) => return None,
        _ => oncalendar_time(dom)?,
    };
    let mut weekdays = String::new();
    if dow != "*" {
        if dom != "*" {
            return None; // cron ORs the two day fields; OnCalendar ANDs them
        }
        let mut names = Vec::new();
        for item in dow.split(',') {
            let (days, nth) = match item.split_once('#') {
                Some((days, nth)) => (days, Some(nth.parse::<u32>().ok()?)),
                None => (item, None),
            };
            if let Some(nth) = nth {
                if dow.contains(',') {
                    return None;
                }
                day = format!("{:02}..{:02}", nth * 7 - 6, nth * 7);
            }
            let name = |d: &str| {
                d.parse::<usize>()
                    .ok()
                    .and_then(|d| DAY_NAMES.get(d).copied())
            };
            names.push(match days.split_once('-') {
                Some((a, b)) => format!("{}..{}", name(a)?, name(b)?),
                None => name(days)?.to_string(),
            });
        }
        weekdays = format!("{} ", names.join(","));
    }
    let month = oncalendar_time(month)?;
    let sep = if day.starts_with('~') { "" } else { "-" };
    Some(format!(
        "{weekdays}*-{month}{sep}{day} {}:{}:00 {}",
        oncalendar_time(hour)?,
        oncalendar_time(minute)?,
        zone.name()
    ))
}

fn require_systemd_analyze() {
    match Command::new("systemd-analyze").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        other => panic!(
            "DST oracle: systemd-analyze is required ({other:?}); \
             apt-get install systemd (tests/run-all.sh does)"
        ),
    }
}

/// systemd's fires of each spec in (from, until], from one systemd-analyze
/// run (it takes many specs; a run costs ~10 ms, an iteration ~0.5 ms): per
/// spec, Ok(list), or Err(message) when systemd cannot compute it.
fn systemd_fires(
    specs: &[String],
    from: Timestamp,
    until: Timestamp,
    iterations: usize,
) -> HashMap<String, Result<Vec<i64>, String>> {
    let out = Command::new("systemd-analyze")
        .env("TZ", "UTC")
        .arg("calendar")
        .arg(format!("--iterations={iterations}"))
        .arg(format!(
            "--base-time={}",
            from.format("%Y-%m-%d %H:%M:%S UTC")
        ))
        .args(specs)
        .output()
        .expect("DST oracle: cannot run systemd-analyze");
    let mut result = HashMap::new();
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        // Failed to determine next elapse for '<spec>': <why>
        let failed = specs
            .iter()
            .find(|spec| line.contains(&format!("'{spec}'")))
            .unwrap_or_else(|| panic!("DST oracle: systemd-analyze says {line:?}"));
        result.insert(failed.clone(), Err(line.to_string()));
    }
    // Blocks: [`Original form: <as given>`] `Normalized form: <...>`, then
    // `Next elapse: <date>` and `Iter. #n: <date>` lines. One of the two
    // forms is the spec as given.
    let mut blocks: Vec<(Vec<String>, Vec<Timestamp>)> = Vec::new();
    let mut after_original = false;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let line = line.trim();
        if let Some(form) = line.strip_prefix("Original form: ") {
            blocks.push((vec![form.to_string()], Vec::new()));
            after_original = true;
        } else if let Some(form) = line.strip_prefix("Normalized form: ") {
            match blocks.last_mut() {
                Some((forms, _)) if after_original => forms.push(form.to_string()),
                _ => blocks.push((vec![form.to_string()], Vec::new())),
            }
            after_original = false;
        } else if line.starts_with("Next elapse:") || line.starts_with("Iter. #") {
            let words: Vec<&str> = line.split_whitespace().collect();
            let [.., date, time, "UTC"] = words[..] else {
                panic!("DST oracle: unexpected systemd-analyze line {line:?}");
            };
            let at = NaiveDateTime::parse_from_str(&format!("{date} {time}"), "%Y-%m-%d %H:%M:%S")
                .unwrap()
                .and_utc();
            blocks.last_mut().expect("a block").1.push(at);
        }
    }
    for (forms, fires) in blocks {
        let spec = specs
            .iter()
            .find(|spec| forms.contains(spec))
            .unwrap_or_else(|| panic!("DST oracle: systemd-analyze answered for {forms:?}"));
        if fires.len() >= iterations && fires.last().is_none_or(|last| *last <= until) {
            // systemd has more fires here than we do: ask again, for all of them.
            let again = systemd_fires(std::slice::from_ref(spec), from, until, iterations * 2);
            result.extend(again);
            continue;
        }
        let fires = fires
            .into_iter()
            .filter(|at| *at > from && *at <= until)
            .map(|at| at.timestamp())
            .collect();
        result.insert(spec.clone(), Ok(fires));
    }
    for spec in specs {
        assert!(
            result.contains_key(spec),
            "DST oracle: no answer for {spec:?}"
        );
    }
    result
}

/// Every DST transition of `zone` in the range (the instants where the
/// offset changes), found by scanning hourly and bisecting.
fn transitions(zone: Tz) -> Vec<Timestamp> {
    let offset = |t: Timestamp| zone.offset_from_utc_datetime(&t.naive_utc()).fix();
    let mut out = Vec::new();
    let mut t = start();
    while t < end() {
        let next = t + TimeDelta::hours(1);
        if offset(t) != offset(next) {
            let (mut lo, mut hi) = (t, next);
            while hi - lo > TimeDelta::seconds(1) {
                let mid = lo + (hi - lo) / 2;
                if offset(mid) == offset(t) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            out.push(hi);
        }
        t = next;
    }
    out
}

/// Windows of 26 hours on each side of every transition of `zone` (each
/// holds the whole local day of the transition).
fn transition_windows(zone: Tz) -> Vec<(Timestamp, Timestamp)> {
    transitions(zone)
        .into_iter()
        .map(|t| (t - TimeDelta::hours(26), t + TimeDelta::hours(26)))
        .collect()
}

/// The windows an oracle is asked about: the whole range, or the transition
/// windows (the oracles are slow: croniter ~60 us a fire, systemd-analyze
/// ~0.5 ms an iteration).
fn windows(zone: Tz, whole: bool) -> Vec<(Timestamp, Timestamp)> {
    if whole {
        vec![(start(), end())]
    } else {
        transition_windows(zone)
    }
}

/// Whole range for croniter up to here (every daily, weekly, monthly and
/// 6-hourly expression); the hourly and sub-hourly ones are windowed.
const CRONITER_WHOLE_UP_TO: usize = 3_000;
/// Whole range for systemd up to here (weekly and monthly expressions).
const SYSTEMD_WHOLE_UP_TO: usize = 120;

fn within(fires: &[(i64, DstNote)], windows: &[(Timestamp, Timestamp)]) -> Vec<(i64, DstNote)> {
    fires
        .iter()
        .filter(|(at, _)| {
            windows
                .iter()
                .any(|(from, until)| *at > from.timestamp() && *at <= until.timestamp())
        })
        .cloned()
        .collect()
}

// ---------------------------------------------------------------------------
// The test.

/// Whether systemd gave up on `cron` in `zone` as [`SYSTEMD_GIVES_UP`] says.
fn systemd_cannot(zone: Tz, cron: &str, error: &str) -> bool {
    error.contains("Resource deadlock avoided") && SYSTEMD_GIVES_UP.contains(&(zone, cron))
}

#[test]
fn fire_lists_match_croniter_and_systemd_up_to_documented_policy() {
    require_croniter();
    require_systemd_analyze();
    let clock = hermes_cron::clock::monotonic();

    // Our fires, and croniter started on every zone at once (it is the slow part).
    let mut ours: HashMap<(Tz, &str), Ours> = HashMap::new();
    let mut runs = Vec::new();
    for zone in ZONES {
        let mut asks = Vec::new();
        for (text, cron) in CASES {
            let schedule = parse(text);
            assert_eq!(
                parse(cron),
                schedule,
                "{text:?} should mean the oracles' {cron:?}"
            );
            let mine = ours_for(&schedule, zone);
            if !asks.iter().any(|(expr, _)| *expr == cron) {
                asks.push((cron, windows(zone, mine.whole)));
            }
            ours.insert((zone, text), mine);
        }
        runs.push(croniter_start(zone, &asks));
    }

    let ours_took = hermes_cron::clock::elapsed(clock);
    let mut differences = Vec::new();
    let mut counts = (0usize, 0usize, 0usize); // croniter windows, systemd windows, fires
    let mut systemd_gave_up = Vec::new();
    for zone in ZONES {
        // One systemd-analyze run per window and iteration count, for all specs.
        type Ask = (&'static str, &'static str, String);
        let mut batches: BTreeMap<(Timestamp, Timestamp, usize), Vec<Ask>> = BTreeMap::new();
        for (text, cron) in CASES {
            let mine = &ours[&(zone, text)];
            counts.2 += mine.fires.len();
            let Some(spec) = to_oncalendar(cron, zone) else {
                continue;
            };
            let whole = mine.whole && mine.fires.len() <= SYSTEMD_WHOLE_UP_TO;
            for (w_from, w_until) in windows(zone, whole) {
                let n = within(&mine.fires, &[(w_from, w_until)]).len();
                let iterations = (n + 1).next_multiple_of(8);
                batches
                    .entry((w_from, w_until, iterations))
                    .or_default()
                    .push((text, cron, spec.clone()));
            }
        }
        for ((w_from, w_until, iterations), asks) in batches {
            let specs: Vec<String> = asks.iter().map(|(_, _, spec)| spec.clone()).collect();
            let answers = systemd_fires(&specs, w_from, w_until, iterations);
            for (text, cron, spec) in asks {
                match &answers[&spec] {
                    Ok(theirs) => {
                        let mine = within(&ours[&(zone, text)].fires, &[(w_from, w_until)]);
                        compare(
                            Oracle::Systemd,
                            zone,
                            text,
                            cron,
                            &mine,
                            theirs,
                            &mut differences,
                        );
                        counts.1 += 1;
                    }
                    Err(error) if systemd_cannot(zone, cron, error) => {
                        systemd_gave_up.push((
                            zone,
                            cron,
                            format!("{spec:?} after {w_from}: {error}"),
                        ));
                    }
                    Err(error) => panic!("DST oracle: systemd-analyze failed on {spec:?}: {error}"),
                }
            }
        }
    }

    let systemd_took = hermes_cron::clock::elapsed(clock) - ours_took;
    let mut version = String::new();
    for run in runs {
        let zone = run.zone;
        let (v, croniter) = croniter_finish(run);
        version = v;
        for (text, cron) in CASES {
            let mine = &ours[&(zone, text)];
            let asked = windows(zone, mine.whole);
            counts.0 += asked.len();
            let mine = within(&mine.fires, &asked);
            compare(
                Oracle::Croniter,
                zone,
                text,
                cron,
                &mine,
                &croniter[cron],
                &mut differences,
            );
        }
    }

    eprintln!(
        "ours {ours_took:?}, systemd {systemd_took:?}, croniter done at {:?}",
        hermes_cron::clock::elapsed(clock)
    );
    let mut unexplained = Vec::new();
    let mut seen = BTreeMap::new();
    let verbose = std::env::var_os("DST_ORACLES_VERBOSE").is_some();
    for difference in &differences {
        if verbose {
            eprintln!("{difference}");
        }
        match ALLOWED.iter().find(|a| a.kind == difference.kind) {
            Some(row) => *seen.entry(row.kind).or_insert(0usize) += 1,
            None => unexplained.push(difference.to_string()),
        }
    }
    eprintln!(
        "compared {} croniter windows ({version}) and {} systemd windows over {} fires of ours; \
         {} differences ({} documented: {seen:?}); systemd gave up on {}:\n{}",
        counts.0,
        counts.1,
        counts.2,
        differences.len(),
        differences.len() - unexplained.len(),
        systemd_gave_up.len(),
        systemd_gave_up
            .iter()
            .map(|(_, _, line)| line.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        unexplained.is_empty(),
        "{} differences from the oracles are not in the allowed list (fix the bug, or \
         document the policy in ALLOWED, tests/oracles/DIFFERENCES.md and docs/reliability.md):\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    let stale_give_ups: Vec<&(Tz, &str)> = SYSTEMD_GIVES_UP
        .iter()
        .filter(|(zone, cron)| {
            !systemd_gave_up
                .iter()
                .any(|(z, c, _)| z == zone && c == cron)
        })
        .collect();
    assert!(
        stale_give_ups.is_empty(),
        "systemd no longer gives up on these (remove them from SYSTEMD_GIVES_UP and the docs): \
         {stale_give_ups:?}"
    );
    let stale: Vec<&str> = ALLOWED
        .iter()
        .filter(|row| !seen.contains_key(&row.kind))
        .map(|row| row.reason)
        .collect();
    assert!(
        stale.is_empty(),
        "allowed differences no longer observed (remove them from ALLOWED and the docs): {stale:#?}"
    );
}

#[test]
fn cron_translates_to_oncalendar() {
    let z = Tz::Europe__Berlin;
    let cases = [
        ("30 2 * * *", Some("*-*-* 02:30:00 Europe/Berlin")),
        ("*/30 * * * *", Some("*-*-* *:00/30:00 Europe/Berlin")),
        ("0,30 1 * * *", Some("*-*-* 01:00,30:00 Europe/Berlin")),
        ("0 1-3 * * *", Some("*-*-* 01..03:00:00 Europe/Berlin")),
        ("0 9 * * 1-5", Some("Mon..Fri *-*-* 09:00:00 Europe/Berlin")),
        ("30 9 * * 1,3", Some("Mon,Wed *-*-* 09:30:00 Europe/Berlin")),
        ("0 9 * * 1#1", Some("Mon *-*-01..07 09:00:00 Europe/Berlin")),
        ("0 0 L * *", Some("*-*~01 00:00:00 Europe/Berlin")),
        ("0 3 * * 0", Some("Sun *-*-* 03:00:00 Europe/Berlin")),
        ("0 0 13 * 5", None),
        ("0 0 15W * *", None),
    ];
    for (cron, want) in cases {
        assert_eq!(to_oncalendar(cron, z).as_deref(), want, "{cron:?}");
    }
}
