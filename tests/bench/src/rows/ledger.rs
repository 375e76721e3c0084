//! Row 7: the ledger.
//!
//! 7a: terminal rows per second, one writer, each row written as production
//! writes a single occurrence: the claim insert, the worker's adoption
//! (`claimed -> running`) and its terminal row, three commits, each with
//! `synchronous=FULL` (the project's setting). Peer: the same writes with
//! `synchronous=NORMAL` (SQLite's usual WAL setting, which may lose the last
//! commits on power loss). Batches alternate between the two databases.
//!
//! 7b: the database size per 100,000 terminal rows of a realistic job (spec
//! snapshot, output path, unit, owners), after a WAL checkpoint. Peer: the
//! same rows as JSON lines (`runs --json` shaped), the plain-log alternative.

use super::common::{open_db, wall_now};
use crate::probe::mono_ns;
use crate::setup::Setup;
use crate::stats::{Samples, mib, num, ratio};
use crate::table::{Met, Row};
use hermes_cron::db::Db;
use hermes_cron::home::Home;
use hermes_cron::ids::{ExecutionId, JobId};
use hermes_cron::job::Env;
use hermes_cron::ledger::{
    self, DispatchMode, Finished, NewClaim, Occurrence, RunFilter, RunSpec, Source, Taking,
};
use hermes_cron::ledger::{Exit, RunEnd};
use hermes_cron::process::OwnerRole;
use std::time::Duration;

/// Rows per second per batch; sizes in bytes.
#[derive(Default)]
pub(super) struct LedgerFigures {
    pub full: Samples,
    pub normal: Samples,
    pub db_bytes: f64,
    pub jsonl_bytes: f64,
    pub rows: usize,
}

fn spec() -> RunSpec {
    RunSpec {
        argv: vec![
            "/usr/local/bin/briefing".into(),
            "--top".into(),
            "5".into(),
            "--mail".into(),
            "--calendar".into(),
        ],
        env: Env(vec![
            ("LANG".into(), "C.UTF-8".into()),
            ("BRIEFING_PROFILE".into(), "morning".into()),
        ]),
        timeout_s: 3600,
        output_max_bytes: 8 << 20,
        heartbeat_interval_s: 5,
        retry_backoff_s: 30,
        ..RunSpec::default()
    }
}

/// Write one occurrence through its three states; `slot` keeps
/// `(job_id, scheduled_for, attempt)` unique.
fn write_one(db: &Db, home: &Home, job: &JobId, spec: &RunSpec, slot: i64) -> Result<(), String> {
    let conn = db.conn();
    let claimer = hermes_cron::process::owner(OwnerRole::Gateway);
    let worker = hermes_cron::process::owner(OwnerRole::Worker);
    let now = wall_now();
    let id = ExecutionId::generate();
    let unit = format!("hermes-cron-daily\\x2dbriefing-{id}.scope");
    let output = home.output_file(job.as_str(), id.as_str());
    let err = |e: ledger::LedgerError| e.to_string();
    let claim = NewClaim {
        occurrence: Occurrence {
            id: &id,
            job_id: Some(job),
            job_name: "daily-briefing",
            scheduled_for: Some(hermes_cron::db::from_ms(slot)),
            attempt: 1,
            source: Source::Schedule,
            spec,
            at: now,
            host: &super::common::host().name,
        },
        owner: claimer,
        output_path: Some(output.to_string_lossy().into_owned()),
    };
    ledger::claim(conn, &claim).map_err(err)?;
    ledger::adopt(
        conn,
        &id,
        &claimer.into(),
        &Taking {
            worker,
            mode: DispatchMode::Scoped,
            cause: None,
            unit: Some(&unit),
            at: now,
        },
    )
    .map_err(err)?;
    let finished = Finished {
        end: RunEnd::Succeeded,
        exit: Some(Exit::Code(0)),
        duration_ms: Some(1234),
        max_rss_kb: Some(14_336),
        output_bytes: Some(2048),
        output_truncated: Some(false),
        notes: Vec::new(),
        usage: None,
    };
    if !ledger::finish(conn, &id, &worker, &finished, now).map_err(err)? {
        return Err("finish lost its compare-and-set".into());
    }
    Ok(())
}

async fn throughput(setup: &Setup, f: &mut LedgerFigures) -> Result<(), String> {
    let full_home = Home::at(&setup.fresh_dir("ledger-full")?);
    let normal_home = Home::at(&setup.fresh_dir("ledger-normal")?);
    let full = open_db(&full_home)?;
    let normal = open_db(&normal_home)?;
    normal
        .conn()
        .sqlite()
        .ok_or("the ledger benchmark runs on SQLite")?
        .pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| e.to_string())?;
    let (job, spec) = (JobId::generate(), spec());
    let batches = setup.reps(20, 4);
    let per_batch = 100;
    let mut slot = 0i64;
    for b in 0..batches + 1 {
        for (k, (db, home)) in [(&full, &full_home), (&normal, &normal_home)]
            .into_iter()
            .enumerate()
        {
            let t0 = mono_ns();
            for _ in 0..per_batch {
                slot += 1000;
                write_one(db, home, &job, &spec, slot)?;
            }
            let secs = mono_ns().saturating_sub(t0) as f64 / 1e9;
            if b > 0 {
                let rate = per_batch as f64 / secs;
                if k == 0 { &mut f.full } else { &mut f.normal }.push(rate);
            }
        }
        tokio::task::yield_now().await;
    }
    Ok(())
}

fn size(setup: &Setup, f: &mut LedgerFigures) -> Result<(), String> {
    let home = Home::at(&setup.fresh_dir("ledger-size")?);
    let db = open_db(&home)?;
    let (job, spec) = (JobId::generate(), spec());
    let rows = if setup.opts.quick { 20_000 } else { 100_000 };
    let chunk = 10_000;
    let mut slot = 0i64;
    for _ in 0..rows / chunk {
        db.conn()
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| e.to_string())?;
        for _ in 0..chunk {
            slot += 1000;
            write_one(&db, &home, &job, &spec, slot)?;
        }
        db.conn()
            .execute_batch("COMMIT")
            .map_err(|e| e.to_string())?;
    }
    db.conn()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .map_err(|e| e.to_string())?;
    let bytes = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let db_file = home.db_file();
    let wal = db_file.with_extension("db-wal");
    let scale = 100_000.0 / rows as f64;
    f.db_bytes = (bytes(&db_file) + bytes(&wal)) as f64 * scale;
    let all = ledger::list_executions(
        db.conn(),
        &RunFilter {
            limit: rows,
            ..RunFilter::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let json: usize = all
        .iter()
        .map(|e| serde_json::to_string(e).map(|s| s.len() + 1).unwrap_or(0))
        .sum();
    f.jsonl_bytes = json as f64 * scale;
    f.rows = rows;
    Ok(())
}

pub(super) async fn measure(setup: &Setup) -> Result<LedgerFigures, String> {
    let mut f = LedgerFigures::default();
    eprintln!("bench: ledger throughput");
    throughput(setup, &mut f).await?;
    eprintln!("bench: ledger size");
    size(setup, &mut f)?;
    tokio::time::sleep(Duration::from_millis(1)).await;
    Ok(f)
}

pub(super) fn rows(f: &LedgerFigures) -> Vec<Row> {
    vec![
        Row {
            id: "7a",
            measure: format!(
                "ledger: terminal rows per second, one writer, 3 commits per row (claim, running, terminal), synchronous=FULL (batches={} × 100)",
                f.full.len()
            ),
            ours: format!(
                "median {} rows/s (worst batch {})",
                num(f.full.median()),
                num(f.full.min())
            ),
            peer: format!(
                "the same writes with synchronous=NORMAL: median {} rows/s",
                num(f.normal.median())
            ),
            ratio: ratio(f.full.median(), f.normal.median()),
            target: "- (report)".into(),
            met: Met::Info,
        },
        Row {
            id: "7b",
            measure: format!(
                "ledger: database size per 100,000 terminal rows (measured on {})",
                f.rows
            ),
            ours: mib(f.db_bytes),
            peer: format!("the same rows as JSON lines: {}", mib(f.jsonl_bytes)),
            ratio: ratio(f.db_bytes, f.jsonl_bytes),
            target: "- (report)".into(),
            met: Met::Info,
        },
    ]
}
