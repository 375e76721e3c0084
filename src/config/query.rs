//! `config get|show`: effective values and where they came from. Read-only.
//!
//! Both read through `load::read`, so they refuse exactly what `load` refuses
//! and print the default for a value `load` would warn about.
//! Representations: an unbounded `cron.max_parallel_jobs` prints `unbounded`,
//! an unset `timezone` prints `system`; `set` and the file accept both words.

use std::path::Path;

use super::load::read;
use super::model::ConfigError;
use super::suggest::require;

/// The effective value of `key` as text (the default when unset).
///
/// `cron.max_parallel_jobs` without a limit prints `unbounded`; `timezone`
/// without a zone prints `system`. `set` accepts both words back.
pub fn get(path: &Path, key: &str) -> Result<String, ConfigError> {
    let spec = require(key)?;
    let validated = read(path)?;
    Ok(spec.current(&validated.loaded.config).render())
}

/// Every key with its effective value and where it came from, as YAML-ish text.
///
/// One line per key in table order, `key: value  # source`, columns aligned;
/// the source is `default`, `file`, or `file (invalid, default used)`. Unknown
/// keys follow as `# unknown key, ignored: NAME` lines. Without the comments
/// the text is a valid config that loads to the same values.
pub fn show(path: &Path) -> Result<String, ConfigError> {
    let validated = read(path)?;
    let rows: Vec<(String, String, &str)> = validated
        .sources
        .iter()
        .map(|(spec, source)| {
            let value = spec.current(&validated.loaded.config).render();
            (format!("{}:", spec.name), value, source.label())
        })
        .collect();
    let key_width = rows.iter().map(|(k, _, _)| k.len()).max().unwrap_or(0);
    let value_width = rows.iter().map(|(_, v, _)| v.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (key, value, source) in rows {
        text.push_str(&format!(
            "{key:<key_width$} {value:<value_width$}  # {source}\n"
        ));
    }
    for name in &validated.unknown {
        text.push_str(&format!("# unknown key, ignored: {name}\n"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

    use super::*;
    use crate::config::keys;
    use crate::config::load::load;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn get_prints_defaults_and_ignores_invalid_values() {
        let (_dir, path) = file("cron.output_retention: .nan\n");
        assert_eq!(get(&path, "cron.output_retention").unwrap(), "50");
        assert_eq!(get(&path, "cron.max_parallel_jobs").unwrap(), "unbounded");
        assert_eq!(get(&path, "timezone").unwrap(), "system");
        assert_eq!(get(&path, "cron.output_max_bytes").unwrap(), "8388608");
        assert!(matches!(get(&path, "cron"), Err(ConfigError::Invalid(_))));
    }

    #[test]
    fn show_lists_every_key_with_its_source_aligned() {
        let (_dir, path) = file(
            "cron.output_retention: 7\ngateway: {loop_watchdog_max_strikes: .inf}\nextra: 1\n",
        );
        let text = show(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), keys::KEYS.len() + 1, "{text}");
        let columns: Vec<usize> = lines[..keys::KEYS.len()]
            .iter()
            .map(|line| line.find("  # ").unwrap())
            .collect();
        assert!(columns.windows(2).all(|w| w[0] == w[1]), "{text}");
        // (value, source) of the line for `key`.
        let row = |key: &str| {
            let line = lines
                .iter()
                .find(|l| l.starts_with(&format!("{key}:")))
                .unwrap();
            let (left, source) = line.split_once("  # ").unwrap();
            (left.split_whitespace().nth(1).unwrap(), source)
        };
        assert_eq!(row("cron.output_retention"), ("7", "file"), "{text}");
        assert_eq!(
            row("gateway.loop_watchdog_max_strikes"),
            ("3", "file (invalid, default used)"),
            "{text}"
        );
        assert_eq!(row("timezone"), ("system", "default"), "{text}");
        assert_eq!(
            row("cron.max_parallel_jobs"),
            ("unbounded", "default"),
            "{text}"
        );
        assert_eq!(lines[keys::KEYS.len()], "# unknown key, ignored: extra");
    }

    #[test]
    fn show_output_loads_back_to_the_same_config() {
        let (_dir, path) =
            file("timezone: Asia/Tokyo\ncron: {max_parallel_jobs: 3, catch_up_missed: false}\n");
        let text = show(&path).unwrap();
        let (_dir, copy) = file(&text);
        let reloaded = load(&copy).unwrap();
        assert!(reloaded.warnings.is_empty(), "{:?}", reloaded.warnings);
        assert_eq!(reloaded.config, load(&path).unwrap().config);
    }
}
