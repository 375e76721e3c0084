//! `config get|show`: effective values and where they came from. Read-only.
//!
//! Both work on a [`Validated`] file, so they refuse exactly what `load` refuses
//! and print the default for a value `load` would warn about.
//! Representations: an unbounded `cron.max_parallel_jobs` prints `unbounded`,
//! an unset `timezone` prints `system`; `set` and the file accept both words.
//! `cron.env` prints as a one-line YAML flow mapping with each secret-looking
//! value (of a name such as `*TOKEN*` or `*KEY*`, or a URL with a password)
//! shown as `<redacted>`; one variable is `cron.env.NAME`. A secret key's
//! value (a token, a webhook or ping URL, the database) is masked unless
//! [`Secrets::Revealed`]: a URL keeps its scheme and host, anything else
//! only says how long it is.

use super::keys;
use super::model::{ConfigError, Setting};
use super::suggest::{near_misses, require};
use super::validate::Validated;
use crate::job::{REDACTED, is_secret};

/// Whether secret keys' values are shown (`--reveal`) or masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secrets {
    /// Masked: what `get` and `show` print unless asked.
    Masked,
    /// As they are, for their owner (`--reveal`).
    Revealed,
}

/// `spec`'s rendered value as `secrets` says.
fn shown(spec: &super::model::KeySpec, setting: Setting, secrets: Secrets) -> String {
    let masked = matches!(
        (&spec.field, &setting, secrets),
        (
            super::model::Field::Text {
                secret: super::model::Secret::Value,
                ..
            },
            Setting::Text(Some(_), _),
            Secrets::Masked
        )
    );
    match (masked, setting) {
        (true, Setting::Text(Some(text), _)) if text.contains("://") => {
            crate::alert::redacted_url(&text)
        }
        (true, Setting::Text(Some(text), _)) => {
            format!(
                "<redacted: {} characters; --reveal shows it>",
                text.chars().count()
            )
        }
        (_, setting) => setting.render(),
    }
}

/// The effective value of `key` as text (the default when unset).
///
/// `cron.max_parallel_jobs` without a limit prints `unbounded`; `timezone`
/// without a zone prints `system`. `set` accepts both words back.
pub fn get(validated: &Validated, key: &str, secrets: Secrets) -> Result<String, ConfigError> {
    if let Some((spec, name)) = keys::mapping_entry(key) {
        let found = match spec.current(&validated.loaded.config) {
            Setting::Env(env) => env.0.into_iter().find(|(n, _)| n == name),
            _ => None,
        };
        return match found {
            Some((name, value)) if is_secret(&name, &value) => Ok(REDACTED.to_string()),
            Some((_, value)) => Ok(value),
            None => Err(ConfigError::Invalid(format!(
                "`{}` has no variable `{name}`; set it with `hermes-cron config set {key} VALUE`",
                spec.name
            ))),
        };
    }
    let spec = require(key)?;
    Ok(shown(spec, spec.current(&validated.loaded.config), secrets))
}

/// The longest value that sets the width of `show`'s value column.
const ALIGNED: usize = 40;

/// Every key with its effective value and where it came from, as YAML-ish text.
///
/// One line per key in table order, `key: value  # source`, columns aligned
/// (a value longer than `ALIGNED` characters does not widen the column);
/// the source is `default`, `file`, `file (invalid, default used)` or, for
/// `cron.env`, `file (invalid entries dropped)`. The unknown keys that look
/// like a mistyped key of ours (those `load` warns about) follow as `#
/// unknown key, ignored: NAME (did you mean KEY?)` lines; other unknown keys
/// (Hermes's) are not listed. Without the comments the text is a valid
/// config that loads to the same values, but for a redacted `cron.env` value.
pub fn show(validated: &Validated, secrets: Secrets) -> String {
    let rows: Vec<(String, String, &str)> = entries(validated, secrets)
        .into_iter()
        .map(|e| (format!("{}:", e.key), e.value, e.source))
        .collect();
    let key_width = rows.iter().map(|(k, _, _)| k.len()).max().unwrap_or(0);
    let value_width = rows
        .iter()
        .map(|(_, v, _)| v.len())
        .filter(|len| *len <= ALIGNED)
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for (key, value, source) in rows {
        text.push_str(&format!(
            "{key:<key_width$} {value:<value_width$}  # {source}\n"
        ));
    }
    for (name, close) in mistyped(validated) {
        let close = close.join(" or ");
        text.push_str(&format!(
            "# unknown key, ignored: {name} (did you mean {close}?)\n"
        ));
    }
    text
}

/// One key as `show` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The dotted name.
    pub key: &'static str,
    /// The effective value, as `get` prints it.
    pub value: String,
    /// `default`, `file`, `file (invalid, default used)` or `file (invalid
    /// entries dropped)`.
    pub source: &'static str,
}

/// Every key with its effective value and where it came from, in table
/// order (`show`'s lines, `config show --json`'s objects).
pub fn entries(validated: &Validated, secrets: Secrets) -> Vec<Entry> {
    validated
        .sources
        .iter()
        .map(|(spec, source)| Entry {
            key: spec.name,
            value: shown(spec, spec.current(&validated.loaded.config), secrets),
            source: source.label(),
        })
        .collect()
}

/// The unknown keys that look like a mistyped key of ours, each with the
/// keys it may have meant (`show`'s comment lines).
pub fn mistyped(validated: &Validated) -> Vec<(&str, Vec<&'static str>)> {
    validated
        .unknown
        .iter()
        .map(|name| (name.as_str(), near_misses(name)))
        .collect()
}
