//! The tick's claim (issue 3), with real binaries and real files: exactly one
//! row per occurrence under concurrent ticks, contention is a quiet exit 0, a
//! crash between the claim commit and the dispatch neither doubles nor loses
//! the occurrence, and lock errors fail the tick naming the cause.

use crate::support::TestHome;
use crate::support::rows::{summary, with};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

/// Jobs are created with the clock frozen here; `every 1m` then first fires at 10:01.
const T0: &str = "2026-06-01T10:00:00Z";
const SLOT1: &str = "2026-06-01T10:01:00.000Z";

#[test]
fn eight_ticks_at_once_claim_500_due_jobs_exactly_once() {
    const JOBS: usize = 500;
    const TICKS: usize = 8;
    let home = TestHome::new();
    let file = home.scratch().join("ran.txt");
    let command = format!("echo $HERMES_CRON_EXECUTION_ID >> {}", file.display());
    let started = hermes_cron::clock::monotonic();
    // A few `add` processes at a time: each one is a separate process and
    // SQLite transaction, like 500 users adding jobs.
    for batch in (0..JOBS).collect::<Vec<_>>().chunks(4) {
        let adds: Vec<_> = batch
            .iter()
            .map(|i| {
                let name = format!("job{i:03}");
                let args = [
                    "add",
                    "--name",
                    &name,
                    "--schedule",
                    "every 1m",
                    "--shell",
                    "--",
                    &command,
                ];
                home.cmd(&args).now(T0).spawn()
            })
            .collect();
        for add in adds {
            add.wait().ok();
        }
    }
    let added = started.elapsed();

    // 90 s after creation: exactly one slot (10:01) of each job is due.
    let ticks: Vec<_> = (0..TICKS)
        .map(|_| home.cmd(&["tick"]).now("2026-06-01T10:01:30Z").spawn())
        .collect();
    let outs: Vec<_> = ticks.into_iter().map(|t| t.wait()).collect();
    let ticked = started.elapsed();
    let mut claimed_total = 0;
    for out in &outs {
        assert_eq!(out.status.code(), Some(0), "every tick exits 0\n{out}");
        if out.stdout.contains("another tick is claiming") {
            continue; // contended: said so, claimed nothing
        }
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with("claimed "))
            .unwrap_or_else(|| panic!("a tick reports what it claimed\n{out}"));
        claimed_total += line["claimed ".len()..]
            .split(',')
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap();
    }
    assert_eq!(
        claimed_total, JOBS,
        "the ticks together claimed each job once"
    );

    let rows = home.settle(None, JOBS);
    let settled = started.elapsed();
    let mut per_job: HashMap<&str, usize> = HashMap::new();
    for row in &rows {
        *per_job.entry(row["job_id"].as_str().unwrap()).or_default() += 1;
        assert_eq!(row["scheduled_for"], SLOT1, "{row}");
        assert_eq!(row["attempt"], 1);
        assert_eq!(row["source"], "schedule");
        assert_eq!(row["state"], "succeeded", "{row}");
        assert_eq!(row["dispatch_mode"], "degraded");
    }
    assert_eq!(per_job.len(), JOBS, "every job has a row");
    assert!(per_job.values().all(|n| *n == 1), "no job has two rows");

    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), JOBS, "each command ran exactly once");
    let ran: HashSet<&str> = lines.iter().copied().collect();
    assert_eq!(ran.len(), JOBS, "unique execution ids");
    let ids: HashSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ran, ids,
        "the file holds exactly the ledger's execution ids"
    );

    // A later tick at the same instant finds nothing more to do.
    let again = home.tick("2026-06-01T10:01:30Z");
    assert!(again.stdout.starts_with("claimed 0,"), "{again}");
    assert_eq!(home.runs(None).len(), JOBS);
    eprintln!(
        "timing: add {JOBS} jobs {added:?}, {TICKS} ticks {:?}, settled {:?}",
        ticked - added,
        settled - ticked
    );
}

#[test]
fn a_contended_tick_exits_0_saying_so_and_claims_nothing() {
    let home = TestHome::new();
    home.add_at(T0, "a", "every 1m", &[], &["true"]);
    // Another tick (here: this test) holds the lock.
    let lock_file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(home.cron_dir().join(".hermes-cron.tick.lock"))
        .unwrap();
    let held = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, e)| e)
        .unwrap();

    let out = home.tick("2026-06-01T10:01:30Z");
    assert!(
        out.stdout.contains("another tick is claiming"),
        "says so\n{out}"
    );
    let json = home
        .cmd(&["tick", "--json"])
        .now("2026-06-01T10:01:30Z")
        .run()
        .ok()
        .json();
    assert_eq!(json["contended"], true, "{json}");
    assert!(home.runs(None).is_empty(), "claimed nothing");

    drop(held);
    let json = home
        .cmd(&["tick", "--json"])
        .now("2026-06-01T10:01:30Z")
        .run()
        .ok()
        .json();
    assert_eq!(json["contended"], false, "{json}");
    assert_eq!(json["claimed"].as_array().unwrap().len(), 1, "{json}");
    home.settle(None, 1);
}

/// A home whose every-1m job `c` (touching the file returned) was claimed
/// for 10:01 by a tick killed right after its claim committed; its output.
fn a_tick_killed_after_its_claim() -> (TestHome, std::path::PathBuf, crate::support::cli::Out) {
    let home = TestHome::new();
    let marker = home.scratch().join("ran");
    home.add_at(
        T0,
        "c",
        "every 1m",
        &[],
        &["touch", marker.to_str().unwrap()],
    );
    let crashed = home
        .cmd(&["tick"])
        .now("2026-06-01T10:01:10Z")
        .env("HERMES_CRON_CRASH_AT", "after_claim_commit")
        .run();
    assert_eq!(
        crashed.status.signal(),
        Some(libc::SIGKILL),
        "the crash point kills the tick\n{crashed}"
    );
    (home, marker, crashed)
}

/// Also the regression test for `after_claim_commit` being documented in
/// `crash.rs` but never reached: the tick used to run on and dispatch.
#[test]
fn a_tick_killed_after_the_claim_commit_is_neither_doubled_nor_lost() {
    let (home, marker, _crashed) = a_tick_killed_after_its_claim();
    let rows = home.runs(None);
    assert_eq!(rows.len(), 1, "{}", summary(&rows));
    assert_eq!(rows[0]["state"], "claimed");
    assert_eq!(rows[0]["scheduled_for"], SLOT1);
    let id = rows[0]["id"].as_str().unwrap().to_string();

    // The next tick (same instant, and again later in the same minute):
    // the claim never started, so the next tick takes it over and runs it.
    let out = home
        .cmd(&["tick", "--json"])
        .now("2026-06-01T10:01:20Z")
        .run()
        .ok();
    let report = out.json();
    let claimed = report["claimed"].as_array().unwrap();
    assert_eq!(claimed.len(), 1, "{out}");
    assert_eq!(claimed[0]["id"], id.as_str(), "the same row, taken over");
    assert_eq!(claimed[0]["dispatch"], "started", "{out}");
    assert!(report["resolved_unknown"].as_array().unwrap().is_empty());
    assert!(out.stderr.contains("taken over"), "{out}");
    home.tick("2026-06-01T10:01:50Z");

    let rows = home.settle(None, 1);
    assert_eq!(rows.len(), 1, "not doubled: {}", summary(&rows));
    let row = &rows[0];
    assert_eq!(row["id"], id.as_str(), "the same row, not a second one");
    assert_eq!(row["state"], "succeeded", "not lost: run");
    assert!(marker.exists(), "its command ran");

    // The next slot is its own occurrence and runs normally.
    home.tick("2026-06-01T10:02:00Z");
    let rows = home.settle(None, 2);
    assert_eq!(
        with(&rows, "state", "succeeded").len(),
        2,
        "{}",
        summary(&rows)
    );
}

/// A claim that never started and is found past its misfire grace (the
/// catch-up policy's bound for a late slot) is `missed` (`claimer_died`),
/// never run that late; the reason names what was checked.
#[test]
fn a_claim_found_past_its_misfire_grace_is_missed_not_run() {
    let (home, _marker, crashed) = a_tick_killed_after_its_claim();
    // The grace of an every-1m job: 2 min. The slots since are the
    // catch-up policy's as ever (10:02 collapsed into 10:03).
    home.tick("2026-06-01T10:03:30Z");
    let rows = home.settle(None, 3);
    assert_eq!(
        with(&rows, "state", "succeeded").len(),
        1,
        "{}",
        summary(&rows)
    );
    let missed = with(&rows, "state", "missed");
    let retaken: Vec<_> = missed
        .iter()
        .filter(|r| r["reason_code"] == "claimer_died")
        .collect();
    assert_eq!(retaken.len(), 1, "{}", summary(&rows));
    assert_eq!(retaken[0]["scheduled_for"], SLOT1);
    let reason = retaken[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("pid {}", crashed.pid))
            && reason.contains("start time")
            && reason.contains("past its misfire grace of 2m"),
        "the reason names what was checked: {reason}"
    );
}

#[test]
fn a_missing_cron_directory_fails_the_tick_naming_it() {
    let home = TestHome::new();
    home.add_at(T0, "a", "every 1m", &[], &["true"]);
    std::fs::remove_dir_all(home.cron_dir()).unwrap();
    let out = home.cmd(&["tick"]).now("2026-06-01T10:01:00Z").run();
    assert_ne!(out.code(), 0, "{out}");
    let dir = home.cron_dir().display().to_string();
    assert!(
        out.stderr.contains(&dir) && out.stderr.contains("does not exist"),
        "{out}"
    );
    assert!(!home.cron_dir().exists(), "tick does not invent a home");
}

/// `unshare -m sh -c 'bind-mount DIR read-only; exec hermes-cron ...'`, if
/// this machine lets us make a mount namespace (root, or CAP_SYS_ADMIN).
fn read_only_wrapper(dir: &Path) -> Option<Vec<String>> {
    let probe = std::process::Command::new("unshare")
        .args(["-m", "true"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    Some(vec![
        "unshare".into(),
        "-m".into(),
        "sh".into(),
        "-c".into(),
        r#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@""#.into(),
        dir.display().to_string(),
    ])
}

/// A read-only cron directory (a read-only bind mount, which root cannot
/// write through either) fails the tick with a non-zero exit naming the
/// cause, in both journal modes: under WAL the database open fails first;
/// under the rollback journal the database opens read-only and the tick
/// lock is what fails.
#[test]
fn a_read_only_cron_directory_fails_the_tick_naming_the_cause() {
    for journal in ["wal", "delete"] {
        let mut home = TestHome::new();
        home.set_env("HERMES_CRON_JOURNAL", journal);
        home.add_at(T0, "a", "every 1m", &[], &["true"]);
        let _ = std::fs::remove_file(home.cron_dir().join(".hermes-cron.tick.lock"));
        let Some(wrapper) = read_only_wrapper(&home.cron_dir()) else {
            eprintln!(
                "SKIPPED: cannot create a mount namespace here, so no read-only directory \
                 that root cannot write; the missing-directory and EACCES cases still run"
            );
            return;
        };
        let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
        let out = home
            .cmd(&["tick"])
            .now("2026-06-01T10:01:00Z")
            .wrapped(&wrapper)
            .run();
        assert_eq!(out.code(), 1, "{journal}: {out}");
        let lower = out.stderr.to_lowercase();
        assert!(
            lower.contains("read-only file system") || lower.contains("filesystem is read-only"),
            "{journal}: names the cause\n{out}"
        );
        if journal == "delete" {
            assert!(
                out.stderr.contains(".hermes-cron.tick.lock"),
                "the lock failed: {out}"
            );
        }
        assert!(home.runs(None).is_empty(), "nothing claimed");
    }
}

/// A lock file this process may not open (EACCES). As root, mode bits do not
/// stop us, so the tick runs without CAP_DAC_OVERRIDE (dropped from its
/// bounding set by `setpriv`), which makes root obey them like anyone else.
#[test]
fn an_unopenable_lock_file_fails_the_tick_with_eacces() {
    let home = TestHome::new();
    home.add_at(T0, "a", "every 1m", &[], &["true"]);
    let lock = home.cron_dir().join(".hermes-cron.tick.lock");
    std::fs::write(&lock, "").unwrap();
    std::fs::set_permissions(&lock, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let mut cmd = home.cmd(&["tick"]).now("2026-06-01T10:01:00Z");
    if nix::unistd::geteuid().is_root() {
        let probe = std::process::Command::new("setpriv")
            .args([
                "--bounding-set",
                "-dac_override,-dac_read_search",
                "--",
                "sh",
                "-c",
                "exec 3<>\"$0\"",
            ])
            .arg(&lock)
            .output();
        match probe {
            Ok(p) if !p.status.success() => {}
            _ => {
                eprintln!(
                    "SKIPPED: running as root and cannot drop CAP_DAC_OVERRIDE with setpriv, \
                     so no file is unopenable for us"
                );
                return;
            }
        }
        cmd = cmd.wrapped(&[
            "setpriv",
            "--bounding-set",
            "-dac_override,-dac_read_search",
            "--",
        ]);
    }
    let out = cmd.run();
    assert_eq!(out.code(), 1, "{out}");
    assert!(out.stderr.contains(".hermes-cron.tick.lock"), "{out}");
    assert!(
        out.stderr.contains("Permission denied") && out.stderr.contains("permission denied;"),
        "names the errno and the hint\n{out}"
    );
    assert!(home.runs(None).is_empty(), "nothing claimed");
}

/// Regression: the claimer (a `tick` or `run` process) exited right after it
/// released the worker; a second tick starting before the worker adopted its
/// row found the row `claimed` by a dead process and resolved it `unknown`
/// (claimer_died), so the live worker could not adopt it and the occurrence
/// never ran. A worker that is slow to start (here: a wrapper that sleeps
/// before exec'ing the real worker) makes the window certain. Sweeps now
/// leave a `claimed` row alone while a live process carries its
/// `--execution` (src/process/workers.rs).
#[test]
fn regression_a_tick_right_after_another_does_not_steal_a_row_its_worker_is_adopting() {
    let mut home = TestHome::new();
    let slow = home.scratch().join("slow-worker");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh\nsleep 1\nexec {} \"$@\"\n",
            crate::support::cli::worker_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&slow, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    home.set_env("HERMES_CRON_WORKER", &slow);
    let marker = home.scratch().join("ran");
    home.add_at(
        T0,
        "slow",
        "every 1m",
        &["--overlap", "allow", "--shell"],
        &[&format!("echo x >> {}", marker.display())],
    );

    // A scheduled occurrence, then at once another tick.
    home.tick("2026-06-01T10:01:00Z");
    let out = home.tick("2026-06-01T10:01:05Z");
    assert!(!out.stdout.contains("unknown"), "{out}");
    // A manual one (`run` without --wait), then at once a tick.
    home.cmd(&["run", "slow"])
        .now("2026-06-01T10:01:10Z")
        .run()
        .ok();
    let out = home.tick("2026-06-01T10:01:15Z");
    assert!(!out.stdout.contains("unknown"), "{out}");

    let rows = home.settle(None, 2);
    assert_eq!(
        with(&rows, "state", "succeeded").len(),
        2,
        "{}",
        summary(&rows)
    );
    let ran = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(ran.lines().count(), 2, "both commands ran");
}

/// Regression: the one degraded warning printed the fix with a literal
/// `<user>` and `<uid>` instead of this user's name and uid.
#[test]
fn regression_the_degraded_warning_names_the_user() {
    let home = TestHome::new();
    home.add_at(T0, "a", "every 1m", &[], &["true"]);
    let out = home.tick("2026-06-01T10:01:00Z");
    let warning = out
        .stderr
        .lines()
        .find(|l| l.contains("degraded"))
        .unwrap_or_else(|| panic!("one degraded warning\n{out}"));
    assert!(
        warning.contains(crate::support::host_fix_marker()),
        "{warning}"
    );
    assert!(
        !warning.contains("<user>") && !warning.contains("<uid>"),
        "{warning}"
    );
    let uid = nix::unistd::getuid();
    assert!(warning.contains(&format!("/run/user/{uid}")), "{warning}");
    home.settle(None, 1);
}

/// `tick` on a home that has a job but nothing due yet claims nothing.
#[test]
fn a_tick_before_the_first_slot_claims_nothing() {
    let home = TestHome::new();
    home.add_at(T0, "a", "every 1m", &[], &["true"]);
    let out = home.tick("2026-06-01T10:00:59Z");
    assert!(
        out.stdout.starts_with("claimed 0, skipped 0, missed 0"),
        "{out}"
    );
    assert!(home.runs(None).is_empty());
    let job: Value = home.run(&["show", "a", "--json"]).ok().json();
    assert_eq!(job["next_run_at"], SLOT1);
}

/// Regression: `sweep_before_resolve` was documented in `crash.rs` but never
/// reached. A sweep killed just before retaking a dead claimer's row leaves
/// the row as it was; the next sweep retakes it, once.
#[test]
fn regression_a_sweep_killed_before_resolving_leaves_the_row_for_the_next() {
    let home = TestHome::new();
    home.add_at(T0, "c", "every 1m", &[], &["true"]);
    let crashed = home
        .cmd(&["tick"])
        .now("2026-06-01T10:01:00Z")
        .env("HERMES_CRON_CRASH_AT", "after_claim_commit")
        .run();
    assert_eq!(crashed.status.signal(), Some(libc::SIGKILL), "{crashed}");
    let sweeper = home
        .cmd(&["tick"])
        .now("2026-06-01T10:01:10Z")
        .env("HERMES_CRON_CRASH_AT", "sweep_before_resolve")
        .run();
    assert_eq!(sweeper.status.signal(), Some(libc::SIGKILL), "{sweeper}");
    let rows = home.runs(None);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["state"], "claimed", "untouched: {}", summary(&rows));
    home.tick("2026-06-01T10:01:20Z");
    let rows = home.settle(None, 1);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["state"], "succeeded", "retaken and run once");
}
