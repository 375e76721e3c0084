//! A worker's run of its command, shared by both paths to it (`run.rs`,
//! adopted at the go line; `staged.rs`, started at the release): the ledger
//! opened and the row read, the environment and the output file prepared,
//! the command spawned in its own process group, supervised to its end with
//! its output captured, and the terminal row written (or the late outcome,
//! when a survivor recorded the row `host_lost` meanwhile).

use super::args::WorkerArgs;
use super::capture::{Activity, spawn_capture};
use super::environment::{EnvFileUnusable, job_environment};
use super::go::tell_command_pid;
use super::leftovers::{end_the_rest, left_running};
use super::patience;
use super::supervise::{Knobs, handled_signals, supervise};
use crate::clock::{Clock, SystemClock};
use crate::db::Db;
use crate::exit;
use crate::home::{Home, ensure_private_dir};
use crate::ids::ExecutionId;
use crate::ledger::{self, ExecState, Execution, Finished, RunSpec};
use crate::process::{Owner, OwnerRole};
use crate::text::Chain;
use hermes_cron_core::run::judge;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Say something about this run in the worker's log (`logs/hermes-cron-worker.log` for
/// detached workers), inside the run's span.
pub(super) fn say(msg: impl std::fmt::Display) {
    tracing::warn!("{msg}");
}

/// Block the signals the worker takes with `sigtimedwait`.
pub(super) fn block_handled_signals() {
    if handled_signals().thread_block().is_err() {
        say("cannot block signals");
    }
}

/// What a worker opened and read before it touches its row, and runs with.
pub(super) struct Opened {
    pub clock: SystemClock,
    pub home: Home,
    pub db: Db,
    pub id: ExecutionId,
    pub row: Execution,
    pub spec: RunSpec,
    pub me: Owner,
    /// This host's name.
    pub host: String,
    /// SIGTERM to SIGKILL when the command is stopped.
    pub grace: std::time::Duration,
    /// The run's scope, when it has one.
    pub unit: Option<String>,
}

/// Open the ledger and read the row; `Err` is the worker's exit code.
pub(super) fn open_run(args: &WorkerArgs) -> Result<Opened, i32> {
    let clock = SystemClock::from_env().map_err(|e| {
        say(e);
        exit::WORKER_USAGE
    })?;
    let home = Home::at(&args.home);
    let db = patience::retry("open the ledger", say, |_| Db::open_home(&home)).map_err(|e| {
        say(Chain(&e).to_string());
        exit::WORKER_LEDGER
    })?;
    let id = ExecutionId::from_string(args.execution.clone());
    let read = |_attempt| {
        ledger::get_execution(db.conn(), &id).map_err(|source| ledger::LedgerError::Read {
            what: "the run's row",
            source,
        })
    };
    let (row, spec) = match patience::retry("read the run's row", say, read) {
        Ok(Some(found)) => found,
        Ok(None) => {
            say("no such execution in the ledger");
            return Err(exit::WORKER_NOT_OURS);
        }
        Err(e) => {
            say(format!("cannot read the ledger: {}", Chain(&e)));
            return Err(exit::WORKER_LEDGER);
        }
    };
    Ok(Opened {
        clock,
        home,
        db,
        id,
        row,
        spec,
        me: crate::process::owner(OwnerRole::Worker),
        host: args.host.clone(),
        grace: args.kill_grace,
        unit: args.unit.clone(),
    })
}

fn open_output(row: &Execution, append: bool) -> Result<Option<File>, String> {
    let Some(path) = row.output_path.as_deref().map(PathBuf::from) else {
        return Ok(None);
    };
    if let Some(dir) = path.parent() {
        ensure_private_dir(dir).map_err(|e| Chain(&e).to_string())?;
    }
    OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .mode(0o600)
        .open(&path)
        .map(Some)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// Record a run whose command never started.
pub(super) fn not_started(a: &Opened, why: String) -> i32 {
    let finished = Finished::not_started(why);
    let record = |_attempt| ledger::finish(a.db.conn(), &a.id, &a.me, &finished, a.clock.now());
    if let Err(e) = patience::retry("record the outcome", say, record) {
        say(format!("cannot record the outcome: {}", Chain(&e)));
        return exit::WORKER_LEDGER;
    }
    exit::WORKER_EXEC
}

/// Record `staged -> running` at `started_at`, within the worker's patience;
/// `Err` is the worker's exit code (the row moved on, or the ledger is gone).
pub(super) fn record_start(a: &Opened, started_at: crate::schedule::Timestamp) -> Result<(), i32> {
    let start = |_attempt| ledger::start(a.db.conn(), &a.id, &a.me, started_at);
    match patience::retry("record the start", say, start) {
        Ok(true) => Ok(()),
        Ok(false) => {
            say(
                "the row was moved on before its start was recorded; the run is not ours to record",
            );
            Err(exit::WORKER_NOT_OURS)
        }
        Err(e) => {
            say(format!("cannot record the start: {}", Chain(&e)));
            Err(exit::WORKER_LEDGER)
        }
    }
}

/// What a run needs before its command can start: its environment and its
/// output file (a file that cannot be opened is a note, not a failure).
pub(super) struct Prepared {
    pub env: Vec<(String, String)>,
    pub file: Option<File>,
    pub notes: Vec<String>,
}

/// Prepare `a`'s command; `Err` says why it cannot start.
pub(super) fn prepare(a: &Opened) -> Result<Prepared, EnvFileUnusable> {
    let env = job_environment(&a.home, &a.row, &a.spec)?;
    let mut notes = Vec::new();
    // Where the job may report its model usage (`HERMES_CRON_USAGE_FILE`).
    let report = a.home.usage_report(a.row.id.as_str());
    if let Some(dir) = report.parent()
        && let Err(e) = ensure_private_dir(dir)
    {
        notes.push(format!("no place for a usage report: {e}"));
    }
    let file = open_output(&a.row, a.spec.output_append).unwrap_or_else(|e| {
        notes.push(format!("output not captured: {e}"));
        None
    });
    Ok(Prepared { env, file, notes })
}

/// Why `spawn_job` failed, as recorded.
pub(super) fn cannot_start(spec: &RunSpec, e: &std::io::Error) -> String {
    let program = spec.command().first().cloned().unwrap_or_default();
    format!("cannot start {program:?}: {e}")
}

/// Watch the started command to its end and write the terminal row.
/// `pending_start`: a staged run's start, when the ledger could not take it
/// in time: the command ran on (a ledger delay never stops a started
/// command), and the start is recorded, with its own time, before the end.
pub(super) fn supervise_and_record(
    a: &Opened,
    child: std::process::Child,
    reader: std::os::fd::OwnedFd,
    prepared: Prepared,
    tee: bool,
    pending_start: Option<crate::schedule::Timestamp>,
) -> i32 {
    let Opened {
        db,
        clock,
        id,
        row,
        spec,
        host,
        ..
    } = a;
    let me = a.me;
    let Prepared {
        file, mut notes, ..
    } = prepared;
    let activity = Activity::starting_now();
    let capture = spawn_capture(reader, file, spec.output_max_bytes, tee, activity.clone());
    let knobs = Knobs {
        timeout: (spec.timeout_s > 0).then(|| Duration::from_secs(spec.timeout_s)),
        idle: spec.idle_timeout_s.map(Duration::from_secs),
        grace: a.grace,
        heartbeat: Duration::from_secs(spec.heartbeat_interval_s.max(1)),
    };
    let pid = child.id();
    if !tee {
        tell_command_pid(pid);
    }
    let heartbeat = || {
        let _ = ledger::heartbeat(db.conn(), id, &me, clock.now());
    };
    let done = supervise(pid, knobs, &activity, heartbeat, || {
        end_the_rest(a.unit.as_deref(), pid)
    });
    // `supervise` reaped it with wait4 (for its rusage); std never waits on drop.
    drop(child);
    // Not forever: a process the command left running may hold the pipe.
    let (captured, held_open) = capture.finish(OUTPUT_PATIENCE);
    crate::crash::point("worker_before_finish");
    let end = judge(
        &done.ending,
        knobs.timeout.unwrap_or_default(),
        knobs.idle.unwrap_or_default(),
        spec.exit_meanings(),
    );
    let succeeded = end.state() == ExecState::Succeeded;
    if done.rest_killed > 0 {
        notes.push(format!(
            "the command was killed from outside hermes-cron; the {} other process(es) of the run were killed with it",
            done.rest_killed
        ));
    } else if let Some(left) = left_running(a.unit.as_deref(), pid) {
        say(&left);
        notes.push(left);
    }
    if captured.write_failed {
        notes.push("writing the output file failed (disk full?); output truncated".into());
    }
    if held_open {
        notes.push(format!(
            "its output is recorded as it stood {}s after the command ended: a process it left running still holds the output open, and what that writes is not kept",
            OUTPUT_PATIENCE.as_secs()
        ));
    }
    let usage = reported_usage(&a.home, id, &mut notes);
    let mut finished = Finished {
        end,
        exit: Some(done.ending.exit),
        duration_ms: Some(done.duration.as_millis() as u64),
        max_rss_kb: Some(done.max_rss_kb),
        output_bytes: Some(captured.stored),
        output_truncated: Some(captured.truncated),
        notes,
        usage,
    };
    if let Some(started_at) = pending_start
        && let Err(code) = record_start(a, started_at)
    {
        return code;
    }
    let at = clock.now();
    // A full disk: make room by cutting this run's own output, once.
    let mut cut = false;
    let record = |_attempt| {
        let result = ledger::finish(db.conn(), id, &me, &finished, at);
        if let Err(e) = &result
            && !cut
            && e.is_disk_full()
        {
            cut = true;
            if let Some(kept) = row
                .output_path
                .as_deref()
                .and_then(|p| patience::cut_output(std::path::Path::new(p)))
            {
                finished.output_bytes = Some(kept.min(captured.stored));
                finished.output_truncated = Some(true);
                finished.notes.push(format!(
                    "the disk was full: the output was cut to {kept} bytes to record this outcome"
                ));
            }
        }
        result
    };
    match patience::retry("record the outcome", say, record) {
        Ok(true) => crate::crash::point("worker_after_finish"),
        Ok(false) => record_late(db, id, me, host, &finished, at),
        Err(e) => {
            say(format!("cannot record the outcome: {}", Chain(&e)));
            return exit::WORKER_LEDGER;
        }
    }
    if succeeded { exit::OK } else { exit::FAILURE }
}

/// The model usage the job reported in its usage file (removed once read),
/// or None; a report that cannot be kept is a note on the row.
fn reported_usage(
    home: &Home,
    id: &ExecutionId,
    notes: &mut Vec<String>,
) -> Option<serde_json::Value> {
    let path = home.usage_report(id.as_str());
    let text = match crate::small_file::read_text(&path, crate::small_file::USAGE_MAX) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            notes.push(format!("the usage report is unreadable: {e}"));
            let _ = std::fs::remove_file(&path);
            return None;
        }
    };
    let _ = std::fs::remove_file(&path);
    hermes_cron_core::run::usage::from_report(&text)
        .map_err(|e| notes.push(e.to_string()))
        .ok()
}

/// The row moved on without us. When a survivor recorded it `unknown`
/// (`host_lost`) while this worker, its owner, still ran (this host was cut
/// off, or frozen, past its lease), the outcome is kept as the row's late
/// outcome; the row itself stays as the survivor decided.
fn record_late(
    db: &Db,
    id: &ExecutionId,
    me: Owner,
    host: &str,
    finished: &Finished,
    at: crate::schedule::Timestamp,
) {
    let row = match ledger::get_execution(db.conn(), id) {
        Ok(Some((row, _))) => row,
        _ => {
            say("the row was resolved by someone else; outcome not recorded");
            return;
        }
    };
    if !hermes_cron_core::reconcile::may_record_late(&row, &me) {
        say("the row was resolved by someone else; outcome not recorded");
        return;
    }
    let write = |_attempt| ledger::late_outcome(db.conn(), id, &me, host, finished, at);
    match patience::retry("record the late outcome", say, write) {
        Ok(true) => say(format!(
            "this host's lease had expired and the row was recorded unknown (host_lost) by {}; the outcome ({}) is kept as its late outcome",
            row.reason
                .as_deref()
                .and_then(|r| r.split("recorded by host ").nth(1))
                .and_then(|r| r.split(',').next())
                .unwrap_or("a survivor"),
            finished.end.state()
        )),
        Ok(false) => say("a late outcome was already recorded"),
        Err(e) => say(format!("cannot record the late outcome: {}", Chain(&e))),
    }
}

/// How long the output is waited for after the command ended.
const OUTPUT_PATIENCE: Duration = Duration::from_secs(2);

pub(super) fn spawn_job(
    spec: &RunSpec,
    env: &[(String, String)],
) -> std::io::Result<(std::process::Child, std::os::fd::OwnedFd)> {
    let argv = spec.command();
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"))?;
    // Close-on-exec: the job must hold only its write ends (as its stdout
    // and stderr), so that it gets SIGPIPE once nobody reads.
    let (reader, writer) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
    let writer2 = writer.try_clone()?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer2))
        .process_group(0)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)));
    // Its workdir, else its `HOME` (as cron does; `/` when that is no
    // directory), never the launcher's cwd.
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| std::path::Path::new(v.as_str()))
        .filter(|dir| dir.is_dir());
    cmd.current_dir(
        spec.workdir
            .as_deref()
            .or(home)
            .unwrap_or(std::path::Path::new("/")),
    );
    // We block SIGTERM, SIGINT, SIGHUP and SIGCHLD to take them with
    // sigtimedwait; the job must start with none blocked, and hold no
    // descriptor of ours but its stdio.
    // SAFETY: both are async-signal-safe calls.
    unsafe {
        cmd.pre_exec(|| {
            crate::process::unblock_all_signals()?;
            crate::process::only_stdio_on_exec()
        });
    }
    let child = cmd.spawn()?;
    // `cmd` still holds the write ends; drop it so EOF comes when the job's side closes.
    drop(cmd);
    Ok((child, reader))
}
