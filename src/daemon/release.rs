//! Releasing staged runs at their instant.
//!
//! A little before the instant (see [`margin`]) the gateway reads, once, the
//! active rows and, for each held run, its job as it is now, and decides
//! each run's fate as the claim at the instant would
//! (`hermes_cron_core::staging::at_instant`): release it; stop the previous
//! runs first (overlap `replace`); record it `skipped` (overlap `skip`);
//! take it back (`withdraw`: its job was paused, edited or removed); or drop
//! it (its row moved on). The moves are made before the instant; at the
//! instant the held workers get their release byte, one write each, and
//! fork their commands at once.
//!
//! A worker that is not released (withdrawn, skipped, dropped) has its gate
//! closed: it sees EOF and exits without running anything (trying to
//! withdraw its row, which the gateway has already moved).

use super::staging::HeldRun;
use crate::clock::Clock;
use crate::db::Db;
use crate::ledger::{self, ExecState, Execution, LedgerError};
use crate::logging::run_span;
use crate::schedule::Timestamp;
use crate::text::Chain;
use crate::tick::ClaimedAhead;
use hermes_cron_core::staging::{AtInstant, JobAtInstant, at_instant};
use std::collections::HashMap;
use std::time::Duration;

/// The longest the loop thread waits, blocked, for the exact instant.
const MAX_PRECISE_WAIT: Duration = Duration::from_millis(50);

/// How long before an instant to wake for the release of `runs` held runs:
/// enough to read and decide them all before it.
pub(crate) fn margin(runs: usize) -> Duration {
    Duration::from_millis(2) + Duration::from_micros(30) * runs.min(100_000) as u32
}

/// The runs decided at an instant.
#[derive(Default)]
pub(crate) struct Decided {
    /// Release these at the instant.
    pub release: Vec<HeldRun>,
    /// Stop the previous runs of these first (overlap `replace`).
    pub replace_first: Vec<(HeldRun, Vec<Execution>)>,
    /// The latest instant a worker of these runs held its row; None when a
    /// worker had not staged yet (the batch was late).
    pub staged_by: Option<Timestamp>,
}

/// Decide the fate of `held` (see the module documentation) and make the
/// moves that are not releases.
pub(crate) fn decide(db: &Db, held: Vec<HeldRun>, now: Timestamp) -> Result<Decided, LedgerError> {
    let active = ledger::active_runs(db.conn()).map_err(|source| LedgerError::Read {
        what: "active rows",
        source,
    })?;
    let by_id: HashMap<&str, &Execution> = active.iter().map(|r| (r.id.as_str(), r)).collect();
    let mut out = Decided::default();
    let mut late = false;
    for h in held {
        let run = &h.ahead.run;
        let row = by_id.get(run.id.as_str()).copied();
        let job = run
            .job_id
            .as_ref()
            .map(|id| crate::store::job_now(db.conn(), id))
            .transpose()
            .map_err(|source| LedgerError::Read {
                what: "a staged run's job",
                source,
            })?
            .flatten();
        let previous: Vec<Execution> = active
            .iter()
            .filter(|r| r.job_id == run.job_id && r.id != run.id)
            .cloned()
            .collect();
        let verdict = at_instant(
            row.map(|r| r.state),
            job.as_ref().map(|j| JobAtInstant {
                updated_at: j.updated_at,
                state: &j.state,
                overlap: j.overlap,
            }),
            h.ahead.claim.job_updated_at,
            h.ahead.claim.completed,
            !previous.is_empty(),
        );
        if let Some(r) = row {
            match r.state {
                ExecState::Staged => {
                    out.staged_by = out.staged_by.max(r.heartbeat_at);
                }
                _ => late = true,
            }
        }
        let _span = run_span(&run.job_name, &run.id).entered();
        match (verdict, row) {
            (AtInstant::Release, _) => out.release.push(h),
            (AtInstant::ReplaceFirst, _) => out.replace_first.push((h, previous)),
            (AtInstant::Skip, Some(r)) => {
                if ledger::overlapped(db.conn(), r, now)? {
                    tracing::info!(
                        state = "skipped",
                        reason = "overlap",
                        "the previous run of this job is still going (overlap skip)"
                    );
                }
            }
            (AtInstant::Withdraw(why), Some(r)) => {
                let owner = r.owner.as_ref().map(|o| o.as_stored());
                if ledger::withdraw(db.conn(), &r.id, r.state, owner)? {
                    tracing::info!("withdrawn, never started: {why}");
                }
            }
            (AtInstant::Gone, _) | (_, None) => {
                tracing::info!("its row moved on before its instant; not released");
            }
        }
    }
    if late {
        out.staged_by = None;
    }
    Ok(out)
}

/// Block the loop thread until `clock` reads `at` (at most
/// [`MAX_PRECISE_WAIT`]): the runtime's timer wheel wakes to the millisecond,
/// later than the instant by up to that much; a run starts on it.
pub(crate) fn wait_for(clock: &dyn Clock, at: Timestamp) {
    let left = (at - clock.now()).to_std().unwrap_or_default();
    if !left.is_zero() {
        std::thread::sleep(left.min(MAX_PRECISE_WAIT));
    }
}

/// A worker that was to be released is gone: settle its run as one that
/// died while staged.
pub(crate) fn gone_before_release(
    db: &Db,
    ahead: &ClaimedAhead,
    pid: u32,
    by: crate::process::Owner,
    e: &std::io::Error,
    now: Timestamp,
) {
    let run = &ahead.run;
    let _span = run_span(&run.job_name, &run.id).entered();
    let w = crate::reconcile::ReapedWorker {
        by,
        pid,
        status: None,
        released: false,
    };
    match crate::reconcile::reaped(db, &run.id, w, now) {
        Ok(_) => tracing::warn!(
            "the staged worker was gone at its release ({e}); the command never started"
        ),
        Err(err) => tracing::error!(
            "failed to settle a staged worker that was gone: {}",
            Chain(&err)
        ),
    }
}
