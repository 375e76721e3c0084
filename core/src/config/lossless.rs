//! The yaml-edit seam: the only file that names yaml-edit.
//!
//! A [`Text`] is the config file as a concrete syntax tree (rowan): it prints
//! back byte for byte, and an edit changes only the entry it touches. Setting
//! a value replaces the value in place (a trailing comment, the key's quoting
//! and a flow mapping's braces are kept); a new key is appended to its
//! mapping in the mapping's own style and indentation (and line ending); a new
//! section is appended at the end of the document. Removing an entry removes
//! its line(s); a comment on the line above stays.
//!
//! yaml-edit is tolerant of errors and is not the judge of what the file
//! means: `edit.rs` validates the file with serde_yaml first and checks what
//! the new text means before anything is written.

use std::str::FromStr;

use yaml_edit::{Mapping, ScalarValue, YamlFile, YamlNode};

use super::value::Value;
use super::yaml11::{self, Quoting};

/// Why a file cannot be edited losslessly.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotLossless {
    /// yaml-edit cannot parse it (its own words).
    #[error(transparent)]
    Parse(yaml_edit::YamlError),
    #[error("it would not be reproduced byte for byte")]
    NotReproduced,
}

/// What a top-level key holds, as far as editing it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holds {
    /// The document has no such key.
    Nothing,
    /// `cron:` or `cron: ~`: a section with no keys yet.
    Null,
    /// A block or flow mapping (possibly tagged).
    Mapping,
    /// An alias (`*defaults`): its keys are those of another node.
    Alias,
    /// Anything else (a scalar, a list).
    Other,
}

/// A config file being edited.
pub(crate) struct Text {
    file: YamlFile,
}

impl Text {
    /// Parse `text`; an error when yaml-edit cannot hold it losslessly.
    pub(crate) fn parse(text: &str) -> Result<Text, NotLossless> {
        let file = YamlFile::from_str(text).map_err(NotLossless::Parse)?;
        if file.to_string() != text {
            return Err(NotLossless::NotReproduced);
        }
        let parsed = Text { file };
        // A document that is only `null` or `~` has no mapping to add to:
        // drop the scalar (its comments stay) and start from an empty one.
        if let Some(range) = parsed.null_root() {
            let (start, end) = (range.start as usize, range.end as usize);
            let without = format!("{}{}", &text[..start], &text[end..]);
            let file = YamlFile::from_str(&without).map_err(NotLossless::Parse)?;
            return Ok(Text { file });
        }
        Ok(parsed)
    }

    /// The byte range of a null scalar that is the whole document, if so.
    fn null_root(&self) -> Option<yaml_edit::TextPosition> {
        let scalar = self.file.document()?.as_scalar()?;
        scalar
            .is_null()
            .then(|| YamlNode::Scalar(scalar).byte_range())
    }

    /// The text, with every edit made so far.
    pub(crate) fn text(&self) -> String {
        self.file.to_string()
    }

    /// The root mapping (created in an empty or comment-only document).
    fn root(&self) -> Option<Mapping> {
        self.file.ensure_document().as_mapping()
    }

    /// What the top-level key `key` holds.
    pub(crate) fn holds(&self, key: &str) -> Holds {
        self.holds_at(&[key])
    }

    /// What the key at `path` (a key of the root, then a key of the mapping
    /// it holds, ...) holds; [`Holds::Nothing`] when a step is not a mapping.
    pub(crate) fn holds_at(&self, path: &[&str]) -> Holds {
        let Some((last, steps)) = path.split_last() else {
            return Holds::Nothing;
        };
        match self.root().and_then(|root| walk(root, steps)) {
            Some(mapping) => holds_in(&mapping, last),
            None => Holds::Nothing,
        }
    }

    /// Whether the mapping under the top-level `section` has `leaf`.
    pub(crate) fn nested_has(&self, section: &str, leaf: &str) -> bool {
        self.root()
            .and_then(|root| root.get_mapping(section))
            .is_some_and(|nested| nested.contains_key(leaf))
    }

    /// Set `leaf` in the mapping at `path` (a key of the root, then a key
    /// of the mapping it holds, ...; none for the root itself) to the scalar
    /// `value`: in place, or appended to the mapping. Each missing or null
    /// step becomes a mapping holding the rest (appended at the end of its
    /// mapping, or in place of the null). False when a step holds anything
    /// else, or `value` is not a scalar.
    pub(crate) fn set_in(&self, path: &[&str], leaf: &str, value: &Value) -> bool {
        let Some(value) = scalar_value(value) else {
            return false;
        };
        match self.root() {
            Some(root) => set_in(&root, path, leaf, &value),
            // A document with nothing in it yet (`---`): this makes its root.
            None => match path.split_first() {
                None => self.file.ensure_document().set(leaf, &value),
                Some((first, rest)) => self
                    .file
                    .ensure_document()
                    .set(*first, built(rest, leaf, &value)),
            },
        }
    }

    /// Remove `leaf` from the mapping at `path`, and each mapping on the
    /// way that this leaves empty (never the root); whether `leaf` was there.
    pub(crate) fn remove_in(&self, path: &[&str], leaf: &str) -> bool {
        self.root().is_some_and(|root| remove_in(&root, path, leaf))
    }
}

/// The mapping at `path` under `mapping`, if every step is one.
fn walk(mapping: Mapping, path: &[&str]) -> Option<Mapping> {
    path.iter()
        .try_fold(mapping, |mapping, step| mapping.get_mapping(*step))
}

/// What `key` of `mapping` holds.
fn holds_in(mapping: &Mapping, key: &str) -> Holds {
    if !mapping.contains_key(key) {
        return Holds::Nothing;
    }
    // `cron:` with nothing after it has no value node at all.
    let Some(node) = mapping.get(key) else {
        return Holds::Null;
    };
    if node.is_alias() {
        Holds::Alias
    } else if node.as_scalar().is_some_and(|scalar| scalar.is_null()) {
        Holds::Null
    } else if mapping.get_mapping(key).is_some() {
        Holds::Mapping
    } else {
        Holds::Other
    }
}

fn set_in(mapping: &Mapping, path: &[&str], leaf: &str, value: &ScalarValue) -> bool {
    let Some((first, rest)) = path.split_first() else {
        mapping.set(leaf, value);
        return true;
    };
    match holds_in(mapping, first) {
        Holds::Mapping => mapping
            .get_mapping(*first)
            .is_some_and(|inner| set_in(&inner, rest, leaf, value)),
        Holds::Nothing | Holds::Null => {
            mapping.set(*first, built(rest, leaf, value));
            true
        }
        Holds::Alias | Holds::Other => false,
    }
}

/// A new mapping holding `path` down to `leaf: value`.
fn built(path: &[&str], leaf: &str, value: &ScalarValue) -> Mapping {
    let mapping = Mapping::new();
    match path.split_first() {
        None => mapping.set(leaf, value),
        Some((first, rest)) => mapping.set(*first, built(rest, leaf, value)),
    }
    mapping
}

fn remove_in(mapping: &Mapping, path: &[&str], leaf: &str) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return mapping.remove(leaf).is_some();
    };
    let Some(inner) = mapping.get_mapping(*first) else {
        return false;
    };
    if !remove_in(&inner, rest, leaf) {
        return false;
    }
    if inner.is_empty() {
        mapping.remove(*first);
    }
    true
}

/// The yaml-edit scalar that writes the scalar `value`, a string quoted as
/// `yaml11.rs` decides (so that it writes exactly `yaml11::string_text`);
/// None for anything but a scalar.
fn scalar_value(value: &Value) -> Option<ScalarValue> {
    Some(match value {
        Value::Bool(b) => ScalarValue::from(*b),
        Value::Int(n) => ScalarValue::from(i64::try_from(*n).unwrap_or(i64::MAX)),
        // Displayed shortest, so the decimal written is the one parsed.
        Value::Float(x) => ScalarValue::from(*x),
        Value::Null => ScalarValue::null(),
        Value::Str(s) => match yaml11::quoting(s) {
            Quoting::Plain => ScalarValue::plain(s.as_str()),
            Quoting::Single => ScalarValue::single_quoted(s.as_str()),
            Quoting::Double => ScalarValue::double_quoted(s.as_str()),
        },
        Value::Seq(_) | Value::Map(_) | Value::Tagged(..) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(source: &str) -> Text {
        Text::parse(source).unwrap()
    }

    /// yaml-edit writes exactly the text `yaml11.rs` decided, in a block
    /// mapping and in a flow mapping: each string as the table says, and
    /// each kind of setting typed.
    #[test]
    fn values_are_written_as_decided() {
        use super::super::model::Setting;
        use std::time::Duration;
        let mut values: Vec<(Value, String)> = super::super::yaml11::tests::TABLE
            .iter()
            .map(|(string, written, _)| (Value::Str(string.to_string()), written.to_string()))
            .collect();
        let settings = [
            (Setting::Bool(false), "false"),
            (Setting::Int(8_388_608), "8388608"),
            (Setting::OptInt(Some(4)), "4"),
            (Setting::OptInt(None), "null"),
            (Setting::Zone(None), "null"),
            (Setting::Zone(Some("Europe/London".into())), "Europe/London"),
            (Setting::Seconds(Duration::from_secs(30)), "30"),
            (Setting::Seconds(Duration::from_millis(2500)), "2.5"),
            (Setting::Seconds(Duration::from_millis(1)), "0.001"),
            (
                Setting::Seconds(Duration::from_nanos(3_599_999_999_999)),
                "3599.999999999",
            ),
            (
                Setting::Path("/usr/local/bin:/usr/bin:/bin".into()),
                "'/usr/local/bin:/usr/bin:/bin'",
            ),
        ];
        for (setting, written) in settings {
            let value = super::super::yaml11::written(&setting).unwrap();
            values.push((value, written.to_string()));
        }
        for (value, written) in values {
            let block = text("a: 1\n");
            assert!(block.set_in(&[], "k", &value));
            assert_eq!(block.text(), format!("a: 1\nk: {written}\n"), "{value:?}");
            let flow = text("s: {a: 1}\n");
            assert!(flow.set_in(&["s"], "k", &value));
            assert_eq!(
                flow.text(),
                format!("s: {{a: 1, k: {written}}}\n"),
                "{value:?}"
            );
        }
        assert!(!text("a: 1\n").set_in(&[], "k", &Value::Seq(Vec::new())));
    }

    #[test]
    fn parse_reproduces_the_text_and_empties_a_null_document() {
        for source in [
            "",
            "# c\n",
            "---\n",
            "a: 1",
            "a: 1\r\nb: 2\r\n",
            "\u{feff}a: 1\n",
        ] {
            assert_eq!(text(source).text(), source);
        }
        let t = text("# keep\nnull  # me\n");
        assert_eq!(t.text(), "# keep\n  # me\n");
        assert!(t.set_in(&[], "k", &Value::Int(1)));
        assert_eq!(t.text(), "# keep\n  # me\nk: 1\n");
    }

    #[test]
    fn what_a_key_holds() {
        let t = text("a: &d {x: 1}\nb: *d\nc:\nd: ~\ne: 5\nf: [1]\ng: !t {x: 1}\nh:\n  x: 1\n");
        let holds: Vec<Holds> = ["a", "b", "c", "d", "e", "f", "g", "h", "z"]
            .iter()
            .map(|key| t.holds(key))
            .collect();
        use Holds::*;
        assert_eq!(
            holds,
            [
                Mapping, Alias, Null, Null, Other, Other, Mapping, Mapping, Nothing
            ]
        );
    }

    #[test]
    fn edits_touch_only_their_lines() {
        let source = "# head\ncron:\n  # about x\n  x: 1  # xc\n  y: 2\nflow: {p: 1, q: 2}  # f\ntail: end\n";
        let t = text(source);
        assert!(t.set_in(&["cron"], "x", &Value::Int(7)));
        assert!(t.set_in(&["flow"], "q", &Value::Bool(false)));
        assert!(t.set_in(&["cron"], "z", &Value::Null));
        assert!(t.set_in(&["new"], "k", &Value::Str("off".into())));
        assert_eq!(
            t.text(),
            "# head\ncron:\n  # about x\n  x: 7  # xc\n  y: 2\n  z: null\nflow: {p: 1, q: false}  # f\n\
             tail: end\nnew:\n  k: 'off'\n"
        );
        assert!(t.remove_in(&["cron"], "x"));
        assert!(!t.remove_in(&["cron"], "x"));
        assert!(t.remove_in(&["flow"], "p"));
        assert!(t.remove_in(&["flow"], "q"));
        assert!(t.remove_in(&[], "tail"));
        assert!(!t.remove_in(&[], "tail"));
        assert_eq!(
            t.text(),
            "# head\ncron:\n  # about x\n  y: 2\n  z: null\nnew:\n  k: 'off'\n"
        );
    }

    #[test]
    fn a_null_section_becomes_a_mapping_and_others_are_refused() {
        let t = text("a: 1\ncron: ~  # nothing yet\nb: 2\nalias: *x\nlist: [1]\n");
        assert!(t.set_in(&["cron"], "x", &Value::Int(1)));
        assert!(!t.set_in(&["alias"], "x", &Value::Int(1)));
        assert!(!t.set_in(&["list"], "x", &Value::Int(1)));
        assert_eq!(
            t.text(),
            "a: 1\ncron:  # nothing yet\n  x: 1\nb: 2\nalias: *x\nlist: [1]\n"
        );
    }
}
