//! Row 3: fan-out. 1,000 jobs fall due in the same second under the real
//! gateway; the figure is the time from that second to the **last** job's
//! command starting (the top of its `main`, see [`super::stamps`]), so it
//! covers everything the gateway and the workers do before the commands run
//! that is not done ahead of the instant.
//!
//! Peers, in the same run: 1,000 `systemd-run --user --scope` (scoped) and
//! 1,000 plain fork+execs (degraded) of a worker stand-in, started as fast as
//! one thread can, timed from the first start to the last report (see
//! [`crate::probe`]). They have no claim and no ledger to write.

use super::common::{
    DUE_AHEAD, fresh_home, insert_jobs, job, make_all_due, sleep_until_wall, wall_ms,
    whole_second_after,
};
use super::dispatch::systemd_run_scope;
use super::gateway::Gateway;
use super::stamps::{stamp_argv, started_in};
use crate::probe::mono_ns;
use crate::ready::Ready;
use crate::setup::Setup;
use crate::stats::{Samples, num, ratio};
use crate::table::{Met, Row};
use std::process::{Command, Stdio};
use std::time::Duration;

const JOBS: usize = 1000;
const DAY_MS: i64 = 86_400_000;

/// Seconds from due to last running, per run.
#[derive(Default)]
pub(super) struct Fanout {
    pub scoped: Samples,
    pub degraded: Samples,
    pub systemd_run: Samples,
    pub plain: Samples,
    /// Median start lateness of all rows (scoped, degraded), per run.
    pub scoped_p50: Samples,
    pub degraded_p50: Samples,
}

/// One gateway run; (last started, median started) in seconds after due.
async fn ours(setup: &Setup, scoped: bool, run: usize) -> Result<(f64, f64), String> {
    let mode = if scoped { "scoped" } else { "degraded" };
    let dir = setup.fresh_dir(&format!("fanout-{mode}-{run}"))?;
    let (home, mut db) = fresh_home(&dir)?;
    let stamps = dir.join("stamps.txt");
    let argv = stamp_argv(&setup.stamp_exe, &stamps);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let template = job("fan", "every 1d", &argv, &setup.zones)?;
    let later = wall_ms() + 3_600_000;
    insert_jobs(&mut db, &template, JOBS, |_, j| {
        j.next_run_at = Some(hermes_cron::db::from_ms(later));
    })?;
    let mut gw = Gateway::start(setup, &home, scoped)?;
    gw.ready(scoped).await?;
    let due = whole_second_after(DUE_AHEAD);
    make_all_due(&home, due, DAY_MS)?;
    sleep_until_wall(due).await;

    let count = |sql: &str| -> Option<i64> {
        db.conn()
            .query_row(sql, hermes_cron::params![due], |r| r.get(0))
            .ok()
    };
    let deadline = hermes_cron::clock::loop_now() + Duration::from_secs(180);
    loop {
        let started = count("SELECT COUNT(started_at) FROM executions WHERE scheduled_for = ?1");
        let active = count(
            "SELECT COUNT(*) FROM executions WHERE scheduled_for = ?1 AND state NOT IN ('succeeded', 'failed', 'timed_out', 'cancelled', 'unknown', 'skipped', 'missed', 'refused')",
        );
        if started == Some(JOBS as i64) && active == Some(0) {
            break;
        }
        if hermes_cron::clock::loop_now() > deadline {
            return Err(format!(
                "{mode} fan-out: {started:?} of {JOBS} started, {active:?} active after 180 s; see {}",
                gw.log.display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rows: Vec<(i64, String, String)> = db
        .conn()
        .query_map(
            "SELECT started_at - scheduled_for, dispatch_mode, state FROM executions WHERE scheduled_for = ?1",
            hermes_cron::params![due],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| e.to_string())?;
    gw.stop().await?;
    if let Some((_, m, s)) = rows.iter().find(|(_, m, s)| m != mode || s != "succeeded") {
        return Err(format!("{mode} fan-out: a row ran {m} and ended {s}"));
    }
    let started = started_in(&db, &stamps, due, due + 1)?;
    let late: Vec<f64> = started.iter().filter_map(|r| r.late_ms).collect();
    if late.len() != JOBS {
        return Err(format!(
            "{mode} fan-out: {} of {JOBS} commands left a stamp",
            late.len()
        ));
    }
    let late = Samples::from_vec(late.into_iter().map(|ms| ms / 1000.0).collect());
    Ok((late.max(), late.median()))
}
/// At most this many `systemd-run` in flight, as the gateway's dispatch
/// concurrency: with 1,000 at once, systemd 252 and the bus broadcast every
/// job signal to every client and most calls time out.
const SYSTEMD_RUN_IN_FLIGHT: usize = 32;

/// 1,000 launches of the stand-in by one thread; seconds to the last report.
async fn peer(setup: &Setup, ready: &Ready, scoped: bool) -> Result<f64, String> {
    let limit = if scoped { SYSTEMD_RUN_IN_FLIGHT } else { JOBS };
    let timeout = Duration::from_secs(60);
    ready.drain();
    let t0 = mono_ns();
    let mut children = Vec::with_capacity(JOBS);
    let mut reports = Vec::with_capacity(JOBS);
    for _ in 0..JOBS {
        while children.len() - reports.len() >= limit {
            let r = ready
                .next(timeout)
                .await
                .ok_or("peer fan-out: no report for 60 s")?;
            reports.push(r);
        }
        let mut cmd = if scoped {
            systemd_run_scope(&setup.bench_exe, &["probe"])
        } else {
            let mut c = Command::new(&setup.bench_exe);
            c.arg("probe").stdout(Stdio::null()).stderr(Stdio::null());
            c
        };
        children.push(
            cmd.stdin(Stdio::null())
                .spawn()
                .map_err(|e| format!("spawn: {e}"))?,
        );
    }
    reports.extend(ready.collect(JOBS - reports.len(), timeout).await);
    let mut failed = 0;
    for mut c in children {
        if !c.wait().is_ok_and(|s| s.success()) {
            failed += 1;
        }
    }
    if reports.len() < JOBS || failed > 0 {
        return Err(format!(
            "peer fan-out: {} of {JOBS} reported, {failed} failed",
            reports.len()
        ));
    }
    let last = reports.iter().map(|r| r.at_ns).max().unwrap_or(t0);
    Ok(last.saturating_sub(t0) as f64 / 1e9)
}

/// Alternate our runs and the peers' runs.
pub(super) async fn measure(setup: &Setup, ready: &Ready) -> Result<Fanout, String> {
    let runs = setup.reps(5, 2);
    let mut f = Fanout::default();
    for run in 0..runs {
        eprintln!("bench: fan-out run {}/{runs}", run + 1);
        let (last, p50) = ours(setup, true, run).await?;
        f.scoped.push(last);
        f.scoped_p50.push(p50);
        f.systemd_run.push(peer(setup, ready, true).await?);
        let (last, p50) = ours(setup, false, run).await?;
        f.degraded.push(last);
        f.degraded_p50.push(p50);
        f.plain.push(peer(setup, ready, false).await?);
    }
    Ok(f)
}

fn secs(s: &Samples) -> String {
    format!(
        "median {} s, worst {} s (runs={})",
        num(s.median()),
        num(s.max()),
        s.len()
    )
}

/// Row 3a.
pub(super) fn row_3a(f: &Fanout) -> Row {
    Row {
        id: "3a",
        measure:
            "fan-out, scoped: 1,000 jobs due in the same second → the last job's command started"
                .into(),
        ours: format!(
            "{}; median job {} s",
            secs(&f.scoped),
            num(f.scoped_p50.median())
        ),
        peer: format!(
            "1,000 × `systemd-run --scope` from one thread, {SYSTEMD_RUN_IN_FLIGHT} in flight: {}",
            secs(&f.systemd_run)
        ),
        ratio: ratio(f.scoped.median(), f.systemd_run.median()),
        target: "all started within 1.5 s (median of runs)".into(),
        met: Met::of(f.scoped.median() <= 1.5),
    }
}

/// Row 3b.
pub(super) fn row_3b(f: &Fanout) -> Row {
    Row {
        id: "3b",
        measure: "fan-out, degraded: the same 1,000 jobs, no bus".into(),
        ours: format!(
            "{}; median job {} s",
            secs(&f.degraded),
            num(f.degraded_p50.median())
        ),
        peer: format!("1,000 plain fork+execs from one thread: {}", secs(&f.plain)),
        ratio: ratio(f.degraded.median(), f.plain.median()),
        target: "all started within 1.5 s (median of runs)".into(),
        met: Met::of(f.degraded.median() <= 1.5),
    }
}
