//! The gateway's event loop, driven through the real binaries: every slot of
//! a 1 s schedule exactly once, waking on database changes, stalled workers,
//! and SIGTERM (exit 0, running work left alone, no zombies).

use crate::support::TestHome;
use crate::support::process::{children_of, proc_state};
use crate::support::rows::s;
use crate::support::waiting::wall_clock;
use hermes_cron::clock::{elapsed, monotonic};
use nix::sys::signal::Signal;
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

/// Gateway log filter that shows the loop going to sleep.
const LOOP_DEBUG: &str = "info,hermes_cron::daemon::event_loop=debug";

fn instant(row: &Value, key: &str) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(&s(row, key))
        .unwrap_or_else(|e| panic!("{key} of {row} is not RFC 3339: {e}"))
}

/// `every 1s` under the gateway for 30 s: consecutive slots exactly 1 s
/// apart, none twice, every run `succeeded`, and every row carries
/// `start_lateness_ms` (presence only: the benchmark measures it).
#[test]
fn every_second_for_thirty_seconds_no_missed_or_doubled_slots() {
    let h = TestHome::scoped();
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add("pulse", "every 1s", &[], &["true"]);
    // Terminal rows: the newest row may be staged ahead of its slot, and
    // the pause takes that one back (its slot was never due).
    h.wait_until(
        "30 finished runs of the 1 s job",
        Duration::from_secs(90),
        || {
            let rows = h.runs_of("pulse");
            (rows.iter().filter(|r| r["terminal"] == true).count() >= 30).then_some(())
        },
    );
    h.run(&["pause", "pulse"]).ok();
    let rows = h.wait_until(
        "every row of the paused job to be terminal",
        Duration::from_secs(30),
        || {
            let rows = h.runs_of("pulse");
            rows.iter().all(|r| r["terminal"] == true).then_some(rows)
        },
    );
    assert_eq!(gw.stop().code(), Some(0));

    assert!(rows.len() >= 30, "{}", rows.len());
    let mut slots: Vec<_> = rows.iter().map(|r| instant(r, "scheduled_for")).collect();
    slots.sort();
    let unique: HashSet<_> = slots.iter().collect();
    assert_eq!(unique.len(), slots.len(), "a slot has two rows: {slots:?}");
    for pair in slots.windows(2) {
        assert_eq!(
            (pair[1] - pair[0]).num_milliseconds(),
            1000,
            "slots {} and {} are not 1 s apart\n{}",
            pair[0],
            pair[1],
            h.diag()
        );
    }
    for r in &rows {
        assert_eq!(r["state"], "succeeded", "{r}\n{}", h.diag());
        assert_eq!(r["attempt"], 1, "{r}");
        assert!(r["start_lateness_ms"].is_i64(), "no start_lateness_ms: {r}");
    }
}

/// `@reboot` jobs fire once per gateway start (source `reboot`), a paused one
/// never does, and jobs on a clock are not touched by the start.
#[test]
fn reboot_jobs_fire_once_per_gateway_start() {
    let h = TestHome::scoped();
    let marks = h.scratch().join("booted.txt");
    let line = format!("echo boot >> {}", marks.display());
    h.add("at-boot", "@reboot", &["--shell"], &[&line]);
    h.add("paused-boot", "@reboot", &[], &["true"]);
    h.run(&["pause", "paused-boot"]).ok();
    h.add("yearly", "0 0 1 1 *", &[], &["true"]);

    for start in 1..=2usize {
        let mut gw = h.gateway(&[]);
        gw.wait_ready();
        h.wait_until(
            &format!("the @reboot job's run after start {start}"),
            Duration::from_secs(60),
            || {
                let rows = h.runs_of("at-boot");
                (rows.len() == start && rows.iter().all(|r| r["terminal"] == true)).then_some(())
            },
        );
        assert_eq!(gw.stop().code(), Some(0), "{}", h.diag());
    }

    let rows = h.runs_of("at-boot");
    assert_eq!(rows.len(), 2, "{rows:?}\n{}", h.diag());
    for r in &rows {
        assert_eq!(r["source"], "reboot", "{r}");
        assert_eq!(r["state"], "succeeded", "{r}\n{}", h.diag());
    }
    let ran = std::fs::read_to_string(&marks).unwrap_or_default();
    assert_eq!(ran.lines().count(), 2, "the @reboot job ran {ran:?}");
    assert!(
        h.runs_of("paused-boot").is_empty(),
        "a paused @reboot job fired"
    );
    assert!(h.runs_of("yearly").is_empty(), "a clock job fired at start");
}

/// An idle gateway (nothing due, monitor period 300 s) wakes when another
/// process adds a job: the `in 2s` job runs long before any timer would
/// have woken the loop.
#[test]
fn idle_gateway_wakes_when_a_job_is_added() {
    let h = TestHome::scoped();
    h.write_config("cron:\n  heartbeat_interval_s: 300\n");
    let mut gw = h.gateway(&[
        ("HERMES_CRON_HEARTBEAT_PERIOD_MS", "600000"),
        ("HERMES_CRON_LOG", LOOP_DEBUG),
    ]);
    gw.wait_ready();
    gw.wait_log("idle: no job due", Duration::from_secs(30));
    assert!(h.runs(None).is_empty());
    h.add("wake", "in 2s", &[], &["sh", "-c", "echo woke"]);
    let row = h.wait_until(
        "the job added to an idle gateway to succeed",
        Duration::from_secs(60),
        || {
            h.runs_of("wake")
                .into_iter()
                .find(|r| r["state"] == "succeeded")
        },
    );
    assert_eq!(row["source"], "schedule", "{row}");
    assert_eq!(gw.stop().code(), Some(0));
}

/// A running worker that stops heart-beating (SIGSTOPped) is stopped by the
/// gateway, recorded `timed_out` with reason `stalled`, and retried.
#[test]
fn stalled_worker_is_stopped_recorded_timed_out_and_retried() {
    let h = TestHome::scoped();
    h.write_config("cron:\n  heartbeat_interval_s: 1\n");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let marker = h.scratch().join("first-attempt");
    let script = format!(
        "if [ -e {m} ]; then echo second; exit 0; fi; touch {m}; sleep 120",
        m = marker.display()
    );
    h.add(
        "stall",
        "in 1s",
        &["--retries", "1", "--retry-backoff", "1s"],
        &["sh", "-c", &script],
    );
    let first = h.wait_until("attempt 1 to run", Duration::from_secs(30), || {
        h.runs_of("stall")
            .into_iter()
            .find(|r| r["state"] == "running" && r["heartbeat_at"].is_string())
    });
    let pid = first["pid"].as_u64().unwrap() as u32;
    let worker = hermes_cron::process::identity_of(pid).expect("worker alive");
    // Whatever happens, do not leave a stopped worker behind.
    struct Unstop(hermes_cron::process::ProcessIdentity);
    impl Drop for Unstop {
        fn drop(&mut self) {
            if hermes_cron::process::is_alive(&self.0) {
                hermes_cron::process::signal_session(&self.0, Signal::SIGKILL);
            }
        }
    }
    let _guard = Unstop(worker);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGSTOP).unwrap();

    let id = s(&first, "id");
    let stalled = h.wait_terminal(&id, Duration::from_secs(60));
    assert_eq!(stalled["state"], "timed_out", "{stalled}");
    assert_eq!(stalled["reason_code"], "stalled", "{stalled}");
    assert!(s(&stalled, "reason").contains("no heartbeat"), "{stalled}");
    let second = h.wait_until("attempt 2 to succeed", Duration::from_secs(60), || {
        h.runs_of("stall")
            .into_iter()
            .find(|r| r["attempt"] == 2 && r["terminal"] == true)
    });
    assert_eq!(second["state"], "succeeded", "{second}");
    assert_eq!(second["source"], "retry", "{second}");
    assert_eq!(second["scheduled_for"], first["scheduled_for"]);
    h.wait_until(
        "the stalled worker to be gone",
        Duration::from_secs(30),
        || (!hermes_cron::process::is_alive(&worker)).then_some(()),
    );
    assert!(gw.log().contains("stalled worker stopped"), "{}", gw.log());
    assert_eq!(gw.stop().code(), Some(0));
}

/// A worker the ledger keeps waiting is not a stalled worker (issue 23,
/// section 0): another process holds SQLite's write lock for 6 heartbeat
/// intervals (a stall is 3). Four jobs end meanwhile, and their workers
/// cannot record it; four others keep running through it, and their
/// workers cannot stamp their rows. The gateway must not record any of them
/// `timed_out` (`stalled`): not over an outcome on its way, not a run whose
/// worker was only kept waiting, and none is retried. Each row ends
/// `succeeded` and each command ran once. (Before: the runs whose worker the
/// gateway beat to the lock once it was free were recorded stalled, stopped
/// and run again.)
#[test]
fn workers_kept_waiting_by_a_held_write_lock_are_not_stalled_and_their_runs_not_repeated() {
    const JOBS: usize = 4;
    let h = TestHome::new().with_env("HERMES_CRON_BUSY_TIMEOUT_MS", "300");
    h.write_config("cron:\n  heartbeat_interval_s: 1\n");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let count = h.scratch().join("count");
    let names: Vec<String> = (0..2 * JOBS)
        .map(|i| format!("{}-{i}", if i < JOBS { "ends" } else { "runs" }))
        .collect();
    for name in &names {
        // `ends-*` end while the lock is held, `runs-*` after.
        let go = h.scratch().join(&name[..4]);
        let script = format!(
            "echo {name} >> {c}; while [ ! -e {g} ]; do sleep 0.05; done",
            c = count.display(),
            g = go.display()
        );
        h.add(
            name,
            "in 1s",
            &["--retries", "1", "--retry-backoff", "1s"],
            &["sh", "-c", &script],
        );
    }
    let ids: Vec<String> = names
        .iter()
        .map(|name| {
            let row = h.wait_until("the runs to be adopted", Duration::from_secs(30), || {
                h.runs_of(name)
                    .into_iter()
                    .find(|r| r["state"] == "running" && r["heartbeat_at"].is_string())
            });
            s(&row, "id")
        })
        .collect();
    let holder = rusqlite::Connection::open(h.db_file()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::fs::write(h.scratch().join("ends"), "").unwrap();
    // Held until a gateway that read the silence as stalls would stop the
    // `runs-*` jobs: their last stamps four intervals old (a stall is 3).
    let age = |row: &Value| wall_clock().fixed_offset() - instant(row, "heartbeat_at");
    h.wait_until(
        "the runs' stamps to be 4 s old",
        Duration::from_secs(60),
        || {
            let old = ids[JOBS..].iter().all(|id| {
                h.row(id)
                    .is_some_and(|r| age(&r) > chrono::TimeDelta::seconds(4))
            });
            old.then_some(())
        },
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let released = wall_clock().fixed_offset();
    // Two intervals with the ledger back (every `runs-*` row stamped again,
    // 2 s after the release), in which a gateway that misread the silence
    // would stop them.
    for id in &ids[JOBS..] {
        h.wait_until(
            "the runs to be stamped again",
            Duration::from_secs(60),
            || {
                h.row(id).filter(|r| {
                    r["terminal"] == true
                        || instant(r, "heartbeat_at") > released + chrono::TimeDelta::seconds(2)
                })
            },
        );
    }
    std::fs::write(h.scratch().join("runs"), "").unwrap();

    for id in &ids {
        let end = h.wait_terminal(id, Duration::from_secs(60));
        assert_eq!(
            (end["state"].as_str(), end["reason_code"].as_str()),
            (Some("succeeded"), None),
            "{end:#}\n{}",
            gw.log()
        );
    }
    let mut ran: Vec<String> = std::fs::read_to_string(&count)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    ran.sort();
    assert_eq!(ran, names, "each command ran once");
    for name in &names {
        assert_eq!(h.runs_of(name).len(), 1, "no retry of {name}");
    }
    assert!(
        gw.log().contains("the ledger could not be written"),
        "the gateway says why it waits: {}",
        gw.log()
    );
    assert_eq!(gw.stop().code(), Some(0));
}

/// A worker whose command ended, stopped (SIGSTOP) before it could record
/// the end (the ledger was held), records nothing until continued: its
/// silence is a stall like any other, and the run is stopped and recorded
/// `timed_out` (`stalled`). Before (issue 23, section 0): a live worker
/// without a live child counted as "recording the outcome" forever, and the
/// row stayed `running`.
#[test]
fn a_stopped_worker_whose_command_ended_is_judged_stalled() {
    let h = TestHome::new().with_env("HERMES_CRON_BUSY_TIMEOUT_MS", "300");
    h.write_config("cron:\n  heartbeat_interval_s: 1\n");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let go = h.scratch().join("go");
    let script = format!("while [ ! -e {} ]; do sleep 0.05; done", go.display());
    h.add("frozen", "in 1s", &[], &["sh", "-c", &script]);
    let row = h.wait_until("the run to be adopted", Duration::from_secs(30), || {
        h.runs_of("frozen")
            .into_iter()
            .find(|r| r["state"] == "running" && r["heartbeat_at"].is_string())
    });
    let (id, worker) = (s(&row, "id"), row["pid"].as_u64().unwrap() as u32);
    let holder = rusqlite::Connection::open(h.db_file()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::fs::write(&go, "").unwrap();
    // The command ends; its worker, kept from recording it, is stopped.
    h.wait_until("the command to end", Duration::from_secs(30), || {
        let live = children_of(worker)
            .into_iter()
            .any(|(_, state)| state != 'Z');
        (!live).then_some(())
    });
    let pid = nix::unistd::Pid::from_raw(worker as i32);
    nix::sys::signal::kill(pid, Signal::SIGSTOP).unwrap();
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let end = h.wait_terminal(&id, Duration::from_secs(60));
    let _ = nix::sys::signal::kill(pid, Signal::SIGCONT);
    assert_eq!(
        (end["state"].as_str(), end["reason_code"].as_str()),
        (Some("timed_out"), Some("stalled")),
        "{end:#}\n{}",
        gw.log()
    );
    assert_eq!(gw.stop().code(), Some(0));
}

/// Fails when a child of `pid` stays a zombie: a zombie seen twice, 1.5 s
/// apart, is one the gateway did not reap.
fn assert_no_lingering_zombies(h: &TestHome, pid: u32) {
    let zombies = || -> HashSet<u32> {
        children_of(pid)
            .into_iter()
            .filter(|(_, state)| *state == 'Z')
            .map(|(child, _)| child)
            .collect()
    };
    let start = monotonic();
    while elapsed(start) < Duration::from_secs(4) {
        let before = zombies();
        std::thread::sleep(Duration::from_millis(1500));
        let still: Vec<_> = zombies().intersection(&before).copied().collect();
        assert!(
            still.is_empty(),
            "the gateway left zombie children {still:?}\n{}",
            h.diag()
        );
    }
}

/// SIGTERM while busy: no zombie children while it ran, exit 0 with a
/// lifecycle line `signal`, and a running scoped worker keeps running and
/// records its own success.
#[test]
fn sigterm_exits_zero_leaves_scoped_worker_and_reaps_every_child() {
    let h = TestHome::scoped();
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add("busy", "every 1s", &[], &["true"]);
    // Runs until the test opens the gate, after the gateway is gone.
    let gate = h.scratch().join("gate");
    let long = format!(
        "sleep 1; while [ ! -e {} ]; do sleep 0.1; done; echo done",
        gate.display()
    );
    h.add("long", "in 1s", &[], &["sh", "-c", &long]);
    let long = h.wait_until(
        "the long run to be running",
        Duration::from_secs(30),
        || {
            h.runs_of("long")
                .into_iter()
                .find(|r| r["state"] == "running")
        },
    );
    assert_eq!(long["dispatch_mode"], "scoped", "{long}");
    h.wait_until("five busy runs", Duration::from_secs(30), || {
        let n = h
            .runs_of("busy")
            .iter()
            .filter(|r| r["state"] == "succeeded")
            .count();
        (n >= 5).then_some(())
    });
    assert_no_lingering_zombies(&h, gw.pid());

    let status = gw.stop();
    assert_eq!(status.code(), Some(0), "{}", gw.log());
    let life = h.lifecycle();
    let last = life.last().expect("lifecycle lines");
    assert_eq!(last["event"], "exit", "{life:?}");
    assert_eq!(last["reason"], "signal", "{life:?}");
    assert_eq!(last["exit_code"], 0, "{life:?}");

    // The gateway is gone and its worker still runs its job.
    assert_eq!(h.row(&s(&long, "id")).unwrap()["state"], "running");
    let worker = long["pid"].as_u64().unwrap() as u32;
    assert!(
        proc_state(worker).is_some_and(|st| st != 'Z'),
        "the scoped worker {worker} died with the gateway"
    );
    std::fs::write(&gate, b"").unwrap();
    let done = h.wait_terminal(&s(&long, "id"), Duration::from_secs(60));
    assert_eq!(done["state"], "succeeded", "{done}");
    let out = std::fs::read_to_string(s(&done, "output_path")).unwrap();
    assert_eq!(out, "done\n");
}

/// A gateway that did not run for a while (host suspended; here: the
/// gateway and the worker SIGSTOPped together) does not take the workers'
/// heartbeats, as old as its own absence, for stalls: the run is not
/// killed, and finishes.
#[test]
fn gateway_pause_is_not_worker_silence() {
    let h = TestHome::scoped();
    h.write_config("cron:\n  heartbeat_interval_s: 1\n");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add("napper", "in 1s", &[], &["sh", "-c", "sleep 6; echo awake"]);
    let row = h.wait_until("the run to be running", Duration::from_secs(30), || {
        h.runs_of("napper")
            .into_iter()
            .find(|r| r["state"] == "running" && r["heartbeat_at"].is_string())
    });
    let worker = nix::unistd::Pid::from_raw(row["pid"].as_u64().unwrap() as i32);
    let gateway = nix::unistd::Pid::from_raw(gw.pid() as i32);
    let stop = |p| nix::sys::signal::kill(p, Signal::SIGSTOP).unwrap();
    let cont = |p| nix::sys::signal::kill(p, Signal::SIGCONT).unwrap();
    // As a suspend: both stop, for longer than 3 heartbeat intervals.
    stop(worker);
    stop(gateway);
    std::thread::sleep(Duration::from_secs(5));
    // The gateway wakes first (its missed monitor round runs at once), the
    // worker a moment later.
    cont(gateway);
    gw.wait_log("did not run for", Duration::from_secs(30));
    cont(worker);
    let done = h.wait_terminal(&s(&row, "id"), Duration::from_secs(60));
    assert_eq!(done["state"], "succeeded", "{done}\n{}", h.diag());
    assert!(gw.log().contains("did not run for"), "{}", gw.log());
    assert_eq!(gw.stop().code(), Some(0));
}
