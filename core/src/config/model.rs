//! What a config is: the public types (the validated [`Config`], the load
//! result, the error type) and the vocabulary of the key table (a row's
//! [`KeySpec`] and [`Field`], a validated [`Setting`], a [`Rejection`]).
//!
//! Invariant: a [`Config`] only ever holds values that passed validation (every
//! number inside its key's range, `timezone` a known IANA name). The defaults
//! are not written here: `Config::default` (in `keys.rs`) applies the default
//! of every row of the key table, the one place a default is spelled.
//! Imports nothing from the other config files.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::job::Env;
use crate::run::DEFAULT_PATH;

/// The validated configuration. Every field holds a value in range.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `timezone`: an IANA zone name, validated and in its canonical spelling
    /// (`Europe/London`, whatever case the file used); None means the system zone.
    pub timezone: Option<String>,
    /// The `cron:` keys.
    pub cron: CronConfig,
    /// The `gateway:` keys.
    pub gateway: GatewayConfig,
}

/// The `cron:` keys, validated; each field's doc gives its key, default and range.
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

/// How many runs a gateway on a shared (PostgreSQL) ledger starts at once
/// when `cron.max_parallel_jobs` is not set: each running worker holds one
/// database connection, and the server's slots are shared by every host.
pub const SHARED_LEDGER_PARALLEL: u32 = 64;

/// The connections a gateway holds itself on a shared ledger: its loop, its
/// lease, `LISTEN`, and its HTTP endpoint's.
pub const GATEWAY_CONNECTIONS: u32 = 4;

impl CronConfig {
    /// How many runs a gateway starts at once: `cron.max_parallel_jobs`,
    /// else unbounded on SQLite and [`SHARED_LEDGER_PARALLEL`] on a shared
    /// ledger, so the connections one host opens are bounded (its running
    /// workers' and [`GATEWAY_CONNECTIONS`]).
    pub fn parallel_bound(&self, shared_ledger: bool) -> Option<u32> {
        match shared_ledger {
            true => Some(self.shared_parallel()),
            false => self.max_parallel_jobs,
        }
    }

    /// How many runs a gateway starts at once on a shared ledger.
    pub fn shared_parallel(&self) -> u32 {
        self.max_parallel_jobs.unwrap_or(SHARED_LEDGER_PARALLEL)
    }

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

/// The `gateway:` keys, validated; each field's doc gives its key, default and range.
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
    /// Wrap `text`.
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

/// One value that was ignored in favour of the default; names the key.
///
/// `message` is self-contained (it names the key, the rejected value, what is
/// accepted and the default used), so it can be printed on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The dotted key, e.g. `cron.max_parallel_jobs`.
    pub key: String,
    /// The whole warning (see above).
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
    /// The config; a rejected value's key holds its default.
    pub config: Config,
    /// What was rejected, in file order.
    pub warnings: Vec<ConfigWarning>,
}

/// Failed to read or change the config.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Malformed YAML, or a file that is not a mapping of keys. Displayed as
    /// `file:line:column: message` (1-based). Exit 2.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line, 1 first.
        line: usize,
        /// The column, 1 first.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// An unknown key or a value that is not valid for the key. Exit 2.
    #[error("{0}")]
    Invalid(String),
    /// The file could not be read or written.
    #[error("failed to access {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
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

/// The word `get` prints (and `set` and the file accept) for an unbounded
/// `cron.max_parallel_jobs`; YAML `null` means the same.
pub(crate) const UNBOUNDED: &str = "unbounded";
/// The word `get` prints (and `set` and the file accept) for "no `timezone`
/// configured: use the system zone"; YAML `null` means the same.
pub(crate) const SYSTEM_ZONE: &str = "system";

/// One configuration key.
pub(crate) struct KeySpec {
    /// Dotted name; the part before the first `.` is the nested section.
    pub(crate) name: &'static str,
    pub(crate) field: Field,
    pub(crate) doc: &'static str,
}

/// The type of a key, its bounds and default, and where it lives in [`Config`].
pub(crate) enum Field {
    Bool {
        default: bool,
        get: fn(&Config) -> bool,
        set: fn(&mut Config, bool),
    },
    /// An integer in `min..=max`.
    Int {
        min: u64,
        max: u64,
        default: u64,
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// A number of seconds in `min..=max`, fractions allowed (`2.5`).
    Seconds {
        min: u64,
        max: u64,
        default: u64,
        get: fn(&Config) -> Duration,
        set: fn(&mut Config, Duration),
    },
    /// An integer in `min..=max`, or none ([`UNBOUNDED`] / null), the default.
    OptInt {
        min: u64,
        max: u64,
        get: fn(&Config) -> Option<u64>,
        set: fn(&mut Config, Option<u64>),
    },
    /// An IANA zone name, or none ([`SYSTEM_ZONE`] / null), the default.
    Zone {
        get: fn(&Config) -> Option<&str>,
        set: fn(&mut Config, Option<String>),
    },
    /// A `PATH`: absolute directories separated by `:` (`job_env.rs`);
    /// the default is the base environment's `DEFAULT_PATH`.
    Path {
        get: fn(&Config) -> &str,
        set: fn(&mut Config, String),
    },
    /// A mapping of environment variables (`job_env.rs`); none by default.
    Env {
        get: fn(&Config) -> &Env,
        set: fn(&mut Config, Env),
    },
    /// A text that `check` accepts (and puts in its canonical form), or none,
    /// the default: null, an empty string, `false`, or the word `none`,
    /// which is also what `get` prints for it. A secret value ([`Secret`]) is never
    /// repeated in a warning or a refusal.
    Text {
        none: &'static str,
        secret: Secret,
        /// What the key accepts, as a fragment (`an IP address and port`).
        accepts: &'static str,
        check: fn(&str) -> Result<String, &'static str>,
        get: fn(&Config) -> Option<&str>,
        set: fn(&mut Config, Option<String>),
    },
}

/// How much of a text key's value is secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Secret {
    /// None of it.
    No,
    /// All of it (a token, a webhook or ping URL with its token): never
    /// repeated in a message, masked by `get` and `show`.
    Value,
    /// Only a password it might hold (`cron.database`, which refuses one):
    /// never repeated in a message, shown by `get` and `show`.
    Password,
}

/// A value that passed validation for one key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Setting {
    Bool(bool),
    Int(u64),
    Seconds(Duration),
    OptInt(Option<u64>),
    /// A canonical zone name (`Europe/London`, never `europe/london`).
    Zone(Option<String>),
    Path(String),
    Env(Env),
    /// A text in its canonical form, and the word printed for none.
    Text(Option<String>, &'static str),
}

impl KeySpec {
    /// The nested section and the leaf: `("cron", "output_retention")`; None
    /// for a top-level key such as `timezone`.
    pub(crate) fn split(&self) -> Option<(&'static str, &'static str)> {
        self.name.split_once('.')
    }

    pub(crate) fn default_setting(&self) -> Setting {
        match self.field {
            Field::Bool { default, .. } => Setting::Bool(default),
            Field::Int { default, .. } => Setting::Int(default),
            Field::Seconds { default, .. } => Setting::Seconds(Duration::from_secs(default)),
            Field::OptInt { .. } => Setting::OptInt(None),
            Field::Zone { .. } => Setting::Zone(None),
            Field::Path { .. } => Setting::Path(DEFAULT_PATH.to_string()),
            Field::Env { .. } => Setting::Env(Env::default()),
            Field::Text { none, .. } => Setting::Text(None, none),
        }
    }

    /// The value this key has in `config`.
    pub(crate) fn current(&self, config: &Config) -> Setting {
        match self.field {
            Field::Bool { get, .. } => Setting::Bool(get(config)),
            Field::Int { get, .. } => Setting::Int(get(config)),
            Field::Seconds { get, .. } => Setting::Seconds(get(config)),
            Field::OptInt { get, .. } => Setting::OptInt(get(config)),
            Field::Zone { get, .. } => Setting::Zone(get(config).map(str::to_owned)),
            Field::Path { get, .. } => Setting::Path(get(config).to_string()),
            Field::Env { get, .. } => Setting::Env(get(config).clone()),
            Field::Text { get, none, .. } => Setting::Text(get(config).map(str::to_owned), none),
        }
    }

    /// Store a validated `setting`; one of another key's type is ignored.
    pub(crate) fn apply(&self, config: &mut Config, setting: Setting) {
        match (&self.field, setting) {
            (Field::Bool { set, .. }, Setting::Bool(v)) => set(config, v),
            (Field::Int { set, .. }, Setting::Int(v)) => set(config, v),
            (Field::Seconds { set, .. }, Setting::Seconds(v)) => set(config, v),
            (Field::OptInt { set, .. }, Setting::OptInt(v)) => set(config, v),
            (Field::Zone { set, .. }, Setting::Zone(v)) => set(config, v),
            (Field::Path { set, .. }, Setting::Path(v)) => set(config, v),
            (Field::Env { set, .. }, Setting::Env(v)) => set(config, v),
            (Field::Text { set, .. }, Setting::Text(v, _)) => set(config, v),
            _ => {}
        }
    }

    /// Whether `set` takes the value as text rather than as YAML (a
    /// `cron.path` may hold `: ` or ` #`).
    pub(crate) fn takes_text(&self) -> bool {
        matches!(self.field, Field::Text { .. } | Field::Path { .. })
    }

    /// Whether the key's value must never be repeated (a token).
    pub(crate) fn is_secret(&self) -> bool {
        matches!(
            self.field,
            Field::Text {
                secret: Secret::Value | Secret::Password,
                ..
            }
        )
    }
}

/// A duration as a decimal number of seconds, shortest form: `30`, `2.5`,
/// `0.001`; exact to the nanosecond, never in exponent form.
pub(crate) fn seconds_text(d: Duration) -> String {
    let (secs, nanos) = (d.as_secs(), d.subsec_nanos());
    if nanos == 0 {
        return secs.to_string();
    }
    let fraction = format!("{nanos:09}");
    format!("{secs}.{}", fraction.trim_end_matches('0'))
}

/// Why a value was rejected, as a fragment that follows the value:
/// `"abc"` + ` is not an integer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rejection(pub(crate) &'static str);
