//! `config set|unset`: the file's new text (the caller reads and writes it).
//!
//! `set` validates strictly before touching anything: an unknown key or a
//! value that `load` would replace by the default is refused, and so is a file
//! `load` would refuse (it is never clobbered). Writes go through
//! the caller's atomic write; `unset` of a key the file does not mention
//! gives no new text.

use std::path::Path;

use super::keys;
use super::model::ConfigError;
use super::suggest::{require, unknown_key};
use super::validate::{check, refusal};
use super::yaml::{self, Document};

/// Validate `value` for `key`, then write it, keeping every other key; atomic, 0600.
///
/// `value` is read as one YAML scalar (`30`, `30.0`, `true`, `null`,
/// `Europe/Paris`); the canonical form is written (`30`, and `null` for
/// `unbounded`/`system`).
/// `bytes` is the file's contents (None: no file); `path` names it in errors.
pub fn set(
    path: &Path,
    bytes: Option<&[u8]>,
    key: &str,
    value: &str,
) -> Result<String, ConfigError> {
    let spec = require(key)?;
    let raw = yaml::parse_scalar(value).map_err(|err| {
        ConfigError::Invalid(format!(
            "cannot set `{key}` to `{value}`: not a YAML value ({err}); expected {}",
            spec.accepted()
        ))
    })?;
    let setting =
        check(spec, &raw).map_err(|why| ConfigError::Invalid(refusal(spec, value, &raw, &why)))?;
    let mut document = match bytes {
        Some(bytes) => Document::parse(path, bytes)?,
        None => Document::default(),
    };
    document.put(spec.name, &setting);
    document.to_text()
}

/// Remove `key` (both the dotted and the nested form) so the default applies again.
///
/// A known key the file does not mention is a no-op success. An unknown key
/// is removed when the file has it (to clean up what `load` warns about), and
/// refused otherwise, naming the close valid keys.
/// Returns the new text, or None when there is nothing to write.
pub fn unset(path: &Path, bytes: Option<&[u8]>, key: &str) -> Result<Option<String>, ConfigError> {
    let spec = keys::find(key);
    let Some(bytes) = bytes else {
        return spec.map(|_| None).ok_or_else(|| unknown_key(key));
    };
    let mut document = Document::parse(path, bytes)?;
    if spec.is_none() && !document.contains(key) {
        return Err(unknown_key(key));
    }
    if document.remove(key) {
        return document.to_text().map(Some);
    }
    Ok(None)
}
