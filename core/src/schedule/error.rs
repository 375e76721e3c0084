//! [`ScheduleError`], the one error type of the schedule module, and
//! [`Rejection`], what an inner parser reports before it knows which input
//! (a schedule, a stored schedule, a duration) the bad token belonged to.
//!
//! Invariant: every message names the token that failed, quoted, and says
//! what would have been accepted.

/// Why a schedule string, zone or duration was refused. Names the bad token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ScheduleError {
    /// The token that failed, as the user typed it.
    pub token: String,
    /// A full, user-facing message naming the token and what would be accepted.
    pub message: String,
}

/// A refused token and the reason, without the surrounding input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    /// The token that failed, as the user typed it.
    pub(crate) token: String,
    /// A lowercase fragment naming the token, e.g. `unknown unit "x" in "5x"`.
    pub(crate) reason: String,
}

impl Rejection {
    pub(crate) fn new(token: impl Into<String>, reason: impl Into<String>) -> Self {
        Rejection {
            token: token.into(),
            reason: reason.into(),
        }
    }
}

impl ScheduleError {
    fn wrap(what: &str, text: &str, rejection: Rejection) -> Self {
        ScheduleError {
            message: format!("invalid {what} {text:?}: {}", rejection.reason),
            token: rejection.token,
        }
    }

    /// A schedule the user typed was refused.
    pub(crate) fn schedule(text: &str, rejection: Rejection) -> Self {
        Self::wrap("schedule", text, rejection)
    }

    /// A stored (canonical) schedule did not parse back.
    pub(crate) fn stored(text: &str, rejection: Rejection) -> Self {
        Self::wrap("stored schedule", text, rejection)
    }

    /// A duration (`--timeout`, `--retry-backoff`) was refused.
    pub(crate) fn duration(text: &str, rejection: Rejection) -> Self {
        Self::wrap("duration", text, rejection)
    }

    /// A zone name was refused; `hint` completes the sentence.
    pub(crate) fn zone(name: &str, hint: &str) -> Self {
        ScheduleError {
            token: name.to_string(),
            message: format!("unknown time zone {name:?}; {hint}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_message_quotes_the_input_and_keeps_the_token() {
        let err = ScheduleError::schedule(
            "every 5x",
            Rejection::new("x", "unknown unit \"x\" in \"5x\"; use s, m, h or d"),
        );
        assert_eq!(
            err.to_string(),
            "invalid schedule \"every 5x\": unknown unit \"x\" in \"5x\"; use s, m, h or d"
        );
        assert_eq!(err.token, "x");
    }

    #[test]
    fn zone_message_names_the_zone() {
        let err = ScheduleError::zone("Mars/Base", "use an IANA name such as UTC");
        assert_eq!(err.token, "Mars/Base");
        assert!(err.message.contains("\"Mars/Base\""));
    }
}
