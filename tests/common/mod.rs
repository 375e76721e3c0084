//! Helpers for the CLI integration tests: a private home per test, running the
//! real `hermes-cron` binary (and through it the real `hermes-cron-worker`)
//! with a clean environment and a hard timeout, reading `--json` output, and
//! polling with [`wait_for`] instead of sleeping.
//!
//! Every command runs DEGRADED (no `DBUS_SESSION_BUS_ADDRESS`, no
//! `XDG_RUNTIME_DIR`) so these tests never depend on a systemd user manager,
//! and with `TZ=UTC` unless a test says otherwise. Output is captured into
//! files, not pipes: detached workers inherit the command's stderr and may
//! write to it after the command exited, which would hold a pipe open.
//!
//! The worker binary is `target/<profile>/hermes-cron-worker`, next to the
//! CLI; `cargo nextest run --workspace` builds it. When iterating on one test
//! file, build it too (`cargo build -p hermes-cron-worker`).

#![allow(dead_code)] // each test binary uses a different subset

pub mod gateway;
pub mod invariants;
pub mod scene;
pub mod tmpfs;

use hermes_cron::clock::monotonic;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// The longest any single command may run before the test kills it and fails.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// How long to wait for workers to write their terminal rows.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Environment variables of the host that must not leak into a test command.
const SCRUBBED: &[&str] = &[
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "HERMES_HOME",
    "HERMES_CRON_NOW",
    "HERMES_CRON_CRASH_AT",
    "HERMES_CRON_JOURNAL",
    "HERMES_CRON_BUSY_TIMEOUT_MS",
    "HERMES_CRON_LOG",
    "HERMES_CRON_WORKER",
    "JOURNAL_STREAM",
    "NOTIFY_SOCKET",
    "TZ",
];

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hermes-cron"))
}

/// The worker binary next to the CLI. Fails loudly when it was not built.
pub fn worker_bin() -> PathBuf {
    let worker = bin().with_file_name("hermes-cron-worker");
    assert!(
        worker.is_file(),
        "{} is missing: build the workspace (`cargo build --workspace`) or run \
         `cargo nextest run --workspace`",
        worker.display()
    );
    worker
}

/// Poll `condition` until it yields a value, at most `timeout`; panics naming
/// `what` on timeout. Never sleep-and-hope: every wait in these tests is this.
pub fn wait_for<T>(what: &str, timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> T {
    let start = monotonic();
    let mut pause = Duration::from_millis(10);
    loop {
        if let Some(v) = condition() {
            return v;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// A finished command.
#[derive(Debug)]
pub struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub pid: u32,
}

impl Out {
    /// The exit code; panics when the process died by a signal.
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("killed by signal {:?}\n{self}", self.status.signal()))
    }

    /// Assert exit 0 and return self.
    #[track_caller]
    pub fn ok(self) -> Out {
        assert_eq!(self.status.code(), Some(0), "expected success\n{self}");
        self
    }

    /// Assert exit `code` and return self.
    #[track_caller]
    pub fn fails_with(self, code: i32) -> Out {
        assert_eq!(
            self.status.code(),
            Some(code),
            "expected exit {code}\n{self}"
        );
        self
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{self}"))
    }

    /// stdout, trimmed.
    pub fn line(&self) -> &str {
        self.stdout.trim()
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// A command line being built against a home.
pub struct Cmd {
    home: PathBuf,
    scratch: PathBuf,
    args: Vec<OsString>,
    env: BTreeMap<String, Option<OsString>>,
    timeout: Duration,
    wrapper: Vec<OsString>,
}

impl Cmd {
    pub fn env(mut self, key: &str, value: impl Into<OsString>) -> Cmd {
        self.env.insert(key.to_string(), Some(value.into()));
        self
    }

    pub fn env_remove(mut self, key: &str) -> Cmd {
        self.env.insert(key.to_string(), None);
        self
    }

    /// Freeze the clock (`HERMES_CRON_NOW`) at an RFC 3339 instant or move it by `+N`/`-N` seconds.
    pub fn now(self, at: &str) -> Cmd {
        self.env("HERMES_CRON_NOW", at)
    }

    pub fn timeout(mut self, timeout: Duration) -> Cmd {
        self.timeout = timeout;
        self
    }

    /// Run the binary through `program args... <hermes-cron> <args>` (e.g. `unshare`).
    pub fn wrapped(mut self, wrapper: &[&str]) -> Cmd {
        self.wrapper = wrapper.iter().map(OsString::from).collect();
        self
    }

    fn command(&self) -> Command {
        let mut argv: Vec<OsString> = self.wrapper.clone();
        argv.push(bin().into());
        argv.push("--home".into());
        argv.push(self.home.clone().into());
        argv.extend(self.args.iter().cloned());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        for key in SCRUBBED {
            cmd.env_remove(key);
        }
        cmd.env("TZ", "UTC");
        cmd.env("HERMES_CRON_WORKER", worker_bin());
        for (k, v) in &self.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Start it; output goes to files read by [`Running::wait`].
    pub fn spawn(self) -> Running {
        let id = unique();
        let out_path = self.scratch.join(format!("cmd-{id}.out"));
        let err_path = self.scratch.join(format!("cmd-{id}.err"));
        let mut cmd = self.command();
        cmd.stdout(File::create(&out_path).expect("stdout file"));
        cmd.stderr(File::create(&err_path).expect("stderr file"));
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", self.args));
        Running {
            child,
            out_path,
            err_path,
            timeout: self.timeout,
            args: self.args,
        }
    }

    /// Run to completion under the hard timeout.
    pub fn run(self) -> Out {
        self.spawn().wait()
    }
}

/// A started command.
pub struct Running {
    pub child: Child,
    out_path: PathBuf,
    err_path: PathBuf,
    timeout: Duration,
    args: Vec<OsString>,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote to stderr so far.
    pub fn stderr_so_far(&self) -> String {
        std::fs::read_to_string(&self.err_path).unwrap_or_default()
    }

    /// Its exit status, if it has exited (reaps it).
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// Wait for it to exit; kill it and fail the test past the hard timeout.
    pub fn wait(mut self) -> Out {
        let start = monotonic();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            if start.elapsed() > self.timeout {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "hermes-cron {:?} did not finish within {:?} (killed)\nstderr so far:\n{}",
                    self.args,
                    self.timeout,
                    std::fs::read_to_string(&self.err_path).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Out {
            status,
            stdout: std::fs::read_to_string(&self.out_path).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.err_path).unwrap_or_default(),
            pid: self.child.id(),
        }
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// A private hermes home in a temp dir, removed (with its leftover jobs
/// stopped) when dropped. The home itself is `<tmp>/home` and does not exist
/// until a command creates it.
pub struct TestHome {
    tmp: tempfile::TempDir,
    home: PathBuf,
    scratch: PathBuf,
    /// Environment given to every command of this home.
    env: BTreeMap<String, Option<OsString>>,
}

impl TestHome {
    pub fn new() -> TestHome {
        TestHome::with_home(None)
    }

    /// A home at `home` (e.g. on a filesystem the test mounted) instead of
    /// `<tmp>/home`; the scratch dir stays in the temp dir.
    pub fn at(home: &Path) -> TestHome {
        TestHome::with_home(Some(home.to_path_buf()))
    }

    fn with_home(home: Option<PathBuf>) -> TestHome {
        let tmp = tempfile::Builder::new()
            .prefix("hermes-cron-test-")
            .tempdir()
            .expect("temp dir");
        let home = home.unwrap_or_else(|| tmp.path().join("home"));
        let scratch = tmp.path().join("scratch");
        std::fs::create_dir(&scratch).expect("scratch dir");
        TestHome {
            tmp,
            home,
            scratch,
            env: BTreeMap::new(),
        }
    }

    /// Give every later command of this home `key=value`.
    pub fn set_env(&mut self, key: &str, value: impl Into<OsString>) {
        self.env.insert(key.to_string(), Some(value.into()));
    }

    pub fn path(&self) -> &Path {
        &self.home
    }

    /// A directory for the test's own files (outside the home).
    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    pub fn config_file(&self) -> PathBuf {
        self.home.join("config.yaml")
    }

    pub fn cron_dir(&self) -> PathBuf {
        self.home.join("cron")
    }

    pub fn db_file(&self) -> PathBuf {
        self.cron_dir().join("cron.db")
    }

    /// `hermes-cron --home <home> args...`, not yet run.
    pub fn cmd<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Cmd {
        Cmd {
            home: self.home.clone(),
            scratch: self.scratch.clone(),
            args: args.iter().map(|a| a.as_ref().to_os_string()).collect(),
            env: self.env.clone(),
            timeout: COMMAND_TIMEOUT,
            wrapper: Vec::new(),
        }
    }

    /// Run `hermes-cron --home <home> args...` to completion.
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Out {
        self.cmd(args).run()
    }

    /// `add --name NAME --schedule SCHEDULE [flags...] -- command...` at
    /// `now` (None: the real clock); returns the new id.
    pub fn add(&self, now: Option<&str>, name: &str, schedule: &str, rest: &[&str]) -> String {
        let mut args = vec!["add", "--name", name, "--schedule", schedule];
        args.extend_from_slice(rest);
        let mut cmd = self.cmd(&args);
        if let Some(at) = now {
            cmd = cmd.now(at);
        }
        let out = cmd.run().ok();
        let id = out.line().to_string();
        assert_eq!(id.len(), 36, "add should print a job id\n{out}");
        id
    }

    /// `tick` with the clock frozen at (or moved by) `now`; must exit 0.
    pub fn tick(&self, now: &str) -> Out {
        self.cmd(&["tick"]).now(now).run().ok()
    }

    /// Every ledger row (`runs --json`), newest first; `job` filters.
    pub fn runs(&self, job: Option<&str>) -> Vec<Value> {
        let mut args = vec!["runs", "--json", "--limit", "100000"];
        if let Some(j) = job {
            args.insert(1, j);
        }
        let out = self.run(&args).ok();
        match out.json() {
            Value::Array(rows) => rows,
            other => panic!("runs --json is not an array: {other}"),
        }
    }

    /// Wait until there are exactly `count` rows and all are terminal; returns them.
    pub fn settle(&self, job: Option<&str>, count: usize) -> Vec<Value> {
        let mut last = Vec::new();
        let what = format!("{count} terminal rows of {job:?}");
        let rows = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_for(&what, SETTLE_TIMEOUT, || {
                let rows = self.runs(job);
                let done = rows.len() == count && rows.iter().all(|r| r["terminal"] == true);
                last = rows.clone();
                done.then_some(rows)
            })
        }));
        rows.unwrap_or_else(|_| panic!("{what}; last seen: {}", summary(&last)))
    }

    /// Wait until `job` has a row in `state`; returns that row.
    pub fn wait_state(&self, job: Option<&str>, state: &str) -> Value {
        wait_for(&format!("a {state} row of {job:?}"), SETTLE_TIMEOUT, || {
            self.runs(job).into_iter().find(|r| r["state"] == state)
        })
    }
}

impl Default for TestHome {
    fn default() -> Self {
        TestHome::new()
    }
}

impl Drop for TestHome {
    /// Stop any job still running in this home so no test leaves processes behind.
    fn drop(&mut self) {
        if !self.db_file().exists() {
            return;
        }
        let out = self
            .cmd(&["runs", "--json", "--limit", "100000"])
            .timeout(Duration::from_secs(20))
            .spawn()
            .wait();
        let Ok(Value::Array(rows)) = serde_json::from_str::<Value>(&out.stdout) else {
            return;
        };
        for row in rows.iter().filter(|r| r["terminal"] == false) {
            if let Some(pid) = row["pid"].as_u64() {
                stop_worker(pid as i32);
            }
        }
    }
}

/// SIGTERM a worker (it forwards the signal to its job), if `pid` still is one.
pub fn stop_worker(pid: i32) {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if String::from_utf8_lossy(&cmdline).contains("hermes-cron-worker") {
        // SAFETY: plain kill(2) on a pid we just checked is one of our workers.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

/// A compact view of rows for failure messages: state, reason code, source, attempt.
pub fn summary(rows: &[Value]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{} {}/{} {} a{} {}",
                r["job_name"].as_str().unwrap_or("?"),
                r["state"].as_str().unwrap_or("?"),
                r["reason_code"].as_str().unwrap_or("-"),
                r["source"].as_str().unwrap_or("?"),
                r["attempt"],
                r["scheduled_for"].as_str().unwrap_or("-"),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rows whose `key` equals `value`.
pub fn with<'a>(rows: &'a [Value], key: &str, value: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r[key] == value).collect()
}

/// The mode bits of a path.
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The number of lines of stderr that are tracing warnings mentioning `needle`.
pub fn warnings_about(stderr: &str, needle: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains(needle))
        .count()
}
