//! `breakdown` (not part of `all`; printed to stderr): where one scoped
//! dispatch spends its time, with the library's pieces driven one by one,
//! and what each of issue 16's shaves is worth, measured in the same run.
//!
//! Four variants run round-robin, n each (see [`super::previous`] for the
//! rebuilt old pieces):
//!
//! | variant | held spawn | `JobRemoved` | unit name |
//! |---|---|---|---|
//! | now | `posix_spawn` (no hook; the worker detaches itself) | one subscription per connection | id without dashes |
//! | fork | `fork` (a `pre_exec` hook) | one per connection | without dashes |
//! | stream per start | `posix_spawn` | a stream opened and closed per start | without dashes |
//! | dashed name | `posix_spawn` | one per connection | id with dashes |
//!
//! Then the staged path with the real worker: a run staged (worker spawned,
//! scoped, its row held `staged`), released; how long staging takes, and
//! from the release byte to the job's command running (the worker forks it;
//! the job is this binary in its `ready` role). One bare D-Bus round trip
//! (`GetUnit`) is given for scale, and the CPU time the user manager and the
//! bus daemon spend per scope.

use super::common::{claim_now, job, open_db, stub_run};
use super::previous::{dashed_unit_name, fork_held, start_scope_own_stream};
use crate::probe::mono_ns;
use crate::ready::Ready;
use crate::setup::Setup;
use crate::stats::{Samples, ms};
use hermes_cron::dispatch::{Attach, HeldWorker, WorkerCall};
use hermes_cron::ledger::{self, DispatchMode, ExecState};
use hermes_cron::store;
use hermes_cron::systemd::{ScopeSpec, ZbusUnitManager, scope_unit_name};
use hermes_cron::worker::Go;
use std::io::Write;
use std::time::Duration;

const PARTS: [&str; 5] = [
    "spawn held",
    "start_scope",
    "go line write",
    "go → running",
    "total",
];

const VARIANTS: [&str; 4] = ["now", "fork", "stream per start", "dashed name"];

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The session bus daemon: the `dbus-daemon` child of the user manager
/// `manager`. (Asking the bus who owns `org.freedesktop.DBus` answers with
/// the manager's pid when it made the bus socket, socket activation.)
fn bus_daemon_pid(manager: Option<u32>) -> Option<u32> {
    let manager = manager?;
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
        let parent: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        (name == "dbus-daemon" && parent == manager).then_some(pid)
    })
}

/// The clients one variant needs.
struct Clients {
    manager: ZbusUnitManager,
    own: zbus::Connection,
}

/// A held worker, started one way or the other.
enum Held {
    Spawned(HeldWorker),
    Forked(std::process::Child, std::fs::File),
}

impl Held {
    fn pid(&self) -> u32 {
        match self {
            Held::Spawned(h) => h.pid(),
            Held::Forked(c, _) => c.id(),
        }
    }

    fn release(self, go: &Go) -> Result<std::process::Child, String> {
        match self {
            Held::Spawned(h) => h.release(go).map_err(|e| e.to_string()),
            Held::Forked(child, mut gate) => {
                gate.write_all(go.line().as_bytes())
                    .map_err(|e| e.to_string())?;
                Ok(child)
            }
        }
    }
}

/// One dispatch in `variant`; the parts in milliseconds.
async fn one(
    setup: &Setup,
    ready: &Ready,
    c: &Clients,
    variant: usize,
) -> Result<[f64; 5], String> {
    let run = stub_run();
    let unit = if variant == 3 {
        dashed_unit_name(&run.job_name, run.id.as_str())
    } else {
        scope_unit_name(&run.job_name, run.id.as_str())
    };
    let home = setup.dispatch_home.root();
    ready.drain();
    let t0 = mono_ns();
    let held = if variant == 1 {
        let (child, gate) =
            fork_held(&setup.bench_exe, home, run.id.as_str()).map_err(|e| e.to_string())?;
        Held::Forked(child, gate)
    } else {
        let start = hermes_cron::process::start_attrs::of_this_process();
        let call = WorkerCall {
            home,
            execution: run.id.as_str(),
            start: &start,
        };
        Held::Spawned(
            HeldWorker::spawn(&setup.bench_exe, &call, Attach::Detached)
                .map_err(|e| e.to_string())?,
        )
    };
    let t_spawned = mono_ns();
    let spec = spec_for(&unit, &run, held.pid());
    if variant == 2 {
        start_scope_own_stream(&c.own, &spec).await?;
    } else {
        c.manager
            .start_scope(&spec)
            .await
            .map_err(|e| e.to_string())?;
    }
    let t_scoped = mono_ns();
    let go = Go {
        mode: DispatchMode::Scoped,
        unit: Some(unit.clone()),
        cause: None,
    };
    let mut child = held.release(&go)?;
    let t_go = mono_ns();
    let r = ready
        .wait_for(Some(child.id()), Duration::from_secs(10))
        .await?;
    let _ = child.wait();
    let _ = c.manager.release_unit(&unit).await;
    Ok(parts([t0, t_spawned, t_scoped, t_go], r.at_ns))
}

fn spec_for(unit: &str, run: &hermes_cron::ledger::ClaimedRun, pid: u32) -> ScopeSpec {
    ScopeSpec {
        name: unit.to_string(),
        description: format!("hermes-cron job bench ({})", run.id),
        pids: vec![pid],
        runtime_max: Some(Duration::from_secs(3640)),
        ..ScopeSpec::default()
    }
}

fn parts(t: [u64; 4], running: u64) -> [f64; 5] {
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e6;
    [
        d(t[0], t[1]),
        d(t[1], t[2]),
        d(t[2], t[3]),
        d(t[3], running),
        d(t[0], running),
    ]
}

/// The staged path with the real worker: (stage line → row staged, release
/// byte → the job's command running), in milliseconds.
async fn staged_once(
    setup: &Setup,
    ready: &Ready,
    db: &mut hermes_cron::db::Db,
    job: &hermes_cron::job::Job,
) -> Result<(f64, f64), String> {
    let run = claim_now(&setup.dispatch_home, db, job, &setup.zones)?;
    let launcher = &setup.launchers.worker_scoped;
    ready.drain();
    let worker = super::common::stage(launcher, &run).await?;
    let t_line = mono_ns();
    let deadline = hermes_cron::clock::loop_now() + Duration::from_secs(10);
    loop {
        let state = ledger::get_execution(db.conn(), &run.id)
            .map_err(|e| e.to_string())?
            .map(|(r, _)| r.state);
        if state == Some(ExecState::Staged) {
            break;
        }
        if hermes_cron::clock::loop_now() > deadline {
            return Err(format!("not staged after 10 s: {state:?}"));
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let t_staged = mono_ns();
    let t_release = mono_ns();
    let (mut child, unit) = worker.release().await?;
    let r = ready.wait_for(None, Duration::from_secs(10)).await?;
    let _ = child.wait();
    if let (Some(unit), Some(m)) = (&unit, launcher.manager()) {
        let _ = m.release_unit(unit).await;
    }
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1e6;
    Ok((d(t_line, t_staged), d(t_release, r.at_ns)))
}

pub(super) async fn run(setup: &Setup, ready: &Ready) -> Result<(), String> {
    let manager = ZbusUnitManager::from_process_env();
    manager.probe().await.map_err(|e| e.to_string())?;
    let own = zbus::connection::Builder::address(setup.bus_address.as_str())
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let clients = Clients { manager, own };
    let reps = setup.reps(300, 40);
    let (systemd, bus) = (setup.manager.pid(), bus_daemon_pid(setup.manager.pid()));
    let ticks = |pid: Option<u32>| pid.and_then(cpu_ticks).unwrap_or(0);
    let mut s = vec![vec![Samples::new(); PARTS.len()]; VARIANTS.len()];
    let mut rtt = Samples::new();
    let warmup = 8;
    let mut before = (0, 0);
    for i in 0..warmup + reps {
        if i == warmup {
            before = (ticks(systemd), ticks(bus));
        }
        for k in 0..VARIANTS.len() {
            let v = (i + k) % VARIANTS.len();
            let p = one(setup, ready, &clients, v).await?;
            if i >= warmup {
                for (j, x) in p.into_iter().enumerate() {
                    s[v][j].push(x);
                }
            }
        }
        let g0 = mono_ns();
        clients.manager.probe().await.map_err(|e| e.to_string())?;
        if i >= warmup {
            rtt.push((mono_ns() - g0) as f64 / 1e6);
        }
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let scopes = (reps * VARIANTS.len()) as f64;
    let per_scope = |now: u64, then: u64| (now.saturating_sub(then)) as f64 / hz * 1000.0 / scopes;
    let cpu = (
        per_scope(ticks(systemd), before.0),
        per_scope(ticks(bus), before.1),
    );
    eprintln!("scoped dispatch breakdown (n={reps} per variant), p50 / p99:");
    eprint!("  {:<14}", "");
    for v in VARIANTS {
        eprint!(" {v:>21}");
    }
    eprintln!();
    for (j, name) in PARTS.iter().enumerate() {
        eprint!("  {name:<14}");
        for variant in &s {
            eprint!(
                " {:>9} / {:>9}",
                ms(variant[j].median()),
                ms(variant[j].p99())
            );
        }
        eprintln!();
    }
    eprintln!(
        "  GetUnit round trip, for scale: {} / {}",
        ms(rtt.median()),
        ms(rtt.p99())
    );
    eprintln!(
        "  CPU per scope: systemd --user {}, dbus-daemon {} (start, release, collection)",
        ms(cpu.0),
        ms(cpu.1)
    );
    let saved = |v: usize, part: usize| s[v][part].median() - s[0][part].median();
    eprintln!(
        "  the shaves (p50, previous way minus now): posix_spawn {} of the held spawn; one JobRemoved subscription {} of start_scope; no dashes {} of start_scope",
        ms(saved(1, 0)),
        ms(saved(2, 1)),
        ms(saved(3, 1))
    );

    let mut db = open_db(&setup.dispatch_home)?;
    let exe = setup.bench_exe.to_str().ok_or("non-UTF-8 path")?;
    let mut job = job("staged-bd", "every 1d", &[exe, "ready"], &setup.zones)?;
    job.pass_env = vec![crate::probe::READY_ENV.to_string()];
    store::insert_job(db.conn(), &job).map_err(|e| e.to_string())?;
    let (mut staging, mut release) = (Samples::new(), Samples::new());
    let staged_reps = setup.reps(100, 20);
    for i in 0..staged_reps + 5 {
        let (a, b) = staged_once(setup, ready, &mut db, &job).await?;
        if i >= 5 {
            staging.push(a);
            release.push(b);
        }
    }
    eprintln!(
        "staged path, real worker (n={staged_reps}), p50 / p99: stage line → row staged (worker exec, ledger open, staging commit) {} / {}; release byte → the job's command running (fork+exec of the job) {} / {}",
        ms(staging.median()),
        ms(staging.p99()),
        ms(release.median()),
        ms(release.p99())
    );
    Ok(())
}
