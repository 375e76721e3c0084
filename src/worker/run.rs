//! One worker's life: wait for go, adopt the row, run the command under
//! supervision with its output captured, write the terminal row. A worker
//! given a stage line instead holds its row ahead of the instant and starts
//! at its release (`staged.rs`); both share the rest of this file.
//!
//! The worker exits 0 when the job succeeded and 1 when its outcome (failed,
//! timed out, cancelled) was recorded; its own failures use the 12x codes in
//! [`crate::exit`], which no job outcome maps to.

use super::capture::{Activity, spawn_capture};
use super::environment::job_environment;
use super::go::{Heard, wait_for_go};
use super::patience;
use super::supervise::{Knobs, handled_signals, supervise};
use crate::clock::{Clock, SystemClock};
use crate::db::Db;
use crate::exit;
use crate::home::{Home, ensure_private_dir};
use crate::ids::ExecutionId;
use crate::ledger::{
    self, DispatchMode, ExecState, Execution, Finished, RowOwner, RunSpec, Taking,
};
use crate::process::{Owner, OwnerRole, kill_grace};
use crate::text::Chain;
use hermes_cron_core::placement::CauseCode;
use hermes_cron_core::run::judge;
use nix::sys::signal::{SigHandler, Signal, signal};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What the launcher tells a worker: its run, and (for launchers that
/// write a bare go) how it was placed.
#[derive(Clone, Debug)]
pub struct WorkerArgs {
    pub home: PathBuf,
    pub execution: String,
    /// Replaced by the go line's placement when it carries one.
    pub mode: DispatchMode,
    /// Why the mode is not `scoped`.
    pub cause: Option<CauseCode>,
    pub unit: Option<String>,
    /// Also copy the job's output to the worker's stdout.
    pub tee: bool,
}

/// Say something about this run in the worker's log (`logs/hermes-cron-worker.log` for
/// detached workers), inside the run's span.
pub(super) fn say(msg: impl std::fmt::Display) {
    tracing::warn!("{msg}");
}

/// Run the worker; returns its exit code. Everything it logs is inside a
/// `run{execution=…}` span.
pub fn run(args: WorkerArgs) -> i32 {
    let span = tracing::info_span!("run", execution = %args.execution);
    span.in_scope(|| run_in(args))
}

fn run_in(mut args: WorkerArgs) -> i32 {
    let staged = match wait_for_go() {
        Heard::GiveUp => return exit::OK,
        Heard::Go => false,
        Heard::GoPlaced(go) => {
            args.place(go);
            false
        }
        Heard::Stage(go) => {
            args.place(go);
            true
        }
    };
    // Our launcher may have ignored these (a foreground `run` ignores Ctrl-C
    // while it waits); ignored signals are never delivered, so take them back.
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: restoring the default disposition installs no handler code.
        let _ = unsafe { signal(sig, SigHandler::SigDfl) };
    }
    if !staged {
        // Blocked to be waited for synchronously, before any thread exists.
        // A staged worker blocks them at its release: until then a signal
        // ends it like any process, before its command started.
        block_handled_signals();
    }
    let opened = match open_run(&args) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    if staged {
        return super::staged::run_staged(&opened, &args);
    }
    let Opened {
        clock,
        home,
        db,
        id,
        row,
        spec,
        me,
    } = &opened;
    crate::crash::point("worker_before_adopt");
    let claimer = row.owner.clone().unwrap_or_else(|| RowOwner::stored(""));
    let adopt = |_attempt| {
        ledger::adopt(
            db.conn(),
            id,
            &claimer,
            &Taking {
                worker: *me,
                mode: args.mode,
                cause: args.cause,
                unit: args.unit.as_deref(),
                at: clock.now(),
            },
        )
    };
    let adopted = row.state == ExecState::Claimed
        && match patience::retry("adopt the row", say, adopt) {
            Ok(adopted) => adopted,
            Err(e) => {
                say(format!("cannot adopt the row: {}", Chain(&e)));
                return exit::WORKER_LEDGER;
            }
        };
    if !adopted {
        say(format!("row is {} and not ours to run; exiting", row.state));
        return exit::WORKER_NOT_OURS;
    }
    crate::crash::point("worker_after_adopt");
    let adopted = Adopted {
        db,
        clock,
        home,
        id,
        row,
        spec,
        me: *me,
    };
    execute(&adopted, args.tee)
}

/// Block the signals the worker takes with `sigtimedwait`.
pub(super) fn block_handled_signals() {
    if handled_signals().thread_block().is_err() {
        say("cannot block signals");
    }
}

/// What a worker opened and read before it touches its row.
pub(super) struct Opened {
    pub clock: SystemClock,
    pub home: Home,
    pub db: Db,
    pub id: ExecutionId,
    pub row: Execution,
    pub spec: RunSpec,
    pub me: Owner,
}

/// Open the ledger and read the row; `Err` is the worker's exit code.
fn open_run(args: &WorkerArgs) -> Result<Opened, i32> {
    let clock = SystemClock::from_env().map_err(|e| {
        say(e);
        exit::WORKER_USAGE
    })?;
    let home = Home::at(&args.home);
    let db = Db::open_home(&home).map_err(|e| {
        say(Chain(&e).to_string());
        exit::WORKER_LEDGER
    })?;
    let id = ExecutionId::from_string(args.execution.clone());
    let (row, spec) = match ledger::get_execution(db.conn(), &id) {
        Ok(Some(found)) => found,
        Ok(None) => {
            say("no such execution in the ledger");
            return Err(exit::WORKER_NOT_OURS);
        }
        Err(e) => {
            say(format!("cannot read the ledger: {e}"));
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
    })
}

impl WorkerArgs {
    /// Take the placement the launcher's line gave.
    fn place(&mut self, go: crate::worker::Go) {
        self.mode = go.mode;
        self.cause = go.cause;
        self.unit = go.unit;
    }
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

/// A run this worker adopted (or staged), and what it runs with.
pub(super) struct Adopted<'a> {
    pub db: &'a Db,
    pub clock: &'a SystemClock,
    pub home: &'a Home,
    pub id: &'a ExecutionId,
    pub row: &'a Execution,
    pub spec: &'a RunSpec,
    pub me: Owner,
}

/// Record a run whose command never started.
pub(super) fn not_started(a: &Adopted<'_>, why: String) -> i32 {
    let finished = Finished::not_started(why);
    let record = |_attempt| ledger::finish(a.db.conn(), a.id, &a.me, &finished, a.clock.now());
    if let Err(e) = patience::retry("record the outcome", say, record) {
        say(format!("cannot record the outcome: {}", Chain(&e)));
        return exit::WORKER_LEDGER;
    }
    exit::WORKER_EXEC
}

/// What a run needs before its command can start: its environment and its
/// output file (a file that cannot be opened is a note, not a failure).
pub(super) struct Prepared {
    pub env: Vec<(String, String)>,
    pub file: Option<File>,
    pub notes: Vec<String>,
}

/// Prepare `a`'s command; `Err` says why it cannot start.
pub(super) fn prepare(a: &Adopted<'_>) -> Result<Prepared, String> {
    let env = job_environment(a.home, a.row, a.spec)?;
    let mut notes = Vec::new();
    let file = open_output(a.row, a.spec.output_append).unwrap_or_else(|e| {
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

fn execute(a: &Adopted<'_>, tee: bool) -> i32 {
    let prepared = match prepare(a) {
        Ok(p) => p,
        Err(why) => return not_started(a, why),
    };
    let (child, reader) = match spawn_job(a.spec, &prepared.env) {
        Ok(pair) => pair,
        Err(e) => return not_started(a, cannot_start(a.spec, &e)),
    };
    supervise_and_record(a, child, reader, prepared, tee)
}

/// Watch the started command to its end and write the terminal row.
pub(super) fn supervise_and_record(
    a: &Adopted<'_>,
    child: std::process::Child,
    reader: std::os::fd::OwnedFd,
    prepared: Prepared,
    tee: bool,
) -> i32 {
    let Adopted {
        db,
        clock,
        id,
        row,
        spec,
        me,
        ..
    } = *a;
    let Prepared {
        file, mut notes, ..
    } = prepared;
    let activity = Activity::starting_now();
    let capture = spawn_capture(reader, file, spec.output_max_bytes, tee, activity.clone());
    let knobs = Knobs {
        timeout: (spec.timeout_s > 0).then(|| Duration::from_secs(spec.timeout_s)),
        idle: spec.idle_timeout_s.map(Duration::from_secs),
        grace: kill_grace(),
        heartbeat: Duration::from_secs(spec.heartbeat_interval_s.max(1)),
    };
    let pid = child.id();
    let done = supervise(pid, knobs, &activity, || {
        let _ = ledger::heartbeat(db.conn(), id, &me, clock.now());
    });
    // `supervise` reaped it with wait4 (for its rusage); std never waits on drop.
    drop(child);
    let captured = join_capture(capture);
    crate::crash::point("worker_before_finish");
    let end = judge(
        &done.ending,
        knobs.timeout.unwrap_or_default(),
        knobs.idle.unwrap_or_default(),
        spec.declined_exit,
    );
    let succeeded = end.state() == ExecState::Succeeded;
    if captured.write_failed {
        notes.push("writing the output file failed (disk full?); output truncated".into());
    }
    let mut finished = Finished {
        end,
        exit: Some(done.ending.exit),
        duration_ms: Some(done.duration.as_millis() as u64),
        max_rss_kb: Some(done.max_rss_kb),
        output_bytes: Some(captured.stored),
        output_truncated: Some(captured.truncated),
        notes,
    };
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
        Ok(false) => record_late(db, id, me, &finished, at),
        Err(e) => {
            say(format!("cannot record the outcome: {}", Chain(&e)));
            return exit::WORKER_LEDGER;
        }
    }
    if succeeded { exit::OK } else { exit::FAILURE }
}

/// The row moved on without us. When a survivor recorded it `unknown`
/// (`host_lost`) while this worker, its owner, still ran (this host was cut
/// off, or frozen, past its lease), the outcome is kept as the row's late
/// outcome; the row itself stays as the survivor decided.
fn record_late(
    db: &Db,
    id: &ExecutionId,
    me: Owner,
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
    let host = &crate::cluster::Host::this().name;
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

/// Wait for the output thread, but not forever: a job's background process
/// may hold the pipe open after the job itself exited.
fn join_capture(
    handle: std::thread::JoinHandle<super::capture::Captured>,
) -> super::capture::Captured {
    let deadline = crate::clock::monotonic() + Duration::from_secs(2);
    while !handle.is_finished() && crate::clock::monotonic() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if handle.is_finished() {
        handle.join().unwrap_or_default()
    } else {
        super::capture::Captured {
            truncated: true,
            ..Default::default()
        }
    }
}

pub(super) fn spawn_job(
    spec: &RunSpec,
    env: &[(String, String)],
) -> std::io::Result<(std::process::Child, std::os::fd::OwnedFd)> {
    let argv = spec.command();
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"))?;
    let (reader, writer) = nix::unistd::pipe().map_err(std::io::Error::from)?;
    let writer2 = writer.try_clone()?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer2))
        .process_group(0)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &spec.workdir {
        cmd.current_dir(dir);
    }
    // We block SIGTERM, SIGINT, SIGHUP and SIGCHLD to take them with
    // sigtimedwait; the job must start with none blocked.
    // SAFETY: unblock_all_signals is one async-signal-safe call.
    unsafe {
        cmd.pre_exec(crate::process::unblock_all_signals);
    }
    let child = cmd.spawn()?;
    // `cmd` still holds the write ends; drop it so EOF comes when the job's side closes.
    drop(cmd);
    Ok((child, reader))
}
