//! Unknown keys: which ones look like a mistyped key of ours, the close
//! valid keys to suggest, and the texts naming them.
//!
//! `config.yaml` is shared with Hermes, which has hundreds of keys of its own
//! (`model`, `agent`, `cron.provider`, `gateway.strict`, ...), and users add
//! their own: an unknown key is none of our business unless it is a *near
//! miss* of one of ours, and only then does `load` warn. A near miss is, for
//! one of our keys `section.leaf` (or a top-level key such as `timezone`), the
//! unknown key lower-cased and within the cut-off of [`cutoff`] edits (optimal
//! string alignment: an insertion, a deletion, a substitution or a
//! transposition of two neighbours each count 1) of:
//! - the whole key (`cron.requre_restart_safe_scope`, `gatewy.loop_watchdog`,
//!   `TimeZone`);
//! - its leaf, for a top-level key without a section
//!   (`loop_watchdog_max_strikes`, or `loop_watchdg`), when the leaf has at
//!   least [`BARE_LEAF_MIN`] characters (a top-level `env` or `path` is
//!   anybody's: Hermes has `env` keys of its own);
//! - its leaf, for a key under one of our sections but the wrong one
//!   (`gateway.max_parallel_jobs`).
//!
//! The cut-off grows with the length of our key (1 edit up to 11 characters, 2
//! up to 23, then 3), so a short name does not attract unrelated words. Every
//! key of Hermes 0.19.0's `DEFAULT_CONFIG` (709 dotted paths) is at least 3
//! edits beyond it (closest: `tool_output.max_bytes`, 5 edits from
//! `cron.output_max_bytes`, cut-off 2); a test keeps it so.
//!
//! Used by `load` (one warning per near miss) and by `get`/`set`/`unset` (an
//! unknown key is refused as [`ConfigError::Invalid`], with the near misses as
//! suggestions). Pure: no IO.

use super::keys;
use super::model::{ConfigError, KeySpec};

/// The row for `name`, or the refusal naming it, the close keys and every key.
pub(crate) fn require(name: &str) -> Result<&'static KeySpec, ConfigError> {
    keys::find(name).ok_or_else(|| unknown_key(name))
}

/// The refusal for a key that is not in the table.
pub(crate) fn unknown_key(name: &str) -> ConfigError {
    ConfigError::Invalid(unknown_key_message(name))
}

/// The load-time warning text for a near miss of one of our keys.
pub(crate) fn unknown_key_warning(name: &str) -> String {
    let mut message = format!("unknown config key `{name}` ignored");
    let close = near_misses(name);
    if !close.is_empty() {
        message.push_str(&format!(" (did you mean `{}`?)", close.join("` or `")));
    }
    message
}

/// Our keys that `name`, an unknown key, is a near miss of, closest first (at
/// most 3). Empty: `name` is not ours to judge.
pub(crate) fn near_misses(name: &str) -> Vec<&'static str> {
    let query = name.to_ascii_lowercase();
    let (query_section, query_leaf) = match query.split_once('.') {
        Some((section, leaf)) => (Some(section), leaf),
        None => (None, query.as_str()),
    };
    let ours_section = query_section.is_some_and(keys::is_section);
    let mut close: Vec<(usize, &'static str)> = keys::KEYS
        .iter()
        .filter_map(|key| {
            let leaf = key.split().map(|(_, leaf)| leaf);
            let whole = within(&query, key.name);
            let bare = leaf.filter(|leaf| query_section.is_none() && leaf.len() >= BARE_LEAF_MIN);
            let moved = leaf.filter(|_| ours_section);
            let leafwise = bare.or(moved).and_then(|leaf| within(query_leaf, leaf));
            Some((whole.into_iter().chain(leafwise).min()?, key.name))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, name)| name).collect()
}

/// The shortest leaf of ours that a top-level key alone is compared with.
const BARE_LEAF_MIN: usize = 5;

/// How many edits away from `ours` a key may be to count as a near miss.
pub(crate) fn cutoff(ours: &str) -> usize {
    (1 + ours.len() / 12).min(3)
}

/// The distance of `query` from `ours` when it is within `ours`'s cut-off.
/// The length check first keeps files with thousands of unknown keys cheap.
fn within(query: &str, ours: &str) -> Option<usize> {
    let limit = cutoff(ours);
    if query.chars().count().abs_diff(ours.chars().count()) > limit {
        return None;
    }
    Some(strsim::osa_distance(query, ours)).filter(|d| *d <= limit)
}

/// The error text for a key that is not in the table: suggestions, then every key.
fn unknown_key_message(name: &str) -> String {
    let mut message = format!("unknown config key `{name}`");
    let close = near_misses(name);
    if !close.is_empty() {
        message.push_str(&format!("; did you mean `{}`?", close.join("` or `")));
    }
    let all: Vec<&str> = keys::KEYS.iter().map(|key| key.name).collect();
    message.push_str(&format!(" valid keys: {}", all.join(", ")));
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_catch_typos_bare_leaves_and_wrong_sections() {
        for (typo, ours) in [
            (
                "cron.requre_restart_safe_scope",
                "cron.require_restart_safe_scope",
            ),
            (
                "cron.require_restart_safe_scop",
                "cron.require_restart_safe_scope",
            ),
            ("gateway.loop_watchdg", "gateway.loop_watchdog"),
            ("gatewy.loop_watchdog", "gateway.loop_watchdog"),
            ("corn.max_parallel_jobs", "cron.max_parallel_jobs"),
            ("cron.max_paralel_jobs", "cron.max_parallel_jobs"),
            ("cron.max_parallel_jbos", "cron.max_parallel_jobs"),
            ("cron.output_retentoin", "cron.output_retention"),
            (
                "gateway.lop_watchdog_max_strkes",
                "gateway.loop_watchdog_max_strikes",
            ),
            (
                "loop_watchdog_max_strikes",
                "gateway.loop_watchdog_max_strikes",
            ),
            ("loop_watchdog", "gateway.loop_watchdog"),
            (
                "require_restart_safe_scope",
                "cron.require_restart_safe_scope",
            ),
            ("gateway.max_parallel_jobs", "cron.max_parallel_jobs"),
            (
                "cron.loop_watchdog_max_strikes",
                "gateway.loop_watchdog_max_strikes",
            ),
            ("timezon", "timezone"),
            ("tiemzone", "timezone"),
            ("time_zone", "timezone"),
            ("TimeZone", "timezone"),
            ("Gateway.Loop_Watchdog", "gateway.loop_watchdog"),
            ("cron.evn", "cron.env"),
            ("cron.pth", "cron.path"),
            ("gateway.env", "cron.env"),
            ("gateway.path", "cron.path"),
        ] {
            assert_eq!(near_misses(typo).first(), Some(&ours), "{typo}");
        }
    }

    #[test]
    fn other_keys_are_not_near_misses() {
        for name in [
            "colour",
            "completely.different",
            "cron.stale",
            "cron.x",
            "legacy",
            "tz",
            "zone",
            "watchdog",
            "gateway.watchdog",
            "cron.provider",
            "cron.chronos",
            "cron.wrap_response",
            "cron.mirror_delivery",
            "cron.session_db_timeout_seconds",
            "gateway.strict",
            "model",
            "agent.max_turns",
            "memory",
            "security",
            "env",
            "path",
            "envs",
            "",
            ".",
            "cron.",
            &"x".repeat(100_000),
        ] {
            assert_eq!(near_misses(name), Vec::<&str>::new(), "{name:.40}");
        }
    }

    #[test]
    fn the_cutoff_grows_with_the_key() {
        assert_eq!(cutoff("timezone"), 1);
        assert_eq!(cutoff("loop_watchdog"), 2);
        assert_eq!(cutoff("gateway.loop_watchdog"), 2);
        assert_eq!(cutoff("cron.require_restart_safe_scope"), 3);
        assert_eq!(cutoff("gateway.loop_watchdog_probe_interval_s"), 3);
        // Two edits in an 8-character key are another word.
        assert!(near_misses("timezo").is_empty());
        assert!(near_misses("lifezone").is_empty());
    }

    /// Hermes 0.19.0's `DEFAULT_CONFIG` (dumped from the package with
    /// Hermes's own YAML writer): none of its keys, at any depth, nor any of
    /// them standing alone at the top level, is a near miss of ours.
    #[test]
    fn no_key_of_hermes_is_a_near_miss() {
        let text = include_str!("testdata/hermes-0.19.0-default-config.yaml");
        let tree: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        let mut paths = Vec::new();
        flatten(&tree, "", &mut paths);
        assert_eq!(paths.len(), 709, "the dump has every key");
        let ours: Vec<&str> = keys::KEYS.iter().map(|key| key.name).collect();
        for path in &paths {
            if ours.contains(&path.as_str()) {
                continue;
            }
            let leaf = path.rsplit('.').next().unwrap();
            for query in [path.as_str(), leaf] {
                assert_eq!(near_misses(query), Vec::<&str>::new(), "{path}: {query}");
            }
        }
    }

    fn flatten(value: &serde_yaml::Value, prefix: &str, out: &mut Vec<String>) {
        let Some(map) = value.as_mapping() else {
            return;
        };
        for (key, child) in map {
            let key = key.as_str().unwrap();
            let path = if prefix.is_empty() {
                key.to_string()
            } else {
                format!("{prefix}.{key}")
            };
            out.push(path.clone());
            flatten(child, &path, out);
        }
    }

    #[test]
    fn refusals_name_the_key_and_every_valid_key() {
        let message = unknown_key_message("timezon");
        assert!(message.contains("did you mean `timezone`?"), "{message}");
        assert!(
            message.contains("gateway.loop_watchdog_max_strikes"),
            "{message}"
        );
        let message = unknown_key_message("model");
        assert!(!message.contains("did you mean"), "{message}");
        assert_eq!(
            unknown_key_warning("gateway.loop_watchdg"),
            "unknown config key `gateway.loop_watchdg` ignored (did you mean `gateway.loop_watchdog`?)"
        );
        assert!(require("timezone").is_ok());
        assert!(matches!(require("cron"), Err(ConfigError::Invalid(m)) if m.contains("`cron`")));
    }
}
