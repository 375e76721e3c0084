//! Whether hermes-cron fires this home's Hermes jobs: only when Hermes
//! itself would hand them over, that is when `cron.provider` in the shared
//! `config.yaml` is `hermes-cron` *and* the installed plugin would answer
//! `is_available()` (its `plugin.json` names this home and an existing
//! binary), and Hermes's built-in ticker is not still running in a Hermes
//! gateway started before the switch. Otherwise Hermes's built-in ticker
//! fires them, and hermes-cron firing them too would run each one twice.

use super::plugin::{self, NAME, PluginSettings};
use crate::home::Home;
use crate::schedule::Timestamp;
use hermes_cron_core::provider::FireCommand;
use std::time::Duration;

/// Whether and how this home's Hermes jobs are hermes-cron's to fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Activation {
    Active(FireCommand),
    /// Hermes fires its own jobs, and why.
    Inactive(String),
}

/// `cron.<key>` of the shared `config.yaml` as Hermes reads it, or None.
pub(super) fn cron_setting(home: &Home, key: &str) -> Option<serde_yaml::Value> {
    let text =
        crate::small_file::read_text(&home.config_file(), crate::small_file::CONFIG_MAX).ok()?;
    let mut doc: serde_yaml::Value = serde_yaml::from_str(&text).ok()?;
    doc.get_mut("cron")?.get_mut(key).map(std::mem::take)
}

/// `cron.provider` as Hermes reads it (a string, stripped; anything else
/// means its built-in ticker), or None.
pub fn configured_provider(home: &Home) -> Option<String> {
    let provider = cron_setting(home, "provider")?;
    let provider = provider.as_str()?.trim();
    (!provider.is_empty()).then(|| provider.to_string())
}

/// Whether this home is a Hermes Agent's too (it has Hermes's cron jobs, a
/// `cron.provider`, or our plugin): only there is "Hermes fires its own
/// jobs" news; on a home of hermes-cron alone there are no Hermes jobs.
pub fn is_hermes_home(home: &Home) -> bool {
    home.hermes_jobs_file().exists()
        || configured_provider(home).is_some()
        || plugin::plugin_dir(home).exists()
}

/// Why the installed plugin would say it is unavailable, or None.
fn plugin_problem(home: &Home, s: &PluginSettings) -> Option<String> {
    if !plugin::same_dir(&s.home, home.root()) {
        return Some(format!(
            "the plugin was installed for {}, not this home; run `hermes-cron hermes install`",
            s.home.display()
        ));
    }
    if !s.binary.is_file() {
        return Some(format!(
            "the plugin names the binary {}, which is not there; run `hermes-cron hermes install`",
            s.binary.display()
        ));
    }
    if !s.python.is_file() {
        return Some(format!(
            "the plugin names Hermes's interpreter {}, which is not there; run `hermes-cron hermes install --python PATH`",
            s.python.display()
        ));
    }
    None
}

/// The built-in ticker stamps `cron/ticker_heartbeat` every minute; one
/// stamped this recently is still running.
pub const TICKER_FRESH: Duration = Duration::from_secs(150);

/// How long ago Hermes's built-in ticker last stamped its heartbeat.
pub fn builtin_ticker_age(home: &Home, now: Timestamp) -> Option<Duration> {
    let text = std::fs::read_to_string(home.cron_dir().join("ticker_heartbeat")).ok()?;
    let epoch: f64 = text.trim().parse().ok()?;
    let now = now.timestamp_millis() as f64 / 1000.0;
    Some(Duration::from_secs_f64((now - epoch).max(0.0)))
}

/// This home's activation at `now`.
pub fn activation(home: &Home, now: Timestamp) -> Activation {
    match configured_provider(home) {
        Some(p) if p == NAME => {}
        Some(other) => {
            return Activation::Inactive(format!("Hermes's cron.provider is {other:?}"));
        }
        None => return Activation::Inactive("Hermes's cron.provider is not set".into()),
    }
    let settings = match plugin::read_settings(home) {
        Ok(s) => s,
        Err(e) => {
            return Activation::Inactive(format!(
                "cron.provider is hermes-cron but the plugin is not installed ({e}): Hermes's \
                 built-in ticker fires the jobs; run `hermes-cron hermes install`"
            ));
        }
    };
    if let Some(problem) = plugin_problem(home, &settings) {
        return Activation::Inactive(format!(
            "{problem}; until then Hermes's built-in ticker fires the jobs"
        ));
    }
    // A Hermes gateway started before the switch keeps its built-in ticker
    // until it restarts: firing too would run each job twice.
    if let Some(age) = builtin_ticker_age(home, now).filter(|a| *a < TICKER_FRESH) {
        return Activation::Inactive(format!(
            "Hermes's built-in ticker ran {}s ago (cron/ticker_heartbeat): a Hermes gateway \
             started before cron.provider became hermes-cron still fires the jobs; restart it \
             (`hermes gateway restart`) and hermes-cron takes over within {}s",
            age.as_secs(),
            TICKER_FRESH.as_secs()
        ));
    }
    Activation::Active(FireCommand {
        python: settings.python,
        fire_script: plugin::fire_script(home),
    })
}
