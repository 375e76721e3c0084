//! Metrics in the Prometheus text exposition format, for a node-exporter
//! textfile collector (`state/hermes-cron.prom`, rewritten atomically by the
//! gateway) and `hermes-cron metrics`.
//!
//! The ledger-wide counts are over the rows the ledger retains (retention
//! prunes old ones), so they are gauges, not counters; the lateness
//! histogram is over the same rows. The per-job series (`per_job`) are over
//! every run: retention folds what it deletes into `pruned_run_totals` first
//! (`ledger::retention`), so `hermes_cron_job_runs_total` is a counter.

use crate::db::{Conn, SqlResult};
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::health::Heartbeat;
use hermes_cron_core::run::usage::{TOKEN_KINDS, amounts};
use std::fmt::Write as _;

/// Upper bounds of the start-lateness histogram, in seconds.
pub(crate) const LATENESS_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One sample line: `name{k="v",...} value`, each value escaped.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
    let labels: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", label(v)))
        .collect();
    let _ = writeln!(out, "{name}{{{}}} {value}", labels.join(","));
}

/// Rows of `N` text labels and a count (the last column).
fn labelled_counts<const N: usize>(conn: &Conn, sql: &str) -> SqlResult<Vec<([String; N], i64)>> {
    conn.query_map(sql, params![], |r| {
        let mut labels: [String; N] = std::array::from_fn(|_| String::new());
        for (i, l) in labels.iter_mut().enumerate() {
            *l = r.get::<_, String>(i)?;
        }
        Ok((labels, r.get::<_, i64>(N)?))
    })
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Render every metric.
pub fn render(
    conn: &Conn,
    host: &str,
    beat: Option<&Heartbeat>,
    now: Timestamp,
) -> SqlResult<String> {
    let mut out = String::new();
    header(
        &mut out,
        "hermes_cron_runs",
        "gauge",
        "Ledger rows by state and dispatch mode (over retained rows).",
    );
    let rows = labelled_counts::<3>(
        conn,
        "SELECT state, COALESCE(dispatch_mode, 'none'), COALESCE(host, ''), COUNT(*)
         FROM executions GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
    )?;
    for ([state, mode, host], n) in rows {
        let labels = [("state", &*state), ("mode", &mode), ("host", &host)];
        sample(&mut out, "hermes_cron_runs", &labels, n);
    }

    header(
        &mut out,
        "hermes_cron_dispatch_failures",
        "gauge",
        "Runs that could not get a scope, by cause (they ran degraded or were refused).",
    );
    let rows = labelled_counts::<2>(
        conn,
        "SELECT dispatch_cause, COALESCE(host, ''), COUNT(*) FROM executions
         WHERE dispatch_cause IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2",
    )?;
    for ([cause, host], n) in rows {
        let labels = [("cause", &*cause), ("host", &host)];
        sample(&mut out, "hermes_cron_dispatch_failures", &labels, n);
    }

    header(
        &mut out,
        "hermes_cron_start_lateness_seconds",
        "histogram",
        "Scheduled slot to worker started, over retained rows.",
    );
    let mut buckets = vec![0u64; LATENESS_BUCKETS.len()];
    let (mut count, mut sum) = (0u64, 0f64);
    let lateness = conn.query_map(
        "SELECT started_at - scheduled_for FROM executions WHERE started_at IS NOT NULL AND scheduled_for IS NOT NULL",
        params![],
        |r| r.get::<_, i64>(0),
    )?;
    for ms in lateness {
        let secs = ms.max(0) as f64 / 1000.0;
        count += 1;
        sum += secs;
        for (i, le) in LATENESS_BUCKETS.iter().enumerate() {
            if secs <= *le {
                buckets[i] += 1;
            }
        }
    }
    for (le, n) in LATENESS_BUCKETS.iter().zip(&buckets) {
        let _ = writeln!(
            out,
            "hermes_cron_start_lateness_seconds_bucket{{le=\"{le}\"}} {n}"
        );
    }
    let _ = writeln!(
        out,
        "hermes_cron_start_lateness_seconds_bucket{{le=\"+Inf\"}} {count}"
    );
    let _ = writeln!(out, "hermes_cron_start_lateness_seconds_sum {sum}");
    let _ = writeln!(out, "hermes_cron_start_lateness_seconds_count {count}");

    header(&mut out, "hermes_cron_jobs", "gauge", "Jobs by state.");
    let rows = labelled_counts::<1>(
        conn,
        "SELECT state, COUNT(*) FROM jobs GROUP BY 1 ORDER BY 1",
    )?;
    for ([state], n) in rows {
        sample(&mut out, "hermes_cron_jobs", &[("state", &state)], n);
    }

    per_job(conn, &mut out)?;

    header(
        &mut out,
        "hermes_cron_gateway_heartbeat_timestamp_seconds",
        "gauge",
        "When the gateway last wrote its heartbeat (Unix time; 0: never).",
    );
    let hb = beat.map_or(0.0, |b| b.updated_at.timestamp_millis() as f64 / 1000.0);
    let me = label(host);
    let _ = writeln!(
        out,
        "hermes_cron_gateway_heartbeat_timestamp_seconds{{host=\"{me}\"}} {hb}"
    );
    header(
        &mut out,
        "hermes_cron_gateway_loop_counter",
        "gauge",
        "The gateway loop's progress counter (stale: the loop is stuck).",
    );
    let _ = writeln!(
        out,
        "hermes_cron_gateway_loop_counter{{host=\"{me}\"}} {}",
        beat.map_or(0, |b| b.loop_counter)
    );
    if conn.caps().shared {
        header(
            &mut out,
            "hermes_cron_host_lease_seconds",
            "gauge",
            "Seconds left on each host's lease (negative: expired), by its state (live, lost, stopped).",
        );
        let db_now = crate::cluster::database_now(conn, now)?;
        for l in crate::cluster::read_leases(conn)? {
            let left = (l.lease_until - db_now).num_milliseconds() as f64 / 1000.0;
            let _ = writeln!(
                out,
                "hermes_cron_host_lease_seconds{{host=\"{}\",state=\"{}\"}} {left}",
                label(&l.host),
                l.state
            );
        }
    }
    header(
        &mut out,
        "hermes_cron_metrics_timestamp_seconds",
        "gauge",
        "When these metrics were computed (Unix time).",
    );
    let _ = writeln!(
        out,
        "hermes_cron_metrics_timestamp_seconds {}",
        now.timestamp_millis() as f64 / 1000.0
    );
    Ok(out)
}

/// Unix seconds of a stored instant (milliseconds).
fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// Every finished run of a job, one row each (`runs` 1) for the retained
/// rows and one per job and state for what retention folded away.
const EVERY_RUN: &str = "(
        SELECT job_id, state, 1 AS runs, started_at,
               CASE WHEN state = 'succeeded' THEN finished_at END AS succeeded_at
        FROM executions
        WHERE job_id IS NOT NULL AND state NOT IN ('claimed', 'staged', 'running')
        UNION ALL
        SELECT job_id, state, runs, last_started_at, last_succeeded_at FROM pruned_run_totals
    ) AS r";

/// The per-job series, over every run each job has had (retained rows and
/// what retention folded into `pruned_run_totals`), for the jobs that exist;
/// spawned runs have no job (and a name each) and are not among them.
fn per_job(conn: &Conn, out: &mut String) -> SqlResult<()> {
    header(
        out,
        "hermes_cron_job_runs_total",
        "counter",
        "Finished runs of each job by final state, since the job was made (retention does not lower it).",
    );
    let rows = labelled_counts::<3>(
        conn,
        &format!(
            "SELECT j.name, j.id, r.state, CAST(SUM(r.runs) AS BIGINT)
             FROM {EVERY_RUN} JOIN jobs j ON j.id = r.job_id
             GROUP BY j.id, j.name, r.state ORDER BY j.name, j.id, r.state"
        ),
    )?;
    for ([job, id, state], n) in rows {
        let labels = [("job", &*job), ("job_id", &id), ("state", &state)];
        sample(out, "hermes_cron_job_runs_total", &labels, n);
    }
    let lasts = conn.query_map(
        &format!(
            "SELECT j.id, j.name, j.created_at, MAX(r.started_at), MAX(r.succeeded_at)
             FROM jobs j LEFT JOIN {EVERY_RUN} ON r.job_id = j.id
             GROUP BY j.id, j.name, j.created_at ORDER BY j.name, j.id"
        ),
        params![],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                [
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                ],
            ))
        },
    )?;
    let series = [
        (
            "hermes_cron_job_created_timestamp_seconds",
            "When each job was made (Unix time).",
        ),
        (
            "hermes_cron_job_last_start_timestamp_seconds",
            "When each job's latest run started (Unix time; 0: never).",
        ),
        (
            "hermes_cron_job_last_success_timestamp_seconds",
            "When each job's latest successful run ended (Unix time; 0: never).",
        ),
    ];
    for (i, (name, help)) in series.iter().enumerate() {
        header(out, name, "gauge", help);
        for (id, job, at) in &lasts {
            let at = at[i].map_or(0.0, seconds);
            sample(out, name, &[("job", job), ("job_id", id)], at);
        }
    }
    per_job_usage(conn, out)
}

/// The model usage of every run each job has had (the retained rows' and
/// what retention folded into `pruned_usage_totals`): tokens by kind and
/// the known cost, for the jobs that reported any.
fn per_job_usage(conn: &Conn, out: &mut String) -> SqlResult<()> {
    let mut totals: std::collections::BTreeMap<(String, String, &str), f64> =
        std::collections::BTreeMap::new();
    conn.for_each(
        "SELECT j.name, j.id, e.usage FROM executions e JOIN jobs j ON j.id = e.job_id
         WHERE e.usage IS NOT NULL",
        params![],
        |r| {
            let usage: Option<serde_json::Value> =
                serde_json::from_str(&r.get::<_, String>("usage")?).ok();
            let (job, id): (String, String) = (r.get("name")?, r.get("id")?);
            for (kind, amount) in usage.as_ref().map(amounts).unwrap_or_default() {
                *totals.entry((job.clone(), id.clone(), kind)).or_default() += amount;
            }
            Ok(())
        },
    )?;
    let folded = conn.query_map(
        "SELECT j.name, j.id, p.kind, p.amount FROM pruned_usage_totals p
         JOIN jobs j ON j.id = p.job_id",
        params![],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, f64>(3)?,
            ))
        },
    )?;
    for (job, id, kind, amount) in folded {
        let Some(kind) = TOKEN_KINDS
            .iter()
            .map(|(k, _)| *k)
            .chain(["cost_usd"])
            .find(|k| *k == kind)
        else {
            continue;
        };
        *totals.entry((job, id, kind)).or_default() += amount;
    }
    header(
        out,
        "hermes_cron_job_tokens_total",
        "counter",
        "Model tokens each job's runs used, by kind (input, output, cache_read, cache_write; reasoning is part of output), since the job was made.",
    );
    for ((job, id, kind), amount) in totals.iter().filter(|((_, _, k), _)| *k != "cost_usd") {
        sample(
            out,
            "hermes_cron_job_tokens_total",
            &[("job", job), ("job_id", id), ("kind", kind)],
            amount,
        );
    }
    header(
        out,
        "hermes_cron_job_cost_usd_total",
        "counter",
        "What each job's runs cost in US dollars where the price was known, since the job was made.",
    );
    for ((job, id, _), amount) in totals.iter().filter(|((_, _, k), _)| *k == "cost_usd") {
        sample(
            out,
            "hermes_cron_job_cost_usd_total",
            &[("job", job), ("job_id", id)],
            amount,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    #[test]
    fn renders_every_family_on_an_empty_ledger() {
        let db = Db::open_in_memory().unwrap();
        let text = render(db.conn(), "test-host", None, chrono::DateTime::UNIX_EPOCH).unwrap();
        for family in [
            "hermes_cron_runs",
            "hermes_cron_start_lateness_seconds",
            "hermes_cron_jobs",
            "hermes_cron_gateway_heartbeat_timestamp_seconds",
        ] {
            assert!(
                text.contains(&format!("# TYPE {family} ")),
                "{family}\n{text}"
            );
        }
        assert!(text.contains("hermes_cron_start_lateness_seconds_bucket{le=\"+Inf\"} 0"));
    }
}
