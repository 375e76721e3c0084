//! The serde mirror of `config.yaml`: what the file says, before validation.
//!
//! [`RawValue`] keeps any YAML node in a form validation can judge (so a
//! string where a number belongs becomes a warning, not a parse failure), and
//! [`RawConfig`] is the document: known keys from the dotted top-level form
//! (`gateway.loop_watchdog_max_strikes: 5`) or the nested form (`gateway:
//! {loop_watchdog_max_strikes: 3}`), the dotted form winning, plus every
//! unknown key (a top-level key, a key of our sections, and each key one
//! level under an unknown top-level mapping, so that `gatewy: {loop_watchdog:
//! false}` can be recognised as a typo) and every section that is not a
//! mapping.
//!
//! A list or a mapping keeps its contents (in file order, a repeated key
//! kept twice), so a key whose value is a mapping (`cron.env`) can be judged
//! entry by entry.
//!
//! Both implement `Deserialize` against any self-describing format; nothing
//! here names serde_yaml. The only shape errors are a document that is not a
//! mapping (a list, a scalar) and a key given twice at the top level or in one
//! of our sections. Mappings that are not ours may repeat a key (PyYAML, and
//! so Hermes, takes the last).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, IgnoredAny, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

use super::keys;

/// One YAML node, reduced to what validation needs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RawValue {
    Null,
    Bool(bool),
    /// Any integer that fits an i128 (YAML allows arbitrarily long ones).
    Int(i128),
    /// Includes NaN and the infinities, and integers too large for an i128.
    Float(f64),
    Str(String),
    Seq(Vec<RawValue>),
    /// Entries in file order; a repeated key is kept twice, a merge key
    /// (`<<`) as it is written.
    Map(Vec<(RawValue, RawValue)>),
    /// A node with a non-core tag, e.g. `!secret x`.
    Tagged(String),
}

impl fmt::Display for RawValue {
    /// The value as it would read in YAML, shortened: long strings are cut and
    /// collections are named rather than printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawValue::Null => f.write_str("null"),
            RawValue::Bool(b) => write!(f, "{b}"),
            RawValue::Int(n) => write!(f, "{n}"),
            RawValue::Float(x) if x.is_nan() => f.write_str(".nan"),
            RawValue::Float(x) if x.is_infinite() => {
                f.write_str(if *x > 0.0 { ".inf" } else { "-.inf" })
            }
            RawValue::Float(x) if x.abs() >= 1e15 || (*x != 0.0 && x.abs() < 1e-4) => {
                write!(f, "{x:e}")
            }
            RawValue::Float(x) if x.fract() == 0.0 => write!(f, "{x:.1}"),
            RawValue::Float(x) => write!(f, "{x}"),
            RawValue::Str(s) => {
                const MAX: usize = 40;
                if s.chars().count() > MAX {
                    let cut: String = s.chars().take(MAX).collect();
                    write!(f, "{cut:?}...")
                } else {
                    write!(f, "{s:?}")
                }
            }
            RawValue::Seq(_) => f.write_str("a list"),
            RawValue::Map(_) => f.write_str("a mapping"),
            RawValue::Tagged(tag) => write!(f, "a value tagged {tag}"),
        }
    }
}

impl RawValue {
    /// The text of a mapping key: a string as is, anything else as displayed.
    pub(crate) fn key_text(&self) -> String {
        match self {
            RawValue::Str(s) => s.clone(),
            RawValue::Seq(_) => "[...]".to_string(),
            RawValue::Map(_) => "{...}".to_string(),
            other => other.to_string(),
        }
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawValueVisitor)
    }
}

struct RawValueVisitor;

impl<'de> Visitor<'de> for RawValueVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(i128::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
        Ok(RawValue::Int(i128::from(v)))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<RawValue, E> {
        Ok(RawValue::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<RawValue, E> {
        // Beyond i128 only the magnitude matters: it is out of every range.
        Ok(i128::try_from(v).map_or(RawValue::Float(v as f64), RawValue::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
        Ok(RawValue::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<RawValue, E> {
        Ok(RawValue::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
        RawValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<RawValue>()? {
            items.push(item);
        }
        Ok(RawValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<RawValue, RawValue>()? {
            entries.push(entry);
        }
        Ok(RawValue::Map(entries))
    }
    /// serde_yaml presents a node with a custom tag as an enum variant.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<RawValue, A::Error> {
        let (tag, variant): (String, _) = data.variant()?;
        variant.newtype_variant::<IgnoredAny>()?;
        Ok(RawValue::Tagged(format!(
            "!{}",
            tag.trim_start_matches('!')
        )))
    }
}

/// The document, before validation.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RawConfig {
    /// Known keys given in the file; the dotted form already preferred.
    values: BTreeMap<&'static str, RawValue>,
    /// Keys not in the table (dotted, e.g. `cron.nope`, `model`,
    /// `model.default`), in file order. Most are Hermes's; validation picks
    /// out the near misses of our keys.
    pub(crate) unknown: Vec<String>,
    /// Sections (`cron`, `gateway`) given as something other than a mapping
    /// or null; their keys keep the defaults unless given in dotted form.
    pub(crate) bad_sections: Vec<(String, RawValue)>,
}

impl RawConfig {
    /// The value the file gives for a known key, if any.
    pub(crate) fn value(&self, key: &str) -> Option<&RawValue> {
        self.values.get(key)
    }
}

impl<'de> Deserialize<'de> for RawConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DocumentVisitor)
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = RawConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of config keys")
    }

    /// An empty file, or one holding only comments or `null`: no keys at all.
    fn visit_unit<E: de::Error>(self) -> Result<RawConfig, E> {
        Ok(RawConfig::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<RawConfig, E> {
        Ok(RawConfig::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawConfig, A::Error> {
        let mut raw = RawConfig::default();
        let mut seen = BTreeSet::new();
        let mut dotted = BTreeMap::new();
        let mut nested = BTreeMap::new();
        while let Some(key) = map.next_key::<RawValue>()? {
            let key = key.key_text();
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            if keys::is_section(&key) {
                match map.next_value::<Section>()?.0 {
                    Entries::Map(entries) => {
                        for (leaf, value) in entries {
                            let name = format!("{key}.{leaf}");
                            match keys::find(&name) {
                                Some(spec) => {
                                    nested.insert(spec.name, value);
                                }
                                None => raw.unknown.push(name),
                            }
                        }
                    }
                    Entries::Not(value) => raw.bad_sections.push((key, value)),
                }
            } else if let Some(spec) = keys::find(&key) {
                dotted.insert(spec.name, map.next_value::<RawValue>()?);
            } else {
                let children = match map.next_value::<Foreign>()?.0 {
                    Entries::Map(entries) => entries,
                    Entries::Not(_) => Vec::new(),
                };
                let children: Vec<String> = children
                    .into_iter()
                    .map(|(child, _)| format!("{key}.{child}"))
                    .collect();
                raw.unknown.push(key);
                raw.unknown.extend(children);
            }
        }
        nested.extend(dotted);
        raw.values = nested;
        Ok(raw)
    }
}

/// The merge key: `<<: *defaults` in a section brings in the keys of the
/// anchored mapping, as PyYAML (and so Hermes) reads them.
const MERGE: &str = "<<";

/// What a merge key brings into one of our sections: the entries of its
/// mapping, or of each mapping of its list, the first one given winning. Any
/// other value is refused, as PyYAML refuses it.
struct Merge(Vec<(String, RawValue)>);

impl<'de> Deserialize<'de> for Merge {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MergeVisitor)
    }
}

struct MergeVisitor;

impl MergeVisitor {
    /// Add the keys of one mapping that are not there yet.
    fn add(into: &mut Vec<(String, RawValue)>, entries: Entries) {
        if let Entries::Map(entries) = entries {
            for (key, value) in entries {
                if !into.iter().any(|(k, _)| *k == key) {
                    into.push((key, value));
                }
            }
        }
    }
}

impl<'de> Visitor<'de> for MergeVisitor {
    type Value = Merge;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping or a list of mappings to merge (`<<: *anchor`)")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Merge, A::Error> {
        let visitor = SectionVisitor { duplicates: true };
        let mut merged = Vec::new();
        Self::add(&mut merged, visitor.visit_map(map)?);
        Ok(Merge(merged))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Merge, A::Error> {
        let mut merged = Vec::new();
        while let Some(Foreign(entries)) = seq.next_element::<Foreign>()? {
            if let Entries::Not(value) = &entries {
                return Err(de::Error::custom(format!(
                    "{value} in a merge list is not a mapping"
                )));
            }
            Self::add(&mut merged, entries);
        }
        Ok(Merge(merged))
    }
}

/// The value of a top-level key holding keys: its entries (none for null),
/// or what it was instead of a mapping.
enum Entries {
    Map(Vec<(String, RawValue)>),
    Not(RawValue),
}

/// One of our sections (`cron`, `gateway`): a key given twice is refused.
struct Section(Entries);

/// Any other top-level key: PyYAML takes the last of a repeated key, and
/// these are not ours to refuse.
struct Foreign(Entries);

impl<'de> Deserialize<'de> for Section {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let visitor = SectionVisitor { duplicates: false };
        deserializer.deserialize_any(visitor).map(Section)
    }
}

impl<'de> Deserialize<'de> for Foreign {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let visitor = SectionVisitor { duplicates: true };
        deserializer.deserialize_any(visitor).map(Foreign)
    }
}

struct SectionVisitor {
    /// Whether a key may be given twice (the last wins).
    duplicates: bool,
}

impl<'de> Visitor<'de> for SectionVisitor {
    type Value = Entries;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of section keys")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
        let mut entries: Vec<(String, RawValue)> = Vec::new();
        let mut merged: Vec<(String, RawValue)> = Vec::new();
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<RawValue>()? {
            let key = key.key_text();
            if key == MERGE && !self.duplicates {
                if !seen.insert(key) {
                    return Err(de::Error::custom(format!("duplicate key `{MERGE}`")));
                }
                merged = map.next_value::<Merge>()?.0;
                continue;
            }
            let value = map.next_value::<RawValue>()?;
            if seen.insert(key.clone()) {
                entries.push((key, value));
            } else if self.duplicates {
                if let Some(entry) = entries.iter_mut().find(|(k, _)| *k == key) {
                    entry.1 = value;
                }
            } else {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
        }
        // Keys written in the section win over merged ones (PyYAML's rule).
        for (key, value) in merged {
            if !seen.contains(&key) {
                entries.push((key, value));
            }
        }
        Ok(Entries::Map(entries))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Entries, E> {
        Ok(Entries::Map(Vec::new()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Entries, E> {
        Ok(Entries::Map(Vec::new()))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Entries, D::Error> {
        d.deserialize_any(self)
    }
    // Everything else is kept as a value so validation can warn about it.
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Entries, E> {
        RawValueVisitor.visit_bool(v).map(Entries::Not)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Entries, E> {
        RawValueVisitor.visit_i64(v).map(Entries::Not)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Entries, E> {
        RawValueVisitor.visit_u64(v).map(Entries::Not)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Entries, E> {
        RawValueVisitor.visit_i128(v).map(Entries::Not)
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Entries, E> {
        RawValueVisitor.visit_u128(v).map(Entries::Not)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Entries, E> {
        RawValueVisitor.visit_f64(v).map(Entries::Not)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Entries, E> {
        RawValueVisitor.visit_str(v).map(Entries::Not)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Entries, A::Error> {
        RawValueVisitor.visit_seq(seq).map(Entries::Not)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Entries, A::Error> {
        RawValueVisitor.visit_enum(data).map(Entries::Not)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawConfig {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn values_display_as_yaml_would_write_them() {
        let shown = |v: RawValue| v.to_string();
        assert_eq!(shown(RawValue::Float(f64::NAN)), ".nan");
        assert_eq!(shown(RawValue::Float(f64::NEG_INFINITY)), "-.inf");
        assert_eq!(shown(RawValue::Float(1e300)), "1e300");
        assert_eq!(shown(RawValue::Float(2.5)), "2.5");
        assert_eq!(shown(RawValue::Float(-30.0)), "-30.0");
        assert_eq!(shown(RawValue::Str("abc".into())), "\"abc\"");
        let long = shown(RawValue::Str("x".repeat(500)));
        assert!(long.len() < 60 && long.ends_with("..."), "{long}");
    }

    #[test]
    fn dotted_form_wins_and_nested_fills_the_rest() {
        let doc =
            raw("cron.output_retention: 7\ncron:\n  output_retention: 8\n  ledger_retention: 9\n");
        assert_eq!(doc.value("cron.output_retention"), Some(&RawValue::Int(7)));
        assert_eq!(doc.value("cron.ledger_retention"), Some(&RawValue::Int(9)));
        assert_eq!(doc.value("cron.heartbeat_interval_s"), None);
        assert!(doc.unknown.is_empty() && doc.bad_sections.is_empty());
    }

    #[test]
    fn unknown_keys_are_kept_in_file_order_with_their_section() {
        let doc = raw("zeta: 1\ngateway: {b: 1, a: 2}\ncron.x: 3\n1: 4\n");
        assert_eq!(
            doc.unknown,
            ["zeta", "gateway.b", "gateway.a", "cron.x", "1"]
        );
    }

    #[test]
    fn keys_one_level_under_an_unknown_mapping_are_listed_too() {
        let doc = raw("gatewy:\n  loop_watchdog: false\n  deeper: {x: 1}\nmodel: ~\nlist: [a]\n");
        assert_eq!(
            doc.unknown,
            [
                "gatewy",
                "gatewy.loop_watchdog",
                "gatewy.deeper",
                "model",
                "list"
            ]
        );
    }

    #[test]
    fn merge_keys_in_our_sections_read_as_pyyaml_reads_them() {
        let doc = raw(
            "base: &b {output_retention: 4, ledger_retention: 5, bogus: 1}\n\
             more: &m {ledger_retention: 6, heartbeat_interval_s: 7}\n\
             cron:\n  <<: [*b, *m]\n  output_retention: 8\n\
             gateway: {<<: {loop_watchdog: false}}\n",
        );
        assert_eq!(doc.value("cron.output_retention"), Some(&RawValue::Int(8)));
        assert_eq!(doc.value("cron.ledger_retention"), Some(&RawValue::Int(5)));
        assert_eq!(
            doc.value("cron.heartbeat_interval_s"),
            Some(&RawValue::Int(7))
        );
        assert_eq!(
            doc.value("gateway.loop_watchdog"),
            Some(&RawValue::Bool(false))
        );
        assert_eq!(
            doc.unknown,
            [
                "base",
                "base.output_retention",
                "base.ledger_retention",
                "base.bogus",
                "more",
                "more.ledger_retention",
                "more.heartbeat_interval_s",
                "cron.bogus"
            ]
        );
        for bad in [
            "cron: {<<: 5}\n",
            "cron: {<<: [5]}\n",
            "cron: {<<: {}, <<: {}}\n",
        ] {
            assert!(serde_yaml::from_str::<RawConfig>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_our_mappings_refuse_a_repeated_key() {
        let doc = raw("model:\n  a: 1\n  a: 2\ncron: {output_retention: 4}\n");
        assert_eq!(doc.unknown, ["model", "model.a"]);
        assert_eq!(doc.value("cron.output_retention"), Some(&RawValue::Int(4)));
        for text in ["cron: {a: 1, a: 2}\n", "model: 1\nmodel: 2\n"] {
            let err = serde_yaml::from_str::<RawConfig>(text).unwrap_err();
            assert!(err.to_string().contains("duplicate"), "{text}: {err}");
        }
    }

    #[test]
    fn a_section_that_is_not_a_mapping_is_recorded() {
        let doc = raw("gateway: [1]\ncron: off\n");
        assert_eq!(
            doc.bad_sections,
            [
                ("gateway".to_string(), RawValue::Seq(vec![RawValue::Int(1)])),
                ("cron".to_string(), RawValue::Str("off".into()))
            ]
        );
    }

    #[test]
    fn scalars_keep_their_yaml_type() {
        let doc = raw("timezone: 5\ncron.output_retention: 99999999999999999999\n\
             cron.ledger_retention: -170141183460469231731687303715884105729\n\
             cron.heartbeat_interval_s: '5'\ngateway.loop_watchdog: !flag yes\n");
        assert_eq!(doc.value("timezone"), Some(&RawValue::Int(5)));
        assert_eq!(
            doc.value("cron.output_retention"),
            Some(&RawValue::Int(99_999_999_999_999_999_999))
        );
        assert!(matches!(
            doc.value("cron.ledger_retention"),
            Some(RawValue::Float(x)) if *x < -1e38
        ));
        assert_eq!(
            doc.value("cron.heartbeat_interval_s"),
            Some(&RawValue::Str("5".into()))
        );
        assert_eq!(
            doc.value("gateway.loop_watchdog"),
            Some(&RawValue::Tagged("!flag".into()))
        );
    }
}
