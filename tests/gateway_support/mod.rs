//! Test support for the gateway tests: a temporary home per test, the real
//! binaries run against it, a gateway as a child process or as a transient
//! user service of the real systemd user manager, and polling with deadlines.
//!
//! Everything here drives the real `hermes-cron` and `hermes-cron-worker`
//! binaries. The real user manager is found as `tests/support/real_manager.rs`
//! finds it (included read-only); its absence fails the tests loudly.
//!
//! Cleanup: a [`Gateway`] is SIGKILLed and reaped when dropped; a [`Service`]
//! is stopped and reset; a [`TestHome`] stops the scopes and kills the
//! sessions of the runs it still finds active, so a failing test leaves
//! nothing running.

#![allow(dead_code)] // each test binary uses a different subset

#[path = "../support/real_manager.rs"]
pub mod real_manager;

use hermes_cron::clock::{elapsed, monotonic};
use hermes_cron::systemd::BusEnv;
use serde_json::Value;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The CLI and gateway binary under test.
pub const CLI: &str = env!("CARGO_BIN_EXE_hermes-cron");

/// How often [`wait_for`] looks again.
const POLL: Duration = Duration::from_millis(100);

/// Poll `f` until it returns `Some`, at most `timeout`; panics naming `what`.
pub fn wait_for<T>(what: &str, timeout: Duration, f: impl FnMut() -> Option<T>) -> T {
    wait_for_or(what, timeout, f, String::new)
}

/// Like [`wait_for`], with `diag()` appended to the panic message.
pub fn wait_for_or<T>(
    what: &str,
    timeout: Duration,
    mut f: impl FnMut() -> Option<T>,
    diag: impl FnOnce() -> String,
) -> T {
    let start = monotonic();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if elapsed(start) > timeout {
            panic!("timed out after {timeout:?} waiting for {what}\n{}", diag());
        }
        std::thread::sleep(POLL);
    }
}

/// The worker binary next to the CLI, brought up to date first when the CLI
/// is newer than the last check (`cargo nextest run --test X` builds only the
/// root package's binaries, so the worker could be stale). A stamp file
/// records the check, so `cargo build` runs once per CLI build, not per test.
pub fn worker_bin() -> &'static Path {
    static WORKER: OnceLock<PathBuf> = OnceLock::new();
    WORKER.get_or_init(|| {
        let cli = Path::new(CLI);
        let worker = cli.with_file_name("hermes-cron-worker");
        let stamp = cli.with_file_name(".gateway-tests-worker-checked");
        let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        if !worker.is_file() || mtime(&stamp) < mtime(cli) {
            let profile = cli
                .parent()
                .and_then(|d| d.file_name())
                .and_then(OsStr::to_str)
                .unwrap_or("debug");
            let profile = if profile == "debug" { "dev" } else { profile };
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args([
                    "build",
                    "-q",
                    "-p",
                    "hermes-cron-worker",
                    "--profile",
                    profile,
                ])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("run cargo build for the worker");
            assert!(status.success(), "cargo build -p hermes-cron-worker failed");
            let _ = fs::write(&stamp, b"");
        }
        assert!(worker.is_file(), "no worker binary at {}", worker.display());
        worker
    })
}

/// The bus environment of the real user manager, as `(name, value)` pairs.
pub fn manager_env() -> Vec<(&'static str, String)> {
    real_manager::command_env(&real_manager::bus_env())
}

fn bus_env() -> BusEnv {
    real_manager::bus_env()
}

/// `systemctl --user ARGS` against the real user manager.
pub fn systemctl(args: &[&str]) -> Output {
    real_manager::systemctl(&bus_env(), args)
}

/// A short random suffix for unit names.
pub fn rand_suffix() -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    id[id.len() - 10..].to_string()
}

/// A private temporary home (`<tmp>/h`, 0700) and the environment every
/// process of the test gets.
pub struct TestHome {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    env: Vec<(String, String)>,
    logs: std::cell::RefCell<Vec<PathBuf>>,
}

impl TestHome {
    pub fn new() -> TestHome {
        let _ = worker_bin();
        let dir = tempfile::Builder::new()
            .prefix("hermes-gw-test-")
            .tempdir()
            .expect("tempdir");
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        let home = dir.path().join("h");
        fs::create_dir(&home).unwrap();
        fs::set_permissions(&home, fs::Permissions::from_mode(0o700)).unwrap();
        let env = manager_env()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        TestHome {
            dir,
            home,
            env,
            logs: Default::default(),
        }
    }

    /// Set `key=value` for every process this home starts from now on.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
    }

    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    /// A path inside the test's temporary directory (outside the home).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Write `config.yaml`.
    pub fn write_config(&self, yaml: &str) {
        fs::write(self.home.join("config.yaml"), yaml).unwrap();
    }

    /// `hermes-cron --home H ARGS` with this home's environment.
    pub fn cmd<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = Command::new(CLI);
        c.arg("--home").arg(&self.home).args(args);
        c.env("HERMES_HOME", &self.home);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.stdin(Stdio::null());
        c
    }

    /// Run the CLI to completion.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run hermes-cron")
    }

    /// Run the CLI, assert it succeeded, return its stdout.
    pub fn cli_ok(&self, args: &[&str]) -> String {
        let out = self.cli(args);
        assert!(
            out.status.success(),
            "hermes-cron {args:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run `cmd` (made by [`TestHome::cmd`]) whose workers outlive it (`run`
    /// without `--wait`): they inherit its stderr, so stderr goes to a file,
    /// not to a pipe that would stay open until they end. Asserts success;
    /// returns stdout.
    pub fn run_detached(&self, mut cmd: Command) -> String {
        let err = self.new_log("cli-stderr");
        let out = cmd
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&err).unwrap())
            .output()
            .expect("run hermes-cron");
        assert!(
            out.status.success(),
            "{cmd:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            fs::read_to_string(&err).unwrap_or_default()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `add --name N --schedule S FLAGS -- CMD`; returns the job id.
    pub fn add(&self, name: &str, schedule: &str, flags: &[&str], cmd: &[&str]) -> String {
        let mut args = vec!["add", "--name", name, "--schedule", schedule];
        args.extend_from_slice(flags);
        args.push("--");
        args.extend_from_slice(cmd);
        self.cli_ok(&args).trim().to_string()
    }

    /// Every ledger row, newest first (`runs --json`).
    pub fn runs(&self) -> Vec<Value> {
        let out = self.cli_ok(&["runs", "--json", "--limit", "100000"]);
        match serde_json::from_str(&out).expect("runs --json is JSON") {
            Value::Array(rows) => rows,
            other => panic!("runs --json is not an array: {other}"),
        }
    }

    /// The rows of one job (by name), oldest first.
    pub fn runs_of(&self, job_name: &str) -> Vec<Value> {
        let mut rows: Vec<Value> = self
            .runs()
            .into_iter()
            .filter(|r| r["job_name"] == job_name)
            .collect();
        rows.reverse();
        rows
    }

    /// One row by execution id.
    pub fn row(&self, id: &str) -> Option<Value> {
        self.runs().into_iter().find(|r| r["id"] == id)
    }

    /// The lifecycle record, one JSON value per line.
    pub fn lifecycle(&self) -> Vec<Value> {
        fs::read_to_string(self.home.join("state/lifecycle.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// A new log file path for a gateway of this home.
    fn new_log(&self, tag: &str) -> PathBuf {
        let mut logs = self.logs.borrow_mut();
        let p = self.path(&format!("{tag}-{}.log", logs.len() + 1));
        logs.push(p.clone());
        p
    }

    /// Start `hermes-cron gateway` as a child process, stderr to a log file.
    pub fn start_gateway(&self) -> Gateway {
        self.start_gateway_with(&[])
    }

    /// Like [`TestHome::start_gateway`], with extra environment.
    pub fn start_gateway_with(&self, extra: &[(&str, &str)]) -> Gateway {
        let log = self.new_log("gateway");
        let file = fs::File::create(&log).unwrap();
        let mut c = self.cmd(["gateway"]);
        for (k, v) in extra {
            c.env(k, v);
        }
        let child = c
            .stdout(Stdio::null())
            .stderr(Stdio::from(file))
            .spawn()
            .expect("spawn the gateway");
        Gateway {
            pid: child.id(),
            child: Some(child),
            log,
        }
    }

    /// Every gateway log of this home, for failure messages.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        for p in self.logs.borrow().iter() {
            s.push_str(&format!(
                "--- {}\n{}\n",
                p.display(),
                fs::read_to_string(p).unwrap_or_default()
            ));
        }
        s
    }

    /// The ledger and the logs, for failure messages.
    pub fn diag(&self) -> String {
        let table = self.cli(&["runs", "--limit", "200"]);
        format!(
            "runs:\n{}{}\n{}",
            String::from_utf8_lossy(&table.stdout),
            String::from_utf8_lossy(&table.stderr),
            self.logs()
        )
    }

    /// [`wait_for`] with this home's ledger and logs in the failure message.
    pub fn wait_for<T>(&self, what: &str, timeout: Duration, f: impl FnMut() -> Option<T>) -> T {
        wait_for_or(what, timeout, f, || self.diag())
    }

    /// Wait until the row `id` is terminal; returns it.
    pub fn wait_terminal(&self, id: &str, timeout: Duration) -> Value {
        self.wait_for(&format!("row {id} to be terminal"), timeout, || {
            self.row(id).filter(|r| r["terminal"] == true)
        })
    }
}

impl Default for TestHome {
    fn default() -> Self {
        TestHome::new()
    }
}

impl Drop for TestHome {
    /// Stop whatever the test left running: active rows' scopes, and their
    /// workers' sessions (pid checked against the recorded start time).
    fn drop(&mut self) {
        let db_file = self.home.join("cron/cron.db");
        if !db_file.exists() {
            return;
        }
        let Ok(db) = hermes_cron::db::Db::open(&db_file) else {
            return;
        };
        let Ok(active) = hermes_cron::ledger::active_runs(db.conn()) else {
            return;
        };
        drop(db);
        for row in active {
            if let Some(unit) = &row.unit {
                let _ = systemctl(&["stop", "--no-block", "--", unit]);
            }
            if let (Some(pid), Some(start)) = (row.pid, row.pid_start) {
                let who = hermes_cron::process::ProcessIdentity { pid, start };
                if hermes_cron::process::is_alive(&who) {
                    hermes_cron::process::signal_session(&who, nix::sys::signal::Signal::SIGKILL);
                }
            }
        }
    }
}

/// A gateway running as our child.
pub struct Gateway {
    child: Option<Child>,
    pub pid: u32,
    pub log: PathBuf,
}

impl Gateway {
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether it has exited (reaps it if so).
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Wait until a log line contains `needle`; panics with the log otherwise.
    pub fn wait_log(&mut self, needle: &str, timeout: Duration) {
        let start = monotonic();
        loop {
            if self.log().contains(needle) {
                return;
            }
            if let Some(st) = self.try_exit() {
                panic!(
                    "the gateway exited ({st}) before logging {needle:?}:\n{}",
                    self.log()
                );
            }
            if elapsed(start) > timeout {
                panic!(
                    "the gateway did not log {needle:?} within {timeout:?}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait for "gateway ready".
    pub fn wait_ready(&mut self) {
        self.wait_log("gateway ready", Duration::from_secs(30));
    }

    /// How many log lines contain `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.log().lines().filter(|l| l.contains(needle)).count()
    }

    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid as i32), sig)
            .expect("signal the gateway");
    }

    /// Wait for it to exit, at most `timeout`; panics otherwise.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let start = monotonic();
        loop {
            if let Some(st) = self.try_exit() {
                return st;
            }
            if elapsed(start) > timeout {
                panic!(
                    "the gateway did not exit within {timeout:?}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM and wait for the exit status.
    pub fn stop(&mut self) -> ExitStatus {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        self.wait_exit(Duration::from_secs(30))
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A gateway run as a transient user service of the real user manager
/// (`systemd-run --user -p Type=notify -p KillMode=mixed`), its stderr
/// appended to a log file. Stopped and reset when dropped.
pub struct Service {
    pub unit: String,
    pub log: PathBuf,
}

impl Service {
    /// Start the gateway of `home` as `hermes-gw-<tag>-<rand>.service`, with
    /// `env` on top of the home's (later values win). Returns once systemd
    /// reports the start job done (for `Type=notify`: after `READY=1`).
    pub fn start(home: &TestHome, tag: &str, env: &[(&str, &str)]) -> Service {
        let unit = format!("hermes-gw-{tag}-{}.service", rand_suffix());
        let log = home.new_log(&format!("service-{tag}"));
        let mut c = Command::new("systemd-run");
        c.envs(manager_env())
            .args(["--user", "--quiet", "--collect"])
            .arg(format!("--unit={unit}"))
            .args(["-p", "Type=notify", "-p", "KillMode=mixed"])
            .arg("-p")
            .arg(format!("StandardError=append:{}", log.display()))
            .args(["-p", "StandardOutput=null"]);
        let mut all: Vec<(String, String)> = home.env.clone();
        all.push(("HERMES_HOME".into(), home.home.display().to_string()));
        for (k, v) in env {
            all.retain(|(key, _)| key != k);
            all.push((k.to_string(), v.to_string()));
        }
        for (k, v) in &all {
            c.arg(format!("--setenv={k}={v}"));
        }
        c.arg(CLI).arg("--home").arg(&home.home).arg("gateway");
        let out = c.output().expect("run systemd-run");
        let svc = Service { unit, log };
        assert!(
            out.status.success(),
            "systemd-run failed ({}): {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            svc.log()
        );
        svc
    }

    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// One property (`systemctl --user show -p P --value`).
    pub fn show(&self, prop: &str) -> String {
        let out = systemctl(&["show", "-p", prop, "--value", "--", &self.unit]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn main_pid(&self) -> u32 {
        self.show("MainPID").parse().unwrap_or(0)
    }

    /// `systemctl --user restart` (waits for the new start job, i.e. `READY=1`).
    pub fn restart(&self) {
        let out = systemctl(&["restart", "--", &self.unit]);
        assert!(
            out.status.success(),
            "systemctl restart {} failed: {}\n{}",
            self.unit,
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = systemctl(&["stop", "--", &self.unit]);
        let _ = systemctl(&["reset-failed", "--", &self.unit]);
    }
}

/// The state letter of `/proc/<pid>/stat`.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// The children of `pid`, from `/proc/<pid>/task/*/children`.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let text = fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

/// Append `line` to `path` (tests' own notes).
pub fn append(path: &Path, line: &str) {
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

/// A field of a row as a string ("" when null).
pub fn s(row: &Value, key: &str) -> String {
    match &row[key] {
        Value::String(v) => v.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
