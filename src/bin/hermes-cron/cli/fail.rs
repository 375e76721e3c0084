//! Errors that carry their exit code, the mapping from any error to one, and
//! printing an error once: a `hermes-cron: ...` line, or under `--json` one
//! object on stdout (`error_json.rs` finds its field and fix).

use hermes_cron::dispatch::Cause;
use hermes_cron::exit;
use serde_json::{Map, Value, json};

/// An error with a chosen exit code; its message is printed as is.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(super) struct Exit {
    pub code: i32,
    pub message: String,
    /// Under `--json`: what went wrong in a word, when the exit code alone
    /// does not say (`refused`, `not_started`), and the fields that come with
    /// it (the execution, the cause, the fix).
    pub details: Option<(&'static str, Map<String, Value>)>,
}

/// Bad input (exit 2); the message names the field.
pub(super) fn usage(message: impl Into<String>) -> anyhow::Error {
    Exit {
        code: exit::USAGE,
        message: message.into(),
        details: None,
    }
    .into()
}

/// A failure (exit 1).
pub(super) fn failure(message: impl Into<String>) -> anyhow::Error {
    Exit {
        code: exit::FAILURE,
        message: message.into(),
        details: None,
    }
    .into()
}

/// The run `execution` was refused a restart-safe scope (exit 69).
pub(super) fn refused(execution: &str, message: &str, cause: &Cause) -> anyhow::Error {
    let mut fields = Map::new();
    fields.insert("execution".into(), json!(execution));
    fields.insert("cause".into(), json!(cause.code));
    fields.insert("fix".into(), json!(cause.fix));
    Exit {
        code: exit::SCOPE_UNAVAILABLE,
        message: format!("{execution}: {message}"),
        details: Some(("refused", fields)),
    }
    .into()
}

/// The run `execution`'s worker could not be started (exit 1).
pub(super) fn not_started(execution: &str, message: String) -> anyhow::Error {
    let mut fields = Map::new();
    fields.insert("execution".into(), json!(execution));
    Exit {
        code: exit::FAILURE,
        message,
        details: Some(("not_started", fields)),
    }
    .into()
}

/// Print `err` once, as a line on stderr or (`json`) an object on stdout;
/// returns its exit code.
pub(crate) fn report(err: &anyhow::Error, json: bool) -> i32 {
    let code = exit_code_for(err);
    if json {
        println!("{}", super::error_json::error_json(err, code));
    } else {
        eprintln!("hermes-cron: {err:#}");
    }
    code
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
