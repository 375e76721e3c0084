//! Row 1c: the same comparison end to end, with the real worker and the real
//! ledger. A manual occurrence is claimed (not timed); the sample runs from
//! the start of its dispatch to the instant its **job** is running: the real
//! `hermes-cron-worker` has read its go line, opened the ledger, adopted the
//! row (`claimed -> running`, one `synchronous=FULL` commit) and forked the
//! job, which reports (see [`crate::probe`], role `ready`).
//!
//! Peers launch the same worker for the same kind of row, a bare go (`g`)
//! already in its stdin pipe: `systemd-run --user --scope ... hermes-cron-worker`
//! and a plain fork+exec of `hermes-cron-worker`. The worker's own work is the
//! same in all three; only the launch differs.

use super::common::{claim_now, job, open_db, wall_now};
use super::dispatch::systemd_run_scope;
use crate::probe::mono_ns;
use crate::ready::Ready;
use crate::setup::Setup;
use crate::stats::{Samples, p50_p99_ms, ratio};
use crate::table::{Met, Row};
use hermes_cron::db::Db;
use hermes_cron::dispatch::{Attach, Dispatched, Requirement};
use hermes_cron::job::Job;
use hermes_cron::ledger::ClaimedRun;
use hermes_cron::ledger::{self, ExecState};
use hermes_cron::store;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(15);

/// Samples, in milliseconds.
#[derive(Default)]
pub(super) struct EndToEnd {
    pub scoped: Samples,
    pub systemd_run: Samples,
    pub plain: Samples,
}

fn claim(setup: &Setup, db: &mut Db, job: &Job) -> Result<ClaimedRun, String> {
    claim_now(&setup.dispatch_home, db, job, &setup.zones)
}

fn check_succeeded(db: &Db, run: &ClaimedRun) -> Result<(), String> {
    let row = ledger::get_execution(db.conn(), &run.id)
        .map_err(|e| e.to_string())?
        .ok_or("row vanished")?
        .0;
    if row.state == ExecState::Succeeded {
        Ok(())
    } else {
        Err(format!(
            "end-to-end run ended {} ({})",
            row.state,
            row.reason.unwrap_or_default()
        ))
    }
}

/// The real worker for `run`, launched by `launcher_prefix` or directly.
fn worker_cmd(setup: &Setup, run: &ClaimedRun, scoped_peer: bool) -> Result<Command, String> {
    let args = [
        "--home",
        setup
            .dispatch_home
            .root()
            .to_str()
            .ok_or("non-UTF-8 work dir")?,
        "--execution",
        run.id.as_str(),
        "--mode",
        if scoped_peer { "scoped" } else { "degraded" },
    ];
    let mut cmd = if scoped_peer {
        systemd_run_scope(&setup.worker_bin, &args)
    } else {
        let mut c = Command::new(&setup.worker_bin);
        c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
        c
    };
    let (reader, mut writer) = std::io::pipe().map_err(|e| e.to_string())?;
    writer.write_all(b"g").map_err(|e| e.to_string())?;
    drop(writer);
    cmd.stdin(Stdio::from(reader));
    Ok(cmd)
}

async fn one(
    setup: &Setup,
    db: &mut Db,
    job: &Job,
    ready: &Ready,
    which: usize,
) -> Result<f64, String> {
    let run = claim(setup, db, job)?;
    ready.drain();
    let ms = if which == 0 {
        let launcher = &setup.launchers.worker_scoped;
        let t0 = mono_ns();
        let d = launcher
            .dispatch(db, &run, Requirement::None, Attach::Detached, wall_now())
            .await
            .map_err(|e| e.to_string())?;
        let Dispatched::Started {
            unit, mut child, ..
        } = d
        else {
            return Err(format!("not started: {d:?}"));
        };
        let report = ready.wait_for(None, TIMEOUT).await;
        let _ = child.wait();
        if let (Some(unit), Some(m)) = (&unit, launcher.manager()) {
            let _ = m.release_unit(unit).await;
        }
        (report?.at_ns.saturating_sub(t0)) as f64 / 1e6
    } else {
        let mut cmd = worker_cmd(setup, &run, which == 1)?;
        let t0 = mono_ns();
        let mut child = cmd.spawn().map_err(|e| e.to_string())?;
        let report = ready.wait_for(None, TIMEOUT).await;
        let status = child.wait().map_err(|e| e.to_string())?;
        let report = report.map_err(|e| format!("{e}; launcher exited {status}"))?;
        (report.at_ns.saturating_sub(t0)) as f64 / 1e6
    };
    check_succeeded(db, &run)?;
    Ok(ms)
}

/// Measure the three launchers of the real worker, interleaved.
pub(super) async fn measure(setup: &Setup, ready: &Ready) -> Result<EndToEnd, String> {
    let mut db = open_db(&setup.dispatch_home)?;
    let exe = setup.bench_exe.to_str().ok_or("non-UTF-8 path")?;
    let mut job = job("e2e", "every 1d", &[exe, "ready"], &setup.zones)?;
    // The job's environment is defined (nothing of the worker's reaches it
    // unless named): the report socket is passed through by name.
    job.pass_env = vec![crate::probe::READY_ENV.to_string()];
    store::insert_job(db.conn(), &job).map_err(|e| e.to_string())?;
    let reps = setup.reps(150, 20);
    let warmup = 5;
    let mut s = EndToEnd::default();
    for i in 0..warmup + reps {
        if i % 50 == 0 {
            eprintln!("bench: end-to-end {i}/{}", warmup + reps);
        }
        for k in 0..3 {
            let which = (i + k) % 3;
            let ms = one(setup, &mut db, &job, ready, which).await?;
            if i >= warmup {
                match which {
                    0 => s.scoped.push(ms),
                    1 => s.systemd_run.push(ms),
                    _ => s.plain.push(ms),
                }
            }
        }
    }
    Ok(s)
}

/// Row 1c.
pub(super) fn row_1c(s: &EndToEnd) -> Row {
    Row {
        id: "1c",
        measure: "end to end with the real worker: claimed row → its job running (worker adopts the row with a synchronous=FULL commit, then forks the job)".into(),
        ours: p50_p99_ms(&s.scoped),
        peer: format!(
            "`systemd-run --user --scope` of the same worker: {}; plain fork+exec of it: {}",
            p50_p99_ms(&s.systemd_run),
            p50_p99_ms(&s.plain)
        ),
        ratio: format!(
            "{} of systemd-run; {} of fork+exec",
            ratio(s.scoped.median(), s.systemd_run.median()),
            ratio(s.scoped.median(), s.plain.median())
        ),
        target: "- (context for 1a)".into(),
        met: Met::Info,
    }
}
