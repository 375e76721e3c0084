//! The worker through the real binaries (`run JOB --wait`, scoped against the real user
//! manager): output cap, timeout, exit codes, exec failures, env, workdir, shell, and
//! arguments that stay arguments.

use crate::support::rows::execution_id_in;
use crate::support::{TestHome, wait_for};
use serde_json::Value;

/// `run JOB --wait`: the exit code of the CLI and the row of the run.
fn run_wait(h: &TestHome, job: &str) -> (i32, Value) {
    let out = h.run(&["run", job, "--wait"]);
    let row = h
        .row(&execution_id_in(&out.stdout))
        .unwrap_or_else(|| panic!("no row: {out:#?}"));
    assert_eq!(row["terminal"], true, "--wait returned early: {row:#}");
    (out.code(), row)
}

#[test]
fn output_beyond_the_cap_is_truncated_with_a_mark() {
    let h = TestHome::scoped();
    h.config_set("cron.output_max_bytes", "1024");
    h.add(
        "chatty",
        "every 1h",
        &[],
        &["sh", "-c", r#"head -c 5000 /dev/zero | tr '\0' x"#],
    );
    let (code, row) = run_wait(&h, "chatty");
    assert_eq!(code, 0, "{row:#}");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["output_truncated"], true, "{row:#}");
    assert_eq!(row["output_bytes"], 1024, "{row:#}");
    let text = h.output_of(&row);
    let (kept, mark) = text.split_at(1024);
    assert_eq!(kept, "x".repeat(1024));
    assert_eq!(mark, "\n[hermes-cron: output truncated at 1024 bytes]\n");
}

/// A job whose background process keeps its output open is recorded with
/// the output it wrote (it was recorded as `output_bytes 0, truncated`,
/// though its file had the output), and the row says why the rest is not.
#[test]
fn output_held_open_by_a_process_left_running_is_recorded_as_it_stood() {
    let h = TestHome::scoped();
    h.add(
        "leaves-output-open",
        "every 1h",
        &[],
        &["sh", "-c", "echo before; (sleep 30; echo after) & exit 0"],
    );
    let (code, row) = run_wait(&h, "leaves-output-open");
    assert_eq!(code, 0, "{row:#}");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(row["output_bytes"], 7, "{row:#}");
    assert_eq!(row["output_truncated"], false, "{row:#}");
    assert!(
        row["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("still holds the output open"),
        "{row:#}"
    );
    assert_eq!(h.output_of(&row), "before\n");
    if let Some(unit) = row["unit"].as_str() {
        let _ = crate::support::real_manager::systemctl(
            &crate::support::real_manager::bus_env(),
            &["stop", unit],
        );
    }
}

#[test]
fn a_job_ignoring_sigterm_is_killed_at_the_timeout() {
    let h = TestHome::scoped().with_env("HERMES_CRON_KILL_GRACE_MS", "200");
    h.add(
        "stubborn",
        "every 1h",
        &["--timeout", "1s"],
        &["sh", "-c", r#"trap "" TERM; sleep 60"#],
    );
    let (code, row) = run_wait(&h, "stubborn");
    assert_eq!(code, 1, "{row:#}");
    assert_eq!(row["state"], "timed_out", "{row:#}");
    assert_eq!(row["reason_code"], "timeout", "{row:#}");
    assert_eq!(
        row["signal"], 9,
        "SIGTERM was ignored, SIGKILL ended it: {row:#}"
    );
}

#[test]
fn a_non_zero_exit_is_failed_with_its_code() {
    let h = TestHome::scoped();
    h.add(
        "three",
        "every 1h",
        &[],
        &["sh", "-c", "echo before; exit 3"],
    );
    let (code, row) = run_wait(&h, "three");
    assert_eq!(code, 1, "{row:#}");
    assert_eq!(row["state"], "failed", "{row:#}");
    assert_eq!(row["reason_code"], "exit_code", "{row:#}");
    assert_eq!(row["exit_code"], 3, "{row:#}");
    assert_eq!(h.output_of(&row), "before\n");
}

#[test]
fn a_missing_program_is_failed_as_exec_failed() {
    let h = TestHome::scoped();
    for (name, program) in [
        ("absent-path", "/nonexistent/hermes-cron-test-program"),
        ("absent-name", "hermes-cron-test-no-such-program"),
    ] {
        h.add(name, "every 1h", &["--no-check"], &[program, "arg"]);
        let (code, row) = run_wait(&h, name);
        assert_eq!(code, 1, "{row:#}");
        assert_eq!(row["state"], "failed", "{row:#}");
        assert_eq!(row["reason_code"], "exec_failed", "{row:#}");
        assert!(row["reason"].as_str().unwrap().contains(program), "{row:#}");
    }
}

#[test]
fn env_reaches_the_job_verbatim() {
    let h = TestHome::scoped();
    h.add(
        "greeter",
        "every 1h",
        &["--env", "GREETING=hello world; $(touch pwned) `id`"],
        &[
            "sh",
            "-c",
            r#"printf '%s|%s' "$GREETING" "$HERMES_CRON_EXECUTION_ID""#,
        ],
    );
    let (code, row) = run_wait(&h, "greeter");
    assert_eq!(code, 0, "{row:#}");
    assert_eq!(
        h.output_of(&row),
        format!(
            "hello world; $(touch pwned) `id`|{}",
            row["id"].as_str().unwrap()
        )
    );
}

#[test]
fn workdir_is_the_jobs_current_directory() {
    let h = TestHome::scoped();
    let dir = h.scratch().join("work dir");
    std::fs::create_dir(&dir).unwrap();
    h.add(
        "where",
        "every 1h",
        &["--workdir", dir.to_str().unwrap()],
        &["pwd"],
    );
    let (_, row) = run_wait(&h, "where");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(h.output_of(&row), format!("{}\n", dir.display()));
}

#[test]
fn shell_jobs_run_through_sh_c() {
    let h = TestHome::scoped();
    h.add(
        "piped",
        "every 1h",
        &["--shell"],
        &["echo one && echo two | tr o 0"],
    );
    let (_, row) = run_wait(&h, "piped");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(h.output_of(&row), "one\ntw0\n");
}

#[test]
fn arguments_without_shell_are_passed_literally() {
    let h = TestHome::scoped();
    let dir = h.scratch().join("wd");
    std::fs::create_dir_all(dir.join("x")).unwrap();
    h.add(
        "literal",
        "every 1h",
        &["--workdir", dir.to_str().unwrap()],
        &[
            "printf",
            r"%s\n",
            "$(touch pwned)",
            ";rm -rf x",
            "`touch pwned2`",
        ],
    );
    let (_, row) = run_wait(&h, "literal");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    assert_eq!(
        h.output_of(&row),
        "$(touch pwned)\n;rm -rf x\n`touch pwned2`\n"
    );
    assert!(!dir.join("pwned").exists());
    assert!(!dir.join("pwned2").exists());
    assert!(dir.join("x").is_dir());
}

#[test]
fn foreground_runs_in_process_with_output_here() {
    let h = TestHome::scoped();
    h.add("fg", "every 1h", &[], &["echo", "in the foreground"]);
    let out = h.run(&["run", "fg", "--foreground"]).ok();
    assert!(out.stdout.contains("in the foreground\n"), "{out:#?}");
    let rows = h.runs(Some("fg"));
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["state"], "succeeded", "{:#}", rows[0]);
    assert_eq!(rows[0]["dispatch_mode"], "in_process", "{:#}", rows[0]);
    assert_eq!(rows[0]["unit"], Value::Null, "{:#}", rows[0]);
}

#[test]
fn a_job_silent_for_its_idle_timeout_is_stopped_as_idle_and_a_chatty_one_is_not() {
    let h = TestHome::new();
    h.add(
        "hung",
        "every 1h",
        &["--idle-timeout", "1s"],
        &["sh", "-c", "echo started; sleep 60"],
    );
    let (code, row) = run_wait(&h, "hung");
    assert_eq!(code, 1, "{row:#}");
    assert_eq!(row["state"], "timed_out", "{row:#}");
    assert_eq!(row["reason_code"], "idle", "{row:#}");
    assert!(
        row["duration_ms"].as_u64().unwrap() < 30_000,
        "stopped at its idle timeout, not its 60 s: {row:#}"
    );
    assert_eq!(h.output_of(&row), "started\n");
    // Output every 0.2 s for 2 s keeps a 1 s idle timeout from firing.
    h.add(
        "chatty",
        "every 1h",
        &["--idle-timeout", "1s"],
        &[
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8 9 10; do echo $i; sleep 0.2; done",
        ],
    );
    let (code, row) = run_wait(&h, "chatty");
    assert_eq!(
        (code, row["state"].as_str()),
        (0, Some("succeeded")),
        "{row:#}"
    );
    let shown = h.run(&["show", "chatty", "--json"]).ok().json();
    assert_eq!(shown["idle_timeout_s"], 1, "{shown:#}");
}

/// Field `n` (1-based, after the command) of `/proc/<pid>/stat`.
fn stat_field(pid: u32, n: usize) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    rest.split(' ').nth(n - 3).map(str::to_string)
}

/// Held workers are started with `posix_spawn` (no `pre_exec` hook), so the
/// worker itself must leave the launcher's session and clear the signal
/// mask it inherits (the gateway blocks SIGTERM for its signal thread).
#[test]
fn a_held_worker_starts_its_own_session_and_dies_of_sigterm_at_its_gate() {
    use hermes_cron::dispatch::{Attach, HeldWorker, WorkerCall};
    let h = TestHome::new();
    // Block SIGTERM here, as the gateway does, so the child inherits the mask.
    let mut set = nix::sys::signal::SigSet::empty();
    set.add(nix::sys::signal::Signal::SIGTERM);
    let old = set
        .thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK)
        .unwrap();
    let held = HeldWorker::spawn(
        crate::support::cli::worker_bin(),
        &WorkerCall {
            home: h.path(),
            execution: "0190f5d2-7c4e-7b3a-9c1d-2e4f6a8b0c1d",
            start: &hermes_cron::process::start_attrs::of_this_process(),
        },
        Attach::Detached,
    );
    old.thread_set_mask().unwrap();
    let mut held = held.expect("spawn the worker");
    let pid = held.pid();
    wait_for(
        "the held worker to lead a session of its own with no signal blocked",
        crate::support::PATIENCE,
        || {
            let sid = stat_field(pid, 6)?;
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let unblocked = status.lines().any(|l| l == "SigBlk:\t0000000000000000");
            (sid == pid.to_string() && unblocked).then_some(())
        },
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = wait_for("the held worker to die", crate::support::PATIENCE, || {
        held.child.try_wait().ok().flatten()
    });
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM),
        "{status}"
    );
}

/// A job holds only the write ends of its output pipe (as stdout and
/// stderr): once nobody reads, its writes fail instead of filling a pipe
/// that it keeps open itself.
#[test]
fn a_job_holds_no_descriptor_but_its_stdio() {
    let h = TestHome::new();
    h.add("fds", "every 1h", &[], &["sh", "-c", "ls /proc/self/fd"]);
    let (code, row) = run_wait(&h, "fds");
    assert_eq!(code, 0, "{row:#}");
    let out = h.output_of(&row);
    let fds: Vec<&str> = out.lines().collect();
    // The fourth is ls's own, reading the directory.
    assert_eq!(fds.len(), 4, "{out}");
    assert_eq!(&fds[..3], ["0", "1", "2"], "{out}");
}
