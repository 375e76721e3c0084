//! When a job is `late`: it has not started since `since` (its last start,
//! or when the gateway started, whichever is later) and the first slot
//! after that is older than its misfire grace. Counting from the gateway's
//! start means only lateness while the gateway is up alerts: slots that
//! passed while it was down are the catch-up policy's (`missed` rows).

use crate::plan::misfire_grace;
use crate::schedule::{Schedule, Timestamp, Tz};

/// The instant after which a job that has not started since `since` is
/// late; None for schedules without a period (one-shots, `@reboot`,
/// Hermes's jobs).
pub fn late_deadline(
    schedule: &Schedule,
    zone: Tz,
    anchor: Timestamp,
    since: Timestamp,
) -> Option<Timestamp> {
    if !schedule.is_recurring() {
        return None;
    }
    let slot = schedule.next_after(since, zone, anchor)?.at;
    let grace = misfire_grace(schedule.period_at(slot, zone, anchor));
    Some(slot + chrono::Duration::from_std(grace).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_next_slot_plus_grace() {
        let utc = Tz::UTC;
        let hourly = Schedule::parse("0 * * * *", at("2026-01-01T00:00:00Z"), utc).unwrap();
        let since = at("2026-01-01T10:00:05Z");
        // Next slot 11:00, grace half an hour.
        assert_eq!(
            late_deadline(&hourly, utc, since, since),
            Some(at("2026-01-01T11:30:00Z"))
        );
        let every = Schedule::parse("every 1m", since, utc).unwrap();
        // Grace clamps to 2 min.
        assert_eq!(
            late_deadline(&every, utc, since, since),
            Some(at("2026-01-01T10:03:05Z"))
        );
        let once = Schedule::parse("in 1h", since, utc).unwrap();
        assert_eq!(late_deadline(&once, utc, since, since), None);
    }
}
