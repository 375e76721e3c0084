//! Crash soak (issue 8, item 1, randomized): gateways started one after the
//! other on one home, each SIGKILLed (now and then SIGTERMed) at a random
//! instant, sometimes with a random crash point armed, while random workers
//! are SIGKILLed too; scoped and degraded gateways alternate at random, and
//! so do gateways that stage runs ahead of their instant (the default) and
//! gateways that do not. At the end a clean gateway runs, stops, and the
//! invariants of [`crate::support::invariants`] must hold.
//!
//! Seeded: the seed is printed; `HERMES_CRON_SOAK_SEED=<n>` replays it (the
//! kill instants, not the machine's timing). `HERMES_CRON_SOAK_SECS` sets
//! the length (default 15 s, the CI form). A long local run:
//! `HERMES_CRON_SOAK_SECS=600 cargo nextest run --workspace -E 'test(=crash_soak::soak_random_kills)' --no-capture`.

use crate::support::Bus;
use crate::support::scene::{JobDef, Scene};
use hermes_cron::clock::{Clock, SystemClock, monotonic};
use hermes_cron::crash::CRASH_ENV;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

const SEED_ENV: &str = "HERMES_CRON_SOAK_SEED";
const SECS_ENV: &str = "HERMES_CRON_SOAK_SECS";
const DEFAULT_SECS: u64 = 15;

/// Fast, slow, long-running (side effect first) and overlapping jobs.
const JOBS: &[JobDef] = &[
    JobDef {
        name: "fast",
        every_s: 1,
        command: "{append}",
        flags: &[],
    },
    JobDef {
        name: "slow",
        every_s: 1,
        command: "sleep 0.4; {append}",
        flags: &[],
    },
    JobDef {
        name: "long",
        every_s: 2,
        command: "{append}; sleep 1.5",
        flags: &[],
    },
    JobDef {
        name: "overlap",
        every_s: 1,
        command: "sleep 1.2; {append}",
        flags: &["--overlap", "allow"],
    },
];

/// Crash points a gateway may be started with (workers inherit them).
const POINTS: &[&str] = &[
    "claim_before_commit",
    "after_claim_commit",
    "after_worker_spawn",
    "after_scope_created",
    "after_go",
    "worker_before_adopt",
    "worker_after_adopt",
    "worker_before_finish",
    "worker_after_finish",
    "sweep_before_resolve",
    "after_stage_claim",
    "after_stage_line",
    "after_release",
    "worker_before_stage",
    "worker_after_stage",
    "worker_after_fork",
    "worker_after_start",
    "worker_before_withdraw",
];

/// SplitMix64: small, seedable, good enough to pick kill instants.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
    )
}

#[derive(Debug, Default)]
struct Figures {
    gateways: u64,
    gateway_sigkills: u64,
    gateway_sigterms: u64,
    hooks_fired: u64,
    worker_sigkills: u64,
    unstaged_gateways: u64,
}

#[test]
fn soak_random_kills() {
    let seed = env_u64(SEED_ENV).unwrap_or_else(|| {
        let now = SystemClock::real().now();
        (now.timestamp_nanos_opt().unwrap_or_default() as u64) ^ u64::from(std::process::id())
    });
    let secs = env_u64(SECS_ENV).unwrap_or(DEFAULT_SECS);
    eprintln!("crash soak: seed {seed} ({SEED_ENV}={seed} replays it), {secs} s");
    let mut rng = Rng(seed);
    let mut figures = Figures::default();

    // Scoped commands need the user manager: check once, then alternate.
    let scene = Scene::new(Bus::Real, JOBS);
    let home = &scene.home;
    let started = monotonic();
    while started.elapsed() < Duration::from_secs(secs) {
        let mut env: Vec<(&str, &str)> = Vec::new();
        let scoped = rng.chance(60);
        if !scoped {
            // Point the bus at nothing: this gateway runs degraded.
            env.push(("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus"));
            env.push(("XDG_RUNTIME_DIR", "/nonexistent"));
        }
        let point = rng
            .chance(25)
            .then(|| POINTS[rng.below(POINTS.len() as u64) as usize]);
        if let Some(p) = point {
            env.push((CRASH_ENV, p));
        }
        let life = Duration::from_millis(rng.below(2500));
        let worker_kill_at = rng
            .chance(35)
            .then(|| Duration::from_millis(rng.below(life.as_millis() as u64 + 1)));
        let pick = rng.next();
        let sigterm = rng.chance(15);
        // A third of the gateways claim at the instant only (staging off).
        let staging = if rng.chance(33) { "0" } else { "1000" };
        home.write_config(&format!("cron:\n  staging_max_workers: {staging}\n"));
        figures.unstaged_gateways += u64::from(staging == "0");

        let mut gw = home.gateway(&env);
        figures.gateways += 1;
        let born = monotonic();
        let mut worker_killed = false;
        let mut died = None;
        while born.elapsed() < life {
            if let Some(status) = gw.exited() {
                died = Some(status);
                break;
            }
            if !worker_killed && worker_kill_at.is_some_and(|at| born.elapsed() >= at) {
                worker_killed = true;
                let workers = home.live_workers();
                if !workers.is_empty() {
                    let victim = workers[(pick % workers.len() as u64) as usize];
                    // SAFETY: kill(2) on a pid just read as one of this home's workers.
                    unsafe {
                        libc::kill(victim, libc::SIGKILL);
                    }
                    figures.worker_sigkills += 1;
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if died.is_some() {
            assert!(
                gw.log().contains("crash point"),
                "a gateway died by itself, not at a crash point: {died:?}\n{}\nholders of the instance lock:\n{}",
                gw.log(),
                holders(&home.path().join("state").join("hermes-cron.lock")).join("\n")
            );
            figures.hooks_fired += 1;
        } else if sigterm {
            // A clean exit; or, for a SIGTERM that came before the gateway
            // installed its handlers (it was still starting), the default
            // action. Never a SIGTERM death once it said it was ready.
            let status = gw.terminate();
            let log = gw.log();
            if status.signal() == Some(libc::SIGKILL) && log.contains("crash point") {
                // It reached its crash point as the SIGTERM was being sent.
                figures.hooks_fired += 1;
                continue;
            }
            let clean = status.code() == Some(0);
            let early = status.signal() == Some(libc::SIGTERM) && !log.contains("gateway ready");
            assert!(
                clean || early,
                "a SIGTERMed gateway ended badly ({status})\n{log}"
            );
            figures.gateway_sigterms += 1;
        } else {
            gw.kill();
            figures.gateway_sigkills += 1;
        }
    }

    scene.restart_and_run();
    let tally = scene.check();
    eprintln!(
        "crash soak: seed {seed}, {secs} s: {} gateways ({} without staging), {} SIGKILLed at random, {} SIGTERMed, \
         {} died at a crash point, {} workers SIGKILLed; {tally}",
        figures.gateways,
        figures.unstaged_gateways,
        figures.gateway_sigkills,
        figures.gateway_sigterms,
        figures.hooks_fired,
        figures.worker_sigkills
    );
}

/// Processes with `path` open: pid, state and command line.
fn holders(path: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == path));
        if holds {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            out.push(format!(
                "{} [{}] {}",
                entry.file_name().to_string_lossy(),
                stat.rsplit(')').next().unwrap_or("").trim(),
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    out
}
