//! The serde_yaml seam: the only file that names serde_yaml.
//!
//! Reading: bytes to a [`RawConfig`] (for `load`), a command-line value to a
//! [`RawValue`], and bytes to a [`Tree`], parse failures mapped to
//! [`ConfigError::Syntax`] carrying serde_yaml's 1-based line and column.
//!
//! A [`Tree`] is what a document *means* (aliases expanded, comments and
//! quoting gone, every mapping entry in order, a repeated key kept twice). It
//! is the oracle of `set` and `unset`: the lossless edit of the text
//! (`lossless.rs`) must mean exactly what the same edit applied to the old
//! text's tree means, or nothing is written (see `edit.rs`).

use std::fmt;
use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

use super::model::ConfigError;
use super::raw::{RawConfig, RawValue};

/// Parse the config file's bytes.
pub(crate) fn parse_config(path: &Path, bytes: &[u8]) -> Result<RawConfig, ConfigError> {
    serde_yaml::from_slice(without_bom(bytes)).map_err(|err| syntax(path, &err))
}

/// `bytes` without a leading UTF-8 byte order mark. serde_yaml reads a file
/// that starts with one and has two keys or more as several documents and
/// refuses it; PyYAML (and so Hermes) reads it as the one document it is.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Parse one value typed on the command line (`config set K V`).
pub(crate) fn parse_scalar(text: &str) -> Result<RawValue, String> {
    serde_yaml::from_str(text).map_err(|err| strip_location(&err))
}

/// Parse the config file's bytes as a [`Tree`].
pub(crate) fn parse_tree(path: &Path, bytes: &[u8]) -> Result<Tree, ConfigError> {
    serde_yaml::from_slice(without_bom(bytes)).map_err(|err| syntax(path, &err))
}

/// What a YAML node means, as serde_yaml reads it.
#[derive(Clone, Debug)]
pub(crate) enum Tree {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Tree>),
    /// Entries in file order; a repeated key is kept as it is.
    Map(Vec<(Tree, Tree)>),
    /// A node with a non-core tag, e.g. `!secret x`.
    Tagged(String, Box<Tree>),
}

impl PartialEq for Tree {
    /// Structural equality; YAML has one NaN, equal to itself.
    fn eq(&self, other: &Tree) -> bool {
        match (self, other) {
            (Tree::Null, Tree::Null) => true,
            (Tree::Bool(a), Tree::Bool(b)) => a == b,
            (Tree::Int(a), Tree::Int(b)) => a == b,
            (Tree::Float(a), Tree::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Tree::Str(a), Tree::Str(b)) => a == b,
            (Tree::Seq(a), Tree::Seq(b)) => a == b,
            (Tree::Map(a), Tree::Map(b)) => a == b,
            (Tree::Tagged(t, a), Tree::Tagged(u, b)) => t == u && a == b,
            _ => false,
        }
    }
}

impl Tree {
    /// The value of the first entry whose key is the string `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Tree> {
        self.entries()?
            .iter()
            .find(|(k, _)| k.is_str(key))
            .map(|(_, value)| value)
    }

    /// Whether this is the string `text`.
    pub(crate) fn is_str(&self, text: &str) -> bool {
        matches!(self, Tree::Str(s) if s == text)
    }

    fn entries(&self) -> Option<&Vec<(Tree, Tree)>> {
        match self {
            Tree::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// Set `key` to `value`: in place when the mapping has it, else appended.
    /// A null document or section becomes a mapping first; a tag is looked
    /// through.
    pub(crate) fn put(&mut self, key: &str, value: Tree) {
        if matches!(self, Tree::Null) {
            *self = Tree::Map(Vec::new());
        }
        if let Tree::Tagged(_, inner) = self {
            return inner.put(key, value);
        }
        let Tree::Map(entries) = self else {
            return;
        };
        match entries.iter_mut().find(|(k, _)| k.is_str(key)) {
            Some(entry) => entry.1 = value,
            None => entries.push((Tree::Str(key.to_string()), value)),
        }
    }

    /// The value under `key`, a null one created at the end if missing.
    pub(crate) fn slot(&mut self, key: &str) -> Option<&mut Tree> {
        if self.get(key).is_none() {
            self.put(key, Tree::Null);
        }
        let Tree::Map(entries) = self else {
            return None;
        };
        entries
            .iter_mut()
            .find(|(k, _)| k.is_str(key))
            .map(|(_, value)| value)
    }

    /// Remove the first entry with `key`; whether there was one. A tag is
    /// looked through.
    pub(crate) fn remove(&mut self, key: &str) -> bool {
        if let Tree::Tagged(_, inner) = self {
            return inner.remove(key);
        }
        let Tree::Map(entries) = self else {
            return false;
        };
        match entries.iter().position(|(k, _)| k.is_str(key)) {
            Some(at) => {
                entries.remove(at);
                true
            }
            None => false,
        }
    }

    /// Whether this is a mapping with no entries (tagged or not).
    pub(crate) fn is_empty_map(&self) -> bool {
        match self {
            Tree::Map(entries) => entries.is_empty(),
            Tree::Tagged(_, inner) => inner.is_empty_map(),
            _ => false,
        }
    }

    /// The top-level keys whose value differs between `self` and `other`
    /// (or that only one of them has), in order; for error messages.
    pub(crate) fn differing_keys(&self, other: &Tree) -> Vec<String> {
        let (Some(a), Some(b)) = (self.entries(), other.entries()) else {
            return vec!["the whole document".to_string()];
        };
        let mut keys: Vec<String> = Vec::new();
        for (key, _) in a.iter().chain(b) {
            let name = key.to_string();
            fn values<'t>(list: &'t [(Tree, Tree)], key: &Tree) -> Vec<&'t Tree> {
                list.iter()
                    .filter(|(k, _)| k == key)
                    .map(|(_, v)| v)
                    .collect()
            }
            if values(a, key) != values(b, key) && !keys.contains(&name) {
                keys.push(name);
            }
        }
        keys
    }
}

impl fmt::Display for Tree {
    /// A key as it reads in YAML, shortened (for messages).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tree::Str(s) => f.write_str(s),
            Tree::Null => f.write_str("null"),
            Tree::Bool(b) => write!(f, "{b}"),
            Tree::Int(n) => write!(f, "{n}"),
            Tree::Float(x) => write!(f, "{x}"),
            Tree::Seq(_) => f.write_str("[...]"),
            Tree::Map(_) => f.write_str("{...}"),
            Tree::Tagged(tag, inner) => write!(f, "{tag} {inner}"),
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Int(i128::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tree, E> {
        Ok(Tree::Int(i128::from(v)))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Tree, E> {
        Ok(Tree::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Tree, E> {
        Ok(i128::try_from(v).map_or(Tree::Float(v as f64), Tree::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
        Ok(Tree::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Tree, E> {
        Ok(Tree::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        Tree::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Tree>()? {
            items.push(item);
        }
        Ok(Tree::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<Tree, Tree>()? {
            entries.push(entry);
        }
        Ok(Tree::Map(entries))
    }
    /// serde_yaml presents a node with a custom tag as an enum variant.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Tree, A::Error> {
        let (tag, variant): (String, _) = data.variant()?;
        let inner = variant.newtype_variant::<Tree>()?;
        Ok(Tree::Tagged(
            format!("!{}", tag.trim_start_matches('!')),
            Box::new(inner),
        ))
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

    fn tree(text: &str) -> Tree {
        parse_tree(Path::new("c.yaml"), text.as_bytes()).unwrap()
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
    fn a_byte_order_mark_is_not_a_document() {
        let raw = parse_config(
            Path::new("c.yaml"),
            "\u{feff}timezone: UTC\nb: 2\n".as_bytes(),
        );
        assert!(raw.is_ok(), "{raw:?}");
        assert_eq!(tree("\u{feff}a: 1\nb: 2\n"), tree("a: 1\nb: 2\n"));
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
    fn trees_expand_aliases_keep_order_repeats_and_tags() {
        let t = tree("a: &x {k: 1}\nb: *x\nm: {r: 1, r: 2}\nt: !secret s\nn: .nan\n");
        let k1 = Tree::Map(vec![(Tree::Str("k".into()), Tree::Int(1))]);
        assert_eq!(t.get("b"), Some(&k1));
        assert_eq!(t.get("a"), t.get("b"));
        let Some(Tree::Map(repeated)) = t.get("m") else {
            panic!("{t:?}");
        };
        assert_eq!(repeated.len(), 2);
        assert_eq!(
            t.get("t"),
            Some(&Tree::Tagged(
                "!secret".into(),
                Box::new(Tree::Str("s".into()))
            ))
        );
        assert_eq!(
            t,
            tree("a: {k: 1}\nb: {k: 1}\nm: {r: 1, r: 2}\nt: !secret s\nn: .NaN\n")
        );
        assert_ne!(
            t,
            tree("b: {k: 1}\na: {k: 1}\nm: {r: 1, r: 2}\nt: !secret s\nn: .nan\n")
        );
    }

    #[test]
    fn edits_on_trees() {
        let mut t = tree("a: 1\ncron:\nb: 2\n");
        t.slot("cron").unwrap().put("x", Tree::Int(5));
        t.put("a", Tree::Int(3));
        t.slot("gateway").unwrap().put("y", Tree::Bool(true));
        assert_eq!(t, tree("a: 3\ncron: {x: 5}\nb: 2\ngateway: {y: true}\n"));
        assert!(t.remove("b"));
        assert!(!t.remove("b"));
        assert_eq!(
            t.differing_keys(&tree("a: 3\ncron: {x: 6}\n")),
            ["cron", "gateway"]
        );
        let mut empty = tree("# only a comment\n");
        assert_eq!(empty, Tree::Null);
        empty.put("k", Tree::Null);
        assert_eq!(empty, tree("k: null\n"));
        assert!(tree("{}").is_empty_map());
    }
}
