//! The mirror of `config.yaml`: what the file says, before validation.
//!
//! [`RawConfig`] sorts the document (a [`Value`] read under
//! `Rules::Document`, which refused what the file's shape does not allow)
//! into known keys, from the dotted top-level form
//! (`gateway.loop_watchdog_max_strikes: 5`) or the nested form (`gateway:
//! {loop_watchdog_max_strikes: 3}`), the dotted form winning; every unknown
//! key (a top-level key, a key of our sections, and each key one level under
//! an unknown top-level mapping, so that `gatewy: {loop_watchdog: false}` can
//! be recognised as a typo); and every section that is not a mapping.
//!
//! A value is kept as any YAML node (so a string where a number belongs
//! becomes a warning, not a parse failure); a mapping keeps its entries, so a
//! key whose value is a mapping (`cron.env`) can be judged entry by entry.
//! A merge key in one of our sections (`<<: *defaults`, or a list of
//! mappings) brings in the keys of its mapping(s) as PyYAML (and so Hermes)
//! reads them: the first mapping given wins, and keys written in the section
//! win over merged ones.

use std::collections::BTreeMap;

use super::keys;
use super::value::{MERGE, Value};

/// The document, before validation.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RawConfig {
    /// Known keys given in the file; the dotted form already preferred.
    values: BTreeMap<&'static str, Value>,
    /// Keys not in the table (dotted, e.g. `cron.nope`, `model`,
    /// `model.default`), in file order. Most are Hermes's; validation picks
    /// out the near misses of our keys.
    pub(crate) unknown: Vec<String>,
    /// Sections (`cron`, `gateway`) given as something other than a mapping
    /// or null; their keys keep the defaults unless given in dotted form.
    pub(crate) bad_sections: Vec<(String, Value)>,
}

impl RawConfig {
    /// The value the file gives for a known key, if any.
    pub(crate) fn value(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// Sort the document `doc` (null: no keys at all).
    pub(crate) fn of(doc: &Value) -> RawConfig {
        let mut raw = RawConfig::default();
        let mut dotted = BTreeMap::new();
        for (key, value) in doc.entries() {
            let key = key.key_text();
            if keys::is_section(&key) {
                let Some(entries) = section(value) else {
                    raw.bad_sections.push((key, value.clone()));
                    continue;
                };
                for (leaf, value) in entries {
                    let name = format!("{key}.{leaf}");
                    match keys::find(&name) {
                        Some(spec) => {
                            raw.values.insert(spec.name, value.clone());
                        }
                        None => raw.unknown.push(name),
                    }
                }
            } else if let Some(spec) = keys::find(&key) {
                dotted.insert(spec.name, value.clone());
            } else {
                let children = last_wins(value).into_iter();
                let children: Vec<String> = children.map(|(k, _)| format!("{key}.{k}")).collect();
                raw.unknown.push(key);
                raw.unknown.extend(children);
            }
        }
        raw.values.extend(dotted);
        // Another program's key given twice is listed once.
        let mut seen = std::collections::HashSet::new();
        raw.unknown.retain(|k| seen.insert(k.clone()));
        raw
    }
}

/// The entries of one of our sections (null: none): those written, then
/// those a merge key brings in that are not written. None when it is not a
/// mapping.
fn section(value: &Value) -> Option<Vec<(String, &Value)>> {
    let (Value::Map(_) | Value::Null) = value else {
        return None;
    };
    let mut written: Vec<(String, &Value)> = Vec::new();
    let mut merged: Vec<(String, &Value)> = Vec::new();
    for (key, value) in value.entries() {
        if !key.is_str(MERGE) {
            written.push((key.key_text(), value));
            continue;
        }
        let sources = match value {
            Value::Seq(items) => items.iter().collect(),
            map => vec![map],
        };
        for (key, value) in sources.into_iter().flat_map(last_wins) {
            if !merged.iter().any(|(k, _)| *k == key) {
                merged.push((key, value));
            }
        }
    }
    for (key, value) in merged {
        if key != MERGE && !written.iter().any(|(k, _)| *k == key) {
            written.push((key, value));
        }
    }
    Some(written)
}

/// The entries of a mapping each key once (by its text), in the place it was
/// first given with the value it was last given, as PyYAML reads a mapping
/// that is not ours; none for anything but a mapping.
fn last_wins(value: &Value) -> Vec<(String, &Value)> {
    let mut entries: Vec<(String, &Value)> = Vec::new();
    for (key, value) in value.entries() {
        let key = key.key_text();
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => entries.push((key, value)),
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> Result<RawConfig, crate::config::ConfigError> {
        super::super::yaml::parse(Path::new("c.yaml"), text.as_bytes())
            .map(|doc| RawConfig::of(&doc))
    }

    fn raw(text: &str) -> RawConfig {
        parse(text).unwrap()
    }

    #[test]
    fn dotted_form_wins_and_nested_fills_the_rest() {
        let doc =
            raw("cron.output_retention: 7\ncron:\n  output_retention: 8\n  ledger_retention: 9\n");
        assert_eq!(doc.value("cron.output_retention"), Some(&Value::Int(7)));
        assert_eq!(doc.value("cron.ledger_retention"), Some(&Value::Int(9)));
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
        assert_eq!(doc.value("cron.output_retention"), Some(&Value::Int(8)));
        assert_eq!(doc.value("cron.ledger_retention"), Some(&Value::Int(5)));
        assert_eq!(doc.value("cron.heartbeat_interval_s"), Some(&Value::Int(7)));
        assert_eq!(
            doc.value("gateway.loop_watchdog"),
            Some(&Value::Bool(false))
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
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_our_mappings_refuse_a_repeated_key() {
        let doc = raw("model:\n  a: 1\n  a: 2\ncron: {output_retention: 4}\n");
        assert_eq!(doc.unknown, ["model", "model.a"]);
        assert_eq!(doc.value("cron.output_retention"), Some(&Value::Int(4)));
        let err = parse("cron: {a: 1, a: 2}\n").unwrap_err();
        assert!(err.to_string().contains("duplicate"), "{err}");
        // Another program's top-level key twice: PyYAML keeps the last, and
        // it is not ours to refuse.
        let doc = raw("model: 1\nmodel: 2\n");
        assert_eq!(doc.unknown, ["model"]);
    }

    #[test]
    fn a_section_that_is_not_a_mapping_is_recorded() {
        let doc = raw("gateway: [1]\ncron: off\n");
        assert_eq!(
            doc.bad_sections,
            [
                ("gateway".to_string(), Value::Seq(vec![Value::Int(1)])),
                ("cron".to_string(), Value::Str("off".into()))
            ]
        );
    }

    #[test]
    fn scalars_keep_their_yaml_type() {
        let doc = raw("timezone: 5\ncron.output_retention: 99999999999999999999\n\
             cron.ledger_retention: -170141183460469231731687303715884105729\n\
             cron.heartbeat_interval_s: '5'\ngateway.loop_watchdog: !flag yes\n");
        assert_eq!(doc.value("timezone"), Some(&Value::Int(5)));
        assert_eq!(
            doc.value("cron.output_retention"),
            Some(&Value::Int(99_999_999_999_999_999_999))
        );
        assert!(matches!(
            doc.value("cron.ledger_retention"),
            Some(Value::Float(x)) if *x < -1e38
        ));
        assert_eq!(
            doc.value("cron.heartbeat_interval_s"),
            Some(&Value::Str("5".into()))
        );
        assert_eq!(
            doc.value("gateway.loop_watchdog"),
            Some(&Value::Tagged(
                "!flag".into(),
                Box::new(Value::Str("yes".into()))
            ))
        );
    }
}
