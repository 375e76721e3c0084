//! `breakdown` (not part of `all`; printed to stderr): where one scoped
//! dispatch spends its time, with the library's pieces driven one by one:
//! the held spawn, the scope start (subscribe to `JobRemoved`,
//! `StartTransientUnit`, wait for the job), the go line, and the worker waking
//! up; one bare D-Bus round trip (`GetUnit`) for scale; and the CPU time the
//! user manager and the bus daemon spend per scope.
//!
//! Odd iterations use the unit name `scope_unit_name` gives; even ones the
//! same name with the execution id's dashes removed. systemd looks for
//! drop-in directories for every dash-separated prefix of a unit name, in
//! every unit search path, so the number of dashes is part of the cost.

use super::common::stub_run;
use crate::probe::mono_ns;
use crate::ready::Ready;
use crate::setup::Setup;
use crate::stats::{Samples, ms};
use hermes_cron::dispatch::{Attach, HeldWorker, WorkerCall};
use hermes_cron::ledger::DispatchMode;
use hermes_cron::systemd::{ScopeSpec, ZbusUnitManager, scope_unit_name};
use hermes_cron::worker::Go;
use std::time::Duration;

const PARTS: [&str; 6] = [
    "spawn held",
    "start_scope",
    "go line write",
    "go → running",
    "total",
    "GetUnit round trip",
];

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn bus_daemon_pid() -> Option<u32> {
    let out = std::process::Command::new("busctl")
        .args(["--user", "status", "org.freedesktop.DBus"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("PID="))
        .and_then(|p| p.trim().parse().ok())
}

async fn one(
    setup: &Setup,
    ready: &Ready,
    manager: &ZbusUnitManager,
    dashes: bool,
) -> Result<[f64; 6], String> {
    let run = stub_run();
    let unit = if dashes {
        scope_unit_name(&run.job_name, run.id.as_str())
    } else {
        scope_unit_name(&run.job_name, &run.id.as_str().replace('-', ""))
    };
    ready.drain();
    let t0 = mono_ns();
    let held = HeldWorker::spawn(
        &setup.bench_exe,
        &WorkerCall {
            home: setup.dispatch_home.root(),
            execution: run.id.as_str(),
        },
        Attach::Detached,
    )
    .map_err(|e| e.to_string())?;
    let t1 = mono_ns();
    let spec = ScopeSpec {
        name: unit.clone(),
        description: format!("hermes-cron job bench ({})", run.id),
        pids: vec![held.pid()],
        runtime_max: Some(Duration::from_secs(3640)),
        ..ScopeSpec::default()
    };
    manager
        .start_scope(&spec)
        .await
        .map_err(|e| e.to_string())?;
    let t2 = mono_ns();
    let go = Go {
        mode: DispatchMode::Scoped,
        unit: Some(unit.clone()),
        cause: None,
    };
    let mut child = held.release(&go).map_err(|e| e.to_string())?;
    let t3 = mono_ns();
    let r = ready
        .wait_for(Some(child.id()), Duration::from_secs(10))
        .await?;
    let _ = child.wait();
    let _ = manager.release_unit(&unit).await;
    let g0 = mono_ns();
    manager.probe().await.map_err(|e| e.to_string())?;
    let g1 = mono_ns();
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e6;
    Ok([
        d(t0, t1),
        d(t1, t2),
        d(t2, t3),
        d(t3, r.at_ns),
        d(t0, r.at_ns),
        d(g0, g1),
    ])
}

pub async fn run(setup: &Setup, ready: &Ready) -> Result<(), String> {
    let manager = ZbusUnitManager::from_process_env();
    manager.probe().await.map_err(|e| e.to_string())?;
    let reps = setup.reps(300, 40);
    let (systemd, bus) = (setup.manager.pid(), bus_daemon_pid());
    let ticks = |pid: Option<u32>| pid.and_then(cpu_ticks).unwrap_or(0);
    let mut s = vec![vec![Samples::new(); PARTS.len()]; 2];
    let warmup = 10;
    let mut before = (0, 0);
    for i in 0..warmup + reps * 2 {
        if i == warmup {
            before = (ticks(systemd), ticks(bus));
        }
        let dashes = i % 2 == 1;
        let parts = one(setup, ready, &manager, dashes).await?;
        if i >= warmup {
            for (k, v) in parts.into_iter().enumerate() {
                s[usize::from(dashes)][k].push(v);
            }
        }
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let per_scope =
        |now: u64, then: u64| (now.saturating_sub(then)) as f64 / hz * 1000.0 / (reps * 2) as f64;
    eprintln!("scoped dispatch breakdown (n={reps} per unit name), p50 / p99:");
    eprintln!(
        "  {:<20} {:>22} {:>22}",
        "", "library unit name", "id without dashes"
    );
    for (k, name) in PARTS.iter().enumerate() {
        eprintln!(
            "  {name:<20} {:>10} / {:>9} {:>10} / {:>9}",
            ms(s[1][k].median()),
            ms(s[1][k].p99()),
            ms(s[0][k].median()),
            ms(s[0][k].p99())
        );
    }
    eprintln!(
        "  CPU per scope: systemd --user {}, dbus-daemon {} (start, release, collection)",
        ms(per_scope(ticks(systemd), before.0)),
        ms(per_scope(ticks(bus), before.1))
    );
    Ok(())
}
