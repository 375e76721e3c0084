//! `config.yaml`: the serde mirror, the validated working types, and
//! `get`/`set`/`unset`/`show`.
//!
//! INTERFACE STUB: the config work replaces the bodies; the public API below is
//! what the rest of the crate uses.

use std::path::{Path, PathBuf};

/// The validated configuration. Every field holds a value in range.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `timezone`: an IANA zone name, validated; None means the system zone.
    pub timezone: Option<String>,
    pub cron: CronConfig,
    pub gateway: GatewayConfig,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CronConfig {
    /// `cron.require_restart_safe_scope` (false)
    pub require_restart_safe_scope: bool,
    /// `cron.catch_up_missed` (true): the default catch-up policy is `once` when true, `skip` when false.
    pub catch_up_missed: bool,
    /// `cron.max_parallel_jobs` (unbounded = None)
    pub max_parallel_jobs: Option<u32>,
    /// `cron.script_timeout_seconds` (3600)
    pub script_timeout_seconds: u64,
    /// `cron.output_retention` (50 outputs per job)
    pub output_retention: u32,
    /// `cron.output_max_bytes` (8 MiB)
    pub output_max_bytes: u64,
    /// `cron.ledger_retention` (1000 terminal rows per job)
    pub ledger_retention: u32,
    /// `cron.heartbeat_interval_s` (5; 1..300): how often a worker stamps `heartbeat_at`.
    pub heartbeat_interval_s: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GatewayConfig {
    /// `gateway.loop_watchdog` (true)
    pub loop_watchdog: bool,
    /// `gateway.loop_watchdog_probe_interval_s` (30; 1..3600)
    pub loop_watchdog_probe_interval_s: u64,
    /// `gateway.loop_watchdog_probe_timeout_s` (10; 1..600)
    pub loop_watchdog_probe_timeout_s: u64,
    /// `gateway.loop_watchdog_max_strikes` (3; 1..1000)
    pub loop_watchdog_max_strikes: u32,
}

impl Default for Config {
    fn default() -> Self {
        todo!("config defaults")
    }
}

/// One value that was ignored in favour of the default; names the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    pub key: String,
    pub message: String,
}

/// A loaded config and the warnings produced while validating it.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<ConfigWarning>,
}

/// Failed to read or change the config.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Malformed YAML. Displayed as `file:line:column: message`. Exit 2.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// An unknown key or a value that is not valid for the key. Exit 2.
    #[error("{0}")]
    Invalid(String),
    #[error("failed to access {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Load `path`; a missing file means every default.
pub fn load(_path: &Path) -> Result<Loaded, ConfigError> {
    todo!("config load")
}

/// The effective value of `key` as text (the default when unset).
pub fn get(_path: &Path, _key: &str) -> Result<String, ConfigError> {
    todo!("config get")
}

/// Validate `value` for `key`, then write it, keeping every other key; atomic, 0600.
pub fn set(_path: &Path, _key: &str, _value: &str) -> Result<(), ConfigError> {
    todo!("config set")
}

/// Remove `key` (both the dotted and the nested form) so the default applies again.
pub fn unset(_path: &Path, _key: &str) -> Result<(), ConfigError> {
    todo!("config unset")
}

/// Every key with its effective value and where it came from, as YAML-ish text.
pub fn show(_path: &Path) -> Result<String, ConfigError> {
    todo!("config show")
}
