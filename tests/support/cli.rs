//! Driving the real `hermes-cron` and `hermes-cron-worker` binaries: a temp home per
//! test, a hermetic environment (the real user manager's bus, no bus, or a private one),
//! commands whose output goes to files (a detached worker inherits the CLI's stderr, so
//! reading a pipe to EOF would wait for the job too), and [`wait_for`], the only way a
//! test waits for something.

use hermes_cron::clock::{elapsed, monotonic};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::real_manager;

/// Generous upper bound for things that take milliseconds on a healthy machine.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Variables a test must not inherit from the shell that ran it.
const SCRUBBED: &[&str] = &[
    "HERMES_HOME",
    "HERMES_CRON_NOW",
    "HERMES_CRON_CRASH_AT",
    "HERMES_CRON_KILL_GRACE_MS",
    "HERMES_CRON_DBUS_TIMEOUT_MS",
    "HERMES_CRON_LOG",
    "HERMES_CRON_WORKER",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "JOURNAL_STREAM",
    "NOTIFY_SOCKET",
];

/// Polls `probe` every 20 ms until it yields a value; panics naming `what` after `limit`.
pub fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = monotonic();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            elapsed(start) < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `hermes-cron` binary under test.
pub fn cli_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hermes-cron"))
}

/// The `hermes-cron-worker` next to it (built by `cargo build/nextest --workspace`).
pub fn worker_bin() -> PathBuf {
    let worker = cli_bin().with_file_name("hermes-cron-worker");
    assert!(
        worker.is_file(),
        "{} is missing: build the whole workspace (cargo nextest run --workspace)",
        worker.display()
    );
    worker
}

/// What a finished command left behind.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Panics with both streams unless the command exited 0.
    #[track_caller]
    pub fn ok(&self) -> &Self {
        assert!(self.status.success(), "command failed: {self:#?}");
        self
    }
}

/// A command running in the background; killed and reaped on drop.
pub struct Running {
    pub child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (polling) at most `limit` for it to exit.
    pub fn finish(mut self, limit: Duration) -> Output {
        let status = wait_for("the command to exit", limit, || {
            self.child.try_wait().expect("try_wait")
        });
        Output {
            status,
            stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.err).unwrap_or_default(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which session bus the commands see.
#[derive(Clone, Debug)]
pub enum Bus {
    /// The real user manager's (see `real_manager`).
    Real,
    /// Neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR`.
    None,
    /// Only `DBUS_SESSION_BUS_ADDRESS`, set to this address.
    Address(String),
}

/// A temp home and the environment every command of a test runs with.
pub struct Hermes {
    dir: tempfile::TempDir,
    bus: Bus,
    env: Vec<(String, String)>,
    seq: AtomicUsize,
}

impl Hermes {
    /// A fresh home whose commands use the real user manager.
    pub fn new() -> Hermes {
        Hermes {
            dir: tempfile::tempdir().expect("temp home"),
            bus: Bus::Real,
            env: Vec::new(),
            seq: AtomicUsize::new(0),
        }
    }

    pub fn with_bus(mut self, bus: Bus) -> Hermes {
        self.bus = bus;
        self
    }

    /// Adds `key=value` to every command's environment.
    pub fn with_env(mut self, key: &str, value: &str) -> Hermes {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The temp dir; the home is its `home/` child, the rest is free for the test.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `hermes-cron --home H ARGS` with the test's environment, stdin from /dev/null.
    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(cli_bin());
        cmd.arg("--home").arg(self.home()).args(args);
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        cmd.env("HERMES_CRON_WORKER", worker_bin());
        match &self.bus {
            Bus::Real => {
                cmd.envs(real_manager::command_env(&real_manager::bus_env()));
            }
            Bus::None => {}
            Bus::Address(a) => {
                cmd.env("DBUS_SESSION_BUS_ADDRESS", a);
            }
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Starts `cmd` with its output going to files.
    pub fn start_command(&self, mut cmd: Command) -> Running {
        let n = self.seq.fetch_add(1, Ordering::SeqCst);
        let out = self.dir.path().join(format!("cmd{n}.out"));
        let err = self.dir.path().join(format!("cmd{n}.err"));
        cmd.stdout(std::fs::File::create(&out).expect("stdout file"))
            .stderr(std::fs::File::create(&err).expect("stderr file"));
        Running {
            child: cmd.spawn().expect("spawn hermes-cron"),
            out,
            err,
        }
    }

    /// Starts `hermes-cron ARGS` in the background.
    pub fn start<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Running {
        self.start_command(self.command(args))
    }

    /// Runs `hermes-cron ARGS` to completion (at most [`PATIENCE`]).
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Output {
        self.start(args).finish(PATIENCE)
    }

    /// Runs `cmd` to completion (at most [`PATIENCE`]).
    pub fn run_command(&self, cmd: Command) -> Output {
        self.start_command(cmd).finish(PATIENCE)
    }

    /// `add --name NAME --schedule SCHEDULE FLAGS -- CMD`; returns the job id.
    pub fn add(&self, name: &str, schedule: &str, flags: &[&str], cmd: &[&str]) -> String {
        let mut args: Vec<&str> = vec!["add", "--name", name, "--schedule", schedule];
        args.extend_from_slice(flags);
        args.push("--");
        args.extend_from_slice(cmd);
        let out = self.run(&args);
        out.ok();
        let id = out.stdout.trim().to_owned();
        assert!(!id.is_empty(), "add printed no id: {out:#?}");
        id
    }

    /// `config set KEY VALUE`.
    pub fn config_set(&self, key: &str, value: &str) {
        self.run(&["config", "set", key, value]).ok();
    }

    /// `runs [JOB] --json --limit 1000`, newest first.
    pub fn runs(&self, job: Option<&str>) -> Vec<Value> {
        let mut args = vec!["runs", "--json", "--limit", "1000"];
        if let Some(j) = job {
            args.insert(1, j);
        }
        let out = self.run(&args);
        out.ok();
        match serde_json::from_str(&out.stdout) {
            Ok(Value::Array(rows)) => rows,
            other => panic!("runs --json is not an array ({other:?}): {out:#?}"),
        }
    }

    /// The row of execution `id`, if the ledger has it.
    pub fn row(&self, id: &str) -> Option<Value> {
        self.runs(None).into_iter().find(|r| r["id"] == id)
    }

    /// Waits until execution `id` is terminal and returns its row.
    pub fn wait_terminal(&self, id: &str, limit: Duration) -> Value {
        wait_for(&format!("execution {id} to be terminal"), limit, || {
            self.row(id).filter(|r| r["terminal"] == true)
        })
    }

    /// The captured output of a row, as the worker wrote it.
    pub fn output_of(&self, row: &Value) -> String {
        let path = row["output_path"]
            .as_str()
            .unwrap_or_else(|| panic!("row has no output path: {row:#}"));
        String::from_utf8_lossy(&std::fs::read(path).expect("read output file")).into_owned()
    }

    /// Pids of live processes whose command line mentions this test's temp dir (workers
    /// get `--home`, jobs usually get paths under it).
    pub fn live_processes(&self) -> Vec<u32> {
        let needle = format!("{}/", self.dir.path().display());
        processes_where(|pid, cmdline| {
            cmdline.contains(&needle) && state_of(pid).is_some_and(|s| s != 'Z')
        })
    }
}

impl Drop for Hermes {
    /// A failed test may leave workers and jobs waiting on files in the temp dir, which is
    /// about to vanish: kill them (by pid; only processes naming this test's dir).
    fn drop(&mut self) {
        for pid in self.live_processes() {
            if pid != std::process::id() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

impl Default for Hermes {
    fn default() -> Self {
        Hermes::new()
    }
}

/// The execution id a `run`/`spawn` printed first on stdout.
pub fn execution_id_in(stdout: &str) -> String {
    stdout
        .split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("no execution id in {stdout:?}"))
        .to_owned()
}

/// Pids whose NUL-separated command line, joined with spaces, satisfies `pred`.
pub fn processes_where(pred: impl Fn(u32, &str) -> bool) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if pred(pid, &cmdline) {
            out.push(pid);
        }
    }
    out
}

/// Field 3 (state) of `/proc/<pid>/stat`.
pub fn state_of(pid: u32) -> Option<char> {
    stat_fields(pid).and_then(|f| f.first()?.chars().next())
}

/// The children of `parent` as (pid, state), from `/proc/*/stat`.
pub fn children_of(parent: u32) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Some(fields) = stat_fields(pid) else {
            continue;
        };
        let ppid: Option<u32> = fields.get(1).and_then(|p| p.parse().ok());
        if ppid == Some(parent) {
            let state = fields[0].chars().next().unwrap_or('?');
            out.push((pid, state));
        }
    }
    out
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 onwards).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}
