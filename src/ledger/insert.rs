//! Inserting a row: a claim ([`claim`]; [`claim_in`] inside a caller's
//! transaction), and the INSERT the rows inserted terminal use too
//! (`terminal::not_run`, `terminal::ran_outside`). `UNIQUE(job_id,
//! scheduled_for, attempt)` makes a second row for the same occurrence a
//! no-op, as the primary key does a second row with the same id (a run
//! Hermes made by itself has an id made from Hermes's): each returns false
//! when the occurrence already has its row.

use super::error::check;
use super::error::{LedgerError, sql_err};
use crate::db::to_ms;
use crate::db::{Conn, SqlResult};
use crate::ids::{ExecutionId, JobId};
use crate::params;
use crate::schedule::Timestamp;
use hermes_cron_core::run::{ExecState, Move, Owner, ReasonCode, RunSpec, Source};

/// What every inserted row says about its occurrence.
#[derive(Clone, Copy, Debug)]
pub struct Occurrence<'a> {
    pub id: &'a ExecutionId,
    /// None for spawned runs.
    pub job_id: Option<&'a JobId>,
    pub job_name: &'a str,
    /// None for manual and spawned runs.
    pub scheduled_for: Option<Timestamp>,
    pub attempt: u32,
    pub source: Source,
    pub spec: &'a RunSpec,
    pub at: Timestamp,
    /// The host whose claimer decided the row (its worker runs there).
    pub host: &'a str,
}

impl<'a> Occurrence<'a> {
    /// A run of no job (`spawn`, a command alert) on `host`: attempt 1, no
    /// slot.
    pub fn spawned(
        id: &'a ExecutionId,
        job_name: &'a str,
        spec: &'a RunSpec,
        at: Timestamp,
        host: &'a str,
    ) -> Occurrence<'a> {
        Occurrence {
            id,
            job_id: None,
            job_name,
            scheduled_for: None,
            attempt: 1,
            source: Source::Spawn,
            spec,
            at,
            host,
        }
    }
}

/// A claimed occurrence: `owner` claimed it; a worker will adopt it.
#[derive(Clone, Debug)]
pub struct NewClaim<'a> {
    pub occurrence: Occurrence<'a>,
    pub owner: Owner,
    pub output_path: Option<String>,
}

/// An occurrence that will not run, and why.
#[derive(Clone, Debug)]
pub struct NewNotRun<'a> {
    pub occurrence: Occurrence<'a>,
    /// `skipped` or `missed`.
    pub state: ExecState,
    pub reason_code: ReasonCode,
    pub reason: String,
}

/// A run Hermes made by itself, outside hermes-cron, as Hermes recorded it
/// (the occurrence's `at` is when Hermes claimed it).
#[derive(Clone, Debug)]
pub struct NewRanOutside<'a> {
    pub occurrence: Occurrence<'a>,
    /// `succeeded`, `failed` or `unknown`.
    pub state: ExecState,
    pub reason: String,
    pub ran: Ran,
}

/// When an inserted row's run started and ended (None: it never started;
/// it ended, if terminal, when it was inserted).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ran {
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
}

const INSERT: &str = "INSERT INTO executions (id, job_id, job_name, scheduled_for, attempt, source,
         state, reason_code, reason, spec, owner, claimed_by, claimed_at, finished_at, output_path,
         host, started_at, duration_ms)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
     ON CONFLICT DO NOTHING";

/// One INSERT of an occurrence's row; 0 when it already had one.
pub(super) fn insert(
    conn: &Conn,
    o: &Occurrence<'_>,
    state: ExecState,
    reason: Option<(ReasonCode, &str)>,
    owner: Option<&Owner>,
    output_path: Option<&str>,
    ran: Ran,
) -> SqlResult<usize> {
    let finished = ran
        .finished_at
        .or_else(|| state.is_terminal().then_some(o.at));
    let duration_ms = match (ran.started_at, finished) {
        (Some(start), Some(end)) => Some((end - start).num_milliseconds().max(0)),
        _ => None,
    };
    conn.execute(
        INSERT,
        params![
            o.id.as_str(),
            o.job_id.map(JobId::as_str),
            o.job_name,
            o.scheduled_for.map(to_ms),
            o.attempt,
            o.source.as_str(),
            state.as_str(),
            reason.map(|(code, _)| code.as_str()),
            reason.map(|(_, text)| text),
            o.spec.to_json(),
            owner.map(Owner::to_string),
            to_ms(o.at),
            finished.map(to_ms),
            output_path,
            o.host,
            ran.started_at.map(to_ms),
            duration_ms,
        ],
    )
}

/// Insert a claimed row. False: the occurrence already has a row.
pub fn claim(conn: &Conn, c: &NewClaim<'_>) -> Result<bool, LedgerError> {
    let o = &c.occurrence;
    check(o.id, Move::Claim, None, ExecState::Claimed)?;
    claim_in(conn, c).map_err(sql_err(o.id))
}

/// The claim's INSERT, inside a caller's transaction (a command alert's
/// attempt, `outbox.rs`).
pub(super) fn claim_in(conn: &Conn, c: &NewClaim<'_>) -> SqlResult<bool> {
    let o = &c.occurrence;
    let n = insert(
        conn,
        o,
        ExecState::Claimed,
        None,
        Some(&c.owner),
        c.output_path.as_deref(),
        Ran::default(),
    )?;
    Ok(n == 1)
}
