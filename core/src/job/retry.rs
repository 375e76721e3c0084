//! A job's retry policy: how many more attempts after a failure, and when.
//! Only `failed` and `timed_out` are retried (side effects are known not to
//! be complete); `unknown` never is.

use crate::run::ExecState;
use crate::schedule::Timestamp;
use std::time::Duration;

/// The longest retry backoff, unless the job's own base backoff is longer.
const RETRY_CAP: Duration = Duration::from_secs(3600);

/// `--retries N --retry-backoff D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub retries: u32,
    /// The first backoff; it doubles with each attempt.
    pub backoff: Duration,
}

/// The backoff before retry number `attempt` (1-based attempt that failed):
/// `base * 2^(attempt-1)`, capped at one hour (or `base` if that is longer).
pub fn retry_delay(base: Duration, attempt: u32) -> Duration {
    let cap = RETRY_CAP.max(base);
    let factor = 1u32
        .checked_shl(attempt.saturating_sub(1))
        .unwrap_or(u32::MAX);
    base.checked_mul(factor).unwrap_or(cap).min(cap)
}

impl RetryPolicy {
    /// When the next attempt is owed after attempt `attempt` ended in `state`
    /// at `finished`, if one is.
    pub fn next_attempt_at(
        &self,
        state: ExecState,
        attempt: u32,
        finished: Timestamp,
    ) -> Option<Timestamp> {
        if !state.is_retryable() || attempt > self.retries {
            return None;
        }
        let delay = chrono::Duration::from_std(retry_delay(self.backoff, attempt)).ok()?;
        Some(finished + delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let b = Duration::from_secs(30);
        assert_eq!(retry_delay(b, 1), Duration::from_secs(30));
        assert_eq!(retry_delay(b, 3), Duration::from_secs(120));
        assert_eq!(retry_delay(b, 40), RETRY_CAP);
        assert_eq!(
            retry_delay(Duration::from_secs(7200), 2),
            Duration::from_secs(7200)
        );
    }

    #[test]
    fn retries_only_after_failure_and_while_attempts_remain() {
        let now = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        let p = RetryPolicy {
            retries: 2,
            backoff: Duration::from_secs(10),
        };
        assert!(p.next_attempt_at(ExecState::Failed, 1, now).is_some());
        assert!(p.next_attempt_at(ExecState::Failed, 3, now).is_none());
        assert!(p.next_attempt_at(ExecState::Unknown, 1, now).is_none());
        assert!(p.next_attempt_at(ExecState::TimedOut, 2, now).is_some());
    }
}
