//! Row 5: the cost of one claim pass (`tick::claim_due`) as the number of
//! jobs defined grows: 1k, 10k and 100k jobs, of which 10 are due at each
//! pass. The clock is an argument of the claim, so each pass is simply given
//! the next second; between passes (not timed) the 10 claimed rows are
//! resolved, as their workers would.
//!
//! With `synchronous=FULL` one pass is dominated by its commit's fsync, which
//! does not depend on the job count; the same passes on copies of the
//! databases with `synchronous=OFF` show the part that could grow (queries,
//! planning, inserts). The six databases are visited round-robin.

use super::common::{claim_ctx, insert_jobs, job, open_db};
use crate::probe::mono_ns;
use crate::setup::Setup;
use crate::stats::{Samples, ms, ratio};
use crate::table::{Met, Row};
use hermes_cron::config::Config;
use hermes_cron::db::{Db, from_ms};
use hermes_cron::home::Home;
use hermes_cron::ledger;
use hermes_cron::schedule::ZoneTable;
use hermes_cron::tick::claim_due;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
pub(super) const DUE: usize = 10;

/// Milliseconds per pass, by size, FULL and OFF.
pub(super) struct ClaimCost {
    pub full: Vec<Samples>,
    pub off: Vec<Samples>,
}

pub(super) struct Ledger {
    pub home: Home,
    pub db: Db,
}

/// `n` jobs in `db`, [`DUE`] of them due one second after `base_ms`, the
/// others not before the day after tomorrow.
pub(super) fn fill(db: &mut Db, n: usize, base_ms: i64, zones: &ZoneTable) -> Result<(), String> {
    let due = job("due", "every 1s", &["/usr/local/bin/job", "--quick"], zones)?;
    insert_jobs(db, &due, DUE, |_, j| {
        j.anchor = from_ms(base_ms);
        j.next_run_at = Some(from_ms(base_ms + 1000));
    })?;
    let idle = job(
        "idle",
        "every 1d",
        &["/usr/local/bin/job", "--nightly"],
        zones,
    )?;
    insert_jobs(db, &idle, n - DUE, |i, j| {
        // Spread over the day after tomorrow: never due during the passes.
        let at = base_ms + 2 * 86_400_000 + (i as i64 * 997) % 86_400_000;
        j.anchor = from_ms(at - 86_400_000);
        j.next_run_at = Some(from_ms(at));
    })
}

fn build(setup: &Setup, n: usize, base_ms: i64) -> Result<(Ledger, Ledger), String> {
    let full_home = Home::at(&setup.fresh_dir(&format!("claim-{n}-full"))?);
    let mut db = open_db(&full_home)?;
    fill(&mut db, n, base_ms, &setup.zones)?;
    db.conn()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .map_err(|e| e.to_string())?;
    drop(db);
    let off_home = Home::at(&setup.fresh_dir(&format!("claim-{n}-off"))?);
    off_home.ensure().map_err(|e| e.to_string())?;
    std::fs::copy(full_home.db_file(), off_home.db_file()).map_err(|e| e.to_string())?;
    let full = Ledger {
        db: open_db(&full_home)?,
        home: full_home,
    };
    let off = Ledger {
        db: open_db(&off_home)?,
        home: off_home,
    };
    off.db
        .conn()
        .sqlite()
        .ok_or("synchronous=OFF is SQLite's")?
        .pragma_update(None, "synchronous", "OFF")
        .map_err(|e| e.to_string())?;
    Ok((full, off))
}

/// One timed pass at `now_ms`, then the untimed resolution of its rows.
pub(super) fn pass(
    l: &mut Ledger,
    config: &Config,
    now_ms: i64,
    zones: &ZoneTable,
) -> Result<f64, String> {
    let ctx = claim_ctx(&l.home, config, from_ms(now_ms), zones);
    let t0 = mono_ns();
    let report = claim_due(&mut l.db, &ctx)
        .map_err(|e| format!("claim_due: {e}"))?
        .ok_or("tick lock contended")?;
    let took = mono_ns().saturating_sub(t0) as f64 / 1e6;
    if report.claimed.len() != DUE {
        return Err(format!(
            "claimed {} runs, expected {DUE} ({} not run)",
            report.claimed.len(),
            report.not_run.len()
        ));
    }
    // Untimed: end the claimed rows so the next pass finds no active run.
    for run in &report.claimed {
        ledger::abandoned(l.db.conn(), &run.id, &run.owner, from_ms(now_ms + 50))
            .map_err(|e| e.to_string())?;
    }
    Ok(took)
}

/// `reps` timed passes over every ledger (after a warm-up), round-robin,
/// rotating which goes first, so a burst of load hits all alike. Ledgers
/// come in pairs, one pair per size: the samples of the first of each pair,
/// and of the second, by size.
pub(super) async fn round_robin(
    ledgers: &mut [Ledger],
    base_ms: i64,
    reps: usize,
    zones: &ZoneTable,
) -> Result<(Vec<Samples>, Vec<Samples>), String> {
    let config = Config::default();
    let warmup = 5;
    let sizes = ledgers.len() / 2;
    let (mut first, mut second) = (vec![Samples::new(); sizes], vec![Samples::new(); sizes]);
    for i in 0..warmup + reps {
        let now_ms = base_ms + 1000 * (i as i64 + 1);
        for k in 0..ledgers.len() {
            let which = (i + k) % ledgers.len();
            let took = pass(&mut ledgers[which], &config, now_ms, zones)?;
            if i >= warmup {
                let bucket = if which.is_multiple_of(2) {
                    &mut first
                } else {
                    &mut second
                };
                bucket[which / 2].push(took);
            }
        }
        if i % 10 == 0 {
            tokio::task::yield_now().await;
        }
    }
    Ok((first, second))
}

/// Measure every size, FULL and OFF, round-robin.
pub(super) async fn measure(setup: &Setup) -> Result<ClaimCost, String> {
    let base_ms = super::common::wall_ms() / 1000 * 1000;
    let mut ledgers = Vec::new();
    for n in SIZES {
        eprintln!("bench: claim, building a ledger with {n} jobs");
        let (full, off) = build(setup, n, base_ms)?;
        ledgers.push(full);
        ledgers.push(off);
    }
    let (full, off) = round_robin(&mut ledgers, base_ms, setup.reps(300, 40), &setup.zones).await?;
    Ok(ClaimCost { full, off })
}

fn cell(s: &[Samples]) -> String {
    format!(
        "100k: {} (p99 {}); 10k: {}",
        ms(s[2].median()),
        ms(s[2].p99()),
        ms(s[1].median())
    )
}

/// Row 5a (as committed) and 5b (without fsync).
pub(super) fn rows(c: &ClaimCost) -> Vec<Row> {
    let growth = |s: &[Samples]| s[2].median() / s[0].median();
    let mk = |id, measure: &str, s: &[Samples], target: &str, met| Row {
        id,
        measure: format!("{measure} (n={} per size)", s[0].len()),
        ours: cell(s),
        peer: format!(
            "the same pass at 1k jobs: {} (p99 {})",
            ms(s[0].median()),
            ms(s[0].p99())
        ),
        ratio: format!(
            "{} (growth factor 100k/1k)",
            ratio(s[2].median(), s[0].median())
        ),
        target: target.into(),
        met,
    };
    vec![
        mk(
            "5a",
            "claim pass (`claim_due`, 10 of the jobs due), synchronous=FULL",
            &c.full,
            "100k within 2x of 1k",
            Met::of(growth(&c.full) <= 2.0),
        ),
        mk(
            "5b",
            "the same passes with synchronous=OFF (no fsync: queries, planning, inserts only)",
            &c.off,
            "- (shows what could grow)",
            Met::Info,
        ),
    ]
}
