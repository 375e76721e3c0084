//! Hermes's limits on this home's fires, read from its files as `fire.py`
//! will see them (the rules are the core's `provider::HermesLimits`): a
//! variable from the home's `.env` (Hermes loads it over the process's
//! environment), else from `cron.env` (the layer hermes-cron adds to every
//! run); `cron.script_timeout_seconds` from `config.yaml`. Read at every
//! sync, and the gateway syncs when either file changes and before each
//! claim pass, so a fire takes the settings of its moment.

use super::activation::cron_setting;
use crate::home::Home;
use hermes_cron_core::job::Env;
use hermes_cron_core::provider::HermesLimits;
use hermes_cron_core::run::parse_env_file;

/// The home's `.env` file.
pub fn dotenv_file(home: &Home) -> std::path::PathBuf {
    home.root().join(".env")
}

/// The variables of a `.env` as python-dotenv reads them: each readable
/// line (an unquoted value ends before ` #`), the last of a name winning;
/// a line it cannot read is passed over, as Hermes does.
fn dotenv(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let line = match line.split_once('=') {
            Some((key, value)) if !value.trim_start().starts_with(['"', '\'']) => {
                let value = value.split_once(" #").map_or(value, |(v, _)| v);
                format!("{key}={value}")
            }
            _ => line.to_string(),
        };
        for (k, v) in parse_env_file(&line).unwrap_or_default() {
            out.retain(|(name, _)| *name != k);
            out.push((k, v));
        }
    }
    out
}

/// This home's Hermes limits; `config_env` is hermes-cron's `cron.env`.
pub fn hermes_limits(home: &Home, config_env: &Env) -> HermesLimits {
    let file = crate::small_file::read_text(&dotenv_file(home), crate::small_file::ENV_MAX)
        .map(|t| dotenv(&t))
        .unwrap_or_default();
    let find = |vars: &[(String, String)], name: &str| {
        vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    };
    let env = |name: &str| find(&file, name).or_else(|| find(&config_env.0, name));
    let script = cron_setting(home, "script_timeout_seconds").and_then(|v| match v {
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::String(s) => Some(s),
        _ => None,
    });
    HermesLimits::resolve(&env, script.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dotenv_is_read_leniently_the_last_value_winning() {
        let vars = dotenv(
            "# Hermes\nHERMES_CRON_TIMEOUT=20 # seconds\nnot a line\nexport B='x # y'\n\
             HERMES_CRON_TIMEOUT=900\n",
        );
        assert_eq!(
            vars,
            [
                ("B".to_string(), "x # y".to_string()),
                ("HERMES_CRON_TIMEOUT".to_string(), "900".to_string()),
            ]
        );
        assert_eq!(dotenv("A=1 # c")[0].1, "1");
    }
}
