//! Where one alert goes and how a failed delivery is retried: backoff from
//! 5 s, doubling, capped at 10 min, for at most [`MAX_ATTEMPTS`] attempts
//! (about two hours), then the delivery is given up (`failed`).

use crate::schedule::Timestamp;
use std::time::Duration;

/// Attempts made before a delivery is given up.
pub const MAX_ATTEMPTS: u32 = 20;
const FIRST_BACKOFF: Duration = Duration::from_secs(5);
const MAX_BACKOFF: Duration = Duration::from_secs(600);

/// The kind of a delivery's destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Destination {
    /// A shell command line, run like a job; the event on stdin.
    Command,
    /// An HTTP POST of the event.
    Webhook,
    /// An HTTP GET of a ping URL (a Healthchecks-style check).
    Ping,
}

crate::text_enum_impls!(Destination, "destination", { Command => "command", Webhook => "webhook", Ping => "ping" });
crate::text_enum_serde!(Destination);

/// When the next attempt is due after `attempts` failed ones, the last at
/// `at`; None: give up.
pub fn next_attempt_after(attempts: u32, at: Timestamp) -> Option<Timestamp> {
    if attempts >= MAX_ATTEMPTS {
        return None;
    }
    let doublings = attempts.saturating_sub(1).min(16);
    let wait = (FIRST_BACKOFF * 2u32.pow(doublings)).min(MAX_BACKOFF);
    Some(at + chrono::Duration::from_std(wait).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_is_capped_and_ends() {
        let t = chrono::DateTime::UNIX_EPOCH;
        let wait = |n| (next_attempt_after(n, t).unwrap() - t).num_seconds();
        assert_eq!(wait(1), 5);
        assert_eq!(wait(2), 10);
        assert_eq!(wait(5), 80);
        assert_eq!(wait(10), 600);
        assert_eq!(next_attempt_after(MAX_ATTEMPTS, t), None);
        let total: i64 = (1..MAX_ATTEMPTS).map(wait).sum();
        assert!((3600..4 * 3600).contains(&total), "{total}");
    }
}
