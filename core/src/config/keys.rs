//! The key table: every config key with its type, default, bounds and doc
//! (the row types are `model.rs`'s), what each key accepts and how its value
//! is shown, and the defaults of a [`Config`].
//!
//! Invariants: [`KEYS`] is the only place a key name, a default or a bound is
//! spelled; every field of [`Config`] has exactly one row (checked by tests).
//! A [`Setting`] handed to [`KeySpec::apply`] has passed validation for that
//! key, so every stored number lies inside the row's bounds. Pure: no IO.

use std::time::Duration;

use super::job_env;
use super::model::{
    Config, CronConfig, Field, GatewayConfig, KeyInfo, KeySpec, SYSTEM_ZONE, Secret, SecretText,
    Setting, UNBOUNDED, seconds_text,
};
use super::yaml11;
use crate::job::{Env, REDACTED, is_secret};
use crate::schedule::ZoneTable;

impl Setting {
    /// The text `get` and `show` print; also valid YAML that loads back to `self`.
    pub(crate) fn render(&self) -> String {
        match self {
            Setting::Bool(b) => b.to_string(),
            Setting::Int(n) | Setting::OptInt(Some(n)) => n.to_string(),
            Setting::Seconds(d) => seconds_text(*d),
            Setting::OptInt(None) => UNBOUNDED.to_string(),
            Setting::Zone(Some(zone)) => zone.clone(),
            Setting::Zone(None) => SYSTEM_ZONE.to_string(),
            Setting::Path(path) => path.clone(),
            Setting::Env(env) => env_text(env),
            Setting::Text(Some(text), _) => text.clone(),
            Setting::Text(None, none) => none.to_string(),
        }
    }
}

/// Variables as a one-line YAML flow mapping, `{TZ: Europe/Berlin, N: '5'}`
/// (`{}` when none), each value quoted where a YAML 1.1 reader would read
/// another type, and a secret-looking value (by its name, or a URL with a
/// password) shown as `<redacted>` (which is then what the text reads back as).
fn env_text(env: &Env) -> String {
    let entries: Vec<String> = env
        .0
        .iter()
        .map(|(name, value)| {
            let shown = if is_secret(name, value) {
                REDACTED.to_string()
            } else {
                yaml11::string_text(value)
            };
            format!("{name}: {shown}")
        })
        .collect();
    format!("{{{}}}", entries.join(", "))
}

/// Narrow a validated number to a `u32` field; every u32 key's max fits.
fn narrow(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Every key, in the order `show` prints them.
pub(crate) static KEYS: &[KeySpec] = &[
    KeySpec {
        name: "timezone",
        field: Field::Zone {
            get: |c| c.timezone.as_deref(),
            set: |c, v| c.timezone = v,
        },
        doc: "zone for wall-clock schedules of jobs without --tz; unset means the system zone",
    },
    KeySpec {
        name: "cron.require_restart_safe_scope",
        field: Field::Bool {
            default: false,
            get: |c| c.cron.require_restart_safe_scope,
            set: |c, v| c.cron.require_restart_safe_scope = v,
        },
        doc: "refuse to run a job when no systemd scope can be created instead of degrading",
    },
    KeySpec {
        name: "cron.catch_up_missed",
        field: Field::Bool {
            default: true,
            get: |c| c.cron.catch_up_missed,
            set: |c, v| c.cron.catch_up_missed = v,
        },
        doc: "default catch-up policy: once when true, skip when false",
    },
    KeySpec {
        name: "cron.max_parallel_jobs",
        field: Field::OptInt {
            min: 1,
            max: 100_000,
            get: |c| c.cron.max_parallel_jobs.map(u64::from),
            set: |c, v| c.cron.max_parallel_jobs = v.map(narrow),
        },
        doc: "at most this many jobs running at once; unbounded by default",
    },
    KeySpec {
        name: "cron.script_timeout_seconds",
        field: Field::Int {
            min: 1,
            max: 2_592_000,
            default: 3600,
            get: |c| c.cron.script_timeout_seconds,
            set: |c, v| c.cron.script_timeout_seconds = v,
        },
        doc: "default wall-clock timeout of a run, in seconds (at most 30 days)",
    },
    KeySpec {
        name: "cron.output_retention",
        field: Field::Int {
            min: 1,
            max: 100_000,
            default: 50,
            get: |c| u64::from(c.cron.output_retention),
            set: |c, v| c.cron.output_retention = narrow(v),
        },
        doc: "captured outputs kept per job",
    },
    KeySpec {
        name: "cron.output_max_bytes",
        field: Field::Int {
            min: 1024,
            max: 1 << 30,
            default: 8 << 20,
            get: |c| c.cron.output_max_bytes,
            set: |c, v| c.cron.output_max_bytes = v,
        },
        doc: "bytes of output captured per run before truncation",
    },
    KeySpec {
        name: "cron.ledger_retention",
        field: Field::Int {
            min: 1,
            max: 10_000_000,
            default: 1000,
            get: |c| u64::from(c.cron.ledger_retention),
            set: |c, v| c.cron.ledger_retention = narrow(v),
        },
        doc: "terminal ledger rows kept per job",
    },
    KeySpec {
        name: "cron.heartbeat_interval_s",
        field: Field::Int {
            min: 1,
            max: 300,
            default: 5,
            get: |c| c.cron.heartbeat_interval_s,
            set: |c, v| c.cron.heartbeat_interval_s = v,
        },
        doc: "seconds between a worker's heartbeat stamps",
    },
    KeySpec {
        name: "cron.staging_max_workers",
        field: Field::Int {
            min: 0,
            max: 100_000,
            default: 1000,
            get: |c| u64::from(c.cron.staging_max_workers),
            set: |c, v| c.cron.staging_max_workers = narrow(v),
        },
        doc: "workers held staged ahead of their instants at most (0 turns staging off)",
    },
    KeySpec {
        name: "cron.staging_lead_min_s",
        field: Field::Seconds {
            min: 0,
            max: 600,
            default: 1,
            get: |c| c.cron.staging_lead_min,
            set: |c, v| c.cron.staging_lead_min = v,
        },
        doc: "seconds ahead of its instant a run is staged at least (fractions allowed)",
    },
    KeySpec {
        name: "cron.staging_lead_max_s",
        field: Field::Seconds {
            min: 1,
            max: 3600,
            default: 60,
            get: |c| c.cron.staging_lead_max,
            set: |c, v| c.cron.staging_lead_max = v,
        },
        doc: "seconds ahead of its instant a run is staged at most (fractions allowed)",
    },
    KeySpec {
        name: "cron.path",
        field: Field::Path {
            get: |c| &c.cron.path,
            set: |c, v| c.cron.path = v,
        },
        doc: "the PATH of every run (base environment); a job's --env PATH=... wins",
    },
    KeySpec {
        name: "cron.env",
        field: Field::Env {
            get: |c| &c.cron.env,
            set: |c, v| c.cron.env = v,
        },
        doc: "variables added to every run's environment, before the job's own",
    },
    KeySpec {
        name: "gateway.loop_watchdog",
        field: Field::Bool {
            default: true,
            get: |c| c.gateway.loop_watchdog,
            set: |c, v| c.gateway.loop_watchdog = v,
        },
        doc: "run the event-loop liveness watchdog in the gateway",
    },
    KeySpec {
        name: "gateway.loop_watchdog_probe_interval_s",
        field: Field::Seconds {
            min: 1,
            max: 3600,
            default: 30,
            get: |c| c.gateway.loop_watchdog_probe_interval,
            set: |c, v| c.gateway.loop_watchdog_probe_interval = v,
        },
        doc: "seconds between watchdog probes (fractions allowed)",
    },
    KeySpec {
        name: "gateway.loop_watchdog_probe_timeout_s",
        field: Field::Seconds {
            min: 1,
            max: 600,
            default: 10,
            get: |c| c.gateway.loop_watchdog_probe_timeout,
            set: |c, v| c.gateway.loop_watchdog_probe_timeout = v,
        },
        doc: "seconds a probe may wait before it counts as a strike (fractions allowed)",
    },
    KeySpec {
        name: "gateway.loop_watchdog_max_strikes",
        field: Field::Int {
            min: 1,
            max: 1000,
            default: 3,
            get: |c| u64::from(c.gateway.loop_watchdog_max_strikes),
            set: |c, v| c.gateway.loop_watchdog_max_strikes = narrow(v),
        },
        doc: "consecutive missed probes before the gateway exits 75 for a restart",
    },
    KeySpec {
        name: "cron.alert_on",
        field: Field::Text {
            none: "all",
            secret: Secret::No,
            check: check_alert_kinds,
            accepts: "alert kinds separated by commas (failed, timed_out, unknown, missed, \
                      refused, stalled, recovered, late, gateway_failed, delivery_failed), or none",
            get: |c| c.cron.alert_on.as_deref(),
            set: |c, v| c.cron.alert_on = v,
        },
        doc: "what alerts, for jobs without --alert-on",
    },
    KeySpec {
        name: "cron.alert_after",
        field: Field::Int {
            min: 1,
            max: 1000,
            default: 1,
            get: |c| u64::from(c.cron.alert_after),
            set: |c, v| c.cron.alert_after = narrow(v),
        },
        doc: "consecutive failures before an incident alerts, for jobs without --alert-after",
    },
    KeySpec {
        name: "cron.alert_command",
        field: Field::Text {
            none: "none",
            secret: Secret::No,
            check: check_command,
            accepts: "a shell command line",
            get: |c| c.cron.alert_command.as_deref(),
            set: |c, v| c.cron.alert_command = v,
        },
        doc: "run on every job's alerts (sh -c, run like a job, the event as JSON on stdin)",
    },
    KeySpec {
        name: "cron.alert_webhook",
        field: Field::Text {
            none: "none",
            secret: Secret::Value,
            check: crate::alert::check_url,
            accepts: "an http:// or https:// URL",
            get: |c| c.cron.alert_webhook.as_deref(),
            set: |c, v| c.cron.alert_webhook = v,
        },
        doc: "POSTed every job's alerts as JSON",
    },
    KeySpec {
        name: "gateway.ping_url",
        field: Field::Text {
            none: "none",
            secret: Secret::Value,
            check: crate::alert::check_url,
            accepts: "an http:// or https:// URL",
            get: |c| c.gateway.ping_url.as_deref(),
            set: |c, v| c.gateway.ping_url = v,
        },
        doc: "dead-man ping: fetched every gateway.ping_interval_s while the gateway is healthy",
    },
    KeySpec {
        name: "gateway.ping_command",
        field: Field::Text {
            none: "none",
            secret: Secret::No,
            check: check_command,
            accepts: "a shell command line",
            get: |c| c.gateway.ping_command.as_deref(),
            set: |c, v| c.gateway.ping_command = v,
        },
        doc: "dead-man ping: run (sh -c) every gateway.ping_interval_s while the gateway is healthy",
    },
    KeySpec {
        name: "gateway.ping_interval_s",
        field: Field::Int {
            min: 1,
            max: 86_400,
            default: 60,
            get: |c| c.gateway.ping_interval_s,
            set: |c, v| c.gateway.ping_interval_s = v,
        },
        doc: "seconds between dead-man pings",
    },
    KeySpec {
        name: "gateway.http_listen",
        field: Field::Text {
            none: "off",
            secret: Secret::No,
            accepts: "an IP address and port (127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464), \
                      localhost:PORT, or a bare port on 127.0.0.1",
            check: crate::http::listen::canonical,
            get: |c| c.gateway.http_listen.as_deref(),
            set: |c, v| c.gateway.http_listen = v,
        },
        doc: "serve /metrics, /healthz and the status page there; a non-loopback \
              address needs a token",
    },
    KeySpec {
        name: "gateway.http_token",
        field: Field::Text {
            none: "none",
            secret: Secret::Value,
            accepts: "a token of 16 to 4096 visible ASCII characters",
            check: crate::http::token::check,
            get: |c| c.gateway.http_token.as_ref().map(SecretText::expose),
            set: |c, v| c.gateway.http_token = v.map(SecretText::new),
        },
        doc: "bearer token the HTTP endpoint requires (Authorization: Bearer, or \
              the password of Basic)",
    },
    KeySpec {
        name: "gateway.http_token_file",
        field: Field::Text {
            none: "none",
            secret: Secret::No,
            accepts: "an absolute path",
            check: crate::http::token::check_file_path,
            get: |c| c.gateway.http_token_file.as_deref(),
            set: |c, v| c.gateway.http_token_file = v,
        },
        doc: "file holding the HTTP endpoint's token, read when the gateway \
              starts (instead of gateway.http_token)",
    },
    KeySpec {
        name: "cron.database",
        field: Field::Text {
            none: "none",
            secret: Secret::Password,
            accepts: "a PostgreSQL connection string without a password \
                      (postgresql://USER@HOST/DB, or host=... user=... dbname=...)",
            check: crate::cluster::check_database,
            get: |c| c.cron.database.as_deref(),
            set: |c, v| c.cron.database = v,
        },
        doc: "keep the ledger in this PostgreSQL database, shared by the gateways of \
              several hosts (HERMES_CRON_DATABASE wins); none: the home's SQLite file",
    },
];

/// `cron.alert_on`: a list of alert kinds, canonical.
fn check_alert_kinds(text: &str) -> Result<String, &'static str> {
    crate::alert::KindSet::parse(text)
        .map(|set| set.text())
        .map_err(|_| "is not a list of alert kinds")
}

/// A shell command line: anything but NUL and line breaks at its ends.
fn check_command(text: &str) -> Result<String, &'static str> {
    if text.contains('\0') {
        return Err("contains a NUL byte");
    }
    Ok(text.trim().to_string())
}

impl KeySpec {
    /// What the key accepts, as a fragment: `an integer from 1 to 1000`.
    pub(crate) fn accepted(&self) -> String {
        match self.field {
            Field::Bool { .. } => "true or false (yes/no and on/off also)".to_string(),
            Field::Int { min, max, .. } => format!("an integer from {min} to {max}"),
            Field::Seconds { min, max, .. } => {
                format!("a number of seconds from {min} to {max} (fractions allowed, e.g. 2.5)")
            }
            Field::OptInt { min, max, .. } => {
                format!("an integer from {min} to {max}, or {UNBOUNDED} (or null) for no limit")
            }
            Field::Zone { .. } => format!(
                "an IANA time zone name such as Europe/Paris or UTC, \
                 or {SYSTEM_ZONE} (or null, or empty) for the system zone"
            ),
            Field::Path { .. } => job_env::path_accepted(),
            Field::Env { .. } => job_env::env_accepted(),
            Field::Text { none, accepts, .. } => {
                format!("{accepts}, or {none} (or null, or empty)")
            }
        }
    }

    pub(crate) fn info(&self) -> KeyInfo {
        KeyInfo {
            name: self.name,
            default: self.default_setting().render(),
            accepted: self.accepted(),
            doc: self.doc,
        }
    }

    fn in_range(&self, config: &Config, zones: &ZoneTable) -> bool {
        match self.field {
            Field::Bool { .. } => true,
            Field::Int { min, max, get, .. } => (min..=max).contains(&get(config)),
            Field::Seconds { min, max, get, .. } => {
                (Duration::from_secs(min)..=Duration::from_secs(max)).contains(&get(config))
            }
            Field::OptInt { min, max, get, .. } => {
                get(config).is_none_or(|n| (min..=max).contains(&n))
            }
            // Held in its canonical spelling, the one Hermes also accepts.
            Field::Zone { get, .. } => get(config)
                .is_none_or(|zone| zones.parse(zone).is_ok_and(|found| found.name() == zone)),
            Field::Path { get, .. } => job_env::path_problem(get(config)).is_none(),
            Field::Env { get, .. } => job_env::env_is_valid(get(config)),
            // Held in its canonical form.
            Field::Text { get, check, .. } => {
                get(config).is_none_or(|text| check(text).is_ok_and(|c| c == text))
            }
        }
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
        for key in KEYS {
            key.apply(&mut config, key.default_setting());
        }
        config
    }
}

impl Config {
    /// The keys whose value breaks the [`Config`] invariant: a number outside
    /// its key's range, a zone that is not a known IANA name, a `cron.path`
    /// or a `cron.env` entry that validation would not let through. Always empty
    /// for a config that `load` returned with the same `zones`; the property
    /// tests and the fuzz targets check exactly that.
    pub fn keys_out_of_range(&self, zones: &ZoneTable) -> Vec<&'static str> {
        KEYS.iter()
            .filter(|key| !key.in_range(self, zones))
            .map(|key| key.name)
            .collect()
    }
}

/// Every key with its default, what it accepts and what it does, in table order.
pub fn key_table() -> Vec<KeyInfo> {
    KEYS.iter().map(KeySpec::info).collect()
}

/// The row for a dotted key name.
pub(crate) fn find(name: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|key| key.name == name)
}

/// For one variable of a mapping key, `cron.env.NAME`: that key's row and
/// `NAME` (which may be anything, even empty).
pub(crate) fn mapping_entry(name: &str) -> Option<(&'static KeySpec, &str)> {
    KEYS.iter()
        .filter(|key| matches!(key.field, Field::Env { .. }))
        .find_map(|key| Some((key, name.strip_prefix(key.name)?.strip_prefix('.')?)))
}

/// Whether `name` is a nested section (`cron`, `gateway`).
/// Whose the top-level key `name` of `config.yaml` is.
pub(crate) fn key_kind(name: &str) -> super::value::KeyKind {
    use super::value::KeyKind;
    let section = name.split('.').next().unwrap_or(name);
    if name == section && is_section(name) {
        KeyKind::Section
    } else if is_section(section) || KEYS.iter().any(|key| key.name == name) {
        KeyKind::Ours
    } else {
        KeyKind::Other
    }
}

pub(crate) fn is_section(name: &str) -> bool {
    KEYS.iter()
        .any(|key| key.split().is_some_and(|(section, _)| section == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_sections_known() {
        let mut names: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), KEYS.len());
        assert!(is_section("cron") && is_section("gateway"));
        assert!(!is_section("timezone") && !is_section("cro"));
    }

    #[test]
    fn defaults_lie_inside_bounds() {
        for key in KEYS {
            if let Field::Int {
                min, max, default, ..
            }
            | Field::Seconds {
                min, max, default, ..
            } = key.field
            {
                assert!((min..=max).contains(&default), "{}", key.name);
                assert!(max <= u64::from(u32::MAX), "{}", key.name);
            }
        }
    }

    /// Each row writes its own field: setting every key to a distinct value
    /// and reading it back through every row shows no two rows share a field.
    #[test]
    fn every_row_owns_a_distinct_field() {
        let mut config = Config::default();
        for (i, key) in KEYS.iter().enumerate() {
            let setting = distinct_setting(key, i);
            key.apply(&mut config, setting.clone());
            assert_eq!(key.current(&config), setting, "{}", key.name);
        }
        for (i, key) in KEYS.iter().enumerate() {
            assert_eq!(
                key.current(&config),
                distinct_setting(key, i),
                "{}",
                key.name
            );
        }
    }

    fn distinct_setting(key: &KeySpec, i: usize) -> Setting {
        match key.field {
            Field::Bool { default, .. } => Setting::Bool(!default),
            Field::Int { min, .. } => Setting::Int(min + 1 + i as u64),
            Field::Seconds { min, .. } => {
                Setting::Seconds(Duration::from_millis((min + i as u64) * 1000 + 500))
            }
            Field::OptInt { min, .. } => Setting::OptInt(Some(min + 1 + i as u64)),
            Field::Zone { .. } => Setting::Zone(Some("Asia/Tokyo".into())),
            Field::Path { .. } => Setting::Path(format!("/opt/{i}/bin:/usr/bin")),
            Field::Env { .. } => Setting::Env(Env(vec![(format!("V{i}"), i.to_string())])),
            Field::Text { none, .. } => Setting::Text(Some(format!("text-{i}")), none),
        }
    }

    #[test]
    fn render_uses_the_documented_words() {
        assert_eq!(Setting::OptInt(None).render(), "unbounded");
        assert_eq!(Setting::Zone(None).render(), "system");
        assert_eq!(Setting::Int(8388608).render(), "8388608");
        assert_eq!(Setting::Bool(false).render(), "false");
        assert_eq!(Setting::Seconds(Duration::from_secs(30)).render(), "30");
        assert_eq!(
            Setting::Seconds(Duration::from_millis(2500)).render(),
            "2.5"
        );
        assert_eq!(
            Setting::Seconds(Duration::from_nanos(1_000_000_001)).render(),
            "1.000000001"
        );
        assert_eq!(Setting::Seconds(Duration::from_millis(1)).render(), "0.001");
        assert_eq!(Setting::Path("/a:/b".into()).render(), "/a:/b");
        assert_eq!(Setting::Env(Env::default()).render(), "{}");
        let env = Env(vec![
            ("TZ".into(), "Europe/Berlin".into()),
            ("N".into(), "5".into()),
            ("GITHUB_TOKEN".into(), "s3cr3t".into()),
            ("PROXY".into(), "http://proxy:3128".into()),
            ("OTHER_PROXY".into(), "http://me:pw@proxy:3128".into()),
        ]);
        assert_eq!(
            Setting::Env(env).render(),
            "{TZ: Europe/Berlin, N: '5', GITHUB_TOKEN: <redacted>, PROXY: 'http://proxy:3128', \
             OTHER_PROXY: <redacted>}"
        );
    }
}
