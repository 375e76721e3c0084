//! Pure judgement of how a run ended, and when its retry is owed.

use crate::ledger::{ExecState, RunSpec};
use crate::process::signal_name;
use crate::schedule::Instant;
use std::time::Duration;

/// The longest retry backoff, unless the job's own base backoff is longer.
const RETRY_CAP: Duration = Duration::from_secs(3600);

/// How the job's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// The end of a run: the exit plus what the worker did to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    pub exit: Exit,
    /// The worker stopped it at the timeout.
    pub timed_out: bool,
    /// The worker forwarded this signal (SIGTERM/SIGINT) it received.
    pub cancelled_by: Option<i32>,
}

/// The terminal state, reason code and reason text for an ending.
pub fn judge(e: &Ending, timeout: Duration) -> (ExecState, Option<&'static str>, Option<String>) {
    let secs = timeout.as_secs();
    match (e.exit, e.timed_out, e.cancelled_by) {
        (Exit::Code(0), false, None) => (ExecState::Succeeded, None, None),
        (_, true, _) => (
            ExecState::TimedOut,
            Some("timeout"),
            Some(format!("stopped after the {secs}s timeout")),
        ),
        (_, false, Some(sig)) => (
            ExecState::Cancelled,
            Some("signal"),
            Some(format!(
                "the worker received {} and passed it to the job",
                signal_name(sig)
            )),
        ),
        (Exit::Code(code), false, None) => (
            ExecState::Failed,
            Some("exit_code"),
            Some(format!("exited with status {code}")),
        ),
        (Exit::Signal(sig), false, None) => (
            ExecState::Failed,
            Some("killed"),
            Some(format!("killed by {}", signal_name(sig))),
        ),
    }
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

/// When the next attempt is owed, if one is: only after `failed` or
/// `timed_out`, and only while attempts remain (`retries` extra attempts).
pub fn retry_at(
    state: ExecState,
    attempt: u32,
    retries: u32,
    base: Duration,
    finished: Instant,
) -> Option<Instant> {
    if !state.is_retryable() || attempt > retries {
        return None;
    }
    let delay = chrono::Duration::from_std(retry_delay(base, attempt)).ok()?;
    Some(finished + delay)
}

/// [`retry_at`] under the occurrence's own policy (its `retries` and backoff).
pub fn retry_under(
    spec: &RunSpec,
    state: ExecState,
    attempt: u32,
    finished: Instant,
) -> Option<Instant> {
    retry_at(
        state,
        attempt,
        spec.retries,
        Duration::from_secs(spec.retry_backoff_s),
        finished,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(exit: Exit) -> Ending {
        Ending {
            exit,
            timed_out: false,
            cancelled_by: None,
        }
    }

    #[test]
    fn judges_each_ending() {
        let t = Duration::from_secs(5);
        assert_eq!(judge(&end(Exit::Code(0)), t).0, ExecState::Succeeded);
        assert_eq!(judge(&end(Exit::Code(3)), t).0, ExecState::Failed);
        assert_eq!(
            judge(&end(Exit::Signal(11)), t).2.unwrap(),
            "killed by SIGSEGV"
        );
        let timed = Ending {
            timed_out: true,
            ..end(Exit::Signal(15))
        };
        assert_eq!(judge(&timed, t).0, ExecState::TimedOut);
        let cancelled = Ending {
            cancelled_by: Some(15),
            ..end(Exit::Signal(15))
        };
        assert_eq!(judge(&cancelled, t).0, ExecState::Cancelled);
    }

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
        let b = Duration::from_secs(10);
        assert!(retry_at(ExecState::Failed, 1, 2, b, now).is_some());
        assert!(retry_at(ExecState::Failed, 3, 2, b, now).is_none());
        assert!(retry_at(ExecState::Unknown, 1, 2, b, now).is_none());
        assert!(retry_at(ExecState::TimedOut, 2, 2, b, now).is_some());
    }
}
