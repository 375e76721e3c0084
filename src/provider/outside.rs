//! Reading the runs Hermes made by itself from its `cron/executions.db`
//! ([`read_hermes_runs`], before the sync takes the ledger's write lock:
//! another program's file is never read while holding it), and recording
//! them ([`record_outside_runs`], inside the sync's transaction). Which of
//! them the ledger records, and how, is the core's `provider::outside_runs`.
//!
//! Hermes's file is only read, and opened so that reading it creates
//! nothing: while Hermes has it open (its `-wal` exists) it is opened
//! read-only and shares Hermes's WAL; otherwise nothing is writing it and it
//! is opened `immutable` (no lock, no `-wal` or `-shm` made beside it), and
//! what was read counts only if the file did not change meanwhile. A read
//! that fails or meets Hermes writing is tried again at the next sync.

use crate::db::Conn;
use crate::home::Home;
use crate::ids::JobId;
use crate::ledger::{self, NewRanOutside, Occurrence, Ran};
use crate::schedule::Timestamp;
use hermes_cron_core::job::Job;
use hermes_cron_core::provider::{FIRE_SOURCE, HermesExecution, outside_runs};
use hermes_cron_core::run::{RunSpec, Source};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Why Hermes's executions could not be read or recorded.
#[derive(Debug, thiserror::Error)]
pub enum OutsideError {
    #[error("cannot read Hermes's executions in {path}")]
    Read {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot record a run Hermes made by itself")]
    Ledger(#[from] ledger::LedgerError),
}

/// The file's size and modification time, to see it change.
fn stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The ended executions that hermes-cron did not fire, claimed at or after
/// `since` (an ISO 8601 instant); none when Hermes has no `executions.db`
/// (yet).
fn read(path: &Path, since: &str) -> Result<Vec<HermesExecution>, rusqlite::Error> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let immutable = !wal_of(path).exists();
    let before = stamp(path);
    let rows = query(path, since, immutable)?;
    if immutable && stamp(path) != before {
        // Hermes wrote it while we read without a lock: not to be trusted.
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("the file changed while it was read".into()),
        ));
    }
    Ok(rows)
}

fn query(
    path: &Path,
    since: &str,
    immutable: bool,
) -> Result<Vec<HermesExecution>, rusqlite::Error> {
    let immutable = if immutable { "&immutable=1" } else { "" };
    let uri = format!("file:{}?mode=ro{immutable}", uri_path(path));
    let conn = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_millis(200))?;
    let mut stmt = conn.prepare(
        "SELECT id, job_id, source, status, claimed_at, started_at, finished_at, error
           FROM executions
          WHERE source != ?1 AND status IN ('completed', 'failed', 'unknown')
            AND claimed_at >= ?2",
    )?;
    let rows = stmt.query_map(rusqlite::params![FIRE_SOURCE, since], |row| {
        Ok(HermesExecution {
            id: row.get(0)?,
            job_id: row.get(1)?,
            source: row.get(2)?,
            status: row.get(3)?,
            claimed_at: row.get(4)?,
            started_at: row.get(5)?,
            finished_at: row.get(6)?,
            error: row.get(7)?,
        })
    })?;
    rows.collect()
}

/// SQLite's write-ahead log beside `db`: Hermes's writes land there first,
/// and it exists while Hermes has the file open.
pub(crate) fn wal_of(db: &Path) -> std::path::PathBuf {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    wal.into()
}

/// `path` for an SQLite URI: `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The runs Hermes made by itself that may be of jobs managed since
/// `oldest` (the oldest managed job's creation): read before the sync's
/// transaction.
pub(crate) fn read_hermes_runs(
    home: &Home,
    oldest: Timestamp,
) -> Result<Vec<HermesExecution>, OutsideError> {
    let path = home.hermes_executions_file();
    // Hermes writes its times with its zone's offset: compared as text, an
    // instant a day earlier is safely before any of them.
    let since = (oldest - chrono::Duration::days(1)).to_rfc3339();
    read(&path, &since).map_err(|source| OutsideError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Record, in the transaction `tx`, each of `rows` (read by
/// [`read_hermes_runs`]) that is a run of one of the `managed` jobs Hermes
/// made by itself and the ledger does not have yet; `host` is this host.
/// Returns the names of the jobs of the runs recorded.
pub(crate) fn record_outside_runs(
    tx: &Conn,
    rows: &[HermesExecution],
    host: &str,
    managed: &[Job],
) -> Result<Vec<String>, OutsideError> {
    let Some(oldest) = managed.iter().map(|j| j.created_at).min() else {
        return Ok(Vec::new());
    };
    let known =
        ledger::hermes_run_ids_since(tx, oldest).map_err(|source| ledger::LedgerError::Read {
            what: "the runs recorded from Hermes",
            source,
        })?;
    let spec = RunSpec::default();
    let mut recorded = Vec::new();
    for run in outside_runs(rows, managed) {
        if known.contains(run.id.as_str()) {
            continue;
        }
        let job_id: JobId = run.job_id.clone();
        let occurrence = Occurrence {
            id: &run.id,
            job_id: Some(&job_id),
            job_name: &run.job_name,
            scheduled_for: None,
            attempt: 1,
            source: Source::Hermes,
            spec: &spec,
            at: run.claimed_at,
            host,
        };
        let new = NewRanOutside {
            occurrence,
            state: run.state,
            reason: run.reason.clone(),
            ran: Ran {
                started_at: run.started_at,
                finished_at: Some(run.finished_at),
            },
        };
        if ledger::ran_outside(tx, &new)? {
            recorded.push(run.job_name.clone());
        }
    }
    Ok(recorded)
}
