//! The serde_yaml seam: the only file that names serde_yaml.
//!
//! Reading the config file's bytes into a [`Value`] under
//! `Rules::Document` (for `load`, and as the meaning every edit is checked
//! against), and a command-line value into a [`Value`]. A parse failure is a
//! [`ConfigError::Syntax`] carrying serde_yaml's 1-based line and column, or
//! [`ConfigError::Invalid`] naming the file when serde_yaml gives no location
//! (several documents in one file).

use std::path::Path;

use serde::de::DeserializeSeed;

use super::keys;
use super::model::ConfigError;
use super::value::{Rules, Value};

/// Parse the config file's bytes: a mapping of keys (or nothing), no key of
/// ours twice at the top level, none twice in one of our sections.
pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<Value, ConfigError> {
    let document = serde_yaml::Deserializer::from_slice(without_bom(bytes));
    Rules::Document(keys::key_kind)
        .deserialize(document)
        .map_err(|err| syntax(path, &err))
}

/// `bytes` without a leading UTF-8 byte order mark. serde_yaml reads a file
/// that starts with one and has two keys or more as several documents and
/// refuses it; PyYAML (and so Hermes) reads it as the one document it is.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// A text serde_yaml does not read as YAML; displayed as serde_yaml words it,
/// without the ` at line L column C` that [`ConfigError::Syntax`] shows apart.
#[derive(Debug, thiserror::Error)]
#[error("{}", without_location(.0))]
pub(crate) struct NotYaml(serde_yaml::Error);

/// Parse one value typed on the command line (`config set K V`).
pub(crate) fn parse_scalar(text: &str) -> Result<Value, NotYaml> {
    serde_yaml::from_str(text).map_err(NotYaml)
}

/// A parse failure: `Syntax` with the location when serde_yaml has one, else
/// `Invalid` naming the file.
fn syntax(path: &Path, err: &serde_yaml::Error) -> ConfigError {
    match err.location() {
        Some(at) => ConfigError::Syntax {
            path: path.to_path_buf(),
            line: at.line(),
            column: at.column(),
            message: without_location(err),
        },
        None => ConfigError::Invalid(format!("{}: {err}", path.display())),
    }
}

/// serde_yaml's message without its ` at line L column C`.
fn without_location(err: &serde_yaml::Error) -> String {
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

    fn tree(text: &str) -> Value {
        parse(Path::new("c.yaml"), text.as_bytes()).unwrap()
    }

    #[test]
    fn syntax_errors_carry_one_based_positions_without_repeating_them() {
        let err = parse(Path::new("c.yaml"), b"a: 1\nb: [\n").unwrap_err();
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
    fn a_byte_order_mark_is_not_a_document() {
        let raw = parse(
            Path::new("c.yaml"),
            "\u{feff}timezone: UTC\nb: 2\n".as_bytes(),
        );
        assert!(raw.is_ok(), "{raw:?}");
        assert_eq!(tree("\u{feff}a: 1\nb: 2\n"), tree("a: 1\nb: 2\n"));
    }

    #[test]
    fn scalars_parse_as_yaml() {
        let scalar = |text: &str| parse_scalar(text).unwrap();
        assert_eq!(scalar("30"), Value::Int(30));
        assert_eq!(scalar("30.0"), Value::Float(30.0));
        assert_eq!(scalar("~"), Value::Null);
        assert_eq!(scalar("nan"), Value::Str("nan".into()));
        assert!(matches!(scalar(".nan"), Value::Float(x) if x.is_nan()));
        let err = parse_scalar("'open").unwrap_err().to_string();
        assert!(!err.is_empty() && !err.contains(" at line "), "{err}");
    }

    /// What the file's shape does not allow is refused at the node at fault,
    /// in serde_yaml's words.
    #[test]
    fn the_shape_of_the_file_is_refused_where_it_is_wrong() {
        let err = |text: &str| {
            let err = parse(Path::new("c.yaml"), text.as_bytes()).unwrap_err();
            err.to_string()
        };
        let merge = "expected a mapping or a list of mappings to merge (`<<: *anchor`)";
        for (text, message) in [
            (
                "5\n",
                "1:1: invalid type: integer `5`, expected a mapping of config keys",
            ),
            (
                "- a\n",
                "1:1: invalid type: sequence, expected a mapping of config keys",
            ),
            (
                "!t {a: 1}\n",
                "1:1: invalid type: enum, expected a mapping of config keys",
            ),
            (
                "timezone: UTC\ntimezone: UTC\n",
                "1:1: duplicate key `timezone`",
            ),
            ("cron:\n  a: 1\n  a: 2\n", "2:3: cron: duplicate key `a`"),
            ("cron: {<<: {}, <<: {}}\n", "1:7: cron: duplicate key `<<`"),
            (
                "cron: {<<: [{}, 5]}\n",
                "1:12: cron.<<: 5 in a merge list is not a mapping",
            ),
            (
                "cron: {<<: [!t {}]}\n",
                "1:12: cron.<<: a value tagged !t in a merge list is not a mapping",
            ),
            (
                "cron: {<<: -5}\n",
                &format!("1:12: cron.<<: invalid type: integer `-5`, {merge}"),
            ),
            (
                "cron: {<<: ~}\n",
                &format!("1:12: cron.<<: invalid type: unit value, {merge}"),
            ),
            (
                "cron: {<<: !t {}}\n",
                &format!("1:12: cron.<<: invalid type: enum, {merge}"),
            ),
        ] {
            assert_eq!(err(text), format!("c.yaml:{message}"), "{text:?}");
        }
        // Mappings and top-level keys that are not ours may repeat a key; a
        // null in a merge list is an empty mapping; a section that is not a
        // mapping is kept.
        for text in [
            "model: {a: 1, a: 2}\n",
            "1: a\n'1': b\n",
            "model: 1\nmodel: 2\n",
            "cron: {<<: [~, {a: 1}]}\n",
            "cron: [1, 1]\n",
        ] {
            assert!(
                parse(Path::new("c.yaml"), text.as_bytes()).is_ok(),
                "{text:?}"
            );
        }
    }
}
