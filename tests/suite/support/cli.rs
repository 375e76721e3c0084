//! Running the binaries under test: where `hermes-cron` and
//! `hermes-cron-worker` are (the worker brought up to date first), a command
//! line ([`Cmd`]) with a scrubbed environment and a hard timeout, a started
//! command ([`Running`], killed and reaped if dropped running) and a
//! finished one ([`Out`]).
//!
//! Output goes to files, never to pipes: a detached worker inherits the
//! command's stdout and stderr and may write to them long after the command
//! exited, so reading a pipe to its end would wait for the job too.

use super::home::Bus;
use super::real_manager;
use super::waiting::wait_for_or;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The longest any single command may run before the test kills it and fails.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Variables of the host that must not reach a command under test: the bus
/// (each home chooses its own, see [`Bus`]), the home, the zone, and every
/// test knob of CONTRIBUTING.md ("Test knobs").
const SCRUBBED: &[&str] = &[
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "HERMES_HOME",
    "HERMES_CRON_NOW",
    "HERMES_CRON_CRASH_AT",
    "HERMES_CRON_JOURNAL",
    "HERMES_CRON_BUSY_TIMEOUT_MS",
    "HERMES_CRON_KILL_GRACE_MS",
    "HERMES_CRON_HEARTBEAT_PERIOD_MS",
    "HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS",
    "HERMES_CRON_DBUS_TIMEOUT_MS",
    "HERMES_CRON_LOG",
    "HERMES_CRON_WORKER",
    "HERMES_CRON_DATABASE",
    "HERMES_CRON_HOST",
    "HERMES_CRON_HOST_LABELS",
    "HERMES_CRON_LEASE_MS",
    "HERMES_CRON_CLAIM_BATCH",
    "JOURNAL_STREAM",
    "NOTIFY_SOCKET",
    "TZ",
];

/// The `hermes-cron` binary under test (CLI and gateway).
pub(crate) fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hermes-cron"))
}

/// The `hermes-cron-worker` binary under test: cargo builds both of the
/// package's binaries for its tests.
pub(crate) fn worker_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_hermes-cron-worker"))
}

/// A finished command.
#[derive(Debug)]
pub(crate) struct Out {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub pid: u32,
}

impl Out {
    /// The exit code; panics when the process died by a signal.
    #[track_caller]
    pub(crate) fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("killed by signal {:?}\n{self}", self.status.signal()))
    }

    /// Assert exit 0 and return self.
    #[track_caller]
    pub(crate) fn ok(self) -> Out {
        assert_eq!(self.status.code(), Some(0), "expected success\n{self}");
        self
    }

    /// Assert exit `code` and return self.
    #[track_caller]
    pub(crate) fn fails_with(self, code: i32) -> Out {
        assert_eq!(
            self.status.code(),
            Some(code),
            "expected exit {code}\n{self}"
        );
        self
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{self}"))
    }

    /// stdout, trimmed.
    pub(crate) fn line(&self) -> &str {
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

/// A command line being built against a home (see `TestHome::cmd`).
pub(crate) struct Cmd {
    pub(super) home: PathBuf,
    pub(super) scratch: PathBuf,
    pub(super) args: Vec<OsString>,
    pub(super) bus: Bus,
    pub(super) env: BTreeMap<String, OsString>,
    pub(super) timeout: Duration,
    pub(super) wrapper: Vec<OsString>,
    /// Its working directory (None: the test's).
    pub(super) cwd: Option<PathBuf>,
    /// `args` is one shell line, run by `sh -c` instead of the binary.
    pub(super) shell: bool,
}

impl Cmd {
    /// Set `key=value` for this command only.
    pub(crate) fn env(mut self, key: &str, value: impl Into<OsString>) -> Cmd {
        self.env.insert(key.to_string(), value.into());
        self
    }

    /// Freeze the clock (`HERMES_CRON_NOW`) at an RFC 3339 instant or move it by `+N`/`-N` seconds.
    pub(crate) fn now(self, at: &str) -> Cmd {
        self.env("HERMES_CRON_NOW", at)
    }

    /// The hard timeout of [`Cmd::run`] and [`Running::wait`] (default [`COMMAND_TIMEOUT`]).
    pub(crate) fn timeout(mut self, timeout: Duration) -> Cmd {
        self.timeout = timeout;
        self
    }

    /// Run it in `dir`, as a user in that directory would.
    pub(crate) fn in_dir(mut self, dir: &std::path::Path) -> Cmd {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// Run the binary through `program args... <hermes-cron> <args>` (e.g. `unshare`).
    pub(crate) fn wrapped(mut self, wrapper: &[&str]) -> Cmd {
        self.wrapper = wrapper.iter().map(OsString::from).collect();
        self
    }

    /// The `std::process::Command` this would run, stdin from /dev/null and
    /// stdout and stderr not yet redirected: for a test that must see the
    /// command as a caller with pipes would.
    pub(crate) fn command(&self) -> Command {
        let mut argv: Vec<OsString> = self.wrapper.clone();
        if self.shell {
            argv.extend(["sh".into(), "-c".into()]);
        } else {
            argv.push(bin().into());
            argv.push("--home".into());
            argv.push(self.home.clone().into());
        }
        argv.extend(self.args.iter().cloned());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        for key in SCRUBBED {
            cmd.env_remove(key);
        }
        cmd.env("TZ", "UTC");
        if self.shell {
            cmd.env("HERMES_HOME", &self.home);
        }
        cmd.env("HERMES_CRON_WORKER", worker_bin());
        for (k, v) in self.bus.env() {
            cmd.env(k, v);
        }
        cmd.envs(&self.env);
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Start it; output goes to files read by [`Running::wait`].
    pub(crate) fn spawn(self) -> Running {
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
    pub(crate) fn run(self) -> Out {
        self.spawn().wait()
    }
}

impl Bus {
    /// The variables that give a command this bus (all bus variables are
    /// scrubbed before).
    fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            Bus::Real => real_manager::command_env(&real_manager::bus_env()),
            Bus::None => Vec::new(),
            Bus::Address(a) => vec![("DBUS_SESSION_BUS_ADDRESS", a.clone())],
        }
    }
}

/// A started command; killed and reaped if dropped while running (a failed
/// test must not leave it behind).
pub(crate) struct Running {
    pub child: Child,
    out_path: PathBuf,
    err_path: PathBuf,
    timeout: Duration,
    args: Vec<OsString>,
}

impl Running {
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err_path).unwrap_or_default()
    }

    /// The file its stderr goes to.
    pub(crate) fn stderr_path(&self) -> &Path {
        &self.err_path
    }

    /// Its exit status, if it has exited (reaps it).
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// Wait for it to exit; kill it and fail the test past its hard timeout.
    #[track_caller]
    pub(crate) fn wait(self) -> Out {
        let timeout = self.timeout;
        self.wait_within(timeout)
    }

    /// Wait at most `limit` for it to exit; kill it and fail the test past that.
    #[track_caller]
    pub(crate) fn wait_within(mut self, limit: Duration) -> Out {
        let what = format!("hermes-cron {:?} to exit", self.args);
        let err_path = self.err_path.clone();
        let status = wait_for_or(
            &what,
            limit,
            || self.child.try_wait().expect("try_wait"),
            || {
                format!(
                    "(killed)\nstderr so far:\n{}",
                    std::fs::read_to_string(&err_path).unwrap_or_default()
                )
            },
        );
        Out {
            status,
            stdout: std::fs::read_to_string(&self.out_path).unwrap_or_default(),
            stderr: self.stderr(),
            pid: self.child.id(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn unique() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// The number of `warning: ...` lines of stderr mentioning `needle`.
pub(crate) fn warnings_about(stderr: &str, needle: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning: ") && l.contains(needle))
        .count()
}
