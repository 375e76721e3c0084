//! `next`: the coming fires of a job or a schedule, in its zone and in UTC,
//! each marked when DST moved it or it falls in a repeated hour.

use super::args::NextArgs;
use super::context::Ctx;
use super::fail::usage;
use super::render::utc;
use chrono::{NaiveDateTime, TimeZone};
use hermes_cron::schedule::{self, DstNote, Fire, Schedule, Timestamp, Tz};
use hermes_cron::store;
use serde_json::json;

const MAX_COUNT: usize = 10_000;

/// Parse `--from`: RFC 3339, or a naive ISO time read in `zone`.
fn parse_from(text: &str, zone: Tz) -> anyhow::Result<Timestamp> {
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(at.with_timezone(&chrono::Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text.trim(), fmt)
            && let Some(at) = zone.from_local_datetime(&naive).earliest()
        {
            return Ok(at.with_timezone(&chrono::Utc));
        }
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        && let Some(at) = zone
            .from_local_datetime(&day.and_hms_opt(0, 0, 0).unwrap_or_default())
            .earliest()
    {
        return Ok(at.with_timezone(&chrono::Utc));
    }
    Err(usage(format!(
        "--from: {text:?} is not an instant; use e.g. 2026-03-28T00:00:00Z or 2026-03-28T09:00 (read in {})",
        zone.name()
    )))
}

/// The note printed after a fire, or empty.
pub fn dst_text(f: &Fire) -> String {
    match &f.dst {
        DstNote::Exact => String::new(),
        DstNote::MovedByGap { wanted } => {
            format!(
                "moved by DST gap: {} does not exist",
                wanted.format("%Y-%m-%d %H:%M:%S")
            )
        }
        DstNote::RepeatedHour { pass } => format!(
            "in repeated hour ({} occurrence)",
            if *pass == 1 { "first" } else { "second" }
        ),
    }
}

pub fn next(ctx: &mut Ctx, a: NextArgs) -> anyhow::Result<i32> {
    let fallback = ctx.fallback_zone()?;
    let now = ctx.now();
    let count = a.count.clamp(1, MAX_COUNT);
    let (sched, zone, anchor, label) = match (&a.job, &a.schedule) {
        (Some(key), _) => {
            let db = ctx.open_db()?;
            let job = store::resolve_job(db.conn(), key)?;
            let zone = match &job.tz {
                Some(tz) => schedule::parse_zone(tz)?,
                None => fallback,
            };
            (
                job.schedule.clone(),
                zone,
                job.anchor,
                job.schedule_text.clone(),
            )
        }
        (None, Some(text)) => {
            let zone = match &a.tz {
                Some(tz) => schedule::parse_zone(tz).map_err(|e| usage(format!("--tz: {e}")))?,
                None => fallback,
            };
            let base = match &a.from {
                Some(f) => parse_from(f, zone)?,
                None => now,
            };
            (Schedule::parse(text, base, zone)?, zone, base, text.clone())
        }
        (None, None) => return Err(usage("give a JOB or --schedule S")),
    };
    let from = match &a.from {
        Some(f) => parse_from(f, zone)?,
        None => now,
    };
    let mut fires = Vec::with_capacity(count);
    let mut cursor = from;
    while fires.len() < count {
        let Some(f) = sched.next_after(cursor, zone, anchor) else {
            break;
        };
        cursor = f.at;
        fires.push(f);
    }
    if a.json {
        let items: Vec<_> = fires
            .iter()
            .map(|f| {
                let (kind, wanted, pass) = match &f.dst {
                    DstNote::Exact => ("exact", None, None),
                    DstNote::MovedByGap { wanted } => (
                        "moved_by_gap",
                        Some(wanted.format("%Y-%m-%dT%H:%M:%S").to_string()),
                        None,
                    ),
                    DstNote::RepeatedHour { pass } => ("repeated_hour", None, Some(*pass)),
                };
                json!({
                    "at": utc(f.at),
                    "local": f.local.format("%Y-%m-%dT%H:%M:%S%:z").to_string(),
                    "zone": zone.name(),
                    "abbreviation": f.local.format("%Z").to_string(),
                    "dst": kind,
                    "wanted_local": wanted,
                    "pass": pass,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(hermes_cron::exit::OK);
    }
    if fires.is_empty() {
        match sched {
            Schedule::Reboot => println!("{label:?} fires once each time the gateway starts"),
            _ => println!("{label:?} has no fires after {}", utc(from)),
        }
        return Ok(hermes_cron::exit::OK);
    }
    println!("{label}  (zone {})", zone.name());
    for f in &fires {
        let note = dst_text(f);
        let line = format!(
            "{}  {}  {}",
            f.local.format("%a %Y-%m-%d %H:%M:%S %Z"),
            f.at.format("%Y-%m-%dT%H:%M:%SZ"),
            note
        );
        println!("{}", line.trim_end());
    }
    Ok(hermes_cron::exit::OK)
}
