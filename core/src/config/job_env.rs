//! The two keys that define a job's environment, judged: `cron.path`, the
//! `PATH` of every run's base environment, and `cron.env`, variables added to
//! every run after the base and before the job's own layers (the layers are
//! laid out by `crate::run::compose`). Pure: no IO.
//!
//! `cron.path` is a colon-separated list of absolute directories: not empty,
//! no empty entry (to a shell it would mean the current directory), no NUL,
//! at most [`PATH_MAX_BYTES`]. A bad value is replaced by the default, as for
//! every key.
//!
//! `cron.env` is a mapping of variable names to values. It is judged entry
//! by entry: a bad entry is dropped with one warning naming it and the fix,
//! and the others are used. A name must be an environment variable name
//! (`[A-Za-z_][A-Za-z0-9_]*`, a YAML string) and not one hermes-cron sets
//! itself (`HERMES_HOME`, `HERMES_CRON_*`) or takes from another key (`PATH`
//! is `cron.path`). A value is one YAML string, number or boolean, turned
//! into text the way PyYAML (Hermes's reader of the same file) writes it:
//! `true`, `5`, `2.5`, `1.0e+20`, `.inf`. A null, a list, a mapping or a
//! tagged value is dropped, and so is a value holding a NUL byte or longer
//! than [`VALUE_MAX_BYTES`]. A name given twice keeps its last value, as
//! PyYAML reads it (with a warning); a merge key (`<<: *common`) brings in
//! the entries of its mapping(s), those written beside it winning.
//!
//! The value is what a YAML 1.2 reader reads. For the few plain spellings
//! where YAML 1.1 (PyYAML) reads another type (`on`, `yes`, `010`, `1_000`,
//! `12:30`, `1e3`) the text may differ from what PyYAML would show; quoting
//! a value (`'010'`) always gives the text as written, to both readers.

use std::fmt;

use super::model::Rejection;
use super::value::{MERGE, Value};
use crate::job::{Env, is_env_name};

/// The longest `cron.path` accepted, in bytes.
pub(crate) const PATH_MAX_BYTES: usize = 4096;
/// The longest value of one `cron.env` variable, in bytes. The kernel
/// refuses to start a program with a single `NAME=value` of 128 KiB or more.
pub(crate) const VALUE_MAX_BYTES: usize = 65_536;
/// The prefix of the variables hermes-cron sets for every run.
const IDS_PREFIX: &str = "HERMES_CRON_";
/// The home variable hermes-cron sets for every run.
const HOME_VARIABLE: &str = "HERMES_HOME";

/// What `cron.path` accepts, as a fragment.
pub(crate) fn path_accepted() -> String {
    format!(
        "a colon-separated list of absolute directories such as /usr/local/bin:/usr/bin:/bin \
         (no empty entry, no NUL byte, at most {PATH_MAX_BYTES} bytes)"
    )
}

/// What `cron.env` accepts, as a fragment.
pub(crate) fn env_accepted() -> String {
    format!(
        "a mapping of variable names to values, e.g. `cron: {{env: {{TZ: Europe/Berlin}}}}`; \
         names are letters, digits and _ (not first a digit), not PATH (that is cron.path), \
         {HOME_VARIABLE} or {IDS_PREFIX}*; values are strings, numbers or booleans"
    )
}

/// Judge a `cron.path` value.
pub(crate) fn check_path(raw: &Value) -> Result<String, Rejection> {
    match raw {
        Value::Str(path) => path_problem(path).map_or_else(|| Ok(path.clone()), Err),
        _ => Err(Rejection("is not a list of directories (a string)")),
    }
}

/// Why `path` is not a valid `cron.path`, if it is not.
pub(crate) fn path_problem(path: &str) -> Option<Rejection> {
    if path.is_empty() {
        return Some(Rejection("is empty"));
    }
    if path.len() > PATH_MAX_BYTES {
        return Some(Rejection("is too long"));
    }
    if path.contains('\0') {
        return Some(Rejection("contains a NUL byte"));
    }
    if path.split(':').any(str::is_empty) {
        return Some(Rejection(
            "has an empty entry (it would mean the current directory)",
        ));
    }
    if !path.split(':').all(|dir| dir.starts_with('/')) {
        return Some(Rejection("has an entry that is not an absolute directory"));
    }
    None
}

/// `cron.env` as read: the variables to use, and the entries dropped.
#[derive(Debug, Default)]
pub(crate) struct EnvRead {
    pub(crate) env: Env,
    pub(crate) dropped: Vec<Dropped>,
}

/// An entry of `cron.env` that was dropped (or, for a repeated name, the
/// value that was not used), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// The entry's name as written (a key that is not a string, as YAML shows it).
    pub(crate) entry: String,
    pub(crate) problem: Problem,
}

/// What is wrong with one entry of `cron.env`. Never holds a value: a
/// value may be a secret, and warnings are logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    /// The key is not a YAML string (`1: x`, `true: x`).
    NameNotString,
    NotAName,
    /// `HERMES_HOME` or `HERMES_CRON_*`.
    Reserved,
    Path,
    NoValue,
    /// A list, a mapping or a tagged value; what it is.
    NotScalar(String),
    Nul,
    TooLong,
    /// Given again further down; the later value is used.
    Repeated,
    /// A merge key whose value is not a mapping or a list of mappings.
    BadMerge,
}

impl Problem {
    /// Why an entry named `name` cannot be used, and the fix, as a fragment
    /// that fits after `entry `NAME` dropped: ` or `cannot set ...: `.
    pub(crate) fn reason(&self, name: &str) -> String {
        match self {
            Problem::NameNotString => {
                "its name is not a string; use a variable name such as TZ".to_string()
            }
            Problem::NotAName => "it is not a variable name; use letters, digits and _, \
                                  not first a digit"
                .to_string(),
            Problem::Reserved => format!(
                "hermes-cron sets {HOME_VARIABLE} and {IDS_PREFIX}* itself for every run; \
                 use another name"
            ),
            Problem::Path => "the PATH of every run is `cron.path`; set it there \
                              (`hermes-cron config set cron.path DIR:DIR`) instead"
                .to_string(),
            Problem::NoValue => format!("it has no value; write `{name}: ''` for an empty one"),
            Problem::NotScalar(what) => format!(
                "its value is {what}; a value is one string, number or boolean \
                 (quote it to keep it as text)"
            ),
            Problem::Nul => "its value contains a NUL byte, which no environment can hold; \
                             remove it"
                .to_string(),
            Problem::TooLong => format!(
                "its value is longer than {VALUE_MAX_BYTES} bytes; pass a large value in a \
                 file instead (`--env-file`)"
            ),
            Problem::Repeated => "it is given more than once; the last value is used (as \
                                  PyYAML reads it); remove the others"
                .to_string(),
            Problem::BadMerge => {
                "a merge key needs a mapping or a list of mappings (`<<: *common`)".to_string()
            }
        }
    }
}

impl fmt::Display for Dropped {
    /// `entry `X` dropped: why; the fix` (`entry `X` is given more than once`
    /// for a repeated name, whose last value is used).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.entry;
        let reason = self.problem.reason(name);
        match self.problem {
            Problem::Repeated => write!(f, "entry `{name}`: {reason}"),
            _ => write!(f, "entry `{name}` dropped: {reason}"),
        }
    }
}

/// Why `config set` cannot give the variable `name` the text `value`, if it
/// cannot.
pub(crate) fn entry_problem(name: &str, value: &str) -> Option<Problem> {
    name_problem(name).or_else(|| value_problem(value))
}

/// Judge a `cron.env` value. Null (`env:` with nothing) is no variables;
/// anything but a mapping is rejected whole; a mapping is judged entry by
/// entry.
pub(crate) fn check_env(raw: &Value) -> Result<EnvRead, Rejection> {
    match raw {
        Value::Null => Ok(EnvRead::default()),
        Value::Map(entries) => Ok(read_entries(entries)),
        _ => Err(Rejection("is not a mapping")),
    }
}

fn read_entries(entries: &[(Value, Value)]) -> EnvRead {
    let mut read = EnvRead::default();
    let mut pairs = Vec::new();
    flatten(entries, &mut pairs, &mut read.dropped);
    for (key, value) in pairs {
        let Value::Str(name) = key else {
            read.dropped.push(Dropped {
                entry: key.key_text(),
                problem: Problem::NameNotString,
            });
            continue;
        };
        match entry(name, value) {
            Ok(text) => read.env.0.push((name.clone(), text)),
            Err(problem) => read.dropped.push(Dropped {
                entry: name.clone(),
                problem,
            }),
        }
    }
    read
}

/// The entries of a mapping as PyYAML reads them, each key once: first
/// those a merge key brings in (`<<: *common`, or a list of mappings of
/// which the first wins), then the entries written beside it, which win over
/// merged ones. A key written twice keeps its place and its last value, and
/// is noted as [`Problem::Repeated`].
fn flatten<'a>(
    entries: &'a [(Value, Value)],
    out: &mut Vec<(&'a Value, &'a Value)>,
    dropped: &mut Vec<Dropped>,
) {
    let is_merge = |key: &Value| key.is_str(MERGE);
    // Put `value` under `key`, in place when the key is there already.
    fn put<'a>(out: &mut Vec<(&'a Value, &'a Value)>, key: &'a Value, value: &'a Value) {
        match out.iter_mut().find(|(k, _)| same_key(k, key)) {
            Some(entry) => entry.1 = value,
            None => out.push((key, value)),
        }
    }
    for (_, value) in entries.iter().filter(|(key, _)| is_merge(key)) {
        let sources: Vec<&Vec<(Value, Value)>> = match value {
            Value::Map(inner) => vec![inner],
            Value::Seq(items) if items.iter().all(|i| matches!(i, Value::Map(_))) => items
                .iter()
                .rev()
                .filter_map(|item| match item {
                    Value::Map(inner) => Some(inner),
                    _ => None,
                })
                .collect(),
            _ => {
                dropped.push(Dropped {
                    entry: MERGE.to_string(),
                    problem: Problem::BadMerge,
                });
                continue;
            }
        };
        for source in sources {
            let mut merged = Vec::new();
            flatten(source, &mut merged, dropped);
            for (key, value) in merged {
                put(out, key, value);
            }
        }
    }
    let mut written: Vec<&Value> = Vec::new();
    for (key, value) in entries.iter().filter(|(key, _)| !is_merge(key)) {
        if written.iter().any(|k| same_key(k, key)) {
            let entry = key.key_text();
            if !dropped
                .iter()
                .any(|d| d.entry == entry && d.problem == Problem::Repeated)
            {
                dropped.push(Dropped {
                    entry,
                    problem: Problem::Repeated,
                });
            }
        } else {
            written.push(key);
        }
        put(out, key, value);
    }
}

/// Whether two keys of `cron.env` are one key, as they have always been
/// compared: a NaN is not even its own twin (as in PyYAML), and two tagged
/// keys are one when their tags are.
fn same_key(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Tagged(t, _), Value::Tagged(u, _)) => t == u,
        (Value::Seq(a), Value::Seq(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_key(x, y))
        }
        (Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && (a.iter().zip(b)).all(|((k, v), (l, w))| same_key(k, l) && same_key(v, w))
        }
        _ => a == b,
    }
}

/// The text of one entry, or why it is dropped.
fn entry(name: &str, value: &Value) -> Result<String, Problem> {
    name_problem(name).map_or(Ok(()), Err)?;
    let text = match value {
        Value::Str(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(x) => pyyaml_float(*x),
        Value::Null => return Err(Problem::NoValue),
        other => return Err(Problem::NotScalar(other.to_string())),
    };
    value_problem(&text).map_or(Ok(text), Err)
}

/// Why `name` cannot be a `cron.env` name, if it cannot.
fn name_problem(name: &str) -> Option<Problem> {
    if !is_env_name(name) {
        Some(Problem::NotAName)
    } else if name == HOME_VARIABLE || name.starts_with(IDS_PREFIX) {
        Some(Problem::Reserved)
    } else if name == "PATH" {
        Some(Problem::Path)
    } else {
        None
    }
}

/// Why `value` cannot be a `cron.env` value, if it cannot.
fn value_problem(value: &str) -> Option<Problem> {
    if value.contains('\0') {
        Some(Problem::Nul)
    } else if value.len() > VALUE_MAX_BYTES {
        Some(Problem::TooLong)
    } else {
        None
    }
}

/// Whether `env` holds only what [`check_env`] lets through.
pub(crate) fn env_is_valid(env: &Env) -> bool {
    env.0.iter().enumerate().all(|(i, (name, value))| {
        name_problem(name).is_none()
            && value_problem(value).is_none()
            && !env.0[..i].iter().any(|(other, _)| other == name)
    })
}

/// A float as PyYAML writes it (`represent_float`): `.nan`, `.inf`, `-.inf`,
/// else Python's `repr` in lower case, with `.0` added before an exponent
/// that has no dot before it (`1e+20` -> `1.0e+20`).
pub(crate) fn pyyaml_float(x: f64) -> String {
    if x.is_nan() {
        return ".nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    let repr = python_repr(x);
    if !repr.contains('.') && repr.contains('e') {
        repr.replacen('e', ".0e", 1)
    } else {
        repr
    }
}

/// Python's `repr` of a finite float: the shortest digits that read back
/// as `x`, in positional form when the decimal point falls within
/// -4 < point <= 16 (with `.0` when integral), else in exponent form
/// (`1e+16`, `1.5e-05`).
fn python_repr(x: f64) -> String {
    // Rust's `{:e}` gives the shortest digits that read back (`d.ddde-N`),
    // but not always, among those, the closest to `x` as Python does; the
    // exactly rounded form with as many digits is that one.
    let shortest = format!("{:e}", x.abs());
    let count = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.bytes().filter(u8::is_ascii_digit).count());
    let sci = format!("{:.*e}", count.saturating_sub(1), x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let point = exp + 1;
    let body = if point <= -4 || point > 16 {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{first}{fraction}e{exp_sign}{:02}", exp.unsigned_abs())
    } else if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else {
        let point = point.unsigned_abs() as usize;
        if point >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point - digits.len()))
        } else {
            let (whole, fraction) = digits.split_at(point);
            format!("{whole}.{fraction}")
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Str(s.into())
    }

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::Map(entries.iter().map(|(k, v)| (text(k), v.clone())).collect())
    }

    fn pairs(env: &Env) -> Vec<(&str, &str)> {
        env.0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn a_path_is_absolute_directories_separated_by_colons() {
        for good in [
            "/usr/local/bin:/usr/bin:/bin",
            "/opt/tools/bin",
            "/",
            "/with space/bin:/ünï",
        ] {
            assert_eq!(check_path(&text(good)), Ok(good.to_string()), "{good}");
        }
        for (bad, why) in [
            ("", "is empty"),
            ("/usr/bin::/bin", "has an empty entry"),
            (":/usr/bin", "has an empty entry"),
            ("/usr/bin:", "has an empty entry"),
            ("bin:/usr/bin", "not an absolute directory"),
            ("~/bin", "not an absolute directory"),
            ("./bin", "not an absolute directory"),
            ("/usr/bin:$HOME/bin", "not an absolute directory"),
            ("/usr/\0bin", "NUL"),
        ] {
            let Err(Rejection(got)) = check_path(&text(bad)) else {
                panic!("{bad:?} accepted");
            };
            assert!(got.contains(why), "{bad:?}: {got}");
        }
        let long = format!("/{}", "a".repeat(PATH_MAX_BYTES));
        assert_eq!(check_path(&text(&long)), Err(Rejection("is too long")));
        let longest = format!("/{}", "a".repeat(PATH_MAX_BYTES - 1));
        assert!(check_path(&text(&longest)).is_ok());
        for bad in [
            Value::Null,
            Value::Int(5),
            Value::Bool(true),
            Value::Seq(vec![text("/bin")]),
            map(&[]),
        ] {
            assert!(check_path(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn env_values_are_strings_numbers_and_booleans_as_pyyaml_shows_them() {
        let read = check_env(&map(&[
            ("TZ", text("Europe/Berlin")),
            ("EMPTY", text("")),
            ("DEBUG", Value::Bool(true)),
            ("QUIET", Value::Bool(false)),
            ("WORKERS", Value::Int(4)),
            ("NEGATIVE", Value::Int(-12)),
            ("RATIO", Value::Float(2.5)),
            ("BIG", Value::Float(1e20)),
            ("ONE", Value::Float(1.0)),
            ("lower_case", text("ok")),
            ("_X1", text("a b\nc")),
        ]))
        .unwrap();
        assert!(read.dropped.is_empty(), "{:?}", read.dropped);
        assert_eq!(
            pairs(&read.env),
            [
                ("TZ", "Europe/Berlin"),
                ("EMPTY", ""),
                ("DEBUG", "true"),
                ("QUIET", "false"),
                ("WORKERS", "4"),
                ("NEGATIVE", "-12"),
                ("RATIO", "2.5"),
                ("BIG", "1.0e+20"),
                ("ONE", "1.0"),
                ("lower_case", "ok"),
                ("_X1", "a b\nc"),
            ]
        );
    }

    #[test]
    fn bad_entries_are_dropped_one_by_one_and_the_rest_used() {
        let raw = Value::Map(vec![
            (text("GOOD"), text("1")),
            (text("1X"), text("x")),
            (text("HAS-DASH"), text("x")),
            (text(""), text("x")),
            (Value::Int(7), text("x")),
            (Value::Bool(true), text("x")),
            (text("HERMES_HOME"), text("/elsewhere")),
            (text("HERMES_CRON_JOB_NAME"), text("x")),
            (text("HERMES_CRON_ANYTHING"), text("x")),
            (text("PATH"), text("/opt/bin")),
            (text("NOTHING"), Value::Null),
            (text("LIST"), Value::Seq(vec![text("a")])),
            (text("NESTED"), map(&[("A", text("b"))])),
            (
                text("TAGGED"),
                Value::Tagged("!secret".into(), Box::new(Value::Str("x".into()))),
            ),
            (text("NUL"), text("a\0b")),
            (text("HUGE"), text(&"x".repeat(VALUE_MAX_BYTES + 1))),
            (text("ALSO_GOOD"), Value::Int(2)),
        ]);
        let read = check_env(&raw).unwrap();
        assert_eq!(pairs(&read.env), [("GOOD", "1"), ("ALSO_GOOD", "2")]);
        let mut problems: Vec<(String, Problem)> = read
            .dropped
            .iter()
            .map(|d| (d.entry.clone(), d.problem.clone()))
            .collect();
        problems.sort_by(|a, b| a.0.cmp(&b.0));
        let mut want = vec![
            ("1X".to_string(), Problem::NotAName),
            ("HAS-DASH".into(), Problem::NotAName),
            ("".into(), Problem::NotAName),
            ("7".into(), Problem::NameNotString),
            ("true".into(), Problem::NameNotString),
            ("HERMES_HOME".into(), Problem::Reserved),
            ("HERMES_CRON_JOB_NAME".into(), Problem::Reserved),
            ("HERMES_CRON_ANYTHING".into(), Problem::Reserved),
            ("PATH".into(), Problem::Path),
            ("NOTHING".into(), Problem::NoValue),
            ("LIST".into(), Problem::NotScalar("a list".into())),
            ("NESTED".into(), Problem::NotScalar("a mapping".into())),
            (
                "TAGGED".into(),
                Problem::NotScalar("a value tagged !secret".into()),
            ),
            ("NUL".into(), Problem::Nul),
            ("HUGE".into(), Problem::TooLong),
        ];
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(problems, want);
        let exactly = "x".repeat(VALUE_MAX_BYTES);
        let read = check_env(&map(&[("MAX", text(&exactly))])).unwrap();
        assert!(read.dropped.is_empty());
    }

    #[test]
    fn each_message_names_the_entry_and_the_fix_but_never_the_value() {
        let secret = "hunter2-secret-value";
        let raw = Value::Map(vec![
            (text("1TOKEN"), text(secret)),
            (text("HERMES_HOME"), text(secret)),
            (text("PATH"), text(secret)),
            (text("API_TOKEN"), Value::Seq(vec![text(secret)])),
            (text("NUL_TOKEN"), text(&format!("{secret}\0"))),
            (text("EMPTY"), Value::Null),
        ]);
        let read = check_env(&raw).unwrap();
        assert_eq!(read.dropped.len(), 6);
        for dropped in &read.dropped {
            let message = dropped.to_string();
            assert!(!message.contains(secret), "{message}");
            assert!(
                message.contains(&format!("`{}`", dropped.entry)),
                "{message}"
            );
        }
        let message = |entry: &str| {
            read.dropped
                .iter()
                .find(|d| d.entry == entry)
                .unwrap()
                .to_string()
        };
        assert!(message("PATH").contains("cron.path"));
        assert!(message("EMPTY").contains("`EMPTY: ''`"));
        assert!(message("HERMES_HOME").contains("another name"));
        assert!(message("1TOKEN").contains("letters, digits and _"));
    }

    #[test]
    fn null_is_no_variables_and_other_values_are_rejected_whole() {
        let read = check_env(&Value::Null).unwrap();
        assert!(read.env.is_empty() && read.dropped.is_empty());
        for bad in [
            text("TZ=Europe/Berlin"),
            Value::Int(1),
            Value::Bool(false),
            Value::Seq(vec![text("TZ=UTC")]),
            Value::Tagged("!env".into(), Box::new(Value::Null)),
        ] {
            assert_eq!(
                check_env(&bad).unwrap_err(),
                Rejection("is not a mapping"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_repeated_name_keeps_its_last_value_and_merge_keys_read_as_pyyaml() {
        let raw = Value::Map(vec![
            (text("A"), text("first")),
            (text("A"), text("second")),
            (text("A"), text("third")),
        ]);
        let read = check_env(&raw).unwrap();
        assert_eq!(pairs(&read.env), [("A", "third")]);
        assert_eq!(
            read.dropped,
            [Dropped {
                entry: "A".into(),
                problem: Problem::Repeated
            }]
        );
        // env: {<<: [*one, *two], B: written}: written beats merged, and
        // the first mapping of a merge list beats the later ones.
        let one = map(&[("B", text("one")), ("C", text("one")), ("D", text("one"))]);
        let two = map(&[("C", text("two")), ("E", text("two"))]);
        let raw = Value::Map(vec![
            (text("<<"), Value::Seq(vec![one.clone(), two])),
            (text("B"), text("written")),
        ]);
        let read = check_env(&raw).unwrap();
        assert!(read.dropped.is_empty(), "{:?}", read.dropped);
        let mut got = pairs(&read.env);
        got.sort();
        assert_eq!(
            got,
            [("B", "written"), ("C", "one"), ("D", "one"), ("E", "two")]
        );
        let raw = Value::Map(vec![(text("<<"), one), (text("<<"), text("x"))]);
        let read = check_env(&raw).unwrap();
        assert_eq!(read.env.0.len(), 3);
        assert_eq!(read.dropped[0].problem, Problem::BadMerge);
    }

    /// Keys are compared as PyYAML compares `.nan` keys (never one key),
    /// and tagged keys by their tag.
    #[test]
    fn a_nan_key_is_never_repeated_and_tagged_keys_compare_by_tag() {
        let nan = Value::Float(f64::NAN);
        let tagged = |s: &str| Value::Tagged("!t".into(), Box::new(text(s)));
        let raw = Value::Map(vec![
            (nan.clone(), text("a")),
            (nan, text("b")),
            (tagged("a"), text("c")),
            (tagged("b"), text("d")),
        ]);
        let read = check_env(&raw).unwrap();
        let problems: Vec<(&str, &Problem)> = read
            .dropped
            .iter()
            .map(|d| (d.entry.as_str(), &d.problem))
            .collect();
        assert_eq!(
            problems,
            [
                ("a value tagged !t", &Problem::Repeated),
                (".nan", &Problem::NameNotString),
                (".nan", &Problem::NameNotString),
                ("a value tagged !t", &Problem::NameNotString),
            ]
        );
    }

    #[test]
    fn what_check_env_lets_through_is_valid() {
        let read = check_env(&map(&[("A", text("1")), ("B", Value::Float(0.1))])).unwrap();
        assert!(env_is_valid(&read.env));
        for bad in [
            vec![("PATH", "/bin")],
            vec![("1A", "x")],
            vec![("HERMES_CRON_X", "x")],
            vec![("A", "nul\0")],
            vec![("A", "1"), ("A", "2")],
        ] {
            let env = Env(bad
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect());
            assert!(!env_is_valid(&env), "{bad:?}");
        }
    }

    #[test]
    fn floats_are_written_as_pyyaml_writes_them() {
        for (x, want) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (2.5, "2.5"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (0.00001, "1.0e-05"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (1e16, "1.0e+16"),
            (1.5e16, "1.5e+16"),
            (1e20, "1.0e+20"),
            (1e300, "1.0e+300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5.0e-324"),
            (f64::NAN, ".nan"),
            (f64::INFINITY, ".inf"),
            (f64::NEG_INFINITY, "-.inf"),
            // Shortest is 17 digits here; Python's is the closest of them.
            (1210620528823813.2, "1210620528823813.2"),
        ] {
            assert_eq!(pyyaml_float(x), want, "{x:e}");
        }
    }

    /// Re-checks [`pyyaml_float`] against a real PyYAML when one is at hand
    /// (see `yaml11::tests_python`); without one the test passes unchecked.
    #[test]
    fn pyyaml_writes_floats_as_we_do() {
        let Some(python) = super::super::yaml11::tests_python::python() else {
            eprintln!("no Python with PyYAML: floats not re-checked");
            return;
        };
        let mut floats = vec![
            0.0, -0.0, 1.0, 2.5, 0.1, 0.0001, 0.00001, 1e15, 1e16, 1.5e16, 1e20, 1e300, 5e-324,
        ];
        floats.extend([
            f64::MAX,
            f64::MIN_POSITIVE,
            1.0 / 3.0,
            123456.789e10,
            -7.25e-9,
        ]);
        let mut x: f64 = 0.000123;
        while x < 1e30 {
            floats.push(x);
            x *= 7.3;
        }
        let bits: Vec<u64> = floats.iter().map(|x| x.to_bits()).collect();
        let script = r#"
import json, struct, sys, yaml
out = []
for bits in json.load(sys.stdin):
    x = struct.unpack("<d", struct.pack("<Q", bits))[0]
    out.append(yaml.safe_dump(x).split("\n")[0])
print(json.dumps(out))
"#;
        let output = super::super::yaml11::tests_python::run(
            &python,
            script,
            &serde_json::to_string(&bits).unwrap(),
        );
        let theirs: Vec<String> = serde_json::from_str(output.trim()).unwrap();
        let ours: Vec<String> = floats.iter().map(|x| pyyaml_float(*x)).collect();
        assert_eq!(ours, theirs);
    }
}
