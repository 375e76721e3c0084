//! `config set|unset`: the file's new text (the caller reads and writes it).
//!
//! Lossless: only the lines of the key being edited change. Comments, blank
//! lines, key order, quoting, anchors and aliases, flow and block style and
//! every other key, Hermes's included, stay byte for byte (`lossless.rs`).
//!
//! `set` validates strictly before touching anything: an unknown key or a
//! value that `load` would replace by the default is refused, and so is a file
//! `load` would refuse (it is never clobbered). The value is written where it
//! takes effect: into the dotted top-level form when the file has it (that
//! form wins on load; Hermes's own `config set` never writes it), and also
//! into the nested form when the file has both, so the two agree; else into
//! the nested form, creating the section at the end of the file. A section
//! that is not a mapping (`cron: off`) is left as it is and the dotted form
//! written; a section that is an alias (`cron: *defaults`) is refused.
//!
//! `cron.env`, a mapping, is not one value: `set cron.env V` is refused with
//! the YAML to write instead, and one variable is set or unset as
//! `cron.env.NAME` (`set cron.env.TZ Europe/Berlin`), the value taken as
//! text and written as a string, into the same forms as a key (the dotted
//! `cron.env: {...}` when the file has it, else `cron: {env: {...}}`).
//!
//! `unset` removes both forms, and a section it leaves empty. A key that is
//! not ours is refused, unless it is a near miss of one of ours that the file
//! has (what `load` warns about), which is removed: `config.yaml` is shared
//! with Hermes, and its keys are not hermes-cron's to remove.
//!
//! Every edit is checked before it is returned: the new text must parse, and
//! mean exactly what the old one meant with this one change (a `Value`
//! each); otherwise (an anchor that an alias elsewhere shares, a layout
//! the editor cannot change safely) the edit is refused and the file is left
//! as it is.

use std::path::Path;

use super::job_env;
use super::keys;
use super::load::validated;
use super::lossless::{Holds, Text};
use super::model::{ConfigError, Field, KeySpec, Setting};
use super::suggest::{near_misses, require, unknown_key};
use super::validate::{check, refusal};
use super::value::Value;
use super::yaml;
use super::yaml11;
use crate::schedule::ZoneTable;

/// Validate `value` for `key`, then write it, keeping every other byte.
///
/// `value` is read as one YAML scalar (`30`, `2.5`, `true`, `off`, `null`,
/// `europe/london`), or, for a text key, as the text it is; the canonical form is written (`30`, `false`, `null` for
/// `unbounded`/`system`, `Europe/London`), quoted where a YAML 1.1 reader
/// would read another type.
/// `bytes` is the file's contents (None: no file); `path` names it in
/// errors; `zones` reads zone names.
pub fn set(
    path: &Path,
    bytes: Option<&[u8]>,
    key: &str,
    value: &str,
    zones: &ZoneTable,
) -> Result<String, ConfigError> {
    if let Some((spec, name)) = keys::mapping_entry(key) {
        return set_entry(path, bytes, spec, key, name, value, zones);
    }
    let spec = require(key)?;
    if let Field::Env { .. } = spec.field {
        return Err(a_mapping(path, spec, value));
    }
    // A text key takes the value as it is typed (`[::1]:9464`, a token with
    // YAML's special characters); YAML's null words still mean none.
    let raw = if spec.takes_text() && !matches!(value.trim(), "null" | "~") {
        Value::Str(value.trim().to_string())
    } else {
        yaml::parse_scalar(value).map_err(|err| {
            ConfigError::Invalid(format!(
                "cannot set `{key}` to `{value}`: not a YAML value ({err}); expected {}",
                spec.accepted()
            ))
        })?
    };
    let setting = check(spec, &raw, zones)
        .map_err(|why| ConfigError::Invalid(refusal(spec, value, &raw, &why)))?;
    let written = yaml11::written(&setting).ok_or_else(|| a_mapping(path, spec, value))?;
    let mut edit = Edit::open(path, bytes, "set", spec.name)?;
    for target in edit.set_targets(spec.name)? {
        edit.put(target, &written)?;
    }
    let text = edit.finish()?;
    // The value written is the one `load` now reads.
    let after = validated(path, Some(text.as_bytes()), zones)?;
    if spec.current(&after.loaded.config) != setting {
        return Err(edit.not_kept("the new value would not be the one read"));
    }
    Ok(text)
}

/// Remove `key` (both the dotted and the nested form) so the default applies again.
///
/// A known key the file does not mention is a no-op success. An unknown key
/// is removed when it is a near miss of one of ours and the file has it (to
/// clean up what `load` warns about), and refused otherwise.
/// Returns the new text, or None when there is nothing to write.
pub fn unset(path: &Path, bytes: Option<&[u8]>, key: &str) -> Result<Option<String>, ConfigError> {
    if let Some((spec, name)) = keys::mapping_entry(key) {
        return unset_entry(path, bytes, spec, key, name);
    }
    let spec = keys::find(key);
    let Some(bytes) = bytes else {
        return spec.map(|_| None).ok_or_else(|| unknown_key(key));
    };
    let mut edit = Edit::open(path, bytes.into(), "unset", key)?;
    let top = edit.before.get(key).is_some();
    let nested = key.split_once('.').filter(|(section, leaf)| {
        mapping(edit.before.get(section)).is_some_and(|m| m.get(leaf).is_some())
    });
    if spec.is_none() {
        if !top && nested.is_none() {
            return Err(unknown_key(key));
        }
        if near_misses(key).is_empty() {
            return Err(not_ours(key));
        }
    }
    if !top && nested.is_none() {
        return Ok(None);
    }
    if top {
        edit.remove(Target::Top)?;
    }
    if let Some((section, leaf)) = nested {
        edit.remove(Target::Nested(section, leaf))?;
    }
    edit.finish().map(Some)
}

/// The refusal of `set cron.env VALUE`: how to set one variable, or the
/// YAML to write.
fn a_mapping(path: &Path, spec: &KeySpec, value: &str) -> ConfigError {
    let (section, leaf) = spec.split().unwrap_or(("cron", "env"));
    ConfigError::Invalid(format!(
        "cannot set `{key}` to `{value}`: `{key}` is a mapping of variables, not one value; \
         set one variable with `hermes-cron config set {key}.NAME VALUE` (for example \
         `{key}.TZ Europe/Berlin`), or write the mapping into {file}:\n\n\
         {section}:\n  {leaf}:\n    TZ: Europe/Berlin\n    HTTPS_PROXY: 'http://proxy.example:3128'\n",
        key = spec.name,
        file = path.display(),
    ))
}

/// `set cron.env.NAME VALUE`: the variable `name` of the mapping key
/// `spec`, written as the string `value` (see the module doc).
fn set_entry(
    path: &Path,
    bytes: Option<&[u8]>,
    spec: &'static KeySpec,
    key: &str,
    name: &str,
    value: &str,
    zones: &ZoneTable,
) -> Result<String, ConfigError> {
    if let Some(problem) = job_env::entry_problem(name, value) {
        return Err(ConfigError::Invalid(format!(
            "cannot set `{key}`: {}",
            problem.reason(name)
        )));
    }
    let mut edit = Edit::open(path, bytes, "set", key)?;
    let written = Value::Str(value.to_string());
    for target in edit.set_targets(spec.name)? {
        let mapping = target.path(spec.name);
        edit.refuse_alias(&mapping)?;
        if edit.text.holds_at(&mapping) == Holds::Other {
            return Err(ConfigError::Invalid(format!(
                "cannot set `{key}`: `{}` in {} is not a mapping of variables; make it one \
                 (`{name}: {}` under it); the file was not changed",
                mapping.join("."),
                path.display(),
                yaml11::string_text(value)
            )));
        }
        edit.put(Target::In(mapping, name), &written)?;
    }
    let text = edit.finish()?;
    // The variable written is the one `load` now reads.
    let after = validated(path, Some(text.as_bytes()), zones)?;
    let read = match spec.current(&after.loaded.config) {
        Setting::Env(env) => env.0.into_iter().find(|(n, _)| n == name),
        _ => None,
    };
    if read.is_none_or(|(_, v)| v != value) {
        return Err(edit.not_kept("the new value would not be the one read"));
    }
    Ok(text)
}

/// `unset cron.env.NAME`: remove the variable from both forms, and a
/// mapping or section that this leaves empty. None when the file does not
/// have it.
fn unset_entry(
    path: &Path,
    bytes: Option<&[u8]>,
    spec: &'static KeySpec,
    key: &str,
    name: &str,
) -> Result<Option<String>, ConfigError> {
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let mut edit = Edit::open(path, bytes.into(), "unset", key)?;
    let mut forms = vec![vec![spec.name]];
    if let Some((section, leaf)) = spec.split() {
        forms.push(vec![section, leaf]);
    }
    let mut removed = false;
    for mapping in forms {
        let holder = mapping
            .iter()
            .try_fold(&edit.before, |tree, step| self::mapping(tree.get(step)));
        if holder.is_none_or(|tree| tree.get(name).is_none()) {
            continue;
        }
        edit.refuse_alias(&mapping)?;
        edit.remove(Target::In(mapping, name))?;
        removed = true;
    }
    if !removed {
        return Ok(None);
    }
    edit.finish().map(Some)
}

/// Write Hermes's nested key `key` (`section.leaf`) as the string `value`,
/// keeping every other byte: for the one Hermes key hermes-cron writes,
/// `cron.provider` (`hermes-cron hermes install`). Only the nested form is
/// written (Hermes reads no other). Returns None when the file already says
/// so. The same checks as [`set`]: a file `load` refuses, or an edit that
/// would change anything else, is refused and the file left as it is.
pub fn set_hermes(
    path: &Path,
    bytes: Option<&[u8]>,
    key: &str,
    value: &str,
) -> Result<Option<String>, ConfigError> {
    let (section, leaf) = hermes_key(key)?;
    let mut edit = Edit::open(path, bytes, "set", key)?;
    let current = mapping(edit.before.get(section)).and_then(|m| m.get(leaf));
    if current.is_some_and(|v| v.is_str(value)) {
        return Ok(None);
    }
    if !matches!(
        edit.text.holds(section),
        Holds::Mapping | Holds::Nothing | Holds::Null
    ) {
        return Err(ConfigError::Invalid(format!(
            "cannot set `{key}`: `{section}` in {} is not a mapping written out in the file; \
             make it one (`{section}:` with `{leaf}: {value}` under it); the file was not changed",
            path.display()
        )));
    }
    edit.put(
        Target::Nested(section, leaf),
        &Value::Str(value.to_string()),
    )?;
    edit.finish().map(Some)
}

/// Remove Hermes's nested key `key`, and a section it leaves empty (see
/// [`set_hermes`]). Returns None when the file does not have it.
pub fn unset_hermes(
    path: &Path,
    bytes: Option<&[u8]>,
    key: &str,
) -> Result<Option<String>, ConfigError> {
    let (section, leaf) = hermes_key(key)?;
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let mut edit = Edit::open(path, bytes.into(), "unset", key)?;
    if mapping(edit.before.get(section)).is_none_or(|m| m.get(leaf).is_none()) {
        return Ok(None);
    }
    edit.remove(Target::Nested(section, leaf))?;
    edit.finish().map(Some)
}

/// `section.leaf` of a Hermes key.
fn hermes_key(key: &str) -> Result<(&str, &str), ConfigError> {
    key.split_once('.')
        .filter(|(s, l)| !s.is_empty() && !l.is_empty() && !l.contains('.'))
        .ok_or_else(|| ConfigError::Invalid(format!("`{key}` is not a `section.key` name")))
}

/// Where a key is written: the top-level entry named by the whole key, the
/// leaf in its section, or a leaf of the mapping at a path (a variable of
/// `cron.env`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target<'k> {
    Top,
    Nested(&'k str, &'k str),
    In(Vec<&'k str>, &'k str),
}

impl<'k> Target<'k> {
    /// The keys from the root down to the mapping that holds the entry this
    /// target writes, for the key `key`, and the entry's own key.
    fn at(&self, key: &'k str) -> (Vec<&'k str>, &'k str) {
        match self {
            Target::Top => (Vec::new(), key),
            Target::Nested(section, leaf) => (vec![section], leaf),
            Target::In(path, leaf) => (path.clone(), leaf),
        }
    }

    /// The path of keys from the root to the entry this target writes.
    fn path(&self, key: &'k str) -> Vec<&'k str> {
        let (mut path, leaf) = self.at(key);
        path.push(leaf);
        path
    }
}

/// One edit of the file: its text being edited, and what it must mean after.
struct Edit<'k> {
    path: &'k Path,
    /// `set` or `unset`, for messages.
    verb: &'static str,
    key: &'k str,
    text: Text,
    /// What the file meant before the edit.
    before: Value,
    /// What it must mean after.
    expected: Value,
}

impl<'k> Edit<'k> {
    /// The file's text and meaning; refuses what `load` refuses, and a file
    /// the editor cannot reproduce.
    fn open(
        path: &'k Path,
        bytes: Option<&[u8]>,
        verb: &'static str,
        key: &'k str,
    ) -> Result<Edit<'k>, ConfigError> {
        let (source, before) = match bytes {
            Some(bytes) => {
                let tree = yaml::parse(path, bytes)?;
                let source = std::str::from_utf8(bytes).map_err(|_| {
                    ConfigError::Invalid(format!(
                        "cannot {verb} `{key}`: {} is not UTF-8 text; the file was not changed",
                        path.display()
                    ))
                })?;
                (source, tree)
            }
            None => ("", Value::Null),
        };
        let text = Text::parse(source).map_err(|why| {
            ConfigError::Invalid(format!(
                "cannot {verb} `{key}` in {} without rewriting the file: {why}; \
                 the file was not changed, edit it by hand",
                path.display()
            ))
        })?;
        Ok(Edit {
            path,
            verb,
            key,
            text,
            expected: before.clone(),
            before,
        })
    }

    /// Where `set` writes the key `key` (see the module doc).
    fn set_targets(&self, key: &'k str) -> Result<Vec<Target<'k>>, ConfigError> {
        let Some((section, leaf)) = key.split_once('.') else {
            return Ok(vec![Target::Top]);
        };
        let dotted = self.text.holds(key) != Holds::Nothing;
        let nested = Target::Nested(section, leaf);
        let mut targets = Vec::new();
        if dotted {
            targets.push(Target::Top);
        }
        match self.text.holds(section) {
            Holds::Mapping if !dotted || self.text.nested_has(section, leaf) => {
                targets.push(nested)
            }
            Holds::Nothing | Holds::Null if !dotted => targets.push(nested),
            Holds::Other if !dotted => targets.push(Target::Top),
            Holds::Alias if !dotted => {
                return Err(ConfigError::Invalid(format!(
                    "cannot set `{}`: `{section}` in {} is an alias (`{section}: *name`) of a \
                     mapping written elsewhere in the file; set the key in that mapping, or \
                     write `{section}` out as a mapping of its own; the file was not changed",
                    self.key,
                    self.path.display()
                )));
            }
            _ => {}
        }
        Ok(targets)
    }

    /// Write the scalar `value` at `target`.
    fn put(&mut self, target: Target<'k>, value: &Value) -> Result<(), ConfigError> {
        let (path, leaf) = target.at(self.key);
        let holder = path
            .iter()
            .try_fold(&mut self.expected, |tree, step| tree.slot(step));
        if let Some(holder) = holder {
            holder.put(leaf, value.clone());
        }
        match self.text.set_in(&path, leaf, value) {
            true => Ok(()),
            false => Err(self.not_kept("the editor found no place to write it")),
        }
    }

    /// Remove `target`, and each mapping on the way that this leaves empty.
    fn remove(&mut self, target: Target<'k>) -> Result<(), ConfigError> {
        if let Target::Nested(section, _) = target
            && self.text.holds(section) == Holds::Alias
        {
            return Err(ConfigError::Invalid(format!(
                "cannot unset `{}`: it comes from `{section}` in {}, an alias \
                 (`{section}: *name`) of a mapping written elsewhere in the file; \
                 remove it there; the file was not changed",
                self.key,
                self.path.display()
            )));
        }
        let (path, leaf) = target.at(self.key);
        remove_in(&mut self.expected, &path, leaf);
        match self.text.remove_in(&path, leaf) {
            true => Ok(()),
            false => Err(self.not_kept("the editor did not find it")),
        }
    }

    /// Refuse to edit under `path` when a step of it is an alias
    /// (`env: *common`): its entries are those of a mapping written elsewhere.
    fn refuse_alias(&self, path: &[&str]) -> Result<(), ConfigError> {
        for end in 1..=path.len() {
            if self.text.holds_at(&path[..end]) == Holds::Alias {
                let alias = path[..end].join(".");
                return Err(ConfigError::Invalid(format!(
                    "cannot {} `{}`: `{alias}` in {} is an alias (`*name`) of a mapping \
                     written elsewhere in the file; change it there, or write `{alias}` \
                     out as a mapping of its own; the file was not changed",
                    self.verb,
                    self.key,
                    self.path.display()
                )));
            }
        }
        Ok(())
    }

    /// The new text, once it is known to mean what it must.
    fn finish(&self) -> Result<String, ConfigError> {
        let text = self.text.text();
        let after = yaml::parse(self.path, text.as_bytes())
            .map_err(|err| self.not_kept(&format!("the edited file would not parse: {err}")))?;
        if after != self.expected {
            let changed = differing_keys(&after, &self.expected);
            return Err(self.not_kept(&format!(
                "it would also change `{}`, which an anchor and an alias may share",
                changed.join("`, `")
            )));
        }
        Ok(text)
    }

    /// The refusal for an edit that would not be lossless.
    fn not_kept(&self, why: &str) -> ConfigError {
        ConfigError::Invalid(format!(
            "cannot {} `{}` in {} without changing more than that key ({why}); \
             the file was not changed, edit it by hand",
            self.verb,
            self.key,
            self.path.display()
        ))
    }
}

/// The refusal to remove a key that is not ours.
fn not_ours(key: &str) -> ConfigError {
    ConfigError::Invalid(format!(
        "`{key}` is not a hermes-cron key: config.yaml is shared with Hermes, and \
         hermes-cron leaves the keys it does not read as they are (use `hermes config \
         unset {key}` or edit the file)"
    ))
}

/// The mapping `tree` is, looking through a tag.
fn mapping(tree: Option<&Value>) -> Option<&Value> {
    tree?.mapping()
}

/// The top-level keys whose value differs between `a` and `b` (or that only
/// one of them has), in order; for the refusal.
fn differing_keys(a: &Value, b: &Value) -> Vec<String> {
    let (Value::Map(a), Value::Map(b)) = (a, b) else {
        return vec!["the whole document".to_string()];
    };
    fn values<'v>(list: &'v [(Value, Value)], key: &Value) -> Vec<&'v Value> {
        list.iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v)
            .collect()
    }
    let mut keys: Vec<String> = Vec::new();
    for (key, _) in a.iter().chain(b) {
        let name = key_name(key);
        if values(a, key) != values(b, key) && !keys.contains(&name) {
            keys.push(name);
        }
    }
    keys
}

/// A key as the refusal names it.
fn key_name(key: &Value) -> String {
    match key {
        Value::Float(x) => x.to_string(),
        Value::Tagged(tag, inner) => format!("{tag} {}", key_name(inner)),
        other => other.key_text(),
    }
}

/// Remove `leaf` from the mapping at `path` in `tree`, and each mapping on
/// the way that this leaves empty (as `Text::remove_in` does).
fn remove_in(tree: &mut Value, path: &[&str], leaf: &str) {
    let Some((first, rest)) = path.split_first() else {
        tree.remove(leaf);
        return;
    };
    if let Some(inner) = tree.slot(first) {
        remove_in(inner, rest, leaf);
        if inner.is_empty_map() {
            tree.remove(first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value {
        yaml::parse(Path::new("c.yaml"), text.as_bytes()).unwrap()
    }

    #[test]
    fn the_refusal_names_the_keys_that_would_change() {
        let a = value("a: 3\ncron: {x: 5}\ngateway: {y: true}\n");
        assert_eq!(
            differing_keys(&a, &value("a: 3\ncron: {x: 6}\n")),
            ["cron", "gateway"]
        );
        assert_eq!(differing_keys(&a, &Value::Null), ["the whole document"]);
        let odd = value("1.0: a\n!t k: b\n.nan: c\n");
        assert_eq!(
            differing_keys(&odd, &Value::Map(Vec::new())),
            ["1", "!t k", "NaN"]
        );
        assert!(differing_keys(&odd, &odd.clone()).is_empty());
    }
}
