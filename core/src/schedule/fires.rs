//! When a schedule fires, and what DST did to each fire ([`Fire`],
//! [`DstNote`]). Pure: the zone and the instants are arguments.
//!
//! ## The DST policy (docs/schedules.md)
//!
//! Croner finds the wall-clock times a cron expression matches, ignoring
//! zones; this file turns each matched wall time into real instants:
//!
//! | the wall time is...          | fixed hour                   | wildcard hour        |
//! |------------------------------|------------------------------|----------------------|
//! | normal                       | that instant, `Exact`        | same                 |
//! | in a spring-forward gap      | the first instant after the gap, `MovedByGap { wanted }` | skipped (it never happens) |
//! | in a repeated (fall-back) hour | the first pass only, `RepeatedHour { pass: 1 }` | both passes, `pass: 1` then `pass: 2` |
//!
//! "Wildcard hour" means the hour field is written with `*` (`*` or `*/n`);
//! every other hour field (`9`, `1,13`, `1-3`, even `0-23`) names wall-clock
//! hours and is "fixed". This is where we differ from croner, which calls a
//! job fixed only when its second, minute *and* hour are single values: for
//! croner `0,30 1 * * *` and `*/15 2 * * *` are wildcard jobs that run in both
//! passes of a repeated hour and are skipped in a gap. Our policy makes the
//! hour field the distinction (a named wall time happens once a day), so for us they run once per wall time in a repeated
//! hour, and a gap moves them to the first instant after it.
//!
//! Several wanted wall times in one gap (`0,30 2 * * *` on a 02:00->03:00 day)
//! land on the same instant and run once there, annotated with the first
//! wanted time; a wall time named right after the gap (`0 2,3 * * *`) merges
//! with the moved fire the same way. Compared with Vixie cron: Vixie also runs
//! fixed jobs from a gap once after the jump and fixed jobs once in a repeated
//! hour, but calls a job wildcard when its minute *or* hour field starts with
//! `*` (so `*/30 1 * * *` runs in both passes there), and applies this only to
//! clock jumps under 3 hours; we apply the table above to any shift (Lord
//! Howe's 30 minutes, Chatham's 02:45, whole skipped days).
//!
//! ## The search
//!
//! `earliest(w)`, the first instant whose wall clock reads at or after `w`,
//! is monotone in `w`. Every candidate a wall time yields is at or after its
//! `earliest`, so walking matched wall times upwards we can stop as soon as
//! `earliest` reaches the best candidate found. The walk starts at the wall
//! time of `after`, or, when `after` is in the first pass of a repeated hour,
//! one overlap-length earlier, because the second pass of wall times before
//! `after` is still ahead. Candidates must be strictly after `after`, so
//! walking `next_after` from each fire never repeats an instant, never goes
//! back, and never skips one.

use super::Tz;
use super::cron_expr::CronSchedule;
use super::instant::Timestamp;
use super::wall::{self, WallTime};
use chrono::{DateTime, NaiveDateTime, TimeDelta, Timelike};
use std::fmt;

/// What DST did to one fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DstNote {
    /// The fire is at the wall time the schedule names.
    Exact,
    /// The wanted wall time fell in a spring-forward gap; the fire moved to the first valid instant after it.
    MovedByGap {
        /// The wall time the schedule names.
        wanted: NaiveDateTime,
    },
    /// The wall time occurs twice (fall-back).
    RepeatedHour {
        /// 1 for the first occurrence, 2 for the second.
        pass: u8,
    },
}

impl fmt::Display for DstNote {
    /// `exact`, `moved by a DST gap from 02:30`, `repeated hour, pass 1 of 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DstNote::Exact => f.write_str("exact"),
            DstNote::MovedByGap { wanted } => {
                write!(f, "moved by a DST gap from {}", wanted.format("%H:%M:%S"))
            }
            DstNote::RepeatedHour { pass } => write!(f, "repeated hour, pass {pass} of 2"),
        }
    }
}

/// One fire of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fire {
    /// When it fires.
    pub at: Timestamp,
    /// The same instant on the job's wall clock.
    pub local: DateTime<Tz>,
    /// What DST did to it.
    pub dst: DstNote,
}

/// A bound on matched wall times examined per search; a search of
/// `* * * * * *` from the first pass of a one-hour overlap needs ~3 600.
const MAX_STEPS: u32 = 1_000_000;

/// The first fire of `cron` in `zone` strictly after `after`.
pub(crate) fn next_cron_fire(cron: &CronSchedule, after: Timestamp, zone: Tz) -> Option<Fire> {
    let after_wall = wall::wall_of(zone, after)?;
    let mut cursor = after_wall.with_nanosecond(0)?;
    if let Some(WallTime::Repeated { first, second }) = wall::resolve(zone, after_wall)
        && after < second
    {
        cursor = cursor.checked_sub_signed(second.signed_duration_since(first))?;
    }
    let mut best: Option<(Timestamp, DstNote)> = None;
    for _ in 0..MAX_STEPS {
        let Some(wanted) = cron.next_wall_match(cursor) else {
            break;
        };
        cursor = wanted;
        let Some(resolved) = wall::resolve(zone, wanted) else {
            break;
        };
        if best
            .as_ref()
            .is_some_and(|(at, _)| resolved.earliest() >= *at)
        {
            break;
        }
        for (at, note) in candidates(resolved, wanted, cron.has_wildcard_hour()) {
            if at > after && best.as_ref().is_none_or(|(best_at, _)| at < *best_at) {
                best = Some((at, note));
            }
        }
    }
    best.map(|(at, dst)| Fire {
        at,
        local: at.with_timezone(&zone),
        dst,
    })
}

/// The instants one matched wall time stands for, per the policy table.
fn candidates(
    resolved: WallTime,
    wanted: NaiveDateTime,
    wildcard_hour: bool,
) -> Vec<(Timestamp, DstNote)> {
    match resolved {
        WallTime::Single(at) => vec![(at, DstNote::Exact)],
        WallTime::Repeated { first, second } => {
            let mut out = vec![(first, DstNote::RepeatedHour { pass: 1 })];
            if wildcard_hour {
                out.push((second, DstNote::RepeatedHour { pass: 2 }));
            }
            out
        }
        WallTime::Skipped { resumes } if !wildcard_hour => {
            vec![(resumes, DstNote::MovedByGap { wanted })]
        }
        WallTime::Skipped { .. } => Vec::new(),
    }
}

/// A fire at a known instant (intervals, one-shots): `Exact`, or
/// `RepeatedHour` when its wall time occurs twice that day.
pub(crate) fn fire_at(at: Timestamp, zone: Tz) -> Fire {
    let dst = match wall::repeated_pass(zone, at) {
        Some(pass) => DstNote::RepeatedHour { pass },
        None => DstNote::Exact,
    };
    Fire {
        at,
        local: at.with_timezone(&zone),
        dst,
    }
}

/// A one-shot's fire: `MovedByGap` when it was asked for a wall time that
/// is in a gap of `zone` ending at `at` (checked again here: the job's zone
/// may have been changed since), else as [`fire_at`].
pub(crate) fn once_fire(at: Timestamp, wanted: Option<NaiveDateTime>, zone: Tz) -> Fire {
    match wanted {
        Some(wanted) if wall::resolve(zone, wanted) == Some(WallTime::Skipped { resumes: at }) => {
            Fire {
                at,
                local: at.with_timezone(&zone),
                dst: DstNote::MovedByGap { wanted },
            }
        }
        _ => fire_at(at, zone),
    }
}

/// The instant a wall-clock time in `zone` stands for, by the DST policy
/// (docs/schedules.md): inside a spring-forward gap, the first instant
/// after the gap (`MovedByGap`); in a repeated hour, the first pass
/// (`RepeatedHour { pass: 1 }`). None only at the edges of chrono's range.
pub fn local_instant(wall: NaiveDateTime, zone: Tz) -> Option<(Timestamp, DstNote)> {
    Some(match wall::resolve(zone, wall)? {
        WallTime::Single(at) => (at, DstNote::Exact),
        WallTime::Repeated { first, .. } => (first, DstNote::RepeatedHour { pass: 1 }),
        WallTime::Skipped { resumes } => (resumes, DstNote::MovedByGap { wanted: wall }),
    })
}

/// The real time from `slot` to the following fire.
pub(crate) fn gap_to_next(slot: Timestamp, next: Option<Fire>) -> Option<std::time::Duration> {
    let next = next?;
    next.at
        .signed_duration_since(slot)
        .max(TimeDelta::zero())
        .to_std()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dst_notes_read_well() {
        let wanted = "2026-03-29T02:30:00".parse().unwrap();
        assert_eq!(DstNote::Exact.to_string(), "exact");
        assert_eq!(
            DstNote::MovedByGap { wanted }.to_string(),
            "moved by a DST gap from 02:30:00"
        );
        assert_eq!(
            DstNote::RepeatedHour { pass: 2 }.to_string(),
            "repeated hour, pass 2 of 2"
        );
    }
}
