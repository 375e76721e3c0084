//! The YAML value model: one node of `config.yaml`, and the one serde
//! visitor that reads it. Loading, validation, the judging of `cron.path`
//! and `cron.env`, and the meaning every lossless edit is checked against
//! all work on a [`Value`].
//!
//! A [`Value`] is what a node *means* (aliases expanded, comments and
//! quoting gone, every mapping entry in file order, a repeated key kept
//! twice, a merge key `<<` kept as written). Nothing here names serde_yaml:
//! it reads any self-describing format.
//!
//! The visitor is [`Rules`]: the shape rules of the node being read. Most
//! nodes are [`Rules::Any`]; the document and our sections refuse what
//! `load` refuses while the node is read, so that serde_yaml gives each
//! refusal the line and column of the node at fault: a document that is not
//! a mapping, a key given twice at the top level or in one of our sections,
//! a merge key whose value is not a mapping or a list of mappings (PyYAML
//! refuses it too). Mappings that are not ours may repeat a key (PyYAML,
//! and so Hermes, takes the last).

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, EnumAccess, MapAccess};
use serde::de::{SeqAccess, Unexpected, VariantAccess, Visitor};

/// One YAML node.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    /// Any integer that fits an i128 (YAML allows arbitrarily long ones).
    Int(i128),
    /// Includes NaN and the infinities, and integers too large for an i128.
    Float(f64),
    Str(String),
    Seq(Vec<Value>),
    /// Entries in file order; a repeated key is kept twice, a merge key
    /// (`<<`) as it is written.
    Map(Vec<(Value, Value)>),
    /// A node with a non-core tag, e.g. `!secret x`, and the node it tags.
    Tagged(String, Box<Value>),
}

/// The merge key: `<<: *defaults` brings in the keys of the anchored mapping.
pub(crate) const MERGE: &str = "<<";

impl PartialEq for Value {
    /// Structural equality; YAML has one NaN, equal to itself.
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Seq(a), Value::Seq(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            (Value::Tagged(t, a), Value::Tagged(u, b)) => t == u && a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Value {
    /// The value as it would read in YAML, shortened: long strings are cut and
    /// collections are named rather than printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Float(x) if x.is_nan() => f.write_str(".nan"),
            Value::Float(x) if x.is_infinite() => {
                f.write_str(if *x > 0.0 { ".inf" } else { "-.inf" })
            }
            Value::Float(x) if x.abs() >= 1e15 || (*x != 0.0 && x.abs() < 1e-4) => {
                write!(f, "{x:e}")
            }
            Value::Float(x) if x.fract() == 0.0 => write!(f, "{x:.1}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => {
                const MAX: usize = 40;
                if s.chars().count() > MAX {
                    let cut: String = s.chars().take(MAX).collect();
                    write!(f, "{cut:?}...")
                } else {
                    write!(f, "{s:?}")
                }
            }
            Value::Seq(_) => f.write_str("a list"),
            Value::Map(_) => f.write_str("a mapping"),
            Value::Tagged(tag, _) => write!(f, "a value tagged {tag}"),
        }
    }
}

impl Value {
    /// The text of a mapping key: a string as is, anything else as displayed.
    pub(crate) fn key_text(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            Value::Seq(_) => "[...]".to_string(),
            Value::Map(_) => "{...}".to_string(),
            other => other.to_string(),
        }
    }

    /// Whether this is the string `text`.
    pub(crate) fn is_str(&self, text: &str) -> bool {
        matches!(self, Value::Str(s) if s == text)
    }

    /// The entries of a mapping (none for null or anything else).
    pub(crate) fn entries(&self) -> &[(Value, Value)] {
        match self {
            Value::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The value of the first entry whose key is the string `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.entries()
            .iter()
            .find(|(k, _)| k.is_str(key))
            .map(|(_, value)| value)
    }

    /// The mapping this is, looking through a tag.
    pub(crate) fn mapping(&self) -> Option<&Value> {
        match self {
            Value::Map(_) => Some(self),
            Value::Tagged(_, inner) => inner.mapping(),
            _ => None,
        }
    }

    /// Set `key` to `value`: in place when the mapping has it, else appended.
    /// A null document or section becomes a mapping first; a tag is looked
    /// through.
    pub(crate) fn put(&mut self, key: &str, value: Value) {
        if matches!(self, Value::Null) {
            *self = Value::Map(Vec::new());
        }
        match self {
            Value::Tagged(_, inner) => inner.put(key, value),
            Value::Map(entries) => match entries.iter_mut().find(|(k, _)| k.is_str(key)) {
                Some(entry) => entry.1 = value,
                None => entries.push((Value::Str(key.to_string()), value)),
            },
            _ => {}
        }
    }

    /// The value under `key`, a null one created at the end if missing.
    pub(crate) fn slot(&mut self, key: &str) -> Option<&mut Value> {
        if self.get(key).is_none() {
            self.put(key, Value::Null);
        }
        let Value::Map(entries) = self else {
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
        match self {
            Value::Tagged(_, inner) => inner.remove(key),
            Value::Map(entries) => {
                let at = entries.iter().position(|(k, _)| k.is_str(key));
                at.map(|at| entries.remove(at)).is_some()
            }
            _ => false,
        }
    }

    /// Whether this is a mapping with no entries (tagged or not).
    pub(crate) fn is_empty_map(&self) -> bool {
        self.mapping().is_some_and(|map| map.entries().is_empty())
    }
}

/// Whose a top-level key of the document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyKind {
    /// One of our sections (`cron:`, `gateway:`).
    Section,
    /// Another key of ours (`timezone`, a dotted `cron.x`).
    Ours,
    /// Another program's (Hermes's `model:`).
    Other,
}

/// The shape rules of the node being read; the visitor of [`Value`].
#[derive(Clone, Copy)]
pub(crate) enum Rules {
    /// Any node.
    Any,
    /// The document: a mapping of keys (or nothing), none of ours given
    /// twice; the value of a key that the function names a section of ours
    /// is read under [`Rules::Section`]. Another program's key given twice
    /// (Hermes's `model:`) is kept as PyYAML keeps it, the last one winning:
    /// it is not ours to refuse.
    Document(fn(&str) -> KeyKind),
    /// One of our sections: no key twice; a merge key's value is read under
    /// [`Rules::Merge`]. Anything but a mapping is kept (validation warns).
    Section,
    /// A merge key's value in one of our sections: a mapping, or a list of
    /// mappings (a null in the list is an empty one).
    Merge,
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Rules::Any.deserialize(deserializer)
    }
}

impl<'de> DeserializeSeed<'de> for Rules {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Rules {
    /// The scalar `value`, unless these rules want a mapping (`unexpected`
    /// says what came instead, as serde words it).
    fn scalar<E: de::Error>(self, value: Value, unexpected: Unexpected) -> Result<Value, E> {
        match self {
            Rules::Document(_) | Rules::Merge => Err(E::invalid_type(unexpected, &self)),
            Rules::Any | Rules::Section => Ok(value),
        }
    }

    /// Whether a key given twice is refused.
    fn unique(self) -> bool {
        matches!(self, Rules::Document(_) | Rules::Section)
    }
}

/// The refusal of a key given twice.
fn duplicate<E: de::Error>(key: &str) -> E {
    E::custom(format!("duplicate key `{key}`"))
}

impl<'de> Visitor<'de> for Rules {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rules::Document(_) => "a mapping of config keys",
            Rules::Merge => "a mapping or a list of mappings to merge (`<<: *anchor`)",
            Rules::Any | Rules::Section => "any YAML value",
        })
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.scalar(Value::Bool(v), Unexpected::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.scalar(Value::Int(i128::from(v)), Unexpected::Signed(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.scalar(Value::Int(i128::from(v)), Unexpected::Unsigned(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        let what = format!("integer `{v}` as i128");
        self.scalar(Value::Int(v), Unexpected::Other(&what))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        // Beyond i128 only the magnitude matters: it is out of every range.
        let value = i128::try_from(v).map_or(Value::Float(v as f64), Value::Int);
        self.scalar(value, Unexpected::Other(&format!("integer `{v}` as u128")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.scalar(Value::Float(v), Unexpected::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.scalar(Value::Str(v.to_owned()), Unexpected::Str(v))
    }
    /// Null; as the document (an empty file, or one holding only comments
    /// or `null`), no keys at all.
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        match self {
            Rules::Merge => Err(E::invalid_type(Unexpected::Unit, &self)),
            _ => Ok(Value::Null),
        }
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        match self {
            Rules::Merge => Err(E::invalid_type(Unexpected::Option, &self)),
            _ => Ok(Value::Null),
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if let Rules::Document(_) = self {
            return Err(de::Error::invalid_type(Unexpected::Seq, &self));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            if matches!(self, Rules::Merge) && !matches!(item, Value::Map(_) | Value::Null) {
                let message = format!("{item} in a merge list is not a mapping");
                return Err(de::Error::custom(message));
            }
            items.push(item);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<Value>()? {
            let text = key.key_text();
            let kind = match self {
                Rules::Document(kind_of) => kind_of(&text),
                _ => KeyKind::Ours,
            };
            let rules = match self {
                Rules::Document(_) if kind == KeyKind::Section => Rules::Section,
                Rules::Section if text == MERGE => Rules::Merge,
                _ => Rules::Any,
            };
            let repeated = self.unique() && kind != KeyKind::Other && !seen.insert(text.clone());
            // The document and the merge key refuse a repeat before reading
            // its value, a section's other keys after.
            if repeated && matches!((self, rules), (Rules::Document(_), _) | (_, Rules::Merge)) {
                return Err(duplicate(&text));
            }
            let value = map.next_value_seed(rules)?;
            if repeated {
                return Err(duplicate(&text));
            }
            entries.push((key, value));
        }
        Ok(Value::Map(entries))
    }
    /// serde_yaml presents a node with a custom tag as an enum variant.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        if let Rules::Document(_) | Rules::Merge = self {
            return Err(de::Error::invalid_type(Unexpected::Enum, &self));
        }
        let (tag, variant): (String, _) = data.variant()?;
        let inner = variant.newtype_variant::<Value>()?;
        let tag = format!("!{}", tag.trim_start_matches('!'));
        Ok(Value::Tagged(tag, Box::new(inner)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn values_display_as_yaml_would_write_them() {
        let shown = |v: Value| v.to_string();
        assert_eq!(shown(Value::Float(f64::NAN)), ".nan");
        assert_eq!(shown(Value::Float(f64::NEG_INFINITY)), "-.inf");
        assert_eq!(shown(Value::Float(1e300)), "1e300");
        assert_eq!(shown(Value::Float(2.5)), "2.5");
        assert_eq!(shown(Value::Float(-30.0)), "-30.0");
        assert_eq!(shown(Value::Str("abc".into())), "\"abc\"");
        let long = shown(Value::Str("x".repeat(500)));
        assert!(long.len() < 60 && long.ends_with("..."), "{long}");
    }

    #[test]
    fn values_expand_aliases_keep_order_repeats_and_tags() {
        let t = value("a: &x {k: 1}\nb: *x\nm: {r: 1, r: 2}\nt: !secret s\nn: .nan\n");
        let k1 = Value::Map(vec![(Value::Str("k".into()), Value::Int(1))]);
        assert_eq!(t.get("b"), Some(&k1));
        assert_eq!(t.get("a"), t.get("b"));
        assert_eq!(t.get("m").unwrap().entries().len(), 2);
        assert_eq!(
            t.get("t"),
            Some(&Value::Tagged(
                "!secret".into(),
                Box::new(Value::Str("s".into()))
            ))
        );
        assert_eq!(
            t,
            value("a: {k: 1}\nb: {k: 1}\nm: {r: 1, r: 2}\nt: !secret s\nn: .NaN\n")
        );
        assert_ne!(
            t,
            value("b: {k: 1}\na: {k: 1}\nm: {r: 1, r: 2}\nt: !secret s\nn: .nan\n")
        );
    }

    #[test]
    fn edits_on_values() {
        let mut t = value("a: 1\ncron:\nb: 2\n");
        t.slot("cron").unwrap().put("x", Value::Int(5));
        t.put("a", Value::Int(3));
        t.slot("gateway").unwrap().put("y", Value::Bool(true));
        assert_eq!(t, value("a: 3\ncron: {x: 5}\nb: 2\ngateway: {y: true}\n"));
        assert!(t.remove("b"));
        assert!(!t.remove("b"));
        assert_eq!(t, value("a: 3\ncron: {x: 5}\ngateway: {y: true}\n"));
        let mut empty = value("# only a comment\n");
        assert_eq!(empty, Value::Null);
        empty.put("k", Value::Null);
        assert_eq!(empty, value("k: null\n"));
        assert!(value("{}").is_empty_map() && value("!t {}").is_empty_map());
    }

    #[test]
    fn scalars_keep_their_yaml_type() {
        let t =
            value("a: 99999999999999999999\nb: -170141183460469231731687303715884105729\nc: '5'\n");
        assert_eq!(t.get("a"), Some(&Value::Int(99_999_999_999_999_999_999)));
        assert!(matches!(t.get("b"), Some(Value::Float(x)) if *x < -1e38));
        assert_eq!(t.get("c"), Some(&Value::Str("5".into())));
    }
}
