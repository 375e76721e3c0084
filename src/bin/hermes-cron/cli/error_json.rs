//! An error as `--json` prints it: one object on stdout,
//!
//! `{"error": "usage", "exit_code": 2, "message": "...", "field": "--name", "fix": "..."}`
//!
//! - `error`: `usage` (exit 2), `failure` (1), or what the command names
//!   (`refused`, exit 69; `not_started`), beside its own fields
//!   (`execution`, `cause`);
//! - `message`: the whole message, as the line without `--json` says it;
//! - `field`: the flag (`--schedule`), argument (`JOB`, `COMMAND`) or config
//!   key (`cron.max_parallel_jobs`) at fault, when one is;
//! - `fix`: what to do about it, when the message says (the part after its
//!   first `; `, the house form `what is wrong; what to do`).

use super::fail::Exit;
use hermes_cron::config::{ConfigError, key_table};
use hermes_cron::job::JobError;
use hermes_cron::store::JobLookupError;
use serde_json::{Map, Value, json};

/// The JSON object for `err`, whose exit code is `code`.
pub(super) fn error_json(err: &anyhow::Error, code: i32) -> Value {
    let top = err.to_string();
    let mut object = Map::new();
    let details = err
        .chain()
        .find_map(|c| c.downcast_ref::<Exit>()?.details.as_ref());
    let kind = match (details, code) {
        (Some((kind, _)), _) => *kind,
        (None, hermes_cron::exit::USAGE) => "usage",
        (None, _) => "failure",
    };
    object.insert("error".into(), json!(kind));
    object.insert("exit_code".into(), json!(code));
    object.insert("message".into(), json!(format!("{err:#}")));
    object.insert("field".into(), json!(field_of(err, &top)));
    object.insert("fix".into(), json!(fix_of(&top)));
    if let Some((_, fields)) = details {
        for (k, v) in fields {
            if !v.is_null() || !object.contains_key(k) {
                object.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(object)
}

/// Whether the command line asks for `--json` (before a `--`), for an error
/// in the command line itself, which clap reports before anything is parsed.
pub(crate) fn json_asked() -> bool {
    std::env::args()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// A command-line error (an unknown flag, a missing value) as `--json`
/// prints it: `error` `usage`, the argument at fault, clap's tips as the fix.
pub(crate) fn parse_error_json(e: &clap::Error) -> Value {
    use clap::error::{ContextKind, ContextValue};
    let rendered = e.render().to_string();
    let message = rendered
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string();
    let field = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => Some(arg.clone()),
        _ => None,
    };
    let tips: Vec<&str> = rendered
        .lines()
        .filter_map(|l| l.trim().strip_prefix("tip: "))
        .collect();
    json!({
        "error": "usage", "exit_code": hermes_cron::exit::USAGE, "message": message,
        "field": field, "fix": (!tips.is_empty()).then(|| tips.join("; ")),
    })
}

/// The flag, argument or key an error is about.
fn field_of(err: &anyhow::Error, top: &str) -> Option<String> {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<JobError>() {
            return Some(match e {
                JobError::Invalid { flag, .. } => flag.to_string(),
                JobError::Schedule(_) => "--schedule".into(),
            });
        }
        if let Some(JobLookupError::NotFound(_) | JobLookupError::Ambiguous { .. }) =
            cause.downcast_ref::<JobLookupError>()
        {
            return Some("JOB".into());
        }
        if let Some(ConfigError::Invalid(message)) = cause.downcast_ref::<ConfigError>() {
            return quoted_key(message);
        }
    }
    let (head, _) = top.split_once(": ")?;
    let flag = head.starts_with("--")
        && head[2..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '-');
    let argument = !head.is_empty() && head.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    (flag || argument || is_config_key(head)).then(|| head.to_string())
}

/// The first `` `key` `` of a config message (the key it is about; an
/// unknown one too).
fn quoted_key(message: &str) -> Option<String> {
    let (_, rest) = message.split_once('`')?;
    let (key, _) = rest.split_once('`')?;
    (!key.is_empty() && !key.contains(' ')).then(|| key.to_string())
}

fn is_config_key(name: &str) -> bool {
    key_table().iter().any(|k| k.name == name)
}

/// What the message says to do: the part after its first `; `.
fn fix_of(top: &str) -> Option<String> {
    let (_, fix) = top.split_once("; ")?;
    let fix = fix.trim();
    (!fix.is_empty()).then(|| fix.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::fail::{refused, usage};

    #[test]
    fn a_flag_error_names_its_flag_and_its_fix() {
        let e = usage("--name: a job named \"b\" exists already; choose another name");
        let j = error_json(&e, 2);
        assert_eq!(j["error"], "usage");
        assert_eq!(j["exit_code"], 2);
        assert_eq!(j["field"], "--name");
        assert_eq!(j["fix"], "choose another name");
    }

    #[test]
    fn a_sentence_with_a_colon_names_no_field() {
        let e = usage("cannot read the ledger: disk I/O error");
        let j = error_json(&e, 1);
        assert_eq!(j["error"], "failure");
        assert_eq!(j["field"], Value::Null);
        assert_eq!(j["fix"], Value::Null);
    }

    #[test]
    fn a_config_error_names_its_key() {
        let e: anyhow::Error = ConfigError::Invalid(
            "cannot set `cron.max_parallel_jobs` to `-3`: out of range".into(),
        )
        .into();
        assert_eq!(error_json(&e, 2)["field"], "cron.max_parallel_jobs");
        let e = usage("cron.path: not absolute; give an absolute path");
        assert_eq!(error_json(&e, 2)["field"], "cron.path");
    }

    #[test]
    fn a_refusal_keeps_its_execution_cause_and_fix() {
        let cause = hermes_cron::dispatch::Cause {
            code: hermes_cron_core::placement::CauseCode::NoAddress,
            problem: "no user bus".into(),
            fix: Some("start a user session".into()),
        };
        let e = refused("0193", "no user bus; start a user session", &cause);
        let j = error_json(&e, 69);
        assert_eq!(j["error"], "refused");
        assert_eq!(j["execution"], "0193");
        assert_eq!(j["cause"], "no_address");
        assert_eq!(j["fix"], "start a user session");
    }
}
