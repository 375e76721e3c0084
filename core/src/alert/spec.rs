//! A job's own alert settings ([`JobAlerts`], from `add`/`edit` flags) and
//! the rules and destinations a run carries ([`AlertSpec`]: the job's
//! settings over the config's, snapshotted when the run is claimed, so the
//! terminal point needs no config and an edit cannot change what a run
//! already owes).

use super::kind::KindSet;

/// The most consecutive failures `--alert-after` may wait for.
pub const MAX_ALERT_AFTER: u32 = 1000;

/// A job's own alert settings; None (or an empty list) means the config's.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobAlerts {
    /// `--alert-on`: the kinds that alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<KindSet>,
    /// `--alert-after N`: consecutive failures before the incident alerts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u32>,
    /// `--on-alert CMD`: a shell command line, run like a job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `--alert-webhook URL`: POSTed the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// `--alert-ping URL`: a Healthchecks-style check (`/start`, the URL, `/fail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<String>,
}

impl JobAlerts {
    /// Whether every setting is the config's.
    pub fn is_empty(&self) -> bool {
        self == &JobAlerts::default()
    }
}

/// What a run of a job owes when it ends: the rules of its incident and
/// where alerts go. Only runs with somewhere to go carry one.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AlertSpec {
    /// The kinds that alert.
    pub on: KindSet,
    /// Consecutive failures before the incident alerts (1..=[`MAX_ALERT_AFTER`]).
    pub after: u32,
    /// Shell command lines (the config's, then the job's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// Webhook URLs (the config's, then the job's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<String>,
    /// The job's ping URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<String>,
}

/// The config's alert keys, as the merge reads them (empty text: none).
#[derive(Clone, Copy, Debug)]
pub struct AlertDefaults<'a> {
    /// `cron.alert_on`.
    pub on: &'a str,
    /// `cron.alert_after`.
    pub after: u32,
    /// `cron.alert_command`.
    pub command: &'a str,
    /// `cron.alert_webhook`.
    pub webhook: &'a str,
}

impl AlertSpec {
    /// The job's settings over the config's. Destinations add up (the
    /// config's command and the job's both run); the rules are the job's
    /// when it has its own. None when alerts have nowhere to go.
    pub fn merge(job: &JobAlerts, config: AlertDefaults<'_>) -> Option<AlertSpec> {
        let commands = distinct([Some(config.command), job.command.as_deref()]);
        let webhooks = distinct([Some(config.webhook), job.webhook.as_deref()]);
        let ping = job.ping.clone().filter(|p| !p.trim().is_empty());
        if commands.is_empty() && webhooks.is_empty() && ping.is_none() {
            return None;
        }
        let on = job
            .on
            .unwrap_or_else(|| KindSet::parse(config.on).unwrap_or(KindSet::ALL));
        Some(AlertSpec {
            on,
            after: job.after.unwrap_or(config.after).clamp(1, MAX_ALERT_AFTER),
            commands,
            webhooks,
            ping,
        })
    }

    /// Whether incidents alert anywhere (pings go out regardless).
    pub fn has_alert_destinations(&self) -> bool {
        !self.commands.is_empty() || !self.webhooks.is_empty()
    }
}

/// A URL the alert client can reach: http or https, a host, no spaces.
pub fn check_url(text: &str) -> Result<String, &'static str> {
    let t = text.trim();
    let rest = t
        .strip_prefix("http://")
        .or_else(|| t.strip_prefix("https://"))
        .ok_or("is not an http:// or https:// URL")?;
    if rest.is_empty()
        || rest.starts_with('/')
        || t.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("is not an http:// or https:// URL with a host");
    }
    Ok(t.to_string())
}

/// A URL as `show` and `alerts` print it: scheme and host only (a ping
/// URL's path is its secret, a webhook's often holds a token).
pub fn redacted_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..end].rsplit('@').next().unwrap_or("");
    if end == rest.len() {
        format!("{scheme}://{host}")
    } else {
        format!("{scheme}://{host}/<redacted>")
    }
}

/// The non-empty values, trimmed, each once, in order.
fn distinct<const N: usize>(values: [Option<&str>; N]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values.into_iter().flatten().map(str::trim) {
        if !v.is_empty() && !out.iter().any(|x| x == v) {
            out.push(v.to_string());
        }
    }
    out
}

/// `--alert-after N` outside 1..=1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} is outside 1..{MAX_ALERT_AFTER}")]
pub struct AlertAfterOutOfRange(u32);

/// `--alert-after N`: 1..=1000.
pub fn parse_alert_after(n: u32) -> Result<u32, AlertAfterOutOfRange> {
    if (1..=MAX_ALERT_AFTER).contains(&n) {
        Ok(n)
    } else {
        Err(AlertAfterOutOfRange(n))
    }
}

#[cfg(test)]
mod tests {
    use super::super::AlertKind;
    use super::*;

    const CONFIG: AlertDefaults<'static> = AlertDefaults {
        on: "all",
        after: 1,
        command: "",
        webhook: "",
    };

    #[test]
    fn nowhere_to_go_is_no_spec() {
        assert_eq!(AlertSpec::merge(&JobAlerts::default(), CONFIG), None);
    }

    #[test]
    fn destinations_add_up_and_rules_are_the_jobs() {
        let config = AlertDefaults {
            on: "failed",
            after: 2,
            command: "mail -s x me",
            webhook: "http://a/",
        };
        let job = JobAlerts {
            on: Some(KindSet::parse("failed,recovered").unwrap()),
            command: Some("notify-send x".into()),
            webhook: Some("http://a/".into()),
            ..JobAlerts::default()
        };
        let spec = AlertSpec::merge(&job, config).unwrap();
        assert_eq!(spec.commands, vec!["mail -s x me", "notify-send x"]);
        assert_eq!(spec.webhooks, vec!["http://a/"]);
        assert_eq!(spec.after, 2);
        assert!(spec.on.contains(AlertKind::Recovered));
        let back: AlertSpec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
        let stored = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<JobAlerts>(&stored).unwrap(), job);
        assert!(parse_alert_after(0).is_err() && parse_alert_after(3).is_ok());
    }

    #[test]
    fn urls_are_checked_and_redacted() {
        assert!(check_url("https://hc-ping.com/abc").is_ok());
        assert!(check_url("ftp://x").is_err() && check_url("http:///x").is_err());
        assert!(check_url("http://a b/").is_err());
        assert_eq!(
            redacted_url("https://user:pw@hc-ping.com/5b1c-uuid?x=1"),
            "https://hc-ping.com/<redacted>"
        );
        assert_eq!(
            redacted_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080"
        );
    }
}
