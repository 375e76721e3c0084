//! The ledger read directly (read-only, through the library's connection,
//! not through the CLI; SQLite or PostgreSQL as the home has it),
//! and the invariants every crash test ends with, checked on the database
//! itself and on the file the jobs append their execution id to:
//!
//! - `PRAGMA integrity_check` is `ok` (SQLite);
//! - no two rows share a job, slot and attempt;
//! - every row is terminal, and in one of the states a slot may end in
//!   (ran: succeeded/failed/timed_out/cancelled; missed; skipped; refused;
//!   unknown), an `unknown` row carrying its reason;
//! - the scheduled slots of each `every` job form an unbroken sequence from
//!   the first to the last one with a row (missed and skipped slots are rows
//!   too, so a gap is a slot nobody recorded);
//! - no side effect happened twice: each execution id is in the file at most
//!   once, a `succeeded` row's id exactly once, and never the id of a row that
//!   did not run (missed, skipped, refused, or `unknown` because its claimer
//!   died before any worker adopted it);
//! - every id in the file is a row of the ledger.

use super::process::alive;
use super::waiting::wait_for_or;
use hermes_cron::db::Db;
use hermes_cron::params;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

/// One ledger row, as much of it as the invariants need.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub id: String,
    pub job_id: Option<String>,
    pub job_name: String,
    pub scheduled_for: Option<i64>,
    pub attempt: i64,
    pub source: String,
    pub state: String,
    pub reason_code: Option<String>,
    pub reason: Option<String>,
    pub dispatch_mode: Option<String>,
    pub pid: Option<i64>,
}

impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} slot={} a{} {} {}/{} mode={} pid={}",
            self.id,
            self.job_name,
            self.scheduled_for.map_or("-".into(), |s| s.to_string()),
            self.attempt,
            self.source,
            self.state,
            self.reason_code.as_deref().unwrap_or("-"),
            self.dispatch_mode.as_deref().unwrap_or("-"),
            self.pid.map_or("-".into(), |p| p.to_string()),
        )
    }
}

const RAN: &[&str] = &["succeeded", "failed", "timed_out", "cancelled"];
const NEVER_RAN: &[&str] = &["missed", "skipped", "refused"];
const ACTIVE: &[&str] = &["claimed", "staged", "running"];

/// The ledger, read-only (its PostgreSQL schema when the home has one).
pub(crate) fn open_read_only(db: &Path) -> Db {
    super::ledger::open(db).unwrap_or_else(|| panic!("cannot open the ledger of {}", db.display()))
}

/// `PRAGMA integrity_check`, all lines joined (SQLite). PostgreSQL has no
/// such check of its own; its ledger counts as `ok`.
pub(crate) fn integrity(db: &Path) -> String {
    let db = open_read_only(db);
    let Some(conn) = db.conn().sqlite() else {
        return "ok".into();
    };
    let mut stmt = conn.prepare("PRAGMA integrity_check").expect("prepare");
    let lines: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .expect("integrity_check")
        .map(|l| l.expect("row"))
        .collect();
    lines.join("\n")
}

/// Every ledger row, oldest id first.
pub(crate) fn rows(db: &Path) -> Vec<Row> {
    let db = open_read_only(db);
    db.conn()
        .query_map(
            "SELECT id, job_id, job_name, scheduled_for, attempt, source, state, reason_code, \
             reason, dispatch_mode, pid FROM executions ORDER BY id",
            params![],
            |r| {
                Ok(Row {
                    id: r.get(0)?,
                    job_id: r.get(1)?,
                    job_name: r.get(2)?,
                    scheduled_for: r.get(3)?,
                    attempt: r.get(4)?,
                    source: r.get(5)?,
                    state: r.get(6)?,
                    reason_code: r.get(7)?,
                    reason: r.get(8)?,
                    dispatch_mode: r.get(9)?,
                    pid: r.get(10)?,
                })
            },
        )
        .expect("query")
}

/// Rows still `claimed` or `running`.
pub(crate) fn active(db: &Path) -> Vec<Row> {
    rows(db)
        .into_iter()
        .filter(|r| ACTIVE.contains(&r.state.as_str()))
        .collect()
}

/// Rows still active that were claimed before `ms` (milliseconds since the epoch).
pub(crate) fn active_claimed_before(db: &Path, ms: i64) -> Vec<String> {
    open_read_only(db)
        .conn()
        .query_map(
            "SELECT id FROM executions WHERE state IN ('claimed', 'staged', 'running')
                AND claimed_at < ?1",
            params![ms],
            |r| r.get(0),
        )
        .expect("query")
}

/// Wait until no row is `claimed` or `running` (workers finishing after the
/// last gateway stopped); panics listing the rows still active.
pub(crate) fn wait_settled(db: &Path, timeout: Duration) {
    let last = RefCell::new(Vec::new());
    wait_for_or(
        "every row to be terminal",
        timeout,
        || {
            let active = active(db);
            let settled = active.is_empty();
            *last.borrow_mut() = active;
            settled.then_some(())
        },
        || {
            let listed: Vec<String> = last
                .borrow()
                .iter()
                .map(|r| {
                    let alive = r.pid.is_some_and(|p| alive(p as u32));
                    format!("{r} (pid alive: {alive})")
                })
                .collect();
            format!(
                "rows left non-terminal after the last gateway stopped:\n{}",
                listed.join("\n")
            )
        },
    );
}

/// A job whose slots are `anchor + k * period`.
#[derive(Clone, Debug)]
pub(crate) struct Periodic {
    pub job_id: String,
    pub period_ms: i64,
}

/// What the check saw, for the test's output.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Rows by `state/reason_code`.
    pub by_state: BTreeMap<String, usize>,
    pub rows: usize,
    pub side_effects: usize,
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let states: Vec<String> = self
            .by_state
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        write!(
            f,
            "{} rows, {} side effects: {}",
            self.rows,
            self.side_effects,
            states.join(" ")
        )
    }
}

/// Check every invariant; panics listing every violation found.
pub(crate) fn check(db: &Path, side_effects: &Path, jobs: &[Periodic]) -> Tally {
    let mut problems: Vec<String> = Vec::new();
    let integrity = integrity(db);
    if integrity != "ok" {
        problems.push(format!("PRAGMA integrity_check: {integrity}"));
    }
    let rows = rows(db);
    let by_id: HashMap<&str, &Row> = rows.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut tally = Tally {
        rows: rows.len(),
        ..Tally::default()
    };

    // One row per (job, slot, attempt); every row terminal, in a known state.
    let mut keys: HashMap<(Option<&str>, i64, i64), &Row> = HashMap::new();
    for r in &rows {
        let key = format!("{}/{}", r.state, r.reason_code.as_deref().unwrap_or("-"));
        *tally.by_state.entry(key).or_default() += 1;
        if let Some(slot) = r.scheduled_for
            && let Some(other) = keys.insert((r.job_id.as_deref(), slot, r.attempt), r)
        {
            problems.push(format!(
                "two rows for one slot and attempt:\n  {other}\n  {r}"
            ));
        }
        let state = r.state.as_str();
        if ACTIVE.contains(&state) {
            problems.push(format!("row left non-terminal: {r}"));
        } else if state == "unknown" {
            if r.reason.as_deref().is_none_or(|s| s.trim().is_empty()) {
                problems.push(format!("unknown row without a reason: {r}"));
            }
        } else if !RAN.contains(&state) && !NEVER_RAN.contains(&state) {
            problems.push(format!("row in an unexpected state: {r}"));
        }
    }

    // No gap in each periodic job's slot sequence.
    for job in jobs {
        let mut slots: Vec<i64> = rows
            .iter()
            .filter(|r| r.job_id.as_deref() == Some(job.job_id.as_str()) && r.attempt == 1)
            .filter_map(|r| r.scheduled_for)
            .collect();
        slots.sort_unstable();
        slots.dedup();
        for pair in slots.windows(2) {
            let gap = pair[1] - pair[0];
            if gap != job.period_ms {
                problems.push(format!(
                    "job {}: slots {} and {} are {gap} ms apart, not {} ms: {} slot(s) have no row",
                    job.job_id,
                    pair[0],
                    pair[1],
                    job.period_ms,
                    gap / job.period_ms - 1
                ));
            }
        }
    }

    // Side effects: at most once, exactly once when succeeded, never for a row that did not run.
    let text = std::fs::read_to_string(side_effects).unwrap_or_default();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *seen.entry(line).or_default() += 1;
        tally.side_effects += 1;
    }
    for (id, n) in &seen {
        if *n > 1 {
            problems.push(format!("side effect of {id} happened {n} times"));
        }
        match by_id.get(id) {
            None => problems.push(format!("side effect of {id}, which has no ledger row")),
            Some(r) if NEVER_RAN.contains(&r.state.as_str()) => {
                problems.push(format!("side effect of a row that never ran: {r}"))
            }
            Some(r) if r.state == "unknown" && r.reason_code.as_deref() == Some("claimer_died") => {
                problems.push(format!(
                    "side effect of a row recorded as never adopted (claimer_died): {r}"
                ))
            }
            Some(_) => {}
        }
    }
    for r in rows.iter().filter(|r| r.state == "succeeded") {
        if !seen.contains_key(r.id.as_str()) {
            problems.push(format!("succeeded row without its side effect: {r}"));
        }
    }

    if !problems.is_empty() {
        let all: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        panic!(
            "{} invariant violation(s):\n{}\n--- every row ({tally}) ---\n{}",
            problems.len(),
            problems.join("\n"),
            all.join("\n")
        );
    }
    tally
}
