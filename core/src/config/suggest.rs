//! Unknown keys: the close valid keys to suggest, and the texts naming them.
//!
//! Used by `load` (one warning per unknown key) and by `get`/`set`/`unset`
//! (an unknown key is refused as [`ConfigError::Invalid`]). Pure: no IO.

use super::keys::{self, KeySpec};
use super::model::ConfigError;

/// The row for `name`, or the refusal naming it, the close keys and every key.
pub(crate) fn require(name: &str) -> Result<&'static KeySpec, ConfigError> {
    keys::find(name).ok_or_else(|| unknown_key(name))
}

/// The refusal for a key that is not in the table.
pub(crate) fn unknown_key(name: &str) -> ConfigError {
    ConfigError::Invalid(unknown_key_message(name))
}

/// The load-time warning text for a key that is not in the table.
pub(crate) fn unknown_key_warning(name: &str) -> String {
    let mut message = format!("unknown config key `{name}` ignored");
    let close = suggest(name);
    if !close.is_empty() {
        message.push_str(&format!(" (did you mean `{}`?)", close.join("` or `")));
    }
    message
}

/// Known keys close to `name` (a typo, or a leaf without its section), best first.
fn suggest(name: &str) -> Vec<&'static str> {
    let mut close: Vec<(usize, &'static str)> = keys::KEYS
        .iter()
        .filter_map(|key| {
            let leaf = key.split().map_or(key.name, |(_, leaf)| leaf);
            let distance = near(name, key.name)
                .into_iter()
                .chain(near(name, leaf))
                .min()?;
            Some((distance, key.name))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, name)| name).collect()
}

/// The error text for a key that is not in the table: suggestions, then every key.
fn unknown_key_message(name: &str) -> String {
    let mut message = format!("unknown config key `{name}`");
    let close = suggest(name);
    if !close.is_empty() {
        message.push_str(&format!("; did you mean `{}`?", close.join("` or `")));
    }
    let all: Vec<&str> = keys::KEYS.iter().map(|key| key.name).collect();
    message.push_str(&format!(" valid keys: {}", all.join(", ")));
    message
}

/// The edit distance (Levenshtein) of `a` and `b` when it is at most 3.
/// The length check first keeps files with thousands of unknown keys cheap.
fn near(a: &str, b: &str) -> Option<usize> {
    if a.chars().count().abs_diff(b.chars().count()) > 3 {
        return None;
    }
    Some(strsim::levenshtein(a, b)).filter(|d| *d <= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_catch_typos_and_bare_leaves() {
        assert_eq!(suggest("cron.max_paralel_jobs"), ["cron.max_parallel_jobs"]);
        assert_eq!(
            suggest("loop_watchdog_max_strikes"),
            ["gateway.loop_watchdog_max_strikes"]
        );
        assert!(suggest("completely.different").is_empty());
        let message = unknown_key_message("timezon");
        assert!(message.contains("did you mean `timezone`?"), "{message}");
        assert!(
            message.contains("gateway.loop_watchdog_max_strikes"),
            "{message}"
        );
    }

    #[test]
    fn warnings_and_refusals_name_the_key() {
        let warning = unknown_key_warning("gateway.loop_watchdg");
        assert_eq!(
            warning,
            "unknown config key `gateway.loop_watchdg` ignored (did you mean `gateway.loop_watchdog`?)"
        );
        assert_eq!(
            unknown_key_warning("colour"),
            "unknown config key `colour` ignored"
        );
        assert!(require("timezone").is_ok());
        assert!(matches!(require("cron"), Err(ConfigError::Invalid(m)) if m.contains("`cron`")));
    }
}
