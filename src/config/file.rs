//! The config file on disk: [`load`], [`get`], [`show`], [`set`] and
//! [`unset`] read or write `config.yaml` and leave the parsing, validation and
//! editing to `hermes_cron_core::config`, with the caller's zone table for
//! `timezone`. Writes are atomic and 0600 (`crate::fsutil`).

use std::io;
use std::path::Path;

use hermes_cron_core::config::{self as pure, ConfigError, Loaded, Validated};
use hermes_cron_core::schedule::ZoneTable;

/// Load `path`; a missing file means every default.
pub fn load(path: &Path, zones: &ZoneTable) -> Result<Loaded, ConfigError> {
    Ok(read(path, zones)?.loaded)
}

/// Load `path`, keeping where each value came from (what `show` lists).
pub fn read(path: &Path, zones: &ZoneTable) -> Result<Validated, ConfigError> {
    pure::validated(path, read_bytes(path)?.as_deref(), zones)
}

/// The file's bytes, or None when it does not exist.
fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, ConfigError> {
    match crate::small_file::read(path, crate::small_file::CONFIG_MAX) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The effective value of `key` as text (the default when unset), a secret
/// masked unless `secrets` reveals it.
pub fn get(
    path: &Path,
    key: &str,
    zones: &ZoneTable,
    secrets: pure::Secrets,
) -> Result<String, ConfigError> {
    pure::get(&read(path, zones)?, key, secrets)
}

/// Every key with its effective value and where it came from.
pub fn show(path: &Path, zones: &ZoneTable, secrets: pure::Secrets) -> Result<String, ConfigError> {
    Ok(pure::show(&read(path, zones)?, secrets))
}

/// Validate `value` for `key`, then write it, keeping every other key.
pub fn set(path: &Path, key: &str, value: &str, zones: &ZoneTable) -> Result<(), ConfigError> {
    let text = pure::set(path, read_bytes(path)?.as_deref(), key, value, zones)?;
    write_atomic(path, &text)
}

/// Remove `key` so its default applies again; writes nothing when the file
/// does not mention it.
pub fn unset(path: &Path, key: &str) -> Result<(), ConfigError> {
    if let Some(text) = pure::unset(path, read_bytes(path)?.as_deref(), key)? {
        write_atomic(path, &text)?;
    }
    Ok(())
}

/// Set Hermes's nested key `key` to the string `value` (see the core's
/// `set_hermes`); returns whether the file changed.
pub fn set_hermes_key(path: &Path, key: &str, value: &str) -> Result<bool, ConfigError> {
    match pure::set_hermes(path, read_bytes(path)?.as_deref(), key, value)? {
        Some(text) => write_atomic(path, &text).map(|()| true),
        None => Ok(false),
    }
}

/// Remove Hermes's nested key `key`; returns whether the file changed.
pub fn unset_hermes_key(path: &Path, key: &str) -> Result<bool, ConfigError> {
    match pure::unset_hermes(path, read_bytes(path)?.as_deref(), key)? {
        Some(text) => write_atomic(path, &text).map(|()| true),
        None => Ok(false),
    }
}

/// Write the config atomically, as a config error.
fn write_atomic(path: &Path, text: &str) -> Result<(), ConfigError> {
    crate::fsutil::write_atomic(path, text.as_bytes()).map_err(|e| ConfigError::Io {
        path: e.path,
        source: e.source,
    })
}

#[cfg(test)]
mod edit_tests;
#[cfg(test)]
mod env_tests;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod query_tests;
