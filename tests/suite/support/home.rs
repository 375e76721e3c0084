//! A private hermes home per test ([`TestHome`]) and what a test does with
//! it through the CLI: add jobs, tick, read the ledger (`runs --json`), wait
//! for rows, and clean up whatever the test left running.
//!
//! A home runs DEGRADED by default: its commands see no session bus at all
//! (no `DBUS_SESSION_BUS_ADDRESS`, no `XDG_RUNTIME_DIR`), so a test that does
//! not ask for the real user manager never depends on one. [`TestHome::scoped`]
//! gives its commands the real manager's bus (`real_manager`), and
//! [`Bus::Address`] a private one. Commands run with `TZ=UTC` unless the test
//! sets another zone, and with the host's other knobs scrubbed (`cli`).
//!
//! Layout: `<tmp>/home` is the home (it does not exist until a command, or
//! [`TestHome::write_config`], creates it; [`TestHome::at`] puts it
//! elsewhere, e.g. on a test's tmpfs), `<tmp>/scratch` is for the test's own
//! files and the commands' output files. Dropping the home stops the scopes
//! and kills the sessions of the runs the ledger still shows active, then
//! kills any process still naming the test's directories, so a failing test
//! leaves nothing running.

use super::cli::{Cmd, Out, Running};
use super::process::{proc_state, processes_where};
use super::real_manager;
use super::rows::summary;
use super::waiting::{PATIENCE, SETTLE_TIMEOUT, wait_for_or};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Which session bus a home's commands see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bus {
    /// The real systemd user manager's (see `real_manager`): runs are scoped.
    Real,
    /// Neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR`: runs are degraded.
    None,
    /// Only `DBUS_SESSION_BUS_ADDRESS`, set to this address (a private bus).
    Address(String),
}

impl Bus {
    /// The dispatch a run gets on this bus, for test output.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Bus::Real => "scoped",
            Bus::None => "degraded",
            Bus::Address(_) => "private bus",
        }
    }
}

/// A private hermes home in a temp dir; see the module documentation.
pub(crate) struct TestHome {
    tmp: tempfile::TempDir,
    home: PathBuf,
    scratch: PathBuf,
    bus: Bus,
    /// Environment given to every command of this home.
    env: BTreeMap<String, OsString>,
    /// Log files of the gateways started on this home, for [`TestHome::diag`].
    logs: Mutex<Vec<PathBuf>>,
    /// A command every command of this home runs under (`ip netns exec NS`).
    wrapper: Vec<OsString>,
}

impl TestHome {
    /// A degraded home (no bus).
    pub(crate) fn new() -> TestHome {
        TestHome::with_home(None)
    }

    /// A home whose commands use the real systemd user manager.
    pub(crate) fn scoped() -> TestHome {
        TestHome::new().with_bus(Bus::Real)
    }

    /// A degraded home at `home` (e.g. on a filesystem the test mounted)
    /// instead of `<tmp>/home`; the scratch dir stays in the temp dir.
    pub(crate) fn at(home: &Path) -> TestHome {
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
        let mut env = BTreeMap::new();
        if let Some(url) = super::ledger::for_new_home(&home) {
            env.insert("HERMES_CRON_DATABASE".to_string(), OsString::from(url));
        }
        TestHome {
            tmp,
            home,
            scratch,
            bus: Bus::None,
            env,
            logs: Mutex::new(Vec::new()),
            wrapper: Vec::new(),
        }
    }

    /// This home, its commands on `bus`.
    pub(crate) fn with_bus(mut self, bus: Bus) -> TestHome {
        self.set_bus(bus);
        self
    }

    /// Give every later command of this home `bus`.
    pub(crate) fn set_bus(&mut self, bus: Bus) {
        self.bus = bus;
    }

    /// This home, with `key=value` for every command.
    pub(crate) fn with_env(mut self, key: &str, value: impl Into<OsString>) -> TestHome {
        self.set_env(key, value);
        self
    }

    /// Give every later command of this home `key=value`.
    pub(crate) fn set_env(&mut self, key: &str, value: impl Into<OsString>) {
        self.env.insert(key.to_string(), value.into());
    }

    /// Where this home's ledger is, for a process started without the
    /// home's environment: `HERMES_CRON_DATABASE` when it is in PostgreSQL.
    pub(crate) fn ledger_env(&self) -> Vec<(String, OsString)> {
        self.env
            .get("HERMES_CRON_DATABASE")
            .map(|url| ("HERMES_CRON_DATABASE".to_string(), url.clone()))
            .into_iter()
            .collect()
    }

    /// This home, every command of it run under `wrapper` (e.g. `ip netns
    /// exec NS`: a host in a network namespace of its own).
    pub(crate) fn wrapped_in(mut self, wrapper: &[&str]) -> TestHome {
        self.wrapper = wrapper.iter().map(OsString::from).collect();
        self
    }

    /// This home, its ledger in the PostgreSQL database `url` (a host of a
    /// cluster test: several homes on one database).
    pub(crate) fn on_database(mut self, url: &str) -> TestHome {
        super::ledger::register(&self.home, url);
        self.set_env("HERMES_CRON_DATABASE", url);
        self
    }

    /// The home directory.
    pub(crate) fn path(&self) -> &Path {
        &self.home
    }

    /// A directory for the test's own files (outside the home).
    pub(crate) fn scratch(&self) -> &Path {
        &self.scratch
    }

    pub(crate) fn config_file(&self) -> PathBuf {
        self.home.join("config.yaml")
    }

    pub(crate) fn cron_dir(&self) -> PathBuf {
        self.home.join("cron")
    }

    pub(crate) fn db_file(&self) -> PathBuf {
        self.cron_dir().join("cron.db")
    }

    /// Write `config.yaml` (creating the home, 0700, first).
    pub(crate) fn write_config(&self, yaml: &str) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.home)
            .expect("create the home");
        std::fs::write(self.config_file(), yaml).expect("write config.yaml");
    }

    /// `hermes-cron --home <home> args...`, not yet run.
    pub(crate) fn cmd<S: AsRef<OsStr>>(&self, args: &[S]) -> Cmd {
        Cmd {
            home: self.home.clone(),
            scratch: self.scratch.clone(),
            args: args.iter().map(|a| a.as_ref().to_os_string()).collect(),
            bus: self.bus.clone(),
            env: self.env.clone(),
            timeout: super::cli::COMMAND_TIMEOUT,
            wrapper: self.wrapper.clone(),
            cwd: None,
            shell: false,
        }
    }

    /// `sh -c LINE` as a user of this home would type it at a shell: the
    /// home is `HERMES_HOME` (no `--home`), the environment otherwise the
    /// one `cmd` gives the binary; not yet run.
    pub(crate) fn shell(&self, line: &str) -> Cmd {
        Cmd {
            shell: true,
            ..self.cmd(&[line])
        }
    }

    /// Run `hermes-cron --home <home> args...` to completion.
    pub(crate) fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Out {
        self.cmd(args).run()
    }

    /// Start `hermes-cron --home <home> args...` in the background.
    pub(crate) fn start<S: AsRef<OsStr>>(&self, args: &[S]) -> Running {
        self.cmd(args).spawn()
    }

    /// `add --name NAME --schedule SCHEDULE FLAGS -- COMMAND`; returns the new id.
    #[track_caller]
    pub(crate) fn add(
        &self,
        name: &str,
        schedule: &str,
        flags: &[&str],
        command: &[&str],
    ) -> String {
        self.add_with(None, name, schedule, flags, command)
    }

    /// [`TestHome::add`] with the clock frozen at (or moved by) `now`.
    #[track_caller]
    pub(crate) fn add_at(
        &self,
        now: &str,
        name: &str,
        schedule: &str,
        flags: &[&str],
        command: &[&str],
    ) -> String {
        self.add_with(Some(now), name, schedule, flags, command)
    }

    #[track_caller]
    fn add_with(
        &self,
        now: Option<&str>,
        name: &str,
        schedule: &str,
        flags: &[&str],
        command: &[&str],
    ) -> String {
        let mut args = vec!["add", "--name", name, "--schedule", schedule];
        args.extend_from_slice(flags);
        args.push("--");
        args.extend_from_slice(command);
        let mut cmd = self.cmd(&args);
        if let Some(at) = now {
            cmd = cmd.now(at);
        }
        let out = cmd.run().ok();
        let id = out.line().to_string();
        assert_eq!(id.len(), 36, "add should print a job id\n{out}");
        id
    }

    /// `config set KEY VALUE`; must exit 0.
    pub(crate) fn config_set(&self, key: &str, value: &str) {
        self.run(&["config", "set", key, value]).ok();
    }

    /// `tick` with the clock frozen at (or moved by) `now`; must exit 0.
    pub(crate) fn tick(&self, now: &str) -> Out {
        self.cmd(&["tick"]).now(now).run().ok()
    }

    /// Every ledger row (`runs --json`), newest first; `job` (id or name) filters.
    pub(crate) fn runs(&self, job: Option<&str>) -> Vec<Value> {
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

    /// The rows of the job named `job_name`, oldest first.
    pub(crate) fn runs_of(&self, job_name: &str) -> Vec<Value> {
        let mut rows: Vec<Value> = self
            .runs(None)
            .into_iter()
            .filter(|r| r["job_name"] == job_name)
            .collect();
        rows.reverse();
        rows
    }

    /// The row of execution `id`, if the ledger has it.
    pub(crate) fn row(&self, id: &str) -> Option<Value> {
        self.runs(None).into_iter().find(|r| r["id"] == id)
    }

    /// Wait until there are exactly `count` rows and all are terminal; returns them.
    pub(crate) fn settle(&self, job: Option<&str>, count: usize) -> Vec<Value> {
        let last = RefCell::new(Vec::new());
        wait_for_or(
            &format!("{count} terminal rows of {job:?}"),
            SETTLE_TIMEOUT,
            || {
                let rows = self.runs(job);
                let done = rows.len() == count && rows.iter().all(|r| r["terminal"] == true);
                *last.borrow_mut() = rows.clone();
                done.then_some(rows)
            },
            || format!("last seen:\n{}", summary(&last.borrow())),
        )
    }

    /// Wait until `job` has a row in `state`; returns that row.
    pub(crate) fn wait_state(&self, job: Option<&str>, state: &str) -> Value {
        self.wait_until(&format!("a {state} row of {job:?}"), SETTLE_TIMEOUT, || {
            self.runs(job).into_iter().find(|r| r["state"] == state)
        })
    }

    /// Wait until the row `id` is terminal; returns it.
    pub(crate) fn wait_terminal(&self, id: &str, timeout: Duration) -> Value {
        self.wait_until(&format!("row {id} to be terminal"), timeout, || {
            self.row(id).filter(|r| r["terminal"] == true)
        })
    }

    /// [`wait_for`](super::waiting::wait_for) with this home's ledger and gateway logs in the failure message.
    #[track_caller]
    pub(crate) fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        condition: impl FnMut() -> Option<T>,
    ) -> T {
        wait_for_or(what, timeout, condition, || self.diag())
    }

    /// The captured output of a row, as the worker wrote it.
    pub(crate) fn output_of(&self, row: &Value) -> String {
        let path = row["output_path"]
            .as_str()
            .unwrap_or_else(|| panic!("row has no output path: {row:#}"));
        String::from_utf8_lossy(&std::fs::read(path).expect("read output file")).into_owned()
    }

    /// The lifecycle record (`state/hermes-cron-lifecycle.jsonl`), one JSON value per line.
    pub(crate) fn lifecycle(&self) -> Vec<Value> {
        std::fs::read_to_string(self.home.join("state/hermes-cron-lifecycle.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The detached workers' own diagnostics (`logs/hermes-cron-worker.log`).
    pub(crate) fn worker_log(&self) -> String {
        std::fs::read_to_string(self.home.join("logs").join("hermes-cron-worker.log"))
            .unwrap_or_default()
    }

    /// Remember `log` (a gateway's stderr) for [`TestHome::diag`].
    pub(super) fn add_log(&self, log: &Path) {
        self.logs.lock().unwrap().push(log.to_path_buf());
    }

    /// Every gateway log of this home, for failure messages.
    pub(crate) fn logs(&self) -> String {
        let mut s = String::new();
        for p in self.logs.lock().unwrap().iter() {
            s.push_str(&format!(
                "--- {}\n{}\n",
                p.display(),
                std::fs::read_to_string(p).unwrap_or_default()
            ));
        }
        s
    }

    /// The ledger and the gateway logs, for failure messages.
    pub(crate) fn diag(&self) -> String {
        let table = self.cmd(&["runs", "--limit", "200"]).run();
        format!("runs:\n{}{}\n{}", table.stdout, table.stderr, self.logs())
    }

    /// Wait until `status` says a scope can be made right now; panics with
    /// the way to boot a user manager when none answers. A scoped test must
    /// never pass silently degraded.
    pub(crate) fn require_scopes(&self) {
        let last = RefCell::new(String::new());
        wait_for_or(
            "the systemd user manager",
            PATIENCE,
            || {
                let out = self.run(&["status", "--json"]);
                let v: Value = serde_json::from_str(&out.stdout).ok()?;
                *last.borrow_mut() = v["capability_now"].to_string();
                (v["capability_now"]["mode"] == "scoped").then_some(())
            },
            || {
                format!(
                    "no systemd user manager answers ({}); scoped tests need one. As root, boot \
                     one with `eval \"$(tests/support/user-manager.sh start)\"` (tests/run-all.sh \
                     does)",
                    last.borrow()
                )
            },
        );
    }

    /// Live `hermes-cron-worker` processes of this home, by pid.
    pub(crate) fn live_workers(&self) -> Vec<i32> {
        let needle = format!(" --home {} ", self.home.display());
        processes_where(|_, cmdline| {
            cmdline.contains("hermes-cron-worker") && cmdline.contains(&needle)
        })
        .into_iter()
        .map(|p| p as i32)
        .collect()
    }

    /// Pids of live processes whose command line mentions this test's
    /// directories (workers get `--home`, jobs usually get paths under them).
    pub(crate) fn live_processes(&self) -> Vec<u32> {
        let tmp = format!("{}/", self.tmp.path().display());
        let home = format!("{}/", self.home.display());
        let home_arg = format!("{} ", self.home.display());
        let me = std::process::id();
        processes_where(|pid, cmdline| {
            pid != me
                && (cmdline.contains(&tmp)
                    || cmdline.contains(&home)
                    || cmdline.contains(&home_arg))
                && proc_state(pid).is_some_and(|s| s != 'Z')
        })
    }

    /// Stop the scopes and kill the sessions of the runs the ledger still
    /// shows active (each pid checked against its recorded start time).
    fn stop_active_runs(&self) {
        let Some(db) = super::ledger::open(&self.db_file()) else {
            return;
        };
        let Ok(active) = hermes_cron::ledger::active_runs(db.conn()) else {
            return;
        };
        drop(db);
        for row in active {
            if let Some(unit) = &row.unit {
                let _ = real_manager::systemctl(
                    &real_manager::bus_env(),
                    &["stop", "--no-block", "--", unit],
                );
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

impl Default for TestHome {
    fn default() -> Self {
        TestHome::new()
    }
}

impl Drop for TestHome {
    /// Stop whatever the test left running (see the module documentation).
    fn drop(&mut self) {
        self.stop_active_runs();
        for pid in self.live_processes() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The mode bits of a path.
pub(crate) fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}
