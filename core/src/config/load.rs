//! Parsing and validating a config file's contents, without touching the
//! filesystem (the main crate's `config` reads the file).
//!
//! A missing file is every default with no warnings; so is an empty file or
//! one holding only comments or `null`. A file that is not a mapping (a list,
//! a scalar) or has malformed YAML or a key twice is a [`ConfigError::Syntax`]
//! naming the file, line and column. Any other content loads: bad values
//! become defaults with one warning each (see `validate.rs`).

use std::path::Path;

use super::model::{ConfigError, Loaded};
use super::raw::RawConfig;
use super::validate::{Validated, validate};
use super::yaml;
use crate::schedule::ZoneTable;

/// Load a config file's contents; `path` only names the file in errors,
/// `zones` reads `timezone`. Never panics, whatever the bytes (fuzzed in
/// `tests/fuzz`).
pub fn load_bytes(path: &Path, bytes: &[u8], zones: &ZoneTable) -> Result<Loaded, ConfigError> {
    Ok(validated(path, Some(bytes), zones)?.loaded)
}

/// The contents (None: no file), validated, keeping where each value came
/// from (for `get` and `show`).
pub fn validated(
    path: &Path,
    bytes: Option<&[u8]>,
    zones: &ZoneTable,
) -> Result<Validated, ConfigError> {
    let raw = match bytes {
        Some(bytes) => RawConfig::of(&yaml::parse(path, bytes)?),
        None => RawConfig::default(),
    };
    Ok(validate(&raw, zones))
}
