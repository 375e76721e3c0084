//! Reading the alert outbox for operators (`hermes-cron alerts`): each
//! delivery, newest first, with every attempt and its result.

use crate::db::{Conn, SqlResult, from_ms};
use crate::params;
use crate::schedule::Timestamp;

/// One attempt at a delivery.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AttemptView {
    pub attempt: u32,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    /// None while it is going.
    pub ok: Option<bool>,
    pub result: Option<String>,
    /// A command attempt's run.
    pub execution_id: Option<String>,
    /// The host whose gateway made it (None: made before attempts named
    /// their host).
    pub host: Option<String>,
}

/// One delivery owed, made or given up.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DeliveryView {
    pub id: String,
    pub job_id: Option<String>,
    pub job_name: String,
    /// The run it is about.
    pub execution_id: Option<String>,
    /// An alert kind, or a ping's `start`, `success`, `fail`.
    pub kind: String,
    pub destination: String,
    pub target: String,
    /// `pending`, `sending`, `delivered` or `failed` (given up).
    pub state: String,
    pub created_at: Timestamp,
    pub next_attempt_at: Option<Timestamp>,
    pub delivered_at: Option<Timestamp>,
    pub event: serde_json::Value,
    pub attempts: Vec<AttemptView>,
}

/// The newest `limit` deliveries, of one job when `job_name` is given, read
/// in one snapshot: an attempt's end and its delivery's state are written
/// together, and are shown together.
pub fn list_deliveries(
    conn: &Conn,
    job_name: Option<&str>,
    limit: usize,
) -> SqlResult<Vec<DeliveryView>> {
    conn.snapshot(|conn| deliveries_in(conn, job_name, limit))
}

fn deliveries_in(
    conn: &Conn,
    job_name: Option<&str>,
    limit: usize,
) -> SqlResult<Vec<DeliveryView>> {
    let mut out: Vec<DeliveryView> = conn.query_map(
        "SELECT id, job_id, job_name, execution_id, kind, destination, target, state,
                created_at, next_attempt_at, delivered_at, event
         FROM alert_deliveries WHERE CAST(?1 AS TEXT) IS NULL OR job_name = ?1
         ORDER BY id DESC LIMIT ?2",
        params![job_name, limit as i64],
        |r| {
            let state: String = r.get(7)?;
            Ok(DeliveryView {
                id: r.get(0)?,
                job_id: r.get(1)?,
                job_name: r.get(2)?,
                execution_id: r.get(3)?,
                kind: r.get(4)?,
                destination: r.get(5)?,
                target: r.get(6)?,
                next_attempt_at: match state.as_str() {
                    "pending" => r.get::<_, Option<i64>>(9)?.map(from_ms),
                    _ => None,
                },
                state,
                created_at: from_ms(r.get(8)?),
                delivered_at: r.get::<_, Option<i64>>(10)?.map(from_ms),
                event: serde_json::from_str(&r.get::<_, String>(11)?)
                    .unwrap_or(serde_json::Value::Null),
                attempts: Vec::new(),
            })
        },
    )?;
    for d in &mut out {
        d.attempts = conn.query_map(
            "SELECT attempt, started_at, ended_at, ok, result, execution_id, host FROM alert_attempts
             WHERE delivery_id = ?1 ORDER BY attempt",
            params![d.id],
            |r| {
                Ok(AttemptView {
                    attempt: r.get(0)?,
                    started_at: from_ms(r.get(1)?),
                    ended_at: r.get::<_, Option<i64>>(2)?.map(from_ms),
                    ok: r.get(3)?,
                    result: r.get(4)?,
                    execution_id: r.get(5)?,
                    host: r.get(6)?,
                })
            },
        )?;
    }
    Ok(out)
}
