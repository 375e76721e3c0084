//! The validated configuration types, the load result and the error type.
//!
//! Invariant: a [`Config`] only ever holds values that passed validation (every
//! number inside its key's range, `timezone` a known IANA name). The defaults
//! are not written here: [`Config::default`] applies the default of every row
//! of the key table in `keys.rs`, the one place a default is spelled.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::keys;
use crate::job::Env;

/// The validated configuration. Every field holds a value in range.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `timezone`: an IANA zone name, validated and in its canonical spelling
    /// (`Europe/London`, whatever case the file used); None means the system zone.
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
    /// `cron.max_parallel_jobs` (unbounded = None; 1..100000)
    pub max_parallel_jobs: Option<u32>,
    /// `cron.script_timeout_seconds` (3600; 1..2592000)
    pub script_timeout_seconds: u64,
    /// `cron.output_retention` (50 outputs per job; 1..100000)
    pub output_retention: u32,
    /// `cron.output_max_bytes` (8 MiB; 1024..1 GiB)
    pub output_max_bytes: u64,
    /// `cron.ledger_retention` (1000 terminal rows per job; 1..10000000)
    pub ledger_retention: u32,
    /// `cron.heartbeat_interval_s` (5; 1..300): how often a worker stamps `heartbeat_at`.
    pub heartbeat_interval_s: u64,
    /// `cron.staging_max_workers` (1000; 0..100000, 0 turns staging off): the
    /// most workers held staged ahead of their instants at once.
    pub staging_max_workers: u32,
    /// `cron.staging_lead_min_s` (1 s; 0..600 s, fractions allowed): the
    /// floor of the lead time.
    pub staging_lead_min: Duration,
    /// `cron.staging_lead_max_s` (60 s; 1..3600 s, fractions allowed): the
    /// ceiling of the lead time.
    pub staging_lead_max: Duration,
    /// `cron.alert_on` (all = None): the alert kinds jobs without
    /// `--alert-on` alert on, canonical.
    pub alert_on: Option<String>,
    /// `cron.alert_after` (1; 1..1000)
    pub alert_after: u32,
    /// `cron.alert_command` (none): a shell command line.
    pub alert_command: Option<String>,
    /// `cron.alert_webhook` (none): an http(s) URL.
    pub alert_webhook: Option<String>,
    /// `cron.path` (`/usr/local/bin:/usr/bin:/bin`): the `PATH` of every
    /// run's base environment; absolute directories separated by `:`.
    pub path: String,
    /// `cron.env` (none): variables added to every run's environment after
    /// the base and before the job's own; valid names and values only.
    pub env: Env,
    /// `cron.database` (none: the home's SQLite file): a PostgreSQL
    /// connection string (without a password) several hosts share; see
    /// [`crate::cluster::check_database`].
    pub database: Option<String>,
}

impl CronConfig {
    /// The alert keys, as a job's alert rules fall back to them.
    pub fn alert_defaults(&self) -> crate::alert::AlertDefaults<'_> {
        crate::alert::AlertDefaults {
            on: self.alert_on.as_deref().unwrap_or("all"),
            after: self.alert_after,
            command: self.alert_command.as_deref().unwrap_or_default(),
            webhook: self.alert_webhook.as_deref().unwrap_or_default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct GatewayConfig {
    /// `gateway.loop_watchdog` (true)
    pub loop_watchdog: bool,
    /// `gateway.loop_watchdog_probe_interval_s` (30 s; 1..3600 s, fractions allowed)
    pub loop_watchdog_probe_interval: Duration,
    /// `gateway.loop_watchdog_probe_timeout_s` (10 s; 1..600 s, fractions allowed)
    pub loop_watchdog_probe_timeout: Duration,
    /// `gateway.loop_watchdog_max_strikes` (3; 1..1000)
    pub loop_watchdog_max_strikes: u32,
    /// `gateway.ping_url` (none): the dead-man ping.
    pub ping_url: Option<String>,
    /// `gateway.ping_command` (none): the dead-man ping as a command.
    pub ping_command: Option<String>,
    /// `gateway.ping_interval_s` (60; 1..86400)
    pub ping_interval_s: u64,
    /// `gateway.http_listen` (off = None): where the HTTP endpoint listens,
    /// in its canonical form (`127.0.0.1:9464`, `[::1]:9464`); see
    /// [`crate::http::listen`].
    pub http_listen: Option<String>,
    /// `gateway.http_token` (none): the bearer token the endpoint requires.
    pub http_token: Option<SecretText>,
    /// `gateway.http_token_file` (none): an absolute path to a file holding
    /// the token, read when the gateway starts.
    pub http_token_file: Option<String>,
}

/// A secret string: its `Debug` never shows it, so a config printed in a
/// log or a panic keeps it hidden. [`SecretText::expose`] is the one way in.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(String);

impl SecretText {
    pub fn new(text: String) -> SecretText {
        SecretText(text)
    }

    /// The secret itself, for the code that must compare or write it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretText(<redacted>)")
    }
}

impl Default for Config {
    /// Every key at the default given in the key table.
    fn default() -> Self {
        let mut config = Config {
            timezone: None,
            cron: CronConfig {
                require_restart_safe_scope: false,
                catch_up_missed: false,
                max_parallel_jobs: None,
                script_timeout_seconds: 0,
                output_retention: 0,
                output_max_bytes: 0,
                ledger_retention: 0,
                heartbeat_interval_s: 0,
                staging_max_workers: 0,
                staging_lead_min: Duration::ZERO,
                staging_lead_max: Duration::ZERO,
                alert_on: None,
                alert_after: 0,
                alert_command: None,
                alert_webhook: None,
                path: String::new(),
                env: Env::default(),
                database: None,
            },
            gateway: GatewayConfig {
                loop_watchdog: false,
                loop_watchdog_probe_interval: Duration::ZERO,
                loop_watchdog_probe_timeout: Duration::ZERO,
                loop_watchdog_max_strikes: 0,
                ping_url: None,
                ping_command: None,
                ping_interval_s: 0,
                http_listen: None,
                http_token: None,
                http_token_file: None,
            },
        };
        // The placeholders above are all overwritten: every field has a row.
        for key in keys::KEYS {
            key.reset(&mut config);
        }
        config
    }
}

/// One value that was ignored in favour of the default; names the key.
///
/// `message` is self-contained (it names the key, the rejected value, what is
/// accepted and the default used), so it can be printed on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
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
    /// Malformed YAML, or a file that is not a mapping of keys. Displayed as
    /// `file:line:column: message` (1-based). Exit 2.
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

/// One row of [`key_table`](super::key_table): a key, its default and what it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyInfo {
    /// The dotted name, e.g. `gateway.loop_watchdog_max_strikes`.
    pub name: &'static str,
    /// The default as `get` prints it.
    pub default: String,
    /// What the key accepts, e.g. `an integer from 1 to 1000`.
    pub accepted: String,
    /// One line saying what the key does.
    pub doc: &'static str,
}
