//! Rows 1 and 2: what one dispatch costs, claim to worker running.
//!
//! Four launchers run round-robin in one loop (rotating which goes first), so
//! a burst of load on the shared machine hits all of them alike:
//! - ours, scoped: `Launcher::dispatch` (held spawn, `StartTransientUnit`,
//!   its `JobRemoved`, the go line) with this binary as the worker;
//! - ours, degraded: the same `Launcher::dispatch` finding no bus (held
//!   spawn with `setsid`, the go line);
//! - `systemd-run --user --scope --quiet --collect <this binary> probe`;
//! - a plain fork+exec of `<this binary> probe` (`std::process::Command`).
//!
//! Each sample runs from just before the dispatch starts to the instant the
//! worker reports itself running (see [`crate::probe`] for the definition).
//! Reaping the worker and dropping our reference on its scope happen after
//! the sample and are not timed.

use super::common::{open_db, stub_run, wall_now};
use crate::probe::mono_ns;
use crate::ready::Ready;
use crate::setup::Setup;
use crate::stats::{Samples, p50_p99_ms, ratio};
use crate::table::{Met, Row};
use hermes_cron::db::Db;
use hermes_cron::dispatch::{Attach, Dispatched, Launcher, Requirement};
use hermes_cron::ledger::DispatchMode;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const REPORT_TIMEOUT: Duration = Duration::from_secs(10);
const WARMUP: usize = 10;

/// The samples of the four launchers, in milliseconds.
#[derive(Default)]
pub(super) struct LaunchSamples {
    pub scoped: Samples,
    pub degraded: Samples,
    pub systemd_run: Samples,
    pub plain: Samples,
}

/// Dispatch one stub run through `launcher`; milliseconds to running.
pub(super) async fn ours(
    launcher: &Launcher,
    db: &Db,
    ready: &Ready,
    expect: DispatchMode,
) -> Result<f64, String> {
    let run = stub_run();
    ready.drain();
    let t0 = mono_ns();
    let dispatched = launcher
        .dispatch(db, &run, Requirement::None, Attach::Detached, wall_now())
        .await
        .map_err(|e| format!("dispatch failed: {e}"))?;
    let Dispatched::Started {
        mode,
        unit,
        mut child,
        ..
    } = dispatched
    else {
        return Err(format!("not started: {dispatched:?}"));
    };
    let report = ready.wait_for(Some(child.id()), REPORT_TIMEOUT).await;
    let _ = child.wait();
    if let (Some(unit), Some(m)) = (&unit, launcher.manager()) {
        let _ = m.release_unit(unit).await;
    }
    if mode != expect {
        return Err(format!("dispatched {mode}, expected {expect}"));
    }
    Ok((report?.at_ns.saturating_sub(t0)) as f64 / 1e6)
}

/// `systemd-run --user --scope --quiet --collect PROGRAM ARGS...`.
pub(super) fn systemd_run_scope(program: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("systemd-run");
    cmd.args(["--user", "--scope", "--quiet", "--collect"])
        .arg(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Start `cmd`, wait for the report of the process it started (the same
/// pid: `systemd-run --scope` execs the command), reap it.
pub(super) async fn spawned(mut cmd: Command, ready: &Ready) -> Result<f64, String> {
    ready.drain();
    let t0 = mono_ns();
    let mut child: Child = cmd
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawn {:?}: {e}", cmd.get_program()))?;
    let report = ready.wait_for(Some(child.id()), REPORT_TIMEOUT).await;
    let status = child.wait().map_err(|e| e.to_string())?;
    let report = report.map_err(|e| format!("{e} ({:?} exited {status})", cmd.get_program()))?;
    if !status.success() {
        return Err(format!("{:?} exited {status}", cmd.get_program()));
    }
    Ok((report.at_ns.saturating_sub(t0)) as f64 / 1e6)
}

/// Measure the four launchers, interleaved.
pub(super) async fn measure(setup: &Setup, ready: &Ready) -> Result<LaunchSamples, String> {
    let db = open_db(&setup.dispatch_home)?;
    let reps = setup.reps(300, 40);
    let l = &setup.launchers;
    let mut s = LaunchSamples::default();
    for i in 0..WARMUP + reps {
        if i % 50 == 0 {
            eprintln!("bench: dispatch {i}/{}", WARMUP + reps);
        }
        for k in 0..4 {
            let which = (i + k) % 4;
            let ms = match which {
                0 => ours(&l.probe_scoped, &db, ready, DispatchMode::Scoped).await?,
                1 => ours(&l.probe_degraded, &db, ready, DispatchMode::Degraded).await?,
                2 => {
                    let cmd = systemd_run_scope(&setup.bench_exe, &["probe"]);
                    spawned(cmd, ready).await?
                }
                _ => {
                    let mut cmd = Command::new(&setup.bench_exe);
                    cmd.arg("probe").stdout(Stdio::null()).stderr(Stdio::null());
                    spawned(cmd, ready).await?
                }
            };
            if i >= WARMUP {
                match which {
                    0 => s.scoped.push(ms),
                    1 => s.degraded.push(ms),
                    2 => s.systemd_run.push(ms),
                    _ => s.plain.push(ms),
                }
            }
        }
    }
    Ok(s)
}

const SCOPED: &str = "scoped dispatch cost: claimed run → worker running (held spawn + StartTransientUnit + JobRemoved + go line)";

/// Row 1a: scoped vs `systemd-run --scope`.
pub(super) fn row_1a(s: &LaunchSamples) -> Row {
    let (ours, peer) = (s.scoped.median(), s.systemd_run.median());
    let cheaper = peer / ours;
    Row {
        id: "1a",
        measure: SCOPED.into(),
        ours: p50_p99_ms(&s.scoped),
        peer: format!(
            "`systemd-run --user --scope --quiet --collect`: {}",
            p50_p99_ms(&s.systemd_run)
        ),
        ratio: format!("{} ({:.1}x cheaper)", ratio(ours, peer), cheaper),
        target: "p50 ≤ 2 ms and ≥ 3.5x cheaper than systemd-run".into(),
        met: Met::of(ours <= 2.0 && cheaper >= 3.5),
    }
}

/// Row 1b: scoped vs the floor.
pub(super) fn row_1b(s: &LaunchSamples) -> Row {
    Row {
        id: "1b",
        measure: "scoped dispatch cost vs the floor".into(),
        ours: p50_p99_ms(&s.scoped),
        peer: format!("plain fork+exec: {}", p50_p99_ms(&s.plain)),
        ratio: ratio(s.scoped.median(), s.plain.median()),
        target: "- (the floor)".into(),
        met: Met::Info,
    }
}

/// Row 2: degraded vs the floor.
pub(super) fn row_2(s: &LaunchSamples) -> Row {
    let r = s.degraded.median() / s.plain.median();
    Row {
        id: "2",
        measure:
            "degraded dispatch cost: claimed run → worker running (held spawn + setsid + go line)"
                .into(),
        ours: p50_p99_ms(&s.degraded),
        peer: format!("plain fork+exec: {}", p50_p99_ms(&s.plain)),
        ratio: ratio(s.degraded.median(), s.plain.median()),
        target: "p50 ≤ 1.5x fork+exec".into(),
        met: Met::of(r <= 1.5),
    }
}
