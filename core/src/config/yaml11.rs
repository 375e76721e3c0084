//! How `set` writes a value so that every reader of the shared file reads the
//! type hermes-cron meant: Hermes reads `config.yaml` with PyYAML, a YAML 1.1
//! reader, and hermes-cron with a YAML 1.2 one.
//!
//! YAML 1.1 reads many plain words as something other than a string: `off`,
//! `yes`, `on`, `no` as booleans, `~` and `null` as null, `2026-01-01` as a
//! date, `12:30` as 750 (sexagesimal), `1_000` as 1000, `010` as 8, `0x10` as
//! 16. So a string is written plain only when it cannot be anything else in
//! either version: it starts with an ASCII letter, holds only
//! `[A-Za-z0-9_./+-]`, and is not one of `y n yes no on off true false null`
//! in any case (`y` and `n` are booleans in the YAML 1.1 spec, though not in
//! PyYAML). Every zone name is such a string (`Europe/London`, `Etc/GMT+5`).
//! Any other string is single-quoted (`'off'`, as PyYAML writes it, `'` doubled),
//! or double-quoted with escapes when it holds a line break, a tab or a
//! character YAML does not print. Integers are written in decimal, booleans
//! `true`/`false`, null `null`, and a number of seconds with a fraction as a
//! decimal with a dot (`2.5`), which both versions read as a float.
//!
//! The table in the tests was checked against PyYAML 6.0.3 (the version
//! Hermes 0.19.0 pins); a test re-checks it when a Python with PyYAML is at hand.

use super::model::{Setting, seconds_text};
use super::value::Value;

/// How `setting` is written; None for a mapping (`cron.env`), which is not
/// one scalar. Each validated integer is far below `i64::MAX`.
pub(crate) fn written(setting: &Setting) -> Option<Value> {
    Some(match setting {
        Setting::Bool(b) => Value::Bool(*b),
        Setting::Int(n) | Setting::OptInt(Some(n)) => Value::Int(i128::from(*n)),
        Setting::Seconds(d) if d.subsec_nanos() == 0 => Value::Int(i128::from(d.as_secs())),
        // The decimal `get` prints, which an f64 holds exactly enough to
        // print back the same.
        Setting::Seconds(d) => Value::Float(seconds_text(*d).parse().unwrap_or(f64::NAN)),
        Setting::OptInt(None) | Setting::Zone(None) | Setting::Text(None, _) => Value::Null,
        Setting::Zone(Some(text)) | Setting::Text(Some(text), _) | Setting::Path(text) => {
            Value::Str(text.clone())
        }
        Setting::Env(_) => return None,
    })
}

/// How a string is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quoting {
    /// As it is.
    Plain,
    /// Between `'`, with `''` for each `'`.
    Single,
    /// Between `"`, escaped.
    Double,
}

/// How the string `s` is written.
pub(crate) fn quoting(s: &str) -> Quoting {
    if plain_is_string(s) {
        Quoting::Plain
    } else if s.chars().all(single_quotable) {
        Quoting::Single
    } else {
        Quoting::Double
    }
}

/// The exact text written for the string `s` (yaml-edit writes it; tests
/// check the two agree); also how `get` shows a `cron.env` value.
pub(crate) fn string_text(s: &str) -> String {
    match quoting(s) {
        Quoting::Plain => s.to_string(),
        Quoting::Single => format!("'{}'", s.replace('\'', "''")),
        Quoting::Double => double_quoted(s),
    }
}

/// Whether `s`, written plain, is read back as the string `s` by YAML 1.1
/// and 1.2 readers alike.
fn plain_is_string(s: &str) -> bool {
    const WORDS: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./+-".contains(c))
        && !WORDS.iter().any(|word| word.eq_ignore_ascii_case(s))
}

/// Whether `c` can stand in a one-line single-quoted scalar: printable in
/// YAML (PyYAML refuses a file with anything else), and no tab or line
/// break, which single quotes would fold.
fn single_quotable(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

/// A double-quoted scalar: `"` and `\` escaped, the named escapes for control
/// characters, every other non-ASCII or control character as `\xXX`,
/// `\uXXXX` or `\UXXXXXXXX` (as yaml-edit writes it).
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\x07' => out.push_str("\\a"),
            '\x1B' => out.push_str("\\e"),
            '\x0B' => out.push_str("\\v"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() || u32::from(c) > 0x7F => {
                let code = u32::from(c);
                if code <= 0xFF {
                    out.push_str(&format!("\\x{code:02X}"));
                } else if code <= 0xFFFF {
                    out.push_str(&format!("\\u{code:04X}"));
                } else {
                    out.push_str(&format!("\\U{code:08X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// (string, how `set` writes it, how PyYAML 6.0.3 reads the string
    /// written plain: the reason it is quoted). Checked on 2026-12-01 with
    /// the PyYAML 6.0.3 of hermes-agent 0.19.0: each written text, after
    /// `k: `, inside a flow mapping `{k: ...}` and after `- `, reads back
    /// as the string itself.
    pub(crate) const TABLE: &[(&str, &str, &str)] = &[
        ("off", "'off'", "bool False"),
        ("Off", "'Off'", "bool False"),
        ("OFF", "'OFF'", "bool False"),
        ("yes", "'yes'", "bool True"),
        ("no", "'no'", "bool False"),
        ("on", "'on'", "bool True"),
        ("true", "'true'", "bool True"),
        ("False", "'False'", "bool False"),
        ("y", "'y'", "str"),
        ("n", "'n'", "str"),
        ("null", "'null'", "NoneType"),
        ("Null", "'Null'", "NoneType"),
        ("~", "'~'", "NoneType"),
        ("", "''", "NoneType"),
        ("2026-01-01", "'2026-01-01'", "date"),
        ("2026-01-01 10:00:00", "'2026-01-01 10:00:00'", "datetime"),
        ("12:30", "'12:30'", "int 750"),
        ("1:30:00", "'1:30:00'", "int 5400"),
        ("1_000", "'1_000'", "int 1000"),
        ("0x10", "'0x10'", "int 16"),
        ("010", "'010'", "int 8"),
        ("0b11", "'0b11'", "int 3"),
        ("0o17", "'0o17'", "str"),
        ("1e3", "'1e3'", "str"),
        ("1.0e+3", "'1.0e+3'", "float 1000.0"),
        (".5", "'.5'", "float 0.5"),
        ("-3", "'-3'", "int -3"),
        ("+5", "'+5'", "int 5"),
        ("20", "'20'", "int 20"),
        (".inf", "'.inf'", "float inf"),
        ("-.Inf", "'-.Inf'", "float -inf"),
        (".NaN", "'.NaN'", "float nan"),
        (
            "a: b",
            "'a: b'",
            "error: mapping values are not allowed here",
        ),
        ("a:b", "'a:b'", "str"),
        ("a #b", "'a #b'", "str 'a'"),
        ("#b", "'#b'", "NoneType"),
        ("  lead", "'  lead'", "str 'lead'"),
        ("trail  ", "'trail  '", "str 'trail'"),
        ("it's", "'it''s'", "str"),
        ("'q'", "'''q'''", "str 'q'"),
        ("\"q\"", "'\"q\"'", "str 'q'"),
        ("a,b", "'a,b'", "str"),
        ("[a]", "'[a]'", "list"),
        ("{a: 1}", "'{a: 1}'", "dict"),
        ("*x", "'*x'", "error: undefined alias"),
        ("&x", "'&x'", "NoneType"),
        ("!x", "'!x'", "error: no constructor (tag)"),
        ("%x", "'%x'", "error: scanning for the next token"),
        ("@x", "'@x'", "error: scanning for the next token"),
        ("`x", "'`x'", "error: scanning for the next token"),
        ("|", "'|'", "str ''"),
        (">", "'>'", "str ''"),
        ("-", "'-'", "error: sequence entries are not allowed here"),
        ("?", "'?'", "error: mapping keys are not allowed here"),
        ("<<", "'<<'", "error: no constructor (merge key)"),
        ("=", "'='", "error: no constructor (value key)"),
        ("hello world", "'hello world'", "str"),
        ("ünïcode", "'ünïcode'", "str"),
        ("a\nb", "\"a\\nb\"", "error: scanning a simple key"),
        (
            "tab\there",
            "\"tab\\there\"",
            "error: scanning for the next token",
        ),
        (
            "bell\u{7}",
            "\"bell\\a\"",
            "error: unacceptable character #x0007",
        ),
        (
            "CET-1CEST,M3.5.0,M10.5.0/3",
            "'CET-1CEST,M3.5.0,M10.5.0/3'",
            "str (in a flow mapping: split at the commas)",
        ),
        ("<+0330>-3:30", "'<+0330>-3:30'", "str"),
        ("EST+5", "EST+5", "str"),
        ("Europe/London", "Europe/London", "str"),
        ("Etc/GMT+5", "Etc/GMT+5", "str"),
        ("America/Port-au-Prince", "America/Port-au-Prince", "str"),
        ("EST5EDT", "EST5EDT", "str"),
        ("UTC", "UTC", "str"),
        ("Yes/No", "Yes/No", "str"),
        ("nothing", "nothing", "str"),
        ("e1", "e1", "str"),
    ];

    #[test]
    fn strings_are_quoted_where_a_yaml_1_1_reader_would_read_another_type() {
        for (string, written, _) in TABLE {
            assert_eq!(string_text(string), *written, "{string:?}");
        }
    }

    #[test]
    fn every_zone_name_is_written_plain() {
        for zone in chrono_tz::TZ_VARIANTS {
            let name = zone.name();
            assert_eq!(quoting(name), Quoting::Plain, "{name}");
        }
    }

    #[test]
    fn settings_are_written_typed() {
        use std::time::Duration;
        let value = |setting: Setting| written(&setting).unwrap();
        assert_eq!(value(Setting::Bool(false)), Value::Bool(false));
        assert_eq!(value(Setting::Int(8_388_608)), Value::Int(8_388_608));
        assert_eq!(value(Setting::OptInt(Some(4))), Value::Int(4));
        assert_eq!(value(Setting::OptInt(None)), Value::Null);
        assert_eq!(value(Setting::Zone(None)), Value::Null);
        assert_eq!(
            value(Setting::Zone(Some("Europe/London".into()))),
            Value::Str("Europe/London".into())
        );
        assert_eq!(
            value(Setting::Seconds(Duration::from_secs(30))),
            Value::Int(30)
        );
        assert_eq!(
            value(Setting::Seconds(Duration::from_millis(2500))),
            Value::Float(2.5)
        );
        assert_eq!(
            value(Setting::Seconds(Duration::from_nanos(3_599_999_999_999))),
            Value::Float(3599.999999999)
        );
        let path = "/usr/local/bin:/usr/bin:/bin";
        assert_eq!(value(Setting::Path(path.into())), Value::Str(path.into()));
        assert_eq!(string_text(path), "'/usr/local/bin:/usr/bin:/bin'");
        assert_eq!(written(&Setting::Env(Default::default())), None);
    }

    /// Re-checks [`TABLE`] against a real PyYAML when one is at hand (see
    /// [`tests_python::python`]); without one the test passes without checking.
    #[test]
    fn pyyaml_reads_every_written_string_back() {
        let Some(python) = super::tests_python::python() else {
            eprintln!("no Python with PyYAML: TABLE not re-checked");
            return;
        };
        let mut cases: Vec<(String, String)> = TABLE
            .iter()
            .map(|(string, _, _)| (string.to_string(), string_text(string)))
            .collect();
        for zone in chrono_tz::TZ_VARIANTS {
            cases.push((zone.name().to_string(), string_text(zone.name())));
        }
        for n in ["30", "2.5", "0.001", "3599.999999999"] {
            cases.push((format!("float:{n}"), n.to_string()));
        }
        let script = r#"
import json, sys, yaml
bad = []
for want, text in json.load(sys.stdin):
    for doc in ("k: " + text + "\n", "{k: " + text + "}\n", "- " + text + "\n"):
        try:
            got = yaml.safe_load(doc)
            got = got[0] if isinstance(got, list) else got["k"]
        except Exception as e:
            got = "error: %s" % e
        if want.startswith("float:"):
            ok = isinstance(got, (int, float)) and not isinstance(got, bool) and got == float(want[6:])
        else:
            ok = type(got) is str and got == want
        if not ok:
            bad.append([want, doc, repr(got)])
print(json.dumps(bad))
"#;
        let input = serde_json::to_string(&cases).unwrap();
        let output = super::tests_python::run(&python, script, &input);
        assert_eq!(output.trim(), "[]", "PyYAML disagrees: {output}");
    }
}

/// Finding and running a Python with PyYAML, for tests that re-check what
/// PyYAML reads.
#[cfg(test)]
pub(crate) mod tests_python {
    use std::io::Write;
    use std::path::PathBuf;
    use std::process::{Command, Stdio};

    /// The Python of the hermes-agent venv that `tests/run-all.sh` creates
    /// and names in `HERMES_CRON_TEST_HERMES_VENV`, else that of the
    /// development machine's venv; None when neither exists.
    pub(crate) fn python() -> Option<PathBuf> {
        let venv = std::env::var_os("HERMES_CRON_TEST_HERMES_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/work/cache/hermes-venv"));
        let python = venv.join("bin/python");
        python.exists().then_some(python)
    }

    /// Run `script` with `input` on its stdin; its stdout.
    pub(crate) fn run(python: &PathBuf, script: &str, input: &str) -> String {
        let mut child = Command::new(python)
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("{}: {err}", python.display()));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}: {output:?}", python.display());
        String::from_utf8(output.stdout).unwrap()
    }
}
