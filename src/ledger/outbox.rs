//! The alert outbox: a job's incident (`alert_incidents`), the deliveries
//! it owes (`alert_deliveries`, one per destination) and every attempt at
//! one (`alert_attempts`). Deliveries are written in the transaction of the
//! move that causes them: [`on_terminal`] is called by `terminal::entered`
//! for every row that becomes terminal (and so covers `finish`, `refuse`,
//! `spawn_failed`, `unadopted`, `orphaned`, `stalled`, `abandoned` and
//! `not_run` alike), [`on_adopt`] by `adopt` (a ping's `/start`), and
//! [`record_late`] by the gateway's lateness watch. The gateway delivers
//! them (`alerts/`); nothing is lost between a transition and its alert,
//! and a delivery is retried until it succeeds or is given up.
//!
//! A command alert runs as a `spawn` row of its own; its attempt names that
//! execution, and the row's own terminal move settles the attempt
//! ([`on_terminal`] again), in the worker's transaction.

use super::error::{LedgerError, sql_err};
use crate::db::{Conn, LockKey, SqlResult, from_ms, to_ms};
use crate::ids::ExecutionId;
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::alert::{
    AlertEvent, AlertKind, AlertRun, AlertSpec, Destination, Incident, Observed,
    next_attempt_after, observe, step,
};
use hermes_cron_core::run::{ExecState, ReasonCode, RunSpec, Source};

/// A row that just became terminal, as the outbox needs it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ended<'a> {
    pub id: &'a ExecutionId,
    pub state: ExecState,
    pub reason_code: Option<ReasonCode>,
    pub retry_owed: bool,
    pub at: Timestamp,
}

/// One delivery owed, as the gateway sends it.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    pub id: String,
    pub job_name: String,
    pub kind: String,
    pub destination: Destination,
    pub target: String,
    /// The event, as JSON.
    pub event: String,
    /// Attempts made so far.
    pub attempts: u32,
}

/// Settle a command alert's attempt, then judge the row's job.
pub(super) fn on_terminal(tx: &Conn, e: &Ended<'_>) -> SqlResult<()> {
    settle_command_attempt(tx, e)?;
    let row = tx.query_opt(
        "SELECT job_id, job_name, spec, attempt, source, scheduled_for, exit_code, signal,
                reason
         FROM executions WHERE id = ?1 AND job_id IS NOT NULL",
        params![e.id.as_str()],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, u32>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, Option<i32>>(6)?,
                r.get::<_, Option<i32>>(7)?,
                r.get::<_, Option<String>>(8)?,
            ))
        },
    )?;
    let Some((job_id, job_name, spec, attempt, source, scheduled, exit, signal, reason)) = row
    else {
        return Ok(());
    };
    let Some(alert) = spec_alert(&spec) else {
        return Ok(());
    };
    let obs = observe(e.state, e.reason_code, e.retry_owed);
    let run = AlertRun::new(
        e.id.as_str(),
        e.state,
        e.reason_code,
        reason,
        exit,
        signal,
        attempt,
        source.parse::<Source>().unwrap_or(Source::Schedule),
        scheduled.map(from_ms),
    );
    let job = (job_id.as_str(), job_name.as_str());
    if let Some(ping) = &alert.ping {
        let base = ping.trim_end_matches('/');
        let owed = match obs {
            Observed::Success => Some(("success", base.to_string())),
            Observed::Failure(_) => Some(("fail", format!("{base}/fail"))),
            Observed::Neutral | Observed::Late => None,
        };
        if let Some((kind, url)) = owed {
            insert_ping(tx, job, e.id, kind, &url, e.at)?;
        }
    }
    if alert.has_alert_destinations() {
        judge(tx, job, &alert, obs, Some(run), e.at)?;
    }
    Ok(())
}

/// A ping owed: `kind` is `start`, `success` or `fail`. A ping is a GET;
/// its event (kept for `alerts`) says what it reports.
fn insert_ping(
    tx: &Conn,
    job: (&str, &str),
    id: &ExecutionId,
    kind: &str,
    url: &str,
    at: Timestamp,
) -> SqlResult<()> {
    let event = serde_json::json!({
        "kind": kind, "at": at, "job_id": job.0, "job_name": job.1,
        "execution_id": id.as_str(),
    });
    insert_delivery(
        tx,
        &NewDelivery {
            job,
            execution: Some(id.as_str()),
            kind,
            destination: Destination::Ping,
            target: url,
            event: &event.to_string(),
            at,
        },
    )
}

fn spec_alert(spec: &str) -> Option<AlertSpec> {
    // Most rows carry no alert spec: skip the parse for them.
    if !spec.contains("\"alert\"") {
        return None;
    }
    serde_json::from_str::<RunSpec>(spec).ok()?.alert
}

/// A run of a job with a ping URL started: `<url>/start`.
pub(super) fn on_adopt(tx: &Conn, id: &ExecutionId, at: Timestamp) -> SqlResult<()> {
    let row: Option<(String, String, String)> = tx.query_opt(
        "SELECT job_id, job_name, spec FROM executions
         WHERE id = ?1 AND job_id IS NOT NULL AND spec LIKE '%\"ping\"%'",
        params![id.as_str()],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let Some((job_id, job_name, spec)) = row else {
        return Ok(());
    };
    let Some(ping) = spec_alert(&spec).and_then(|a| a.ping) else {
        return Ok(());
    };
    let url = format!("{}/start", ping.trim_end_matches('/'));
    insert_ping(tx, (&job_id, &job_name), id, "start", &url, at)
}

/// The job `job` (id, name) has not started in time: a `late` alert when
/// its incident has not alerted yet. True when one was written.
pub fn record_late(
    conn: &Conn,
    job: (&str, &str),
    alert: &AlertSpec,
    at: Timestamp,
) -> Result<bool, LedgerError> {
    let id = ExecutionId::from_string(job.0);
    // On a shared ledger every host's gateway runs the lateness watch: the
    // incident is read under the write lock (taken first, with no row
    // locked yet), so of several gateways one alerts and the others find it
    // alerted.
    conn.savepoint(|tx| {
        tx.lock(LockKey::Write)?;
        judge(tx, job, alert, Observed::Late, None, at)
    })
    .map_err(sql_err(&id))
}

/// Move the job's incident by `obs`; write the alert it sends, one delivery
/// per destination.
fn judge(
    tx: &Conn,
    job: (&str, &str),
    alert: &AlertSpec,
    obs: Observed,
    run: Option<AlertRun>,
    at: Timestamp,
) -> SqlResult<bool> {
    let prev = incident(tx, job.0)?;
    let (next, sent) = step(&prev, obs, alert.on, alert.after, at);
    if next != prev {
        save_incident(tx, job.0, &next, at)?;
    }
    let Some(kind) = sent else {
        return Ok(false);
    };
    let (failures, since) = match kind {
        AlertKind::Recovered => (prev.failures, prev.since),
        _ => (next.failures, next.since),
    };
    let event = AlertEvent::new(kind, at, (Some(job.0), job.1), failures, since, run);
    let json = event.to_json();
    let execution = event.run.as_ref().map(|r| r.execution_id.clone());
    for (destination, targets) in [
        (Destination::Command, &alert.commands),
        (Destination::Webhook, &alert.webhooks),
    ] {
        for target in targets {
            insert_delivery(
                tx,
                &NewDelivery {
                    job,
                    execution: execution.as_deref(),
                    kind: kind.as_str(),
                    destination,
                    target,
                    event: &json,
                    at,
                },
            )?;
        }
    }
    Ok(true)
}

fn incident(tx: &Conn, job_id: &str) -> SqlResult<Incident> {
    let row: Option<(u32, Option<String>, Option<i64>)> = tx.query_opt(
        "SELECT failures, alerted, since FROM alert_incidents WHERE job_id = ?1",
        params![job_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(
        row.map_or_else(Incident::default, |(failures, alerted, since)| Incident {
            failures,
            alerted: alerted.and_then(|a| a.parse::<AlertKind>().ok()),
            since: since.map(from_ms),
        }),
    )
}

fn save_incident(tx: &Conn, job_id: &str, i: &Incident, at: Timestamp) -> SqlResult<()> {
    tx.execute(
        "INSERT INTO alert_incidents (job_id, failures, alerted, since, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (job_id) DO UPDATE SET failures = ?2, alerted = ?3, since = ?4, updated_at = ?5",
        params![
            job_id,
            i.failures,
            i.alerted.map(|k| k.as_str()),
            i.since.map(to_ms),
            to_ms(at)
        ],
    )?;
    Ok(())
}

struct NewDelivery<'a> {
    job: (&'a str, &'a str),
    execution: Option<&'a str>,
    kind: &'a str,
    destination: Destination,
    target: &'a str,
    event: &'a str,
    at: Timestamp,
}

fn insert_delivery(tx: &Conn, d: &NewDelivery<'_>) -> SqlResult<()> {
    tx.execute(
        "INSERT INTO alert_deliveries (id, job_id, job_name, execution_id, kind, destination,
             target, event, state, attempts, created_at, next_attempt_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', 0, ?9, ?9)",
        params![
            ExecutionId::generate().as_str(),
            Some(d.job.0).filter(|j| !j.is_empty()),
            d.job.1,
            d.execution,
            d.kind,
            d.destination.as_str(),
            d.target,
            d.event,
            to_ms(d.at),
        ],
    )?;
    // Gateways of other hosts sleep on PostgreSQL's notifications.
    tx.notify_jobs_changed()?;
    Ok(())
}

/// A command alert's run ended: its attempt succeeded when the run did.
fn settle_command_attempt(tx: &Conn, e: &Ended<'_>) -> SqlResult<()> {
    let found: Option<(String, u32)> = tx.query_opt(
        "SELECT delivery_id, attempt FROM alert_attempts
         WHERE execution_id = ?1 AND ended_at IS NULL",
        params![e.id.as_str()],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let Some((delivery, attempt)) = found else {
        return Ok(());
    };
    let ok = e.state == ExecState::Succeeded;
    let result = match e.reason_code {
        Some(code) => format!("{} ({code}), run {}", e.state, e.id),
        None => format!("{}, run {}", e.state, e.id),
    };
    end_attempt_in(tx, &delivery, attempt, e.at, ok, &result)
}

fn end_attempt_in(
    tx: &Conn,
    delivery: &str,
    attempt: u32,
    at: Timestamp,
    ok: bool,
    result: &str,
) -> SqlResult<()> {
    let n = tx.execute(
        "UPDATE alert_attempts SET ended_at = ?3, ok = ?4, result = ?5
         WHERE delivery_id = ?1 AND attempt = ?2 AND ended_at IS NULL",
        params![delivery, attempt, to_ms(at), ok, result],
    )?;
    if n == 0 {
        return Ok(());
    }
    let (state, next, delivered) = if ok {
        ("delivered", None, Some(to_ms(at)))
    } else {
        match next_attempt_after(attempt, at) {
            Some(next) => ("pending", Some(to_ms(next)), None),
            None => ("failed", None, None),
        }
    };
    tx.execute(
        "UPDATE alert_deliveries SET state = ?2, next_attempt_at = ?3, delivered_at = ?4
         WHERE id = ?1 AND state = 'sending' AND attempts = ?5",
        params![delivery, state, next, delivered, attempt],
    )?;
    Ok(())
}

/// Deliveries due at `now`, oldest first.
pub(crate) fn due_deliveries(
    conn: &Conn,
    now: Timestamp,
    limit: usize,
) -> SqlResult<Vec<Delivery>> {
    conn.query_map(
        "SELECT id, job_name, kind, destination, target, event, attempts FROM alert_deliveries
         WHERE state = 'pending' AND next_attempt_at <= ?1
         ORDER BY next_attempt_at, id LIMIT ?2",
        params![to_ms(now), limit as i64],
        |r| {
            Ok(Delivery {
                id: r.get(0)?,
                job_name: r.get(1)?,
                kind: r.get(2)?,
                destination: r
                    .get::<_, String>(3)?
                    .parse::<Destination>()
                    .unwrap_or(Destination::Webhook),
                target: r.get(4)?,
                event: r.get(5)?,
                attempts: r.get(6)?,
            })
        },
    )
}

/// When the earliest pending delivery is due.
pub(crate) fn next_delivery_at(conn: &Conn) -> SqlResult<Option<Timestamp>> {
    let ms: Option<i64> = conn.query_row(
        "SELECT MIN(next_attempt_at) FROM alert_deliveries WHERE state = 'pending'",
        params![],
        |r| r.get(0),
    )?;
    Ok(ms.map(from_ms))
}

/// Begin attempt number `d.attempts + 1` of `d` (pending -> sending) by the
/// gateway of `host`; a command attempt names its run. False: somebody else
/// (another host's gateway, on a shared ledger) began it first.
pub(crate) fn begin_attempt(
    conn: &Conn,
    d: &Delivery,
    at: Timestamp,
    host: &str,
) -> SqlResult<bool> {
    conn.savepoint(|tx| begin_in(tx, d, at, host, None))
}

fn begin_in(
    tx: &Conn,
    d: &Delivery,
    at: Timestamp,
    host: &str,
    execution: Option<&ExecutionId>,
) -> SqlResult<bool> {
    let attempt = d.attempts + 1;
    let n = tx.execute(
        "UPDATE alert_deliveries SET state = 'sending', attempts = ?2
         WHERE id = ?1 AND state = 'pending' AND attempts = ?3",
        params![d.id, attempt, d.attempts],
    )?;
    if n == 0 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO alert_attempts (delivery_id, attempt, started_at, execution_id, host)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            d.id,
            attempt,
            to_ms(at),
            execution.map(|e| e.as_str()),
            host
        ],
    )?;
    Ok(true)
}

/// A command attempt: its run's claim and the attempt, in one transaction,
/// so the run's end (however fast) always finds its attempt.
pub(crate) fn begin_command_attempt(
    conn: &Conn,
    d: &Delivery,
    claim: &super::NewClaim<'_>,
) -> Result<bool, LedgerError> {
    let id = claim.occurrence.id;
    let at = claim.occurrence.at;
    conn.savepoint(|tx| {
        if !begin_in(tx, d, at, claim.occurrence.host, Some(id))? {
            return Ok(false);
        }
        super::insert::claim_in(tx, claim)
    })
    .map_err(sql_err(id))
}

/// Attempt `attempt` of delivery `id` ended at `at`.
pub(crate) fn end_attempt(
    conn: &Conn,
    id: &str,
    attempt: u32,
    at: Timestamp,
    ok: bool,
    result: &str,
) -> SqlResult<()> {
    conn.savepoint(|tx| end_attempt_in(tx, id, attempt, at, ok, result))
}

/// Whose unanswered HTTP attempts [`interrupted_attempts`] ends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Interrupted<'a> {
    /// At gateway start: this host's (and those made before attempts named
    /// their host, by the one host a SQLite ledger has).
    Restarted { host: &'a str },
    /// A host a survivor declared lost (its lease ran out).
    Lost { host: &'a str },
}

/// HTTP attempts a gateway left unfinished never got an answer; they end
/// failed and are retried. (A command attempt ends with its run, which the
/// sweeps settle.)
pub(crate) fn interrupted_attempts(
    conn: &Conn,
    whose: Interrupted<'_>,
    at: Timestamp,
) -> SqlResult<usize> {
    let (host, unnamed, why) = match whose {
        Interrupted::Restarted { host } => (host, true, "interrupted: the gateway stopped".into()),
        Interrupted::Lost { host } => (
            host,
            false,
            format!("interrupted: host {host} lost its lease"),
        ),
    };
    let open: Vec<(String, u32)> = conn.query_map(
        "SELECT a.delivery_id, a.attempt FROM alert_attempts a
         JOIN alert_deliveries d ON d.id = a.delivery_id
         WHERE a.ended_at IS NULL AND d.state = 'sending' AND a.execution_id IS NULL
           AND (a.host = ?1 OR (a.host IS NULL AND ?2 = 1))",
        params![host, unnamed],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    for (id, attempt) in &open {
        end_attempt(conn, id, *attempt, at, false, &why)?;
    }
    Ok(open.len())
}

/// The gateway failed (its unit's `OnFailure=` hook): the event, once per
/// destination, owed like any alert. The number of deliveries written.
pub fn record_gateway_failed(
    conn: &Conn,
    event: &AlertEvent,
    commands: &[String],
    webhooks: &[String],
) -> Result<usize, LedgerError> {
    let id = ExecutionId::from_string("gateway_failed");
    let json = event.to_json();
    conn.savepoint(|tx| {
        let mut n = 0;
        for (destination, targets) in [
            (Destination::Command, commands),
            (Destination::Webhook, webhooks),
        ] {
            for target in targets {
                insert_delivery(
                    tx,
                    &NewDelivery {
                        job: ("", &event.job_name),
                        execution: None,
                        kind: event.kind.as_str(),
                        destination,
                        target,
                        event: &json,
                        at: event.at,
                    },
                )?;
                n += 1;
            }
        }
        Ok(n)
    })
    .map_err(sql_err(&id))
}
