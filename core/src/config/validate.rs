//! Validation: raw values to [`Setting`]s, and a [`RawConfig`] to a [`Config`].
//!
//! Two strictnesses share one judge, [`check`]: loading is lenient (a bad value
//! becomes the default plus exactly one [`ConfigWarning`] naming the key, the
//! value and what is accepted), `set` is strict (the same verdict refuses the
//! value).
//!
//! What is accepted is what Hermes's own config writer produces (`hermes
//! config set` through PyYAML, a YAML 1.1 reader) as well as YAML 1.2:
//! booleans are `true|yes|on` / `false|no|off` in any case, as YAML booleans
//! or as (quoted) strings (`'off'`); numbers may be written as numeric strings
//! (`'20'`, `'2.5'`, `'-3'`: an optional sign, digits, at most one dot);
//! integers may be written as integral floats (`5.0`, `'5'`), never as
//! fractions, NaN or infinities; the `_s` seconds keys of the loop watchdog
//! take fractions (`2.5`); `null` is accepted only by the keys whose default
//! is "none"; a zone name is matched as `--tz` matches it (case-insensitive,
//! surrounding spaces dropped) and kept in its canonical spelling, and an
//! empty `timezone` (Hermes's default) means the system zone. `cron.path`
//! and `cron.env` are judged in `job_env.rs`; `cron.env` entry by entry, so
//! a bad entry is dropped with its own warning and the rest are used.
//! Pure: no IO, never panics on any input.

use std::fmt;
use std::time::Duration;

use super::job_env::{self, EnvRead};
use super::keys;
use super::model::{
    Config, ConfigWarning, Field, KeySpec, Loaded, Rejection, SYSTEM_ZONE, Setting, UNBOUNDED,
};
use super::raw::RawConfig;
use super::suggest::{near_misses, unknown_key_warning};
use super::value::Value;
use crate::schedule::{ZoneOrigin, ZoneTable};

/// Where a key's effective value came from; `show` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Default,
    File,
    /// The file gave a value that failed validation; the default is used.
    Invalid,
    /// The file gave a mapping (`cron.env`) some of whose entries were dropped.
    Partial,
}

impl Source {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::File => "file",
            Source::Invalid => "file (invalid, default used)",
            Source::Partial => "file (invalid entries dropped)",
        }
    }
}

/// A validated document: the config, its warnings, and each key's source in
/// the order of the key table.
pub struct Validated {
    /// The config and its warnings.
    pub loaded: Loaded,
    pub(crate) sources: Vec<(&'static KeySpec, Source)>,
    /// The unknown keys that look like a mistyped key of ours (each was
    /// warned about), in file order. Other unknown keys belong to Hermes or
    /// the user and are not listed.
    pub(crate) unknown: Vec<String>,
}

/// The words read as booleans, compared ignoring ASCII case (Hermes's
/// `config set` coercion; PyYAML reads the same words unquoted).
const TRUE_WORDS: [&str; 3] = ["true", "yes", "on"];
const FALSE_WORDS: [&str; 3] = ["false", "no", "off"];

/// Judge `raw` for `key`; zone names are read in `zones`.
pub(crate) fn check(key: &KeySpec, raw: &Value, zones: &ZoneTable) -> Result<Setting, Rejection> {
    match key.field {
        Field::Bool { .. } => boolean(raw).map(Setting::Bool),
        Field::Int { min, max, .. } => integer(&numeric(raw), min, max).map(Setting::Int),
        Field::Seconds { min, max, .. } => seconds(&numeric(raw), min, max).map(Setting::Seconds),
        Field::OptInt { min, max, .. } => match raw {
            Value::Null => Ok(Setting::OptInt(None)),
            Value::Str(s) if s == UNBOUNDED => Ok(Setting::OptInt(None)),
            _ => integer(&numeric(raw), min, max).map(|n| Setting::OptInt(Some(n))),
        },
        Field::Zone { .. } => match raw {
            Value::Null => Ok(Setting::Zone(None)),
            Value::Str(s) if s.trim().is_empty() || s == SYSTEM_ZONE => Ok(Setting::Zone(None)),
            Value::Str(s) => zones
                .parse(s)
                .map(|zone| Setting::Zone(Some(zone.name().to_string())))
                .map_err(|_| Rejection("is not a known IANA time zone")),
            _ => Err(Rejection("is not a time zone name")),
        },
        Field::Path { .. } => job_env::check_path(raw).map(Setting::Path),
        // Strict (for `set`): every entry must be valid.
        Field::Env { .. } => match job_env::check_env(raw)? {
            EnvRead { env, dropped } if dropped.is_empty() => Ok(Setting::Env(env)),
            _ => Err(Rejection("has entries that are not valid")),
        },
        Field::Text { none, check, .. } => match raw {
            Value::Null | Value::Bool(false) => Ok(Setting::Text(None, none)),
            Value::Str(s) if s.trim().is_empty() || s == none => Ok(Setting::Text(None, none)),
            Value::Str(s) => check(s)
                .map(|text| Setting::Text(Some(text), none))
                .map_err(Rejection),
            Value::Int(n) => check(&n.to_string())
                .map(|text| Setting::Text(Some(text), none))
                .map_err(Rejection),
            _ => Err(Rejection("is not a text")),
        },
    }
}

/// How a rejected value is named in a message: a secret's never is.
fn shown(key: &KeySpec, raw: &Value) -> String {
    if key.is_secret() {
        "the value given".to_string()
    } else {
        raw.to_string()
    }
}

/// A YAML boolean, or one of the boolean words as a string.
fn boolean(raw: &Value) -> Result<bool, Rejection> {
    let word = |words: &[&str], s: &str| words.iter().any(|w| w.eq_ignore_ascii_case(s));
    match raw {
        Value::Bool(b) => Ok(*b),
        Value::Str(s) if word(&TRUE_WORDS, s) => Ok(true),
        Value::Str(s) if word(&FALSE_WORDS, s) => Ok(false),
        _ => Err(Rejection("is not a boolean")),
    }
}

/// A numeric string read as the number it spells (`'20'`, `'2.5'`, `'-3'`,
/// `'.5'`): an optional sign, ASCII digits and at most one dot, with at
/// least one digit. Anything else is returned as it is.
fn numeric(raw: &Value) -> Value {
    let Value::Str(s) = raw else {
        return raw.clone();
    };
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits = body.bytes().filter(u8::is_ascii_digit).count();
    let dots = body.bytes().filter(|b| *b == b'.').count();
    if digits == 0 || dots > 1 || digits + dots != body.len() {
        return raw.clone();
    }
    if dots == 0
        && let Ok(n) = s.parse::<i128>()
    {
        return Value::Int(n);
    }
    // Digits and one dot (or an integer too long for an i128) always parse.
    s.parse::<f64>().map_or_else(|_| raw.clone(), Value::Float)
}

/// A whole number in `min..=max`; integral floats count, within range.
fn integer(raw: &Value, min: u64, max: u64) -> Result<u64, Rejection> {
    let n: i128 = match raw {
        Value::Int(n) => *n,
        Value::Float(x) if x.is_nan() => return Err(Rejection("is not a number")),
        Value::Float(x) if x.is_infinite() => return Err(Rejection("is infinite")),
        Value::Float(x) if x.fract() != 0.0 => {
            return Err(Rejection("is not a whole number"));
        }
        // Finite and integral; `as` saturates, and anything saturated is out of range.
        Value::Float(x) => *x as i128,
        _ => return Err(Rejection("is not an integer")),
    };
    if n < i128::from(min) || n > i128::from(max) {
        return Err(Rejection("is out of range"));
    }
    u64::try_from(n).map_err(|_| Rejection("is out of range"))
}

/// A number of seconds in `min..=max`, to the nanosecond.
fn seconds(raw: &Value, min: u64, max: u64) -> Result<Duration, Rejection> {
    let x: f64 = match raw {
        // Anything beyond an f64's exact integers is far out of range anyway.
        Value::Int(n) => *n as f64,
        Value::Float(x) if x.is_nan() => return Err(Rejection("is not a number")),
        Value::Float(x) if x.is_infinite() => return Err(Rejection("is infinite")),
        Value::Float(x) => *x,
        _ => return Err(Rejection("is not a number")),
    };
    if !(min as f64..=max as f64).contains(&x) {
        return Err(Rejection("is out of range"));
    }
    // In range, so at most an hour: the nanoseconds fit a u64 exactly enough.
    Ok(Duration::from_nanos((x * 1e9).round() as u64))
}

/// A warning about `key`: `what`, after the prefix every key warning has.
fn warn(key: &str, what: impl fmt::Display) -> ConfigWarning {
    ConfigWarning {
        key: key.to_string(),
        message: format!("config key `{key}`: {what}"),
    }
}

/// The load-time warning for a rejected value.
pub(crate) fn warning(key: &KeySpec, raw: &Value, why: &Rejection) -> ConfigWarning {
    let (shown, why, accepted) = (shown(key, raw), why.0, key.accepted());
    let default = key.default_setting().render();
    warn(
        key.name,
        format_args!("{shown} {why}; expected {accepted}; using the default {default}"),
    )
}

/// The `set` refusal for a rejected value; `text` is what the user typed (a
/// secret's is not repeated).
pub(crate) fn refusal(key: &KeySpec, text: &str, raw: &Value, why: &Rejection) -> String {
    let to = if key.is_secret() {
        String::new()
    } else {
        format!(" to `{text}`")
    };
    let (name, shown, why, accepted) = (key.name, shown(key, raw), why.0, key.accepted());
    format!("cannot set `{name}`{to}: {shown} {why}; expected {accepted}")
}

/// Lenient validation of a whole document: never fails.
pub(crate) fn validate(raw: &RawConfig, zones: &ZoneTable) -> Validated {
    let mut config = Config::default();
    let mut warnings = Vec::new();
    for (section, value) in &raw.bad_sections {
        warnings.push(warn(
            section,
            format_args!(
                "{value} is not a mapping; expected a mapping of {section}.* keys; using the \
                 defaults for keys not given in dotted form"
            ),
        ));
    }
    let mut sources = Vec::with_capacity(keys::KEYS.len());
    for key in keys::KEYS {
        let source = match raw.value(key.name) {
            None => Source::Default,
            Some(value) if matches!(key.field, Field::Env { .. }) => {
                match job_env::check_env(value) {
                    Ok(EnvRead { env, dropped }) => {
                        warnings.extend(dropped.iter().map(|d| warn(key.name, d)));
                        key.apply(&mut config, Setting::Env(env));
                        if dropped.is_empty() {
                            Source::File
                        } else {
                            Source::Partial
                        }
                    }
                    Err(why) => {
                        warnings.push(warning(key, value, &why));
                        Source::Invalid
                    }
                }
            }
            Some(value) => match check(key, value, zones) {
                Ok(setting) => {
                    warnings.extend(hermes_disagrees(key, value, &setting, zones));
                    key.apply(&mut config, setting);
                    Source::File
                }
                Err(why) => {
                    warnings.push(warning(key, value, &why));
                    Source::Invalid
                }
            },
        };
        sources.push((key, source));
    }
    // Only our keys are ours: an unknown key is Hermes's (it has hundreds) or
    // the user's, and is warned about only when it looks like a mistyped key
    // of ours.
    let unknown: Vec<String> = raw
        .unknown
        .iter()
        .filter(|name| !near_misses(name).is_empty())
        .cloned()
        .collect();
    for name in &unknown {
        warnings.push(ConfigWarning {
            key: name.clone(),
            message: unknown_key_warning(name),
        });
    }
    Validated {
        loaded: Loaded { config, warnings },
        sources,
        unknown,
    }
}

/// A value we accept but Hermes, which reads the same key, would not: a
/// zone name spelled in another case or with a `:` (Hermes's `zoneinfo`
/// lookup is exact), or a POSIX TZ string (Hermes reads zone names only).
/// Hermes falls back to the server's zone then. The value is used; the
/// warning says how to write it so both agree.
fn hermes_disagrees(
    key: &KeySpec,
    raw: &Value,
    setting: &Setting,
    zones: &ZoneTable,
) -> Option<ConfigWarning> {
    let (Value::Str(written), Setting::Zone(Some(canonical))) = (raw, setting) else {
        return None;
    };
    let posix = zones
        .parse(canonical)
        .is_ok_and(|z| z.origin() == ZoneOrigin::Posix);
    let message = if posix {
        format!(
            "{raw} is a POSIX TZ string: hermes-cron uses it, but Hermes reads zone names only \
             and would use the server's zone; write an IANA name such as Europe/Berlin so both \
             agree"
        )
    } else if written.trim() != canonical.as_str() {
        format!(
            "{raw} is read as {canonical}, but Hermes matches zone names exactly and would \
             ignore it; write `{canonical}` (`hermes-cron config set {} {canonical}` does)",
            key.name
        )
    } else {
        return None;
    };
    Some(warn(key.name, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The rules as judged with the compiled-in zones (no host database).
    fn check(key: &KeySpec, raw: &Value) -> Result<Setting, Rejection> {
        super::check(key, raw, &ZoneTable::compiled_in_only())
    }

    fn hermes_disagrees(key: &KeySpec, raw: &Value, setting: &Setting) -> Option<ConfigWarning> {
        super::hermes_disagrees(key, raw, setting, &ZoneTable::compiled_in_only())
    }

    fn validate(raw: &RawConfig) -> Validated {
        super::validate(raw, &ZoneTable::compiled_in_only())
    }

    fn key(name: &str) -> &'static KeySpec {
        keys::find(name).unwrap()
    }

    fn strikes(raw: Value) -> Result<Setting, Rejection> {
        check(key("gateway.loop_watchdog_max_strikes"), &raw)
    }

    fn text(s: &str) -> Value {
        Value::Str(s.into())
    }

    #[test]
    fn integers_accept_whole_numbers_in_range_only() {
        assert_eq!(strikes(Value::Int(5)), Ok(Setting::Int(5)));
        assert_eq!(strikes(Value::Float(30.0)), Ok(Setting::Int(30)));
        assert_eq!(strikes(Value::Int(1)), Ok(Setting::Int(1)));
        assert_eq!(strikes(Value::Int(1000)), Ok(Setting::Int(1000)));
        for bad in [
            Value::Int(0),
            Value::Int(1001),
            Value::Int(-1),
            Value::Int(i128::MAX),
            Value::Float(2.5),
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NEG_INFINITY),
            Value::Float(1e300),
            Value::Float(-1e300),
            Value::Null,
            Value::Bool(true),
            Value::Seq(Vec::new()),
            Value::Map(Vec::new()),
            Value::Tagged("!x".into(), Box::new(Value::Null)),
        ] {
            assert!(strikes(bad.clone()).is_err(), "{bad:?} accepted");
        }
    }

    /// Hermes's `config set` writes `'20'` for a key whose default is a
    /// string, and a hand-written config may quote numbers.
    #[test]
    fn numeric_strings_are_numbers() {
        for (written, n) in [("5", 5), ("5.0", 5), ("+5", 5), ("5.", 5), ("0005", 5)] {
            assert_eq!(strikes(text(written)), Ok(Setting::Int(n)), "{written}");
        }
        let bad = [
            ("2.5", "is not a whole number"),
            ("-3", "is out of range"),
            ("0", "is out of range"),
            (
                "99999999999999999999999999999999999999999",
                "is out of range",
            ),
            ("", "is not an integer"),
            (".", "is not an integer"),
            ("-", "is not an integer"),
            ("1e3", "is not an integer"),
            ("1_000", "is not an integer"),
            ("0x10", "is not an integer"),
            (" 5", "is not an integer"),
            ("5 ", "is not an integer"),
            ("1.2.3", "is not an integer"),
            ("nan", "is not an integer"),
            ("inf", "is not an integer"),
            ("five", "is not an integer"),
            ("٥", "is not an integer"),
        ];
        for (written, why) in bad {
            assert_eq!(strikes(text(written)), Err(Rejection(why)), "{written:?}");
        }
    }

    #[test]
    fn probe_seconds_take_fractions_in_range() {
        let timeout = key("gateway.loop_watchdog_probe_timeout_s");
        let ms = |n| Ok(Setting::Seconds(Duration::from_millis(n)));
        assert_eq!(check(timeout, &Value::Float(2.5)), ms(2500));
        assert_eq!(check(timeout, &text("2.5")), ms(2500));
        assert_eq!(check(timeout, &Value::Int(10)), ms(10_000));
        assert_eq!(check(timeout, &text("20")), ms(20_000));
        assert_eq!(check(timeout, &Value::Float(1.0)), ms(1000));
        assert_eq!(check(timeout, &Value::Int(600)), ms(600_000));
        assert_eq!(
            check(timeout, &Value::Float(2.3)),
            Ok(Setting::Seconds(Duration::from_nanos(2_300_000_000)))
        );
        for (bad, why) in [
            (Value::Float(0.999), "is out of range"),
            (Value::Float(600.001), "is out of range"),
            (Value::Int(0), "is out of range"),
            (Value::Float(-1e300), "is out of range"),
            (Value::Int(i128::MAX), "is out of range"),
            (Value::Float(f64::NAN), "is not a number"),
            (Value::Float(f64::INFINITY), "is infinite"),
            (text(".inf"), "is not a number"),
            (text("nan"), "is not a number"),
            (text("ten"), "is not a number"),
            (Value::Bool(true), "is not a number"),
            (Value::Null, "is not a number"),
        ] {
            assert_eq!(check(timeout, &bad), Err(Rejection(why)), "{bad:?}");
        }
        let interval = key("gateway.loop_watchdog_probe_interval_s");
        assert_eq!(check(interval, &Value::Int(3600)), ms(3_600_000));
        assert!(check(interval, &Value::Float(3600.5)).is_err());
    }

    #[test]
    fn optional_integer_takes_null_and_unbounded() {
        let jobs = key("cron.max_parallel_jobs");
        assert_eq!(check(jobs, &Value::Null), Ok(Setting::OptInt(None)));
        assert_eq!(check(jobs, &text("unbounded")), Ok(Setting::OptInt(None)));
        assert_eq!(check(jobs, &Value::Int(4)), Ok(Setting::OptInt(Some(4))));
        assert_eq!(check(jobs, &text("4")), Ok(Setting::OptInt(Some(4))));
        assert!(check(jobs, &Value::Int(0)).is_err());
        assert!(check(jobs, &Value::Int(100_001)).is_err());
    }

    #[test]
    fn booleans_take_hermes_words_in_any_case() {
        for name in ["gateway.loop_watchdog", "cron.require_restart_safe_scope"] {
            let k = key(name);
            assert_eq!(check(k, &Value::Bool(false)), Ok(Setting::Bool(false)));
            assert_eq!(check(k, &Value::Bool(true)), Ok(Setting::Bool(true)));
            for word in ["true", "yes", "on", "True", "YES", "On", "oN"] {
                assert_eq!(check(k, &text(word)), Ok(Setting::Bool(true)), "{word}");
            }
            for word in ["false", "no", "off", "False", "NO", "OFF", "oFf"] {
                assert_eq!(check(k, &text(word)), Ok(Setting::Bool(false)), "{word}");
            }
            for bad in ["y", "n", "1", "0", "", " off", "enabled", "t"] {
                assert!(check(k, &text(bad)).is_err(), "{bad:?}");
            }
            for bad in [Value::Int(1), Value::Int(0), Value::Null] {
                assert!(check(k, &bad).is_err(), "{bad:?}");
            }
        }
    }

    #[test]
    fn zones_are_matched_like_tz_and_kept_canonical() {
        let tz = key("timezone");
        let zone = |name: &str| Ok(Setting::Zone(Some(name.into())));
        assert_eq!(check(tz, &text("Europe/Paris")), zone("Europe/Paris"));
        assert_eq!(check(tz, &text("europe/london")), zone("Europe/London"));
        assert_eq!(check(tz, &text(" UTC ")), zone("UTC"));
        assert_eq!(check(tz, &text("utc")), zone("UTC"));
        for none in [Value::Null, text("system"), text(""), text("  ")] {
            assert_eq!(check(tz, &none), Ok(Setting::Zone(None)), "{none:?}");
        }
        // What `--tz` takes: a `:` before a name, a POSIX TZ string.
        assert_eq!(check(tz, &text(":Europe/Berlin")), zone("Europe/Berlin"));
        let posix = "CET-1CEST,M3.5.0,M10.5.0/3";
        assert_eq!(check(tz, &text(posix)), zone(posix));
        for bad in ["Mars/Olympus", "europe/pariss", "CET-1CEST,M99"] {
            assert!(check(tz, &text(bad)).is_err(), "{bad}");
        }
        assert!(check(tz, &Value::Int(1)).is_err());
    }

    #[test]
    fn a_zone_hermes_would_not_read_is_used_with_a_warning() {
        let tz = key("timezone");
        let raw = text("europe/london");
        let setting = check(tz, &raw).unwrap();
        let warning = hermes_disagrees(tz, &raw, &setting).unwrap();
        assert_eq!(warning.key, "timezone");
        assert!(
            warning.message.contains("Europe/London"),
            "{}",
            warning.message
        );
        assert!(warning.message.contains("Hermes"), "{}", warning.message);
        let raw = text(" Europe/London ");
        let setting = check(tz, &raw).unwrap();
        assert_eq!(hermes_disagrees(tz, &raw, &setting), None);
        for (written, says) in [
            (":Europe/London", "read as Europe/London"),
            ("CET-1CEST,M3.5.0,M10.5.0/3", "POSIX TZ string"),
        ] {
            let raw = text(written);
            let setting = check(tz, &raw).unwrap();
            let warning = hermes_disagrees(tz, &raw, &setting).unwrap();
            assert!(warning.message.contains(says), "{}", warning.message);
        }
        // A legacy zone file is a zone name to Hermes too.
        let raw = text("EST5EDT");
        let setting = check(tz, &raw).unwrap();
        assert_eq!(hermes_disagrees(tz, &raw, &setting), None);
    }

    #[test]
    fn listen_addresses_are_canonical_and_off_is_none() {
        let k = key("gateway.http_listen");
        let some = |t: &str| Ok(Setting::Text(Some(t.into()), "off"));
        assert_eq!(check(k, &Value::Int(9464)), some("127.0.0.1:9464"));
        assert_eq!(check(k, &text("localhost:80")), some("127.0.0.1:80"));
        assert_eq!(check(k, &text("[::1]:80")), some("[::1]:80"));
        for off in [Value::Null, Value::Bool(false), text("off"), text("")] {
            assert_eq!(check(k, &off), Ok(Setting::Text(None, "off")), "{off}");
        }
        assert!(check(k, &text("example.com:80")).is_err());
        assert!(check(k, &Value::Bool(true)).is_err());
    }

    #[test]
    fn a_rejected_token_is_never_repeated() {
        let k = key("gateway.http_token");
        let raw = text("hunter2");
        let why = check(k, &raw).unwrap_err();
        let w = warning(k, &raw, &why);
        assert!(!w.message.contains("hunter2"), "{}", w.message);
        assert!(w.message.contains("gateway.http_token"), "{}", w.message);
        let refused = refusal(k, "hunter2", &raw, &why);
        assert!(!refused.contains("hunter2"), "{refused}");
        assert!(check(k, &text("0123456789abcdef")).is_ok());
    }

    #[test]
    fn warning_names_key_value_range_and_default() {
        let k = key("gateway.loop_watchdog_probe_interval_s");
        let raw = Value::Float(f64::INFINITY);
        let why = check(k, &raw).unwrap_err();
        let w = warning(k, &raw, &why);
        assert_eq!(w.key, "gateway.loop_watchdog_probe_interval_s");
        assert_eq!(
            w.message,
            "config key `gateway.loop_watchdog_probe_interval_s`: .inf is infinite; \
             expected a number of seconds from 1 to 3600 (fractions allowed, e.g. 2.5); \
             using the default 30"
        );
    }

    #[test]
    fn validate_empty_document_is_all_defaults_without_warnings() {
        let validated = validate(&RawConfig::default());
        assert_eq!(validated.loaded.config, Config::default());
        assert!(validated.loaded.warnings.is_empty());
        assert!(validated.sources.iter().all(|(_, s)| *s == Source::Default));
    }
}
