//! `next`: the coming fires of a job or a schedule, in its zone and in UTC,
//! each marked when DST moved it or it falls in a repeated hour.

use super::args::NextArgs;
use super::context::Ctx;
use super::fail::usage;
use super::render::utc;
use chrono::NaiveDateTime;
use hermes_cron::schedule::{self, DstNote, Fire, Schedule, Timestamp, Tz};
use hermes_cron::store;
use serde_json::json;

const MAX_COUNT: usize = 10_000;

/// Parse `--from`: RFC 3339, or a naive ISO time or date read in `zone`.
/// A wall time in a DST gap is read as the first instant after the gap, and
/// one in a repeated hour as its first pass, as schedules read them; the
/// second value then says so (printed on stderr).
fn parse_from(text: &str, zone: Tz) -> anyhow::Result<(Timestamp, Option<String>)> {
    let text = text.trim();
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok((at.with_timezone(&chrono::Utc), None));
    }
    let naive = [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|fmt| NaiveDateTime::parse_from_str(text, fmt).ok())
    .or_else(|| {
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()
            .map(|day| day.and_time(chrono::NaiveTime::MIN))
    });
    let Some((at, dst)) = naive.and_then(|wall| schedule::local_instant(wall, zone)) else {
        return Err(usage(format!(
            "--from: {text:?} is not an instant; use e.g. 2026-03-28T00:00:00Z or 2026-03-28T09:00 (read in {})",
            zone.name()
        )));
    };
    let local = at.with_timezone(&zone).format("%Y-%m-%d %H:%M:%S %Z");
    let note = match dst {
        DstNote::Exact => None,
        DstNote::MovedByGap { wanted } => Some(format!(
            "--from {}: that wall time does not exist in {} (DST gap); counting from the first instant after the gap, {local} ({})",
            wanted.format("%Y-%m-%d %H:%M:%S"),
            zone.name(),
            utc(at)
        )),
        DstNote::RepeatedHour { .. } => Some(format!(
            "--from {text}: that wall time occurs twice in {} (repeated hour); counting from the first, {local} ({})",
            zone.name(),
            utc(at)
        )),
    };
    Ok((at, note))
}

/// The note printed after a fire, or empty.
pub(super) fn dst_text(f: &Fire) -> String {
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

pub(super) fn next(ctx: &mut Ctx, a: NextArgs, json: bool) -> anyhow::Result<i32> {
    let fallback = ctx.fallback_zone()?;
    let now = ctx.now();
    let count = a.count.clamp(1, MAX_COUNT);
    let job = match &a.job {
        Some(key) => {
            let db = ctx.open_db()?;
            Some(store::resolve_job(db.conn(), key)?)
        }
        None => None,
    };
    let zone = match (&job, &a.tz) {
        (Some(job), _) => match &job.tz {
            Some(tz) => ctx.zones.parse(tz)?,
            None => fallback,
        },
        (None, Some(tz)) => ctx
            .zones
            .parse(tz)
            .map_err(|e| usage(format!("--tz: {e}")))?,
        (None, None) => fallback,
    };
    let from = match &a.from {
        Some(text) => {
            let (at, note) = parse_from(text, zone)?;
            if let Some(note) = note {
                eprintln!("note: {note}");
            }
            at
        }
        None => now,
    };
    // A Hermes job's next fire is Hermes's, not its schedule's.
    let set_from_outside = job.as_ref().and_then(|j| j.next_run_at);
    let (sched, anchor, label) = match (job, &a.schedule) {
        (Some(job), _) => (job.schedule, job.anchor, job.schedule_text),
        // A relative one-shot (`in 30s`) counts from --from.
        (None, Some(text)) => (Schedule::parse(text, from, zone)?, from, text.clone()),
        (None, None) => return Err(usage("give a JOB or --schedule S")),
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
    if json {
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
            Schedule::External => match set_from_outside {
                Some(at) => println!("{label:?} fires when Hermes says; next at {at}"),
                None => println!("{label:?} fires when Hermes says; no fire is due"),
            },
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
