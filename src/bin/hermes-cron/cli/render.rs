//! Turning jobs and rows into aligned tables and stable JSON.
//!
//! JSON field names are part of the contract (docs/json.md): add
//! fields, never rename or remove them.

use hermes_cron::job::{Job, JobState, redacted_env};
use hermes_cron::ledger::{ExecState, Execution};
use hermes_cron::schedule::{Timestamp, Tz};
use serde_json::{Value, json};

/// An aligned text table; the last column is not padded.
pub(super) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(super) fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub(super) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(super) fn render(&self) -> String {
        let cols = self.header.len();
        let mut widths = vec![0usize; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate().take(cols) {
                if i + 1 == cols {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Make a name safe for one table cell.
pub(super) fn cell(text: &str, max: usize) -> String {
    hermes_cron::text::one_line(text, max)
}

/// `2026-12-01 08:00:00 CET` in `zone` (the one format of every view).
pub(super) use hermes_cron::text::local_time as local;

/// RFC 3339 UTC with millisecond precision, e.g. `2026-12-01T07:00:00.000Z`.
pub(super) fn utc(at: Timestamp) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn opt_utc(at: Option<Timestamp>) -> Value {
    at.map_or(Value::Null, |a| Value::String(utc(a)))
}

/// The stable JSON object for a job.
pub(super) fn job_json(job: &Job, zone: Tz, last: Option<&Execution>) -> Value {
    let env: serde_json::Map<String, Value> = redacted_env(&job.env.0)
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    json!({
        "id": job.id,
        "name": job.name,
        "schedule": job.schedule_text,
        "schedule_canonical": job.schedule.canonical(),
        "tz": job.tz,
        "zone": zone.name(),
        "command": job.argv,
        "shell": job.shell,
        "env": env,
        "env_files": job.env_files,
        "pass_env": job.pass_env,
        "hermes_id": job.hermes_id,
        "managed": job.managed,
        "workdir": job.workdir,
        "unit_glob": hermes_cron::systemd::scope_unit_glob(&job.name),
        "timeout_s": job.timeout.map(|d| d.as_secs()),
        "idle_timeout_s": job.idle_timeout.map(|d| d.as_secs()),
        "overlap": job.overlap,
        "catch_up": job.catch_up,
        "retries": job.retries,
        "retry_backoff_s": job.retry_backoff.as_secs(),
        "memory_max": job.resources.memory_max,
        "cpu_weight": job.resources.cpu_weight,
        "tasks_max": job.resources.tasks_max,
        "require_scope": job.require_scope,
        "run_on": job.run_on,
        "state": job.state.as_str(),
        "pause_reason": match &job.state { JobState::Paused { reason } => reason.clone(), _ => None },
        "next_run_at": opt_utc(job.next_run_at),
        "next_run_local": job.next_run_at.map(|a| local(a, zone)),
        "created_at": utc(job.created_at),
        "updated_at": utc(job.updated_at),
        "last_outcome": last.map(|e| e.state.as_str()),
        "last_run_id": last.map(|e| e.id.to_string()),
        "alerts": alerts_json(&job.alerts),
    })
}

/// A job's own alert settings on one line for `show` (URLs by host only).
pub(super) fn alerts_line(a: &hermes_cron::alert::JobAlerts) -> String {
    let mut parts = vec![
        format!("on {}", a.on.map_or("default".into(), |k| k.text())),
        format!(
            "after {}",
            a.after.map_or("default".into(), |n| n.to_string())
        ),
    ];
    if let Some(c) = &a.command {
        parts.push(format!("command {}", cell(c, 120)));
    }
    for (what, url) in [("webhook", &a.webhook), ("ping", &a.ping)] {
        if let Some(u) = url {
            parts.push(format!("{what} {}", hermes_cron::alert::redacted_url(u)));
        }
    }
    parts.join("; ")
}

/// A job's own alert settings (null: the config's); URLs redacted to their host.
fn alerts_json(a: &hermes_cron::alert::JobAlerts) -> Value {
    let url = |u: &Option<String>| u.as_deref().map(hermes_cron::alert::redacted_url);
    json!({
        "on": a.on.map(|k| k.text()),
        "after": a.after,
        "command": a.command,
        "webhook": url(&a.webhook),
        "ping": url(&a.ping),
    })
}

/// The stable JSON object for a ledger row.
pub(super) fn execution_json(e: &Execution) -> Value {
    json!({
        "id": e.id,
        "job_id": e.job_id,
        "job_name": e.job_name,
        "scheduled_for": opt_utc(e.scheduled_for),
        "attempt": e.attempt,
        "source": e.source,
        "state": e.state,
        "terminal": e.state.is_terminal(),
        "reason_code": e.reason_code,
        "reason": e.reason,
        "dispatch_mode": e.dispatch_mode,
        "dispatch_cause": e.dispatch_cause,
        "unit": e.unit,
        "pid": e.pid,
        "claimed_at": utc(e.claimed_at),
        "started_at": opt_utc(e.started_at),
        "finished_at": opt_utc(e.finished_at),
        "heartbeat_at": opt_utc(e.heartbeat_at),
        "start_lateness_ms": e.start_lateness_ms(),
        "exit_code": e.exit_code,
        "signal": e.signal,
        "duration_ms": e.duration_ms,
        "max_rss_kb": e.max_rss_kb,
        "output_path": e.output_path,
        "output_bytes": e.output_bytes,
        "output_truncated": e.output_truncated,
        "host": e.host,
        "usage": e.usage,
    })
}

/// A short human duration for tables: `850ms`, `12.3s`, `4m05s`.
pub(super) fn short_duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms}ms"),
        1000..=59_999 => format!("{:.1}s", ms as f64 / 1000.0),
        _ => format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60),
    }
}

/// How a row ended, for tables: exit code, signal, or nothing.
pub(super) fn exit_cell(e: &Execution) -> String {
    match (e.exit_code, e.signal) {
        (Some(c), _) => c.to_string(),
        (None, Some(s)) => hermes_cron::process::signal_name(s),
        _ if e.state == ExecState::Running => "…".into(),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns() {
        let mut t = Table::new(&["ID", "NAME"]);
        t.row(vec!["1".into(), "brief".into()]);
        t.row(vec!["1234".into(), "x".into()]);
        assert_eq!(t.render(), "ID    NAME\n1     brief\n1234  x\n");
    }
}
