//! Rows 8a-8c: the PostgreSQL ledger (several hosts). A PostgreSQL server of
//! the benchmark's own (`tests/support/pg-server.sh`, durable: fsync and
//! synchronous commits on, as SQLite's `synchronous=FULL` here), on a Unix
//! socket of this machine.
//!
//! - 8a/8b: the claim pass of row 5 (10 of the jobs due) on PostgreSQL next to
//!   the same pass on SQLite (`synchronous=FULL`), at 1k and 100k jobs,
//!   round-robin;
//! - 8c: 1,000 jobs due in the same second on one PostgreSQL ledger, three
//!   gateways (three hosts) against one: due second → last row `running`,
//!   degraded, alternating.

use super::claim::{Ledger, fill, round_robin};
use super::common::{insert_jobs, job, open_db, sleep_until_wall, wall_ms, whole_second_after};
use super::gateway::Gateway;
use crate::setup::Setup;
use crate::stats::{Samples, ms, ratio};
use crate::table::{Met, Row};
use hermes_cron::db::{Conn, Db, from_ms};
use hermes_cron::home::Home;
use std::process::Command;
use std::time::Duration;

const SIZES: [usize; 2] = [1_000, 100_000];
const FANOUT_JOBS: usize = 1_000;

/// The benchmark's PostgreSQL server; stopped when dropped.
struct Server {
    dir: String,
    base: String,
}

fn script() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../support/pg-server.sh").to_string()
}

impl Server {
    fn start() -> Result<Server, String> {
        let out = Command::new(script())
            .args(["start", "", "durable"])
            .output()
            .map_err(|e| format!("pg-server.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "pg-server.sh start: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let get = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim_matches('\'').to_string())
                .ok_or_else(|| format!("pg-server.sh printed no {key}"))
        };
        Ok(Server {
            dir: get("export PG_TEST_DIR=")?,
            base: get("export HERMES_CRON_TEST_PG=")?,
        })
    }

    /// A fresh schema's connection string.
    fn schema(&self, name: &str) -> Result<String, String> {
        let admin = Conn::postgres(&self.base).map_err(|e| e.to_string())?;
        admin
            .execute_batch(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
            ))
            .map_err(|e| e.to_string())?;
        Ok(format!("{} options='-c search_path={name}'", self.base))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(script()).args(["stop", &self.dir]).output();
    }
}

pub(super) struct ClusterFigures {
    /// Per size: PostgreSQL, SQLite.
    pg: Vec<Samples>,
    sqlite: Vec<Samples>,
    /// Seconds from the due second to the last row running.
    three: Samples,
    one: Samples,
    spread: String,
}

fn pg_ledger(setup: &Setup, server: &Server, n: usize, base_ms: i64) -> Result<Ledger, String> {
    let url = server.schema(&format!("claim_{n}"))?;
    let mut db = Db::open_postgres(&url, true).map_err(|e| e.to_string())?;
    fill(&mut db, n, base_ms, &setup.zones)?;
    db.conn()
        .execute_batch("ANALYZE")
        .map_err(|e| e.to_string())?;
    Ok(Ledger {
        home: Home::at(&setup.fresh_dir(&format!("claim-pg-{n}"))?),
        db,
    })
}

async fn claim_passes(
    setup: &Setup,
    server: &Server,
    f: &mut ClusterFigures,
) -> Result<(), String> {
    let base_ms = wall_ms() / 1000 * 1000;
    let mut ledgers = Vec::new();
    for n in SIZES {
        eprintln!("bench: cluster, building a PostgreSQL and an SQLite ledger with {n} jobs");
        ledgers.push(pg_ledger(setup, server, n, base_ms)?);
        let home = Home::at(&setup.fresh_dir(&format!("claim-sqlite-{n}"))?);
        let mut db = open_db(&home)?;
        fill(&mut db, n, base_ms, &setup.zones)?;
        ledgers.push(Ledger { home, db });
    }
    (f.pg, f.sqlite) =
        round_robin(&mut ledgers, base_ms, setup.reps(300, 40), &setup.zones).await?;
    Ok(())
}

/// One fan-out: `hosts` gateways on a fresh schema, 1,000 jobs due in the
/// same second; seconds from it to the last row running.
async fn fanout_once(
    setup: &Setup,
    server: &Server,
    hosts: usize,
    run: usize,
    spread: &mut String,
) -> Result<f64, String> {
    let url = server.schema(&format!("fanout_{hosts}_{run}"))?;
    let mut db = Db::open_postgres(&url, true).map_err(|e| e.to_string())?;
    let due = whole_second_after(Duration::from_secs(20));
    let template = job("fan", "every 1d", &["/bin/true"], &setup.zones)?;
    insert_jobs(&mut db, &template, FANOUT_JOBS, |_, j| {
        j.anchor = from_ms(due - 86_400_000);
        j.next_run_at = Some(from_ms(due));
    })?;
    let mut gws = Vec::new();
    for h in 0..hosts {
        let home = Home::at(&setup.fresh_dir(&format!("fanout-{hosts}-{run}-{h}"))?);
        let name = format!("bench-host-{h}");
        let gw = Gateway::start_with(
            setup,
            &home,
            false,
            &[
                ("HERMES_CRON_DATABASE", url.as_str()),
                ("HERMES_CRON_HOST", name.as_str()),
            ],
        )?;
        gws.push(gw);
    }
    for g in &mut gws {
        g.ready(false).await?;
    }
    sleep_until_wall(due).await;
    let count = |sql: &str| -> Option<i64> {
        db.conn()
            .query_row(sql, hermes_cron::params![due], |r| r.get(0))
            .ok()
    };
    let deadline = hermes_cron::clock::loop_now() + Duration::from_secs(240);
    loop {
        let started = count("SELECT COUNT(started_at) FROM executions WHERE scheduled_for = ?1");
        if started == Some(FANOUT_JOBS as i64) {
            break;
        }
        if hermes_cron::clock::loop_now() > deadline {
            return Err(format!(
                "{hosts}-gateway fan-out: {started:?} of {FANOUT_JOBS} started after 240 s"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last: i64 = db
        .conn()
        .query_row(
            "SELECT MAX(started_at) FROM executions WHERE scheduled_for = ?1",
            hermes_cron::params![due],
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())?;
    if hosts > 1 {
        let by: Vec<(String, i64)> = db
            .conn()
            .query_map(
                "SELECT host, COUNT(*) FROM executions WHERE scheduled_for = ?1 GROUP BY host ORDER BY host",
                hermes_cron::params![due],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| e.to_string())?;
        *spread = by
            .iter()
            .map(|(h, n)| format!("{h}={n}"))
            .collect::<Vec<_>>()
            .join(" ");
    }
    for g in gws {
        g.stop().await?;
    }
    // The workers finish before the next run starts.
    let deadline = hermes_cron::clock::loop_now() + Duration::from_secs(60);
    while count("SELECT COUNT(*) FROM executions WHERE scheduled_for = ?1 AND finished_at IS NULL")
        .is_none_or(|active| active > 0)
    {
        if hermes_cron::clock::loop_now() > deadline {
            return Err(format!(
                "{hosts}-gateway fan-out: runs still active after 60 s"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok((last - due) as f64 / 1000.0)
}

pub(super) async fn measure(setup: &Setup) -> Result<ClusterFigures, String> {
    let server = Server::start()?;
    let mut f = ClusterFigures {
        pg: vec![Samples::new(); SIZES.len()],
        sqlite: vec![Samples::new(); SIZES.len()],
        three: Samples::new(),
        one: Samples::new(),
        spread: String::new(),
    };
    claim_passes(setup, &server, &mut f).await?;
    let runs = setup.reps(5, 2);
    let mut spread = String::new();
    for run in 0..runs {
        // Alternate which goes first.
        let order = if run % 2 == 0 { [3, 1] } else { [1, 3] };
        for hosts in order {
            eprintln!(
                "bench: cluster, fan-out on {hosts} gateway(s), run {}",
                run + 1
            );
            let secs = fanout_once(setup, &server, hosts, run, &mut spread).await?;
            if hosts == 3 {
                f.three.push(secs);
            } else {
                f.one.push(secs);
            }
        }
    }
    f.spread = spread;
    Ok(f)
}

pub(super) fn rows(f: &ClusterFigures) -> Vec<Row> {
    let claim = |id, k: usize, size: &str| Row {
        id,
        measure: format!(
            "claim pass (`claim_due`, 10 due) at {size} jobs, PostgreSQL 15 (durable, Unix socket) (n={})",
            f.pg[k].len()
        ),
        ours: format!("p50 {} · p99 {}", ms(f.pg[k].median()), ms(f.pg[k].p99())),
        peer: format!(
            "the same pass on SQLite, synchronous=FULL: p50 {} · p99 {}",
            ms(f.sqlite[k].median()),
            ms(f.sqlite[k].p99())
        ),
        ratio: ratio(f.pg[k].median(), f.sqlite[k].median()),
        target: "- (report)".into(),
        met: Met::Info,
    };
    vec![
        claim("8a", 0, "1k"),
        claim("8b", 1, "100k"),
        Row {
            id: "8c",
            measure: format!(
                "1,000 jobs due in the same second on one PostgreSQL ledger → last row `running` (degraded; runs={})",
                f.three.len()
            ),
            ours: format!(
                "three gateways (three hosts): median {:.2} s, worst {:.2} s; last spread {}",
                f.three.median(),
                f.three.max(),
                f.spread
            ),
            peer: format!(
                "one gateway: median {:.2} s, worst {:.2} s",
                f.one.median(),
                f.one.max()
            ),
            ratio: ratio(f.three.median(), f.one.median()),
            target: "- (report: every host here shares the same 2 cores)".into(),
            met: Met::Info,
        },
    ]
}
