//! The event every destination receives: JSON on a command's stdin and in a
//! webhook's body, and the `HERMES_CRON_ALERT_*` variables of a command.

use super::kind::AlertKind;
use crate::run::{ExecState, ReasonCode, Source};
use crate::schedule::Timestamp;

/// The run an alert is about (none for `late`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AlertRun {
    /// The row's id.
    pub execution_id: String,
    /// Its state, as stored (`failed`, `timed_out`, ...).
    pub state: String,
    /// Its reason code, as stored.
    pub reason_code: Option<String>,
    /// Its reason, in words.
    pub reason: Option<String>,
    /// The command's exit status (None: killed by a signal, or never started).
    pub exit_code: Option<i32>,
    /// The signal that killed the command (None: it was not killed).
    pub signal: Option<i32>,
    /// Which attempt at the slot, 1 first.
    pub attempt: u32,
    /// Why the row exists, as stored (`schedule`, `retry`, ...).
    pub source: String,
    /// The slot it is for (None: no slot).
    pub scheduled_for: Option<Timestamp>,
}

impl AlertRun {
    /// The run's facts, each as the row stores it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        execution_id: &str,
        state: ExecState,
        reason_code: Option<ReasonCode>,
        reason: Option<String>,
        exit_code: Option<i32>,
        signal: Option<i32>,
        attempt: u32,
        source: Source,
        scheduled_for: Option<Timestamp>,
    ) -> AlertRun {
        AlertRun {
            execution_id: execution_id.to_string(),
            state: state.as_str().to_string(),
            reason_code: reason_code.map(|r| r.as_str().to_string()),
            reason,
            exit_code,
            signal,
            attempt,
            source: source.as_str().to_string(),
            scheduled_for,
        }
    }
}

/// One alert.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AlertEvent {
    /// What happened.
    pub kind: AlertKind,
    /// When it was raised.
    pub at: Timestamp,
    /// The job's id (None: a run of no job, or the gateway's own alert).
    pub job_id: Option<String>,
    /// The job's name (`gateway` for the gateway's own alert).
    pub job_name: String,
    /// One line for a human: what happened and since when.
    pub summary: String,
    /// Consecutive failed occurrences in the incident (0 for `recovered`).
    pub consecutive_failures: u32,
    /// When the incident began.
    pub incident_since: Option<Timestamp>,
    /// The run it is about (None for `late`).
    pub run: Option<AlertRun>,
}

impl AlertEvent {
    /// The event, with its summary written from the rest.
    pub fn new(
        kind: AlertKind,
        at: Timestamp,
        job: (Option<&str>, &str),
        failures: u32,
        since: Option<Timestamp>,
        run: Option<AlertRun>,
    ) -> AlertEvent {
        let (job_id, job_name) = job;
        let mut e = AlertEvent {
            kind,
            at,
            job_id: job_id.map(str::to_string),
            job_name: job_name.to_string(),
            summary: String::new(),
            consecutive_failures: failures,
            incident_since: since,
            run,
        };
        e.summary = e.describe();
        e
    }

    fn describe(&self) -> String {
        let name = &self.job_name;
        let detail = self
            .run
            .as_ref()
            .map(|r| match (r.exit_code, r.signal, &r.reason) {
                (Some(code), _, _) if r.state == "failed" => format!(" (exit {code})"),
                (_, Some(sig), _) => format!(" (signal {sig})"),
                (_, _, Some(reason)) => format!(": {reason}"),
                _ => String::new(),
            });
        let detail = detail.unwrap_or_default();
        let streak = if self.consecutive_failures > 1 {
            format!("; {} failures in a row", self.consecutive_failures)
        } else {
            String::new()
        };
        match self.kind {
            AlertKind::Recovered => format!("{name} recovered: it succeeded again"),
            AlertKind::GatewayFailed => "the hermes-cron gateway failed".to_string(),
            AlertKind::Late => match self.incident_since {
                Some(since) => format!("{name} is late: it has not started since {since}"),
                None => format!("{name} is late"),
            },
            kind => format!("{name}: {kind}{detail}{streak}"),
        }
    }

    /// The `HERMES_CRON_ALERT_*` variables of a command alert.
    pub fn variables(&self) -> Vec<(String, String)> {
        let mut vars = vec![
            ("KIND", self.kind.as_str().to_string()),
            ("JOB", self.job_name.clone()),
            ("JOB_ID", self.job_id.clone().unwrap_or_default()),
            ("SUMMARY", self.summary.clone()),
            ("FAILURES", self.consecutive_failures.to_string()),
            (
                "AT",
                self.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            ),
        ];
        if let Some(r) = &self.run {
            vars.push(("EXECUTION_ID", r.execution_id.clone()));
            vars.push(("STATE", r.state.clone()));
            vars.push(("REASON", r.reason.clone().unwrap_or_default()));
        }
        vars.into_iter()
            .map(|(k, v)| (format!("HERMES_CRON_ALERT_{k}"), v))
            .collect()
    }

    /// The event as JSON, as destinations receive it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_variables_say_what_happened() {
        let at: Timestamp = "2026-01-01T08:00:00Z".parse().unwrap();
        let run = AlertRun::new(
            "e1",
            ExecState::Failed,
            Some(ReasonCode::ExitCode),
            Some("exited with 3".into()),
            Some(3),
            None,
            1,
            Source::Schedule,
            Some(at),
        );
        let e = AlertEvent::new(
            AlertKind::Failed,
            at,
            (Some("j1"), "brief"),
            3,
            Some(at),
            Some(run),
        );
        assert_eq!(e.summary, "brief: failed (exit 3); 3 failures in a row");
        let vars = e.variables();
        assert!(vars.contains(&("HERMES_CRON_ALERT_KIND".into(), "failed".into())));
        assert!(vars.contains(&("HERMES_CRON_ALERT_EXECUTION_ID".into(), "e1".into())));
        let back: AlertEvent = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(back, e);
        assert!(e.to_json().contains("\"kind\":\"failed\""));
    }
}
