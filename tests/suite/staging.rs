//! Staging (issue 16): a run is claimed a lead time before its instant, its
//! worker spawned, scoped and holding its row `staged`; at the instant the
//! gateway releases it and the worker forks the command at once. Staging
//! changes when the work of starting is done, never what runs or how it is
//! recorded: these tests check each of the invariants through the
//! real gateway and worker, on the real user manager where scopes matter.

use crate::support::invariants::open_read_only;
use crate::support::{Bus, PATIENCE, SETTLE_TIMEOUT, TestHome, wait_for};
use std::collections::HashSet;
use std::time::Duration;

/// One ledger row, with the instants staging is about (a manual run's slot reads 0).
#[derive(Clone, Debug)]
struct Slot {
    id: String,
    scheduled_for: i64,
    claimed_at: i64,
    started_at: Option<i64>,
    state: String,
    reason_code: Option<String>,
    dispatch_mode: Option<String>,
    unit: Option<String>,
    pid: Option<i64>,
}

fn slots(h: &TestHome, job: &str) -> Vec<Slot> {
    open_read_only(&h.db_file())
        .conn()
        .query_map(
            "SELECT id, COALESCE(scheduled_for, 0), claimed_at, started_at, state, reason_code, dispatch_mode,
                    unit, pid
               FROM executions WHERE job_id = ?1 ORDER BY scheduled_for, id",
            hermes_cron::params![job],
            |r| {
                Ok(Slot {
                    id: r.get(0)?,
                    scheduled_for: r.get(1)?,
                    claimed_at: r.get(2)?,
                    started_at: r.get(3)?,
                    state: r.get(4)?,
                    reason_code: r.get(5)?,
                    dispatch_mode: r.get(6)?,
                    unit: r.get(7)?,
                    pid: r.get(8)?,
                })
            },
        )
        .unwrap()
}

fn next_run_at(h: &TestHome, job: &str) -> Option<i64> {
    open_read_only(&h.db_file())
        .conn()
        .query_row(
            "SELECT next_run_at FROM jobs WHERE id = ?1",
            hermes_cron::params![job],
            |r| r.get(0),
        )
        .unwrap()
}

fn now_ms() -> i64 {
    crate::support::waiting::wall_clock().timestamp_millis()
}

/// A staged row of `job` for a slot still ahead.
fn wait_staged(h: &TestHome, job: &str) -> Slot {
    wait_for("a run staged ahead of its instant", SETTLE_TIMEOUT, || {
        slots(h, job)
            .into_iter()
            .find(|s| s.state == "staged" && s.scheduled_for > now_ms())
    })
}

/// The command appends `<label> $HERMES_CRON_EXECUTION_ID <ns since epoch>`.
fn stamping(h: &TestHome, label: &str) -> (String, std::path::PathBuf) {
    let file = h.scratch().join("stamps");
    let cmd = format!(
        "echo {label} \"$HERMES_CRON_EXECUTION_ID\" $(date +%s%N) >> {}",
        file.display()
    );
    (cmd, file)
}

fn stamps(file: &std::path::Path) -> Vec<(String, String, i64)> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((
                w.next()?.to_string(),
                w.next()?.to_string(),
                w.next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// A home whose runs are staged at least `lead_s` ahead.
fn home_with_lead(bus: Bus, lead_s: u32) -> TestHome {
    let h = TestHome::new().with_bus(bus);
    h.write_config(&format!("cron:\n  staging_lead_min_s: {lead_s}\n"));
    h
}

#[test]
fn a_run_is_staged_in_its_scope_before_its_instant_and_its_command_starts_at_it() {
    let h = home_with_lead(Bus::Real, 3);
    h.require_scopes();
    let (cmd, file) = stamping(&h, "ran");
    let job = h.add("staged", "every 6s", &["--shell"], &[&cmd]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let staged = wait_staged(&h, &job);
    // Held ahead: the worker lives in its scope, the row is its own, the
    // command has not started.
    assert_eq!(
        staged.dispatch_mode.as_deref(),
        Some("scoped"),
        "{staged:?}"
    );
    assert!(
        staged
            .unit
            .as_deref()
            .is_some_and(|u| u.ends_with(".scope"))
    );
    assert_eq!(staged.started_at, None);
    assert!(staged.claimed_at < staged.scheduled_for, "{staged:?}");
    let pid = staged.pid.expect("the worker's pid") as u32;
    assert!(crate::support::process::alive(pid));
    assert!(stamps(&file).is_empty(), "nothing ran before the instant");
    let done = wait_for("the staged run to succeed", SETTLE_TIMEOUT, || {
        slots(&h, &job)
            .into_iter()
            .find(|s| s.id == staged.id && s.state == "succeeded")
    });
    gw.stop();
    let started = done.started_at.expect("started_at");
    assert!(started >= done.scheduled_for, "{done:?}");
    let (_, _, ns) = stamps(&file)
        .into_iter()
        .find(|(_, id, _)| *id == staged.id)
        .expect("the command's stamp");
    assert!(
        ns / 1_000_000 >= done.scheduled_for,
        "the command started {} ms before its instant",
        done.scheduled_for - ns / 1_000_000
    );
}

/// Pause, edit and removal while staged: the run is released without
/// running and the ledger says what it would have without staging.
#[test]
fn a_job_paused_while_staged_never_runs_that_slot_and_keeps_it_for_its_resume() {
    let h = home_with_lead(Bus::None, 4);
    let (cmd, file) = stamping(&h, "ran");
    let job = h.add("pausy", "every 8s", &["--shell"], &[&cmd]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let staged = wait_staged(&h, &job);
    h.run(&["pause", &job]).ok();
    wait_for("the staged worker to exit", PATIENCE, || {
        (!crate::support::process::alive(staged.pid.unwrap() as u32)).then_some(())
    });
    wait_for("its instant to pass", SETTLE_TIMEOUT, || {
        (now_ms() > staged.scheduled_for + 500).then_some(())
    });
    gw.stop();
    // Without staging a paused job's slot is simply never claimed: no row.
    assert!(
        slots(&h, &job)
            .iter()
            .all(|s| s.scheduled_for != staged.scheduled_for),
        "{:?}",
        slots(&h, &job)
    );
    assert!(stamps(&file).is_empty(), "{:?}", stamps(&file));
    assert_eq!(next_run_at(&h, &job), Some(staged.scheduled_for));
    assert!(
        h.logs().contains("paused before its instant"),
        "{}",
        h.logs()
    );
}

#[test]
fn a_job_edited_while_staged_runs_its_new_command_at_that_instant() {
    let h = home_with_lead(Bus::None, 4);
    let (old, file) = stamping(&h, "old");
    let (new, _) = stamping(&h, "new");
    let job = h.add("edity", "every 8s", &["--shell"], &[&old]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let staged = wait_staged(&h, &job);
    h.run(&["edit", &job, "--", &new]).ok();
    let ran = wait_for("the slot to run once, edited", SETTLE_TIMEOUT, || {
        slots(&h, &job)
            .into_iter()
            .find(|s| s.scheduled_for == staged.scheduled_for && s.state == "succeeded")
    });
    gw.stop();
    let same_slot: Vec<Slot> = slots(&h, &job)
        .into_iter()
        .filter(|s| s.scheduled_for == staged.scheduled_for)
        .collect();
    assert_eq!(same_slot.len(), 1, "one row for the slot: {same_slot:?}");
    assert_ne!(ran.id, staged.id, "the staged run was taken back");
    let labels: Vec<String> = stamps(&file)
        .into_iter()
        .filter(|(_, id, _)| *id == ran.id || *id == staged.id)
        .map(|(label, _, _)| label)
        .collect();
    assert_eq!(labels, ["new"]);
}

#[test]
fn a_job_removed_while_staged_never_runs() {
    let h = home_with_lead(Bus::None, 4);
    let (cmd, file) = stamping(&h, "ran");
    let job = h.add("gone", "every 8s", &["--shell"], &[&cmd]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let staged = wait_staged(&h, &job);
    h.run(&["rm", &job]).ok();
    wait_for("the staged worker to exit", PATIENCE, || {
        (!crate::support::process::alive(staged.pid.unwrap() as u32)).then_some(())
    });
    wait_for("its instant to pass", SETTLE_TIMEOUT, || {
        (now_ms() > staged.scheduled_for + 500).then_some(())
    });
    gw.stop();
    assert!(slots(&h, &job).is_empty(), "{:?}", slots(&h, &job));
    assert!(stamps(&file).is_empty());
}

/// Overlap is decided at the instant: a run staged while the previous one
/// is still going runs when that one ended before the instant, and is
/// skipped when it did not.
#[test]
fn overlap_is_decided_at_the_instant_not_when_the_run_is_staged() {
    let h = home_with_lead(Bus::None, 3);
    // Runs 2.2 s of every 4 s: each run is staged while its previous one runs.
    let short = h.add("short", "every 4s", &["--shell"], &["sleep 2.2"]);
    // Runs 5 s of every 4 s: the previous one is still going at each instant.
    let long = h.add("long", "every 4s", &["--shell"], &["sleep 5"]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    wait_for("three short runs", Duration::from_secs(60), || {
        (slots(&h, &short)
            .iter()
            .filter(|s| s.state == "succeeded")
            .count()
            >= 3)
            .then_some(())
    });
    wait_for("a long run skipped", Duration::from_secs(60), || {
        slots(&h, &long).into_iter().find(|s| s.state == "skipped")
    });
    gw.stop();
    let short_slots = slots(&h, &short);
    assert!(
        short_slots
            .iter()
            .all(|s| s.state != "skipped" && s.claimed_at < s.scheduled_for),
        "staged ahead, never skipped: {short_slots:?}"
    );
    let skipped = slots(&h, &long)
        .into_iter()
        .filter(|s| s.state == "skipped")
        .collect::<Vec<_>>();
    assert!(
        skipped
            .iter()
            .all(|s| s.reason_code.as_deref() == Some("overlap") && s.started_at.is_none()),
        "{skipped:?}"
    );
}

#[test]
fn no_more_workers_are_staged_than_the_config_allows_and_the_rest_run_at_their_instant() {
    let h = home_with_lead(Bus::None, 3);
    h.config_set("cron.staging_max_workers", "2");
    let (cmd, file) = stamping(&h, "ran");
    // All on the same instants: every tenth second.
    let jobs: Vec<String> = (0..6)
        .map(|i| h.add(&format!("j{i}"), "*/10 * * * * *", &["--shell"], &[&cmd]))
        .collect();
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let db = open_read_only(&h.db_file());
    let conn = db.conn();
    let mut most = 0;
    let mut slot = None;
    // Watch one whole instant: from its staging until its six runs ended,
    // sampling how many runs are held ahead at once.
    crate::support::waiting::poll(Duration::from_secs(40), || {
        let held: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM executions WHERE state = 'staged'
                    OR (state = 'claimed' AND claimed_at < scheduled_for)",
                hermes_cron::params![],
                |r| r.get(0),
            )
            .unwrap();
        most = most.max(held);
        if slot.is_none() && held > 0 {
            slot = conn
                .query_row(
                    "SELECT MIN(scheduled_for) FROM executions WHERE state = 'staged'",
                    hermes_cron::params![],
                    |r| r.get::<_, Option<i64>>(0),
                )
                .unwrap();
        }
        let at = slot?;
        let done: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM executions WHERE scheduled_for = ?1 AND state = 'succeeded'",
                hermes_cron::params![at],
                |r| r.get(0),
            )
            .unwrap();
        (done == 6).then_some(())
    });
    gw.stop();
    let at = slot.expect("an instant was staged");
    assert!(most <= 2, "{most} runs held ahead at once");
    let ran: HashSet<String> = jobs
        .iter()
        .flat_map(|j| slots(&h, j))
        .filter(|s| s.scheduled_for == at && s.state == "succeeded")
        .map(|s| s.id)
        .collect();
    assert_eq!(ran.len(), 6, "all six ran at {at}");
    let ahead = jobs
        .iter()
        .flat_map(|j| slots(&h, j))
        .filter(|s| s.scheduled_for == at && s.claimed_at < s.scheduled_for)
        .count();
    assert_eq!(ahead, 2, "two staged ahead, four claimed at the instant");
    let stamped: HashSet<String> = stamps(&file).into_iter().map(|(_, id, _)| id).collect();
    assert!(ran.is_subset(&stamped));
}

/// A gateway killed with a worker staged: the worker's gate closes, it
/// withdraws its row and exits without running; the next gateway stages the
/// slot again and runs it once.
#[test]
fn a_gateway_killed_with_a_worker_staged_leaves_it_to_exit_and_the_next_stages_the_slot_again() {
    let h = home_with_lead(Bus::Real, 4);
    h.require_scopes();
    let (cmd, file) = stamping(&h, "ran");
    let job = h.add("again", "every 10s", &["--shell"], &[&cmd]);
    let mut first = h.gateway(&[]);
    first.wait_ready();
    let staged = wait_staged(&h, &job);
    first.kill();
    wait_for("the staged worker to exit", PATIENCE, || {
        (!crate::support::process::alive(staged.pid.unwrap() as u32)).then_some(())
    });
    assert!(
        slots(&h, &job).iter().all(|s| s.id != staged.id),
        "the worker withdrew its row: {:?}",
        slots(&h, &job)
    );
    assert_eq!(next_run_at(&h, &job), Some(staged.scheduled_for));
    assert!(
        now_ms() < staged.scheduled_for,
        "too slow to test the restage"
    );
    let mut second = h.gateway(&[]);
    second.wait_ready();
    let ran = wait_for("the slot to run", SETTLE_TIMEOUT, || {
        slots(&h, &job)
            .into_iter()
            .find(|s| s.scheduled_for == staged.scheduled_for && s.state == "succeeded")
    });
    second.stop();
    assert!(ran.claimed_at < ran.scheduled_for, "staged again: {ran:?}");
    assert_eq!(ran.dispatch_mode.as_deref(), Some("scoped"));
    let ids: Vec<String> = stamps(&file).into_iter().map(|(_, id, _)| id).collect();
    assert!(!ids.contains(&staged.id), "the withdrawn run never ran");
    assert_eq!(ids.iter().filter(|id| **id == ran.id).count(), 1);
}

#[test]
fn with_staging_off_nothing_is_claimed_before_its_instant() {
    let h = TestHome::new();
    h.write_config("cron:\n  staging_max_workers: 0\n");
    let job = h.add("plain", "every 1s", &[], &["true"]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    wait_for("three runs", SETTLE_TIMEOUT, || {
        (slots(&h, &job)
            .iter()
            .filter(|s| s.state == "succeeded")
            .count()
            >= 3)
            .then_some(())
    });
    gw.stop();
    for s in slots(&h, &job) {
        assert!(s.claimed_at >= s.scheduled_for, "{s:?}");
        assert_ne!(s.state, "staged");
    }
}

/// A run claimed ahead is not "the previous run still going" before its
/// instant: a manual run meanwhile is not skipped for it.
#[test]
fn a_manual_run_while_a_run_is_staged_is_not_skipped_for_it() {
    let h = home_with_lead(Bus::None, 4);
    let (cmd, file) = stamping(&h, "ran");
    let job = h.add("manual", "every 8s", &["--shell"], &[&cmd]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let staged = wait_staged(&h, &job);
    let out = h.run(&["run", &job, "--wait"]);
    assert_eq!(out.code(), 0, "{out}");
    let ran = wait_for("the staged slot to run too", SETTLE_TIMEOUT, || {
        slots(&h, &job)
            .into_iter()
            .find(|s| s.id == staged.id && s.state == "succeeded")
    });
    gw.stop();
    let ids: Vec<String> = stamps(&file).into_iter().map(|(_, id, _)| id).collect();
    assert_eq!(ids.len(), 2, "the manual run and the slot: {ids:?}");
    assert!(ids.contains(&ran.id));
}

/// Regression: with staging on (the default config) every run is claimed
/// ahead of its instant, so the claim at the instant finds nothing due; only
/// that claim recorded the last tick, and `status` said "last tick: none
/// yet" for ever (in `--json` too, and on systemd's status line).
#[test]
fn status_shows_the_last_tick_when_the_runs_are_claimed_ahead() {
    let h = TestHome::new().with_bus(Bus::None);
    let job = h.add("ticky", "every 5s", &[], &["true"]);
    let mut gw = h.gateway(&[("HERMES_CRON_HEARTBEAT_PERIOD_MS", "200")]);
    gw.wait_ready();
    wait_staged(&h, &job);
    let status = wait_for("status to show a claim pass", SETTLE_TIMEOUT, || {
        let json = h.run(&["status", "--json"]).ok().json();
        (!json["last_tick"]["at"].is_null()).then_some(json)
    });
    let tick = &status["last_tick"];
    assert_eq!(tick["result"], "ok", "{status}");
    assert!(tick["claimed"].as_u64() >= Some(1), "{status}");
    let text = h.run(&["status"]).ok().stdout;
    assert!(
        text.contains("last tick:  ok at") && !text.contains("none yet"),
        "{text}"
    );
    gw.stop();
}

/// A staged run whose start the ledger cannot take within the worker's
/// patience (60 s: another process holds SQLite's write lock from before
/// the instant) is not given up: the command runs to its end, and once the
/// ledger can be written the row says it started, at its instant, and how
/// it ended (issue 23, section 0; before: the worker gave up, SIGKILLing a
/// command still running, and the row ended `unknown` with no start).
#[test]
fn a_staged_run_whose_start_the_ledger_cannot_take_runs_on_and_records_its_start() {
    let h = home_with_lead(Bus::None, 3).with_env("HERMES_CRON_BUSY_TIMEOUT_MS", "300");
    let count = h.scratch().join("count");
    let script = format!(
        "echo ran >> {c}; sleep 2; echo done >> {c}",
        c = count.display()
    );
    let job = h.add("slow-ledger", "in 10s", &[], &["sh", "-c", &script]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let staged = wait_staged(&h, &job);
    let holder = rusqlite::Connection::open(h.db_file()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    // Held past the worker's patience (60 s): until it says the command runs
    // on without its start recorded (or, the bug, gives the start up).
    wait_for(
        "the worker to run on past its patience",
        Duration::from_secs(120),
        || {
            let log = h.worker_log();
            (log.contains("its start is recorded with its end")
                || log.contains("cannot record the start: "))
            .then_some(())
        },
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let done = wait_for("the staged run to end", SETTLE_TIMEOUT, || {
        slots(&h, &job)
            .into_iter()
            .find(|s| s.id == staged.id && !matches!(s.state.as_str(), "staged" | "running"))
    });
    assert_eq!(
        (done.state.as_str(), done.reason_code.as_deref()),
        ("succeeded", None),
        "{done:?}\n{}",
        h.worker_log()
    );
    let started = done.started_at.expect("the start, recorded late");
    assert!(
        started >= done.scheduled_for && started < done.scheduled_for + 5_000,
        "started at its instant, not when recorded: {done:?}"
    );
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "ran\ndone\n");
    gw.stop();
}
