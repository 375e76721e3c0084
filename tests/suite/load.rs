//! Load (issue 8): many jobs, a steady stream of due slots, under one
//! gateway, degraded and scoped. Nothing is lost or doubled, no zombie is
//! left, the gateway's open descriptors do not grow and its memory stays
//! flat (RSS at the end within 1.2x of RSS after the warm-up).
//!
//! CI runs a short variant. The full run (10,000 jobs, about 1,000 due per
//! minute, 10 minutes) is:
//! `HERMES_CRON_LOAD_JOBS=10000 HERMES_CRON_LOAD_SECS=600 cargo nextest run --workspace -E 'test(/^load::/)' --no-capture`.

use crate::support::process::children_of;
use crate::support::{Bus, PATIENCE, TestHome, invariants, wait_for};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// A zombie child older than this was not reaped: a leak, not a delay.
const ZOMBIE_LIMIT: Duration = Duration::from_secs(10);

fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn status_field(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// The gateway's descriptors beyond the gates it holds: a worker claimed
/// and not yet released (a `claimed` or `staged` row) is held at a pipe the
/// gateway keeps until the instant (docs/schedules.md, Staging), so how many it holds
/// follows how many runs are staged at the moment of the sample. What grows
/// beyond that is a leak.
///
/// One sample is noisy under load: the descriptors and the rows are read one
/// after the other, and a `claimed` row whose gate was just released counts
/// a gate the gateway no longer holds. [`soak`] therefore compares the
/// median of the samples of a window after the warm-up with the median of
/// the last window: a leak raises every later sample, a race only some.
fn fds_beyond_gates(pid: u32, db: &std::path::Path) -> usize {
    let fds = open_fds(pid);
    let gates = invariants::rows(db)
        .iter()
        .filter(|r| r.state == "claimed" || r.state == "staged")
        .count();
    fds.saturating_sub(gates)
}

/// The median of the samples taken in `[from, to)`.
fn median_in(samples: &[(Duration, usize)], from: Duration, to: Duration) -> usize {
    let mut in_window: Vec<usize> = samples
        .iter()
        .filter(|(at, _)| *at >= from && *at < to)
        .map(|(_, n)| *n)
        .collect();
    assert!(
        !in_window.is_empty(),
        "no descriptor sample in {from:?}..{to:?}"
    );
    in_window.sort_unstable();
    in_window[in_window.len() / 2]
}

/// Add `jobs` jobs, each every `period_min` minutes, spread evenly over the
/// seconds of the period (6-field cron): a steady jobs/period_min per minute.
/// Eight `add` processes at a time.
fn add_jobs(h: &TestHome, jobs: u64, period_min: u64, out: &std::path::Path) {
    let line = format!("echo \"$HERMES_CRON_EXECUTION_ID\" >> {}", out.display());
    std::thread::scope(|s| {
        for lane in 0..8u64 {
            let line = &line;
            s.spawn(move || {
                for i in (lane..jobs).step_by(8) {
                    let schedule = format!(
                        "{} {}-59/{period_min} * * * *",
                        i % 60,
                        (i / 60) % period_min
                    );
                    h.add(&format!("load-{i}"), &schedule, &["--shell"], &[line]);
                }
            });
        }
    });
}

fn soak(bus: Bus, label: &str) {
    let jobs = knob("HERMES_CRON_LOAD_JOBS", 1200);
    let secs = knob("HERMES_CRON_LOAD_SECS", 40);
    // 10,000 jobs every 10 minutes is 1,000 due per minute; the short run
    // keeps the rate in proportion: every 2 minutes.
    let period = if jobs >= 5000 { 10 } else { 2 };
    let h = TestHome::new()
        .with_bus(bus)
        .with_env("HERMES_CRON_LOG", "warn");
    let out = h.scratch().join("ran.txt");
    h.config_set("cron.heartbeat_interval_s", "30");
    add_jobs(&h, jobs, period, &out);

    let gw = h.start(&["gateway"]);
    let pid = gw.pid();
    wait_for("the gateway heartbeat", PATIENCE, || {
        h.path()
            .join("state/hermes-cron.heartbeat")
            .exists()
            .then_some(())
    });
    let start = hermes_cron::clock::monotonic();
    let warmup = Duration::from_secs((secs / 6).max(10));
    let mut rss_warm = 0;
    // fds_beyond_gates sampled every round, with when.
    let mut fd_samples: Vec<(Duration, usize)> = Vec::new();
    // A worker is a zombie from its exit until the gateway reaps it on
    // SIGCHLD; under load that can take a moment. A zombie that stays is a
    // leak: remember when each was first seen.
    let mut zombie_since: HashMap<u32, std::time::Instant> = HashMap::new();
    let mut zombies_seen = 0usize;
    let mut longest_zombie = Duration::ZERO;
    while hermes_cron::clock::elapsed(start) < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_millis(500));
        let zombies: HashSet<u32> = children_of(pid)
            .iter()
            .filter(|(_, s)| *s == 'Z')
            .map(|(p, _)| *p)
            .collect();
        zombies_seen += zombies.len();
        zombie_since.retain(|p, _| zombies.contains(p));
        for z in zombies {
            let since = *zombie_since
                .entry(z)
                .or_insert_with(hermes_cron::clock::monotonic);
            longest_zombie = longest_zombie.max(hermes_cron::clock::elapsed(since));
        }
        let now = hermes_cron::clock::elapsed(start);
        if rss_warm == 0 && now >= warmup {
            rss_warm = status_field(pid, "VmRSS:");
        }
        fd_samples.push((now, fds_beyond_gates(pid, &h.db_file())));
    }
    let rss_end = status_field(pid, "VmRSS:");
    let window = Duration::from_secs(5);
    let end = Duration::from_secs(secs).saturating_sub(window);
    let fds_warm = median_in(&fd_samples, warmup, warmup + window);
    let fds_end = median_in(&fd_samples, end, Duration::MAX);
    let hwm = status_field(pid, "VmHWM:");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let stopped = gw.wait_within(PATIENCE);
    assert_eq!(stopped.code(), 0, "{stopped:#?}");

    let rows: Vec<Value> = wait_for("every row terminal", Duration::from_secs(120), || {
        let out = h.run(&["runs", "--json", "--limit", "1000000"]);
        let rows: Vec<Value> = serde_json::from_str(&out.stdout).ok()?;
        rows.iter().all(|r| r["terminal"] == true).then_some(rows)
    });
    let ran: Vec<String> = std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let ran_set: HashSet<&String> = ran.iter().collect();
    println!(
        "load[{label}]: {jobs} jobs, {secs}s, {} rows, {} runs; gateway RSS {rss_warm} kB after warm-up, {rss_end} kB at the end (peak {hwm} kB); fds beyond the gates held (median of 5 s) {fds_warm} -> {fds_end}; zombie samples {zombies_seen} (longest unreaped {longest_zombie:?})",
        rows.len(),
        ran.len()
    );
    let expected = jobs * secs / (period * 60);
    assert!(
        rows.len() as u64 >= expected * 8 / 10,
        "the gateway kept up: {} rows, about {expected} due",
        rows.len()
    );
    assert_eq!(ran.len(), ran_set.len(), "a run happened twice");
    let mut slots: HashMap<(String, String), usize> = HashMap::new();
    for r in &rows {
        let key = (
            r["job_id"].as_str().unwrap().to_string(),
            r["scheduled_for"].as_str().unwrap_or("-").to_string(),
        );
        *slots.entry(key).or_default() += 1;
        let id = r["id"].as_str().unwrap().to_string();
        assert_eq!(r["state"], "succeeded", "every slot ran: {r:#}");
        assert!(
            ran_set.contains(&id),
            "succeeded row {id} has no side effect"
        );
    }
    assert!(slots.values().all(|n| *n == 1), "a slot has two rows");
    let ids: HashSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(
        ran.iter().all(|id| ids.contains(id.as_str())),
        "a run without a row"
    );
    assert!(
        longest_zombie < ZOMBIE_LIMIT,
        "a worker stayed unreaped for {longest_zombie:?}"
    );
    assert!(
        fds_end <= fds_warm + 8,
        "open descriptors grew: {fds_warm} -> {fds_end}"
    );
    assert!(
        rss_end as f64 <= rss_warm as f64 * 1.2,
        "gateway RSS grew: {rss_warm} kB -> {rss_end} kB"
    );
}

#[test]
fn load_degraded() {
    soak(Bus::None, "degraded");
}

#[test]
fn load_scoped() {
    soak(Bus::Real, "scoped");
}
