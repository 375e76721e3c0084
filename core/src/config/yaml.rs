//! The YAML seam: the only file that names serde_yaml.
//!
//! Reading: bytes to a [`RawConfig`] (for `load`) or to a [`Document`] (for
//! `set`/`unset`), with parse failures mapped to [`ConfigError::Syntax`]
//! carrying serde_yaml's 1-based line and column. Writing: a [`Document`] is
//! a serde_yaml mapping edited in place, so unrelated and unknown keys and
//! their order survive; comments do not (serde_yaml drops them on parse).
//!
//! Both readers accept the same inputs: a [`Document`] is only built from
//! bytes that also parse as a [`RawConfig`], so `set` refuses exactly the
//! files `load` refuses.

use std::path::Path;

use serde_yaml::{Mapping, Value};

use super::keys::Setting;
use super::model::ConfigError;
use super::raw::{RawConfig, RawValue};

/// Parse the config file's bytes.
pub(crate) fn parse_config(path: &Path, bytes: &[u8]) -> Result<RawConfig, ConfigError> {
    serde_yaml::from_slice(bytes).map_err(|err| syntax(path, &err))
}

/// Parse one value typed on the command line (`config set K V`).
pub(crate) fn parse_scalar(text: &str) -> Result<RawValue, String> {
    serde_yaml::from_str(text).map_err(|err| strip_location(&err))
}

/// A config file as an editable YAML mapping.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Document {
    map: Mapping,
}

impl Document {
    /// Parse the file's bytes; an empty or `null` document is an empty mapping.
    pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Document, ConfigError> {
        parse_config(path, bytes)?;
        match serde_yaml::from_slice::<Value>(bytes).map_err(|err| syntax(path, &err))? {
            Value::Mapping(map) => Ok(Document { map }),
            Value::Null => Ok(Document::default()),
            // parse_config refuses every other shape; stay safe regardless.
            _ => Err(ConfigError::Invalid(format!(
                "{}: expected a mapping of config keys",
                path.display()
            ))),
        }
    }

    /// Write `setting` under `key`: into the dotted top-level form when the
    /// file has it, else into the nested form (creating the section). When the
    /// section exists but is not a mapping, the dotted form is written instead
    /// (it wins on load), leaving the odd section as the user wrote it.
    pub(crate) fn put(&mut self, key: &str, setting: &Setting) {
        let value = to_value(setting);
        if self.map.contains_key(key) {
            self.map.insert(Value::from(key), value);
            return;
        }
        let Some((section, leaf)) = key.split_once('.') else {
            self.map.insert(Value::from(key), value);
            return;
        };
        match self.map.get_mut(section) {
            None => {
                let mut nested = Mapping::new();
                nested.insert(Value::from(leaf), value);
                self.map
                    .insert(Value::from(section), Value::Mapping(nested));
            }
            Some(slot @ Value::Null) => {
                let mut nested = Mapping::new();
                nested.insert(Value::from(leaf), value);
                *slot = Value::Mapping(nested);
            }
            Some(Value::Mapping(nested)) => {
                nested.insert(Value::from(leaf), value);
            }
            Some(_) => {
                self.map.insert(Value::from(key), value);
            }
        }
    }

    /// Remove `key` in both forms, and its section if that leaves it empty.
    /// Returns whether anything was removed. Order of the other keys is kept.
    pub(crate) fn remove(&mut self, key: &str) -> bool {
        let mut removed = self.map.shift_remove(key).is_some();
        if let Some((section, leaf)) = key.split_once('.')
            && let Some(Value::Mapping(nested)) = self.map.get_mut(section)
        {
            let nested_removed = nested.shift_remove(leaf).is_some();
            if nested_removed && nested.is_empty() {
                self.map.shift_remove(section);
            }
            removed |= nested_removed;
        }
        removed
    }

    /// Whether the file mentions `key` in either form.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
            || key.split_once('.').is_some_and(|(section, leaf)| {
                matches!(self.map.get(section), Some(Value::Mapping(n)) if n.contains_key(leaf))
            })
    }

    /// The YAML text to write.
    pub(crate) fn to_text(&self) -> Result<String, ConfigError> {
        serde_yaml::to_string(&self.map)
            .map_err(|err| ConfigError::Invalid(format!("failed to render YAML: {err}")))
    }
}

fn to_value(setting: &Setting) -> Value {
    match setting {
        Setting::Bool(b) => Value::Bool(*b),
        Setting::Int(n) | Setting::OptInt(Some(n)) => Value::from(*n),
        Setting::OptInt(None) | Setting::Zone(None) => Value::Null,
        Setting::Zone(Some(zone)) => Value::from(zone.as_str()),
    }
}

/// A parse failure: `Syntax` with the location when serde_yaml has one, else
/// `Invalid` naming the file.
fn syntax(path: &Path, err: &serde_yaml::Error) -> ConfigError {
    match err.location() {
        Some(at) => ConfigError::Syntax {
            path: path.to_path_buf(),
            line: at.line(),
            column: at.column(),
            message: strip_location(err),
        },
        None => ConfigError::Invalid(format!("{}: {err}", path.display())),
    }
}

/// serde_yaml's message without its ` at line L column C`, which `Syntax`
/// already shows as `file:L:C:`.
fn strip_location(err: &serde_yaml::Error) -> String {
    let message = err.to_string();
    match err.location() {
        Some(at) => message.replacen(
            &format!(" at line {} column {}", at.line(), at.column()),
            "",
            1,
        ),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document::parse(Path::new("c.yaml"), text.as_bytes()).unwrap()
    }

    fn text(document: &Document) -> String {
        document.to_text().unwrap()
    }

    #[test]
    fn syntax_errors_carry_one_based_positions_without_repeating_them() {
        let err = parse_config(Path::new("c.yaml"), b"a: 1\nb: [\n").unwrap_err();
        let ConfigError::Syntax {
            line,
            column,
            message,
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!((*line, *column), (3, 1), "{err}");
        assert!(!message.contains("at line 3 column 1"), "{message}");
        assert!(err.to_string().starts_with("c.yaml:3:1: "), "{err}");
    }

    #[test]
    fn scalars_parse_as_yaml() {
        assert_eq!(parse_scalar("30"), Ok(RawValue::Int(30)));
        assert_eq!(parse_scalar("30.0"), Ok(RawValue::Float(30.0)));
        assert_eq!(parse_scalar("~"), Ok(RawValue::Null));
        assert_eq!(parse_scalar("nan"), Ok(RawValue::Str("nan".into())));
        assert!(matches!(parse_scalar(".nan"), Ok(RawValue::Float(x)) if x.is_nan()));
        assert!(parse_scalar("'open").is_err());
    }

    #[test]
    fn put_fills_a_null_section_and_appends_new_keys_last() {
        let mut document = doc("a: 1\ncron:\nb: 2\n");
        document.put("cron.output_retention", &Setting::Int(5));
        document.put("timezone", &Setting::Zone(Some("UTC".into())));
        document.put("gateway.loop_watchdog", &Setting::Bool(false));
        assert_eq!(
            text(&document),
            "a: 1\ncron:\n  output_retention: 5\nb: 2\ntimezone: UTC\ngateway:\n  loop_watchdog: false\n"
        );
    }

    #[test]
    fn remove_keeps_order_and_drops_only_sections_it_emptied() {
        let mut document = doc("a: 1\ncron: {output_retention: 5}\ngateway: {}\nz: 2\n");
        assert!(document.contains("cron.output_retention"));
        assert!(document.remove("cron.output_retention"));
        assert!(!document.contains("cron.output_retention"));
        assert!(!document.remove("gateway.loop_watchdog"));
        assert_eq!(text(&document), "a: 1\ngateway: {}\nz: 2\n");
    }

    #[test]
    fn only_mappings_and_empty_documents_are_documents() {
        assert_eq!(doc(""), Document::default());
        assert_eq!(doc("# nothing\n"), Document::default());
        for bad in ["[1]", "5", "a: 1\na: 2\n"] {
            assert!(
                Document::parse(Path::new("c.yaml"), bad.as_bytes()).is_err(),
                "{bad}"
            );
        }
    }
}
