//! How a run that started ended: the worker's judgement of its job's exit
//! ([`judge`]), as an enum carrying its data ([`RunEnd`]), and the whole
//! record the worker writes ([`Finished`]).

use super::reason::ReasonCode;
use super::signal::signal_name;
use super::state::ExecState;
use std::time::Duration;

/// How the job's process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this status.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// Why the worker stopped a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Its wall-clock timeout passed.
    Timeout,
    /// It wrote no output for its idle timeout.
    Idle,
}

/// The end of a job's process: the exit plus what the worker did to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// How it exited.
    pub exit: Exit,
    /// The worker stopped it, and why.
    pub stopped: Option<Stopped>,
    /// The worker forwarded this signal (SIGTERM/SIGINT) it received.
    pub cancelled_by: Option<i32>,
}

/// How a run ended, with what each ending carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Exited 0.
    Succeeded,
    /// Exited non-zero, or killed by a signal nobody forwarded.
    Failed {
        /// How it ended.
        exit: Exit,
    },
    /// Stopped at its timeout.
    TimedOut {
        /// The timeout it ran into.
        limit: Duration,
    },
    /// Stopped after writing no output for `limit` (its idle timeout).
    Idle {
        /// The idle timeout.
        limit: Duration,
    },
    /// The worker received `signal` and passed it to the job.
    Cancelled {
        /// The signal's number.
        signal: i32,
    },
    /// The command could not be started.
    NotStarted {
        /// Why, for the reason text.
        message: String,
    },
    /// The command exited with the run's declined status: it chose not to
    /// run the job (recorded `skipped`, never a failure, never retried).
    Declined {
        /// The exit status, the declined one.
        code: i32,
    },
    /// The command exited with the run's delivery-failed status: the job ran
    /// but its result was not delivered (recorded `failed`).
    DeliveryFailed,
}

impl RunEnd {
    /// The terminal state this ending is recorded as.
    pub fn state(&self) -> ExecState {
        match self {
            RunEnd::Succeeded => ExecState::Succeeded,
            RunEnd::Failed { .. } | RunEnd::NotStarted { .. } | RunEnd::DeliveryFailed => {
                ExecState::Failed
            }
            RunEnd::TimedOut { .. } | RunEnd::Idle { .. } => ExecState::TimedOut,
            RunEnd::Cancelled { .. } => ExecState::Cancelled,
            RunEnd::Declined { .. } => ExecState::Skipped,
        }
    }

    /// The reason code and text (None for a success).
    pub fn reason(&self) -> Option<(ReasonCode, String)> {
        Some(match self {
            RunEnd::Succeeded => return None,
            RunEnd::Failed {
                exit: Exit::Code(code),
            } => (ReasonCode::ExitCode, format!("exited with status {code}")),
            RunEnd::Failed {
                exit: Exit::Signal(sig),
            } => (
                ReasonCode::Killed,
                format!("killed by {}", signal_name(*sig)),
            ),
            RunEnd::TimedOut { limit } => (
                ReasonCode::Timeout,
                format!("stopped after the {}s timeout", limit.as_secs()),
            ),
            RunEnd::Idle { limit } => (
                ReasonCode::Idle,
                format!(
                    "stopped after {}s without output (its idle timeout)",
                    limit.as_secs()
                ),
            ),
            RunEnd::Cancelled { signal } => (
                ReasonCode::Signal,
                format!(
                    "the worker received {} and passed it to the job",
                    signal_name(*signal)
                ),
            ),
            RunEnd::NotStarted { message } => (ReasonCode::ExecFailed, message.clone()),
            RunEnd::DeliveryFailed => (
                ReasonCode::DeliveryFailed,
                "the job ran, but its result was not delivered (its output says why)".into(),
            ),
            RunEnd::Declined { code } => (
                ReasonCode::Declined,
                format!(
                    "the command exited with {code}, its declined status: it did not run the job"
                ),
            ),
        })
    }
}

/// The exit statuses by which a command says more than "failed" (a Hermes
/// fire's; see [`crate::run::RunSpec::declined_exit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExitMeanings {
    /// It chose not to run the job.
    pub declined: Option<i32>,
    /// It ran the job, and delivering its result failed.
    pub delivery_failed: Option<i32>,
}

/// Judge an ending under the run's `timeout`, `idle` timeout and the
/// meanings of its exit statuses.
pub fn judge(e: &Ending, timeout: Duration, idle: Duration, exits: ExitMeanings) -> RunEnd {
    match (e.exit, e.stopped, e.cancelled_by) {
        (_, Some(Stopped::Timeout), _) => RunEnd::TimedOut { limit: timeout },
        (_, Some(Stopped::Idle), _) => RunEnd::Idle { limit: idle },
        (Exit::Code(code), None, None) if exits.declined == Some(code) && code != 0 => {
            RunEnd::Declined { code }
        }
        (Exit::Code(code), None, None) if exits.delivery_failed == Some(code) && code != 0 => {
            RunEnd::DeliveryFailed
        }
        (Exit::Code(0), None, None) => RunEnd::Succeeded,
        (_, None, Some(signal)) => RunEnd::Cancelled { signal },
        (exit, None, None) => RunEnd::Failed { exit },
    }
}

/// Everything the worker records when its run ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// How it ended, judged.
    pub end: RunEnd,
    /// How the job's process exited (None when it never started).
    pub exit: Option<Exit>,
    /// How long the command ran, in milliseconds (None: it never started).
    pub duration_ms: Option<u64>,
    /// The command's peak resident set, in KiB (None: it never started).
    pub max_rss_kb: Option<u64>,
    /// Job output bytes stored in the output file.
    pub output_bytes: Option<u64>,
    /// Whether output was dropped (past the cap, or cut for a full disk).
    pub output_truncated: Option<bool>,
    /// What else went wrong, appended to the reason (output not captured,
    /// the disk was full).
    pub notes: Vec<String>,
    /// The model usage the run reported (see `Execution::usage`).
    pub usage: Option<serde_json::Value>,
}

impl Finished {
    /// A command that could not be started.
    pub fn not_started(message: String) -> Finished {
        Finished {
            end: RunEnd::NotStarted { message },
            exit: None,
            duration_ms: None,
            max_rss_kb: None,
            output_bytes: None,
            output_truncated: None,
            notes: Vec::new(),
            usage: None,
        }
    }

    /// The reason text: the ending's, then the notes, `; `-separated.
    pub fn reason_text(&self) -> Option<String> {
        let mut parts: Vec<String> = self
            .end
            .reason()
            .map(|(_, text)| text)
            .into_iter()
            .collect();
        parts.extend(self.notes.iter().cloned());
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: ExitMeanings = ExitMeanings {
        declined: None,
        delivery_failed: None,
    };
    const HERMES: ExitMeanings = ExitMeanings {
        declined: Some(100),
        delivery_failed: Some(101),
    };

    fn end(exit: Exit) -> Ending {
        Ending {
            exit,
            stopped: None,
            cancelled_by: None,
        }
    }

    #[test]
    fn judges_each_ending() {
        let t = Duration::from_secs(5);
        assert_eq!(
            judge(&end(Exit::Code(0)), t, t, NONE).state(),
            ExecState::Succeeded
        );
        assert_eq!(
            judge(&end(Exit::Code(3)), t, t, NONE).state(),
            ExecState::Failed
        );
        assert_eq!(
            judge(&end(Exit::Signal(11)), t, t, NONE)
                .reason()
                .unwrap()
                .1,
            "killed by SIGSEGV"
        );
        let timed = Ending {
            stopped: Some(Stopped::Timeout),
            ..end(Exit::Signal(15))
        };
        assert_eq!(judge(&timed, t, t, NONE).state(), ExecState::TimedOut);
        let cancelled = Ending {
            cancelled_by: Some(15),
            ..end(Exit::Signal(15))
        };
        assert_eq!(judge(&cancelled, t, t, NONE).state(), ExecState::Cancelled);
        let idle = Ending {
            stopped: Some(Stopped::Idle),
            ..end(Exit::Signal(15))
        };
        let end = judge(&idle, t, Duration::from_secs(600), NONE);
        assert_eq!(end.state(), ExecState::TimedOut);
        let (code, why) = end.reason().unwrap();
        assert_eq!(code, ReasonCode::Idle);
        assert!(why.contains("600s without output"), "{why}");
    }

    #[test]
    fn the_declined_status_is_a_skip_and_only_that_status() {
        let t = Duration::from_secs(5);
        let declined = judge(&end(Exit::Code(100)), t, t, HERMES);
        assert_eq!(declined, RunEnd::Declined { code: 100 });
        assert_eq!(declined.state(), ExecState::Skipped);
        assert_eq!(declined.reason().unwrap().0, ReasonCode::Declined);
        assert_eq!(
            judge(&end(Exit::Code(1)), t, t, HERMES).state(),
            ExecState::Failed
        );
        assert_eq!(
            judge(&end(Exit::Code(100)), t, t, NONE).state(),
            ExecState::Failed
        );
        let timed = Ending {
            stopped: Some(Stopped::Timeout),
            ..end(Exit::Code(100))
        };
        assert_eq!(judge(&timed, t, t, HERMES).state(), ExecState::TimedOut);
    }

    #[test]
    fn the_delivery_failed_status_is_a_failure_of_its_own_and_only_that_status() {
        let t = Duration::from_secs(5);
        let undelivered = judge(&end(Exit::Code(101)), t, t, HERMES);
        assert_eq!(undelivered, RunEnd::DeliveryFailed);
        assert_eq!(undelivered.state(), ExecState::Failed);
        assert_eq!(undelivered.reason().unwrap().0, ReasonCode::DeliveryFailed);
        assert_eq!(
            judge(&end(Exit::Code(101)), t, t, NONE),
            RunEnd::Failed {
                exit: Exit::Code(101)
            }
        );
    }

    #[test]
    fn notes_follow_the_reason() {
        let mut f = Finished::not_started("cannot start \"x\"".into());
        assert_eq!(f.reason_text().unwrap(), "cannot start \"x\"");
        f.end = RunEnd::Succeeded;
        assert_eq!(f.reason_text(), None);
        f.notes.push("output not captured".into());
        assert_eq!(f.reason_text().unwrap(), "output not captured");
        f.end = RunEnd::Failed {
            exit: Exit::Code(2),
        };
        assert_eq!(
            f.reason_text().unwrap(),
            "exited with status 2; output not captured"
        );
    }
}
