//! Where two zones' rules first give different UTC offsets: `doctor`
//! compares the host's rules of a zone a job uses with the compiled-in ones.
//! Pure.
//!
//! The walk steps an hour at a time and also checks, to the second, every
//! transition of either zone inside a step (found by bisection), so a
//! transition moved by minutes is seen, not only by more than the step.
//! Offsets are constant between transitions, so agreeing at the start,
//! at each transition of either zone and at each step means agreeing
//! everywhere (given at most one transition per zone per hour).

use super::super::instant::Timestamp;
use super::rules::{Zone, ZoneOffset};
use chrono::{Offset, TimeDelta, Timelike};

const STEP: TimeDelta = TimeDelta::hours(1);

/// The first instant where two zones disagree, with each one's offset there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneDifference {
    /// The first instant (to the second) where the offsets differ.
    pub at: Timestamp,
    /// The first zone's offset at `at`.
    pub left: ZoneOffset,
    /// The second zone's offset at `at`.
    pub right: ZoneOffset,
}

fn seconds(zone: Zone, at: Timestamp) -> i32 {
    zone.offset_at(at).fix().local_minus_utc()
}

/// The first instant in `[from, until)` where `left` and `right` have
/// different UTC offsets, or None when they agree all along.
pub fn first_difference(
    left: Zone,
    right: Zone,
    from: Timestamp,
    until: Timestamp,
) -> Option<ZoneDifference> {
    let from = from.with_nanosecond(0).unwrap_or(from);
    let differ = |at: Timestamp| seconds(left, at) != seconds(right, at);
    let found = |at: Timestamp| ZoneDifference {
        at,
        left: left.offset_at(at),
        right: right.offset_at(at),
    };
    if differ(from) {
        return Some(found(from));
    }
    let mut lo = from;
    while lo < until {
        let hi = (lo + STEP).min(until);
        let mut points: Vec<Timestamp> = [left, right]
            .into_iter()
            .filter_map(|zone| transition_in(zone, lo, hi))
            .collect();
        points.push(hi);
        points.sort();
        if let Some(at) = points.into_iter().find(|at| *at < until && differ(*at)) {
            return Some(found(at));
        }
        lo = hi;
    }
    None
}

/// The instant in `(lo, hi]` where `zone`'s offset changes, if it does.
fn transition_in(zone: Zone, lo: Timestamp, hi: Timestamp) -> Option<Timestamp> {
    let before = seconds(zone, lo);
    if seconds(zone, hi) == before {
        return None;
    }
    let (mut lo, mut hi) = (lo, hi);
    while hi - lo > TimeDelta::seconds(1) {
        let mid = lo + (hi - lo) / 2;
        if seconds(zone, mid) == before {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}
