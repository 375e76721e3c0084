//! Validation: raw values to [`Setting`]s, and a [`RawConfig`] to a [`Config`].
//!
//! Two strictnesses share one judge, [`check`]: loading is lenient (a bad value
//! becomes the default plus exactly one [`ConfigWarning`] naming the key, the
//! value and what is accepted), `set` is strict (the same verdict refuses the
//! value). Rules: booleans are YAML `true`/`false` only; integers may be
//! written as integral floats (`30.0`), never as fractions, strings, NaN or
//! infinities; `null` is accepted only by the keys whose default is "none".
//! Pure: no IO, never panics on any input.

use std::str::FromStr;

use super::keys::{self, Field, KeySpec, Setting};
use super::model::{Config, ConfigWarning, Loaded};
use super::raw::{RawConfig, RawValue};
use super::suggest::unknown_key_warning;

/// Where a key's effective value came from; `show` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Default,
    File,
    /// The file gave a value that failed validation; the default is used.
    Invalid,
}

impl Source {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::File => "file",
            Source::Invalid => "file (invalid, default used)",
        }
    }
}

/// A validated document: the config, its warnings, and each key's source in
/// the order of the key table.
pub struct Validated {
    /// The config and its warnings.
    pub loaded: Loaded,
    pub(crate) sources: Vec<(&'static KeySpec, Source)>,
    pub(crate) unknown: Vec<String>,
}

/// Why a value was rejected, as a fragment that follows the value:
/// `"abc"` + ` is not an integer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rejection(&'static str);

/// Judge `raw` for `key`.
pub(crate) fn check(key: &KeySpec, raw: &RawValue) -> Result<Setting, Rejection> {
    match key.field {
        Field::Bool { .. } => match raw {
            RawValue::Bool(b) => Ok(Setting::Bool(*b)),
            _ => Err(Rejection("is not a boolean")),
        },
        Field::Int { min, max, .. } => integer(raw, min, max).map(Setting::Int),
        Field::OptInt { min, max, .. } => match raw {
            RawValue::Null => Ok(Setting::OptInt(None)),
            RawValue::Str(s) if s == keys::UNBOUNDED => Ok(Setting::OptInt(None)),
            _ => integer(raw, min, max).map(|n| Setting::OptInt(Some(n))),
        },
        Field::Zone { .. } => match raw {
            RawValue::Null => Ok(Setting::Zone(None)),
            RawValue::Str(s) if s == keys::SYSTEM_ZONE => Ok(Setting::Zone(None)),
            RawValue::Str(s) if chrono_tz::Tz::from_str(s).is_ok() => {
                Ok(Setting::Zone(Some(s.clone())))
            }
            RawValue::Str(_) => Err(Rejection("is not a known IANA time zone")),
            _ => Err(Rejection("is not a time zone name")),
        },
    }
}

/// A whole number in `min..=max`; integral floats count, within range.
fn integer(raw: &RawValue, min: u64, max: u64) -> Result<u64, Rejection> {
    let n: i128 = match raw {
        RawValue::Int(n) => *n,
        RawValue::Float(x) if x.is_nan() => return Err(Rejection("is not a number")),
        RawValue::Float(x) if x.is_infinite() => return Err(Rejection("is infinite")),
        RawValue::Float(x) if x.fract() != 0.0 => {
            return Err(Rejection("is not a whole number"));
        }
        // Finite and integral; `as` saturates, and anything saturated is out of range.
        RawValue::Float(x) => *x as i128,
        _ => return Err(Rejection("is not an integer")),
    };
    if n < i128::from(min) || n > i128::from(max) {
        return Err(Rejection("is out of range"));
    }
    u64::try_from(n).map_err(|_| Rejection("is out of range"))
}

/// The load-time warning for a rejected value.
pub(crate) fn warning(key: &KeySpec, raw: &RawValue, why: &Rejection) -> ConfigWarning {
    ConfigWarning {
        key: key.name.to_string(),
        message: format!(
            "config key `{}`: {raw} {}; expected {}; using the default {}",
            key.name,
            why.0,
            key.accepted(),
            key.default_setting().render()
        ),
    }
}

/// The `set` refusal for a rejected value; `text` is what the user typed.
pub(crate) fn refusal(key: &KeySpec, text: &str, raw: &RawValue, why: &Rejection) -> String {
    format!(
        "cannot set `{}` to `{text}`: {raw} {}; expected {}",
        key.name,
        why.0,
        key.accepted()
    )
}

/// Lenient validation of a whole document: never fails.
pub(crate) fn validate(raw: &RawConfig) -> Validated {
    let mut config = Config::default();
    let mut warnings = Vec::new();
    for (section, value) in &raw.bad_sections {
        warnings.push(ConfigWarning {
            key: section.clone(),
            message: format!(
                "config key `{section}`: {value} is not a mapping; expected a mapping of \
                 {section}.* keys; using the defaults for keys not given in dotted form"
            ),
        });
    }
    let mut sources = Vec::with_capacity(keys::KEYS.len());
    for key in keys::KEYS {
        let source = match raw.value(key.name) {
            None => Source::Default,
            Some(value) => match check(key, value) {
                Ok(setting) => {
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
    for name in &raw.unknown {
        warnings.push(ConfigWarning {
            key: name.clone(),
            message: unknown_key_warning(name),
        });
    }
    Validated {
        loaded: Loaded { config, warnings },
        sources,
        unknown: raw.unknown.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> &'static KeySpec {
        keys::find(name).unwrap()
    }

    fn strikes(raw: RawValue) -> Result<Setting, Rejection> {
        check(key("gateway.loop_watchdog_max_strikes"), &raw)
    }

    #[test]
    fn integers_accept_whole_numbers_in_range_only() {
        assert_eq!(strikes(RawValue::Int(5)), Ok(Setting::Int(5)));
        assert_eq!(strikes(RawValue::Float(30.0)), Ok(Setting::Int(30)));
        assert_eq!(strikes(RawValue::Int(1)), Ok(Setting::Int(1)));
        assert_eq!(strikes(RawValue::Int(1000)), Ok(Setting::Int(1000)));
        for bad in [
            RawValue::Int(0),
            RawValue::Int(1001),
            RawValue::Int(-1),
            RawValue::Int(i128::MAX),
            RawValue::Float(2.5),
            RawValue::Float(f64::NAN),
            RawValue::Float(f64::INFINITY),
            RawValue::Float(f64::NEG_INFINITY),
            RawValue::Float(1e300),
            RawValue::Float(-1e300),
            RawValue::Str("5".into()),
            RawValue::Null,
            RawValue::Bool(true),
            RawValue::Seq,
            RawValue::Map,
            RawValue::Tagged("!x".into()),
        ] {
            assert!(strikes(bad.clone()).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn optional_integer_takes_null_and_unbounded() {
        let jobs = key("cron.max_parallel_jobs");
        assert_eq!(check(jobs, &RawValue::Null), Ok(Setting::OptInt(None)));
        let word = RawValue::Str("unbounded".into());
        assert_eq!(check(jobs, &word), Ok(Setting::OptInt(None)));
        assert_eq!(check(jobs, &RawValue::Int(4)), Ok(Setting::OptInt(Some(4))));
        assert!(check(jobs, &RawValue::Int(0)).is_err());
        assert!(check(jobs, &RawValue::Int(100_001)).is_err());
    }

    #[test]
    fn booleans_are_true_or_false_only() {
        let watchdog = key("gateway.loop_watchdog");
        assert_eq!(
            check(watchdog, &RawValue::Bool(false)),
            Ok(Setting::Bool(false))
        );
        for bad in ["yes", "on", "true"] {
            assert!(
                check(watchdog, &RawValue::Str(bad.into())).is_err(),
                "{bad}"
            );
        }
        assert!(check(watchdog, &RawValue::Int(1)).is_err());
    }

    #[test]
    fn zones_must_be_iana_names() {
        let tz = key("timezone");
        let paris = RawValue::Str("Europe/Paris".into());
        assert_eq!(
            check(tz, &paris),
            Ok(Setting::Zone(Some("Europe/Paris".into())))
        );
        assert_eq!(check(tz, &RawValue::Null), Ok(Setting::Zone(None)));
        assert_eq!(
            check(tz, &RawValue::Str("system".into())),
            Ok(Setting::Zone(None))
        );
        for bad in ["Mars/Olympus", "", "europe/paris"] {
            assert!(check(tz, &RawValue::Str(bad.into())).is_err(), "{bad}");
        }
        assert!(check(tz, &RawValue::Int(1)).is_err());
    }

    #[test]
    fn warning_names_key_value_range_and_default() {
        let k = key("gateway.loop_watchdog_probe_interval_s");
        let raw = RawValue::Float(f64::INFINITY);
        let why = check(k, &raw).unwrap_err();
        let w = warning(k, &raw, &why);
        assert_eq!(w.key, "gateway.loop_watchdog_probe_interval_s");
        assert_eq!(
            w.message,
            "config key `gateway.loop_watchdog_probe_interval_s`: .inf is infinite; \
             expected an integer from 1 to 3600; using the default 30"
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
