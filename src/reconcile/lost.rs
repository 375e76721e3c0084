//! Resolving the rows of hosts whose lease expired (PostgreSQL, several
//! hosts): run by a surviving gateway in its monitor period.
//!
//! For each live lease of another host that ran out (judged on the
//! database's clock, `cluster::database_now`), in one write transaction:
//! declare it `lost` by compare-and-set on the lease as seen (of several
//! survivors one wins; the others find nothing to do), then judge each of
//! its active rows (`hermes_cron_core::reconcile::judge_lost_row`) and apply
//! the named move: `take_over` for a row it claimed but never started (this
//! gateway now owns it, on this host, and dispatches it), `orphaned` with
//! `host_lost` for a run that had started (never re-run), `withdraw` for a
//! run claimed ahead of its instant or staged there (taken back; the job's
//! slot is claimed again at its instant). A crash half way
//! rolls everything back, the lease included, so the next look does it all.
//!
//! ## Locking
//! The transaction holds the write lock (`Db::immediate`), so it never
//! interleaves with a claim pass; each move still compare-and-sets on the
//! row as read.

use crate::cluster::{database_now, read_leases};
use crate::db::Db;
use crate::home::Home;
use crate::ledger::{self, ExecState, Execution, LedgerError, ReasonCode, RunSpec};
use crate::process::Owner;
use crate::schedule::Timestamp;
use hermes_cron_core::cluster::expired_hosts;
use hermes_cron_core::reconcile::{LostRowFate, judge_lost_row};

/// What one look at the leases did.
#[derive(Debug, Default)]
pub struct LostReport {
    /// Hosts this gateway declared lost.
    pub hosts: Vec<String>,
    /// Claims taken over (now this gateway's, to dispatch), with their rows
    /// (as read after the move) and run specs.
    pub taken: Vec<(Execution, RunSpec)>,
    /// Runs recorded `unknown` (`host_lost`), as they were before.
    pub unknown: Vec<Execution>,
    /// Runs claimed ahead of their instant (staging) taken back.
    pub withdrawn: usize,
}

fn read_err(what: &'static str) -> impl FnOnce(crate::db::SqlError) -> LedgerError {
    move |source| LedgerError::Read { what, source }
}

/// Resolve every expired lease of another host (see the module docs).
/// `owner` is this gateway; `now` our clock (the instant written on the
/// rows).
pub fn lost_hosts(
    db: &mut Db,
    home: &Home,
    owner: &Owner,
    me: &str,
    now: Timestamp,
) -> Result<LostReport, LedgerError> {
    let mut report = LostReport::default();
    let db_now = database_now(db.conn(), now).map_err(read_err("the database clock"))?;
    let leases = read_leases(db.conn()).map_err(read_err("host leases"))?;
    for lease in expired_hosts(&leases, me, db_now) {
        let tx = db.immediate().map_err(read_err("a write transaction"))?;
        if !crate::cluster::mark_lost(&tx, lease, me, db_now).map_err(read_err("a host lease"))? {
            continue;
        }
        let mut taken_ids = Vec::new();
        let mut unknown = Vec::new();
        let rows = ledger::active_runs_claimed_on(&tx, &lease.host)
            .map_err(read_err("the lost host's rows"))?;
        for row in rows {
            let ahead = row.state == ExecState::Claimed
                && ledger::staged_claim(&tx, &row.id)
                    .map_err(read_err("a staging claim"))?
                    .is_some();
            match judge_lost_row(&row, ahead, &lease.host, lease.lease_until, me) {
                LostRowFate::Ended => {}
                LostRowFate::Withdraw => {
                    let owner = row.owner.as_ref().map(|o| o.as_stored());
                    if ledger::withdraw(&tx, &row.id, row.state, owner)? {
                        report.withdrawn += 1;
                    }
                }
                LostRowFate::TakeOver => {
                    let output = row.job_id.as_ref().map(|job| {
                        home.output_file(job.as_str(), row.id.as_str())
                            .to_string_lossy()
                            .into_owned()
                    });
                    if ledger::take_over(&tx, &row, owner, me, output.as_deref())? {
                        taken_ids.push(row.id.clone());
                    }
                }
                LostRowFate::Unknown { reason } => {
                    crate::crash::point("lost_host_before_resolve");
                    if ledger::orphaned(&tx, &row, ReasonCode::HostLost, reason, now)? {
                        unknown.push(row);
                    }
                }
            }
        }
        // Its gateway's webhook and ping attempts will get no answer here.
        ledger::interrupted_attempts(&tx, ledger::Interrupted::Lost { host: &lease.host }, now)
            .map_err(read_err("the lost host's alert attempts"))?;
        tx.commit()
            .map_err(read_err("the lost host's resolution"))?;
        report.hosts.push(lease.host.clone());
        report.unknown.extend(unknown);
        for id in taken_ids {
            if let Some(found) =
                ledger::get_execution(db.conn(), &id).map_err(read_err("a taken-over row"))?
            {
                report.taken.push(found);
            }
        }
    }
    Ok(report)
}
