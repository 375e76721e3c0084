//! Errors that carry their exit code, and the mapping from any error to one.

use hermes_cron::exit;

/// An error with a chosen exit code; its message is printed as is.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(super) struct Exit {
    pub code: i32,
    pub message: String,
}

/// Bad input (exit 2); the message names the field.
pub(super) fn usage(message: impl Into<String>) -> anyhow::Error {
    Exit {
        code: exit::USAGE,
        message: message.into(),
    }
    .into()
}

/// A failure (exit 1).
pub(super) fn failure(message: impl Into<String>) -> anyhow::Error {
    Exit {
        code: exit::FAILURE,
        message: message.into(),
    }
    .into()
}

/// The exit code for an error that reached `main`.
pub(crate) fn exit_code_for(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<Exit>() {
            return e.code;
        }
        if let Some(e) = cause.downcast_ref::<hermes_cron::config::ConfigError>() {
            return match e {
                hermes_cron::config::ConfigError::Io { .. } => exit::FAILURE,
                _ => exit::USAGE,
            };
        }
        if cause.downcast_ref::<hermes_cron::job::JobError>().is_some()
            || cause
                .downcast_ref::<hermes_cron::schedule::ScheduleError>()
                .is_some()
        {
            return exit::USAGE;
        }
        if let Some(e) = cause.downcast_ref::<hermes_cron::store::JobLookupError>() {
            return match e {
                hermes_cron::store::JobLookupError::Store(_) => exit::FAILURE,
                _ => exit::USAGE,
            };
        }
    }
    exit::FAILURE
}
