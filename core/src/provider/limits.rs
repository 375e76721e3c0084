//! Hermes's own limits on a fire, resolved as Hermes 0.19.0 resolves them
//! inside `fire.py`, and the backstops hermes-cron sets strictly later, so
//! that Hermes's limit always acts first and Hermes records the run.
//!
//! - The agent's inactivity limit: `HERMES_CRON_TIMEOUT` (seconds, a float;
//!   unset or unreadable: 600; `0`: no limit). Hermes measures the agent's
//!   own activity (API calls, stream chunks, tool heartbeats); `fire.py`
//!   prints a line at least every [`ACTIVITY_EVERY`] while it is active, so
//!   the output hermes-cron watches goes quiet no earlier than the agent.
//! - The script timeout (a `no_agent` job's script, or an agent job's
//!   pre-run script): `HERMES_CRON_SCRIPT_TIMEOUT`, else
//!   `cron.script_timeout_seconds`, else 3600 (each used only when a
//!   positive number).
//!
//! The environment Hermes reads is the home's `.env` over `fire.py`'s own
//! (Hermes loads `.env` with override); the caller looks a name up in that
//! order.

use std::time::Duration;

/// Hermes's default inactivity limit for an agent job.
pub(super) const AGENT_IDLE_DEFAULT: Duration = Duration::from_secs(600);
/// Hermes's default script timeout.
pub(super) const SCRIPT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(3600);
/// `fire.py` reports the agent's activity this often at most.
pub(super) const ACTIVITY_EVERY: Duration = Duration::from_secs(30);
/// A script job's wall-clock backstop is Hermes's script timeout plus this.
pub(super) const SCRIPT_TIMEOUT_MARGIN: Duration = Duration::from_secs(60);
/// An agent job's idle backstop is Hermes's limit plus this: the last
/// activity line may be [`ACTIVITY_EVERY`] old, then 90 s for Hermes's 5 s
/// poll and for recording and delivering its failure.
pub(super) const AGENT_IDLE_MARGIN: Duration =
    ACTIVITY_EVERY.saturating_add(Duration::from_secs(90));

/// The limits Hermes puts on a fire of this home's jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HermesLimits {
    /// The agent's inactivity limit (None: `HERMES_CRON_TIMEOUT=0`, none).
    pub agent_idle: Option<Duration>,
    /// The script timeout.
    pub script: Duration,
}

impl Default for HermesLimits {
    fn default() -> Self {
        HermesLimits {
            agent_idle: Some(AGENT_IDLE_DEFAULT),
            script: SCRIPT_TIMEOUT_DEFAULT,
        }
    }
}

/// A number as Python's `float(text)` reads it (finite only).
fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Seconds as Hermes's `int(float(text))`, used only when positive.
fn positive_secs(text: &str) -> Option<Duration> {
    number(text)
        .map(f64::trunc)
        .filter(|v| *v >= 1.0)
        .map(Duration::from_secs_f64)
}

impl HermesLimits {
    /// The limits from `env` (a variable's value as `fire.py` will see it)
    /// and `cron.script_timeout_seconds` of `config.yaml` (as text).
    pub fn resolve(env: &dyn Fn(&str) -> Option<String>, config_script: Option<&str>) -> Self {
        let agent_idle = match env("HERMES_CRON_TIMEOUT").filter(|v| !v.trim().is_empty()) {
            None => Some(AGENT_IDLE_DEFAULT),
            // Python's float(): `inf` is a limit never reached, `nan` and
            // anything not positive none at all.
            Some(v) => match v.trim().parse::<f64>() {
                Ok(secs) if secs > 0.0 && secs.is_finite() => Some(Duration::from_secs_f64(secs)),
                Ok(_) => None,
                Err(_) => Some(AGENT_IDLE_DEFAULT),
            },
        };
        let script = env("HERMES_CRON_SCRIPT_TIMEOUT")
            .as_deref()
            .and_then(positive_secs)
            .or_else(|| config_script.and_then(positive_secs))
            .unwrap_or(SCRIPT_TIMEOUT_DEFAULT);
        HermesLimits { agent_idle, script }
    }

    /// hermes-cron's backstops for a fire: `(timeout, idle_timeout)` as a
    /// job stores them (`Some(ZERO)`: no wall-clock limit). A `no_agent`
    /// script gets a wall clock past Hermes's script timeout; an agent job
    /// an idle limit past Hermes's (and past its pre-run script's timeout,
    /// a silent stretch), or none when Hermes has none.
    pub fn backstops(
        &self,
        script_job: bool,
        pre_run_script: bool,
    ) -> (Option<Duration>, Option<Duration>) {
        if script_job {
            return (Some(self.script + SCRIPT_TIMEOUT_MARGIN), None);
        }
        let idle = self.agent_idle.map(|limit| {
            let quiet = if pre_run_script {
                limit.max(self.script)
            } else {
                limit
            };
            quiet + AGENT_IDLE_MARGIN
        });
        (Some(Duration::ZERO), idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(env: &[(&str, &str)], config: Option<&str>) -> HermesLimits {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        HermesLimits::resolve(
            &|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            config,
        )
    }

    #[test]
    fn nothing_set_means_hermes_defaults() {
        assert_eq!(resolve(&[], None), HermesLimits::default());
        assert_eq!(
            HermesLimits::default().backstops(false, false),
            (Some(Duration::ZERO), Some(Duration::from_secs(720)))
        );
    }

    #[test]
    fn hermes_cron_timeout_sets_the_agent_limit_and_zero_means_none() {
        let l = resolve(&[("HERMES_CRON_TIMEOUT", "900")], None);
        assert_eq!(l.agent_idle, Some(Duration::from_secs(900)));
        assert_eq!(
            l.backstops(false, false).1,
            Some(Duration::from_secs(1020)),
            "strictly after Hermes's 900 s"
        );
        let l = resolve(&[("HERMES_CRON_TIMEOUT", "0")], None);
        assert_eq!(l.agent_idle, None);
        assert_eq!(l.backstops(false, false), (Some(Duration::ZERO), None));
        assert_eq!(
            resolve(&[("HERMES_CRON_TIMEOUT", "inf")], None).agent_idle,
            None
        );
        let l = resolve(&[("HERMES_CRON_TIMEOUT", "1.5")], None);
        assert_eq!(l.agent_idle, Some(Duration::from_millis(1500)));
        // Hermes warns and uses its default.
        let l = resolve(&[("HERMES_CRON_TIMEOUT", "ten")], None);
        assert_eq!(l.agent_idle, Some(AGENT_IDLE_DEFAULT));
    }

    #[test]
    fn the_script_timeout_comes_from_the_environment_then_the_config() {
        assert_eq!(resolve(&[], Some("200")).script, Duration::from_secs(200));
        assert_eq!(resolve(&[], Some("12.9")).script, Duration::from_secs(12));
        let env = [("HERMES_CRON_SCRIPT_TIMEOUT", "30")];
        assert_eq!(resolve(&env, Some("200")).script, Duration::from_secs(30));
        // Zero, negative or unreadable: the next source.
        let env = [("HERMES_CRON_SCRIPT_TIMEOUT", "0")];
        assert_eq!(resolve(&env, Some("200")).script, Duration::from_secs(200));
        assert_eq!(resolve(&[], Some("-5")).script, SCRIPT_TIMEOUT_DEFAULT);
        assert_eq!(resolve(&[], Some("soon")).script, SCRIPT_TIMEOUT_DEFAULT);
    }

    #[test]
    fn backstops_come_strictly_after_hermes_limits() {
        let l = resolve(&[("HERMES_CRON_TIMEOUT", "20")], Some("200"));
        assert_eq!(
            l.backstops(true, false),
            (Some(Duration::from_secs(260)), None),
            "a no_agent script: wall clock past the script timeout"
        );
        assert_eq!(l.backstops(false, false).1, Some(Duration::from_secs(140)));
        assert_eq!(
            l.backstops(false, true).1,
            Some(Duration::from_secs(320)),
            "a pre-run script is silent for up to its timeout"
        );
    }
}
