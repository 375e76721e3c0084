//! Everything the rows share, prepared once before any thread exists: the
//! systemd user manager (reused, or booted with `tests/support/user-manager.sh`
//! as `tests/run-all.sh` does, and then stopped again), the release binaries,
//! a private work directory, the report socket, and the dispatchers.
//!
//! Environment changes (`set_var`) happen only in [`Setup::prepare`], which
//! `main` calls before it builds the runtime: no other thread can read the
//! environment at the same time.

use crate::probe::READY_ENV;
use hermes_cron::config::Config;
use hermes_cron::dispatch::Launcher;
use hermes_cron::home::Home;
use hermes_cron::schedule::ZoneTable;
use hermes_cron::systemd::session_manager;
use hermes_cron::systemd::{BusEnv, ZbusTimeouts, ZbusUnitManager};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// How the user manager was obtained.
#[derive(Clone, Debug)]
pub(crate) enum ManagerUse {
    /// One was already reachable; it is left running.
    Reused { pid: Option<u32> },
    /// Booted by us through `user-manager.sh start`; stopped on drop.
    Booted { pid: Option<u32> },
}

impl ManagerUse {
    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            ManagerUse::Reused { pid } | ManagerUse::Booted { pid } => *pid,
        }
    }
}

/// The four dispatchers the dispatch rows drive. Each is the library's own
/// `Launcher`; they differ only in the worker binary and the bus.
pub(crate) struct Launchers {
    /// Scoped, worker = this binary (a held stand-in that reports at its go line).
    pub probe_scoped: Launcher,
    /// Degraded (no bus), worker = this binary.
    pub probe_degraded: Launcher,
    /// Scoped, worker = the real `hermes-cron-worker`.
    pub worker_scoped: Launcher,
}

/// Options from the command line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    pub quick: bool,
    pub keep: bool,
    pub dir: Option<PathBuf>,
}

/// What the rows share.
pub(crate) struct Setup {
    pub opts: Options,
    pub work: PathBuf,
    pub bench_exe: PathBuf,
    /// `hermes-cron-bench-stamp`: the job of rows 3 and 4 and their timer's service.
    pub stamp_exe: PathBuf,
    pub gateway_bin: PathBuf,
    pub worker_bin: PathBuf,
    /// An empty runtime dir: a process pointed here finds no bus (degraded).
    pub no_bus_dir: PathBuf,
    ready: Mutex<Option<UnixDatagram>>,
    /// The home of the dispatch rows (probe and real worker).
    pub dispatch_home: Home,
    pub launchers: Launchers,
    pub manager: ManagerUse,
    pub runtime_dir: PathBuf,
    pub bus_address: String,
    /// The process's zone table (made in `main`).
    pub zones: ZoneTable,
}

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn uid() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory.
    unsafe { libc::getuid() }
}

fn mkdir_private(dir: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// `busctl --user status org.freedesktop.systemd1`: the manager's pid, if it answers.
pub(crate) fn manager_pid() -> Option<Option<u32>> {
    let out = Command::new("busctl")
        .args(["--user", "status", "org.freedesktop.systemd1"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.lines()
            .find_map(|l| l.strip_prefix("PID="))
            .and_then(|p| p.trim().parse().ok()),
    )
}

/// Reuse the reachable user manager, or boot one with the test script.
fn ensure_manager() -> Result<ManagerUse, String> {
    if let Some(pid) = manager_pid() {
        return Ok(ManagerUse::Reused { pid });
    }
    let script = workspace_root().join("tests/support/user-manager.sh");
    eprintln!(
        "bench: no user manager reachable; booting one with {}",
        script.display()
    );
    let out = Command::new(&script)
        .arg("start")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} start failed", script.display()));
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((k, v)) = line
            .strip_prefix("export ")
            .and_then(|kv| kv.split_once('='))
        {
            // SAFETY: single-threaded (see the module doc).
            unsafe { std::env::set_var(k, v.trim_matches('\'')) };
        }
    }
    let pid = manager_pid().ok_or("the booted user manager does not answer")?;
    Ok(ManagerUse::Booted { pid })
}

fn stop_booted_manager() {
    let script = workspace_root().join("tests/support/user-manager.sh");
    let _ = Command::new(script).arg("stop").status();
}

/// Build the gateway and worker binaries in this binary's profile, when run
/// through cargo (`cargo run` sets `CARGO`); otherwise use what is there.
fn build_binaries() -> Result<(), String> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    if std::env::var_os("HERMES_BENCH_NO_BUILD").is_some() {
        return Ok(());
    }
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root()).args([
        "build",
        "-q",
        "-p",
        "hermes-cron",
        "-p",
        "hermes-cron-bench",
        "--bins",
    ]);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    eprintln!(
        "bench: building hermes-cron and hermes-cron-worker ({})",
        profile()
    );
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo build of hermes-cron / hermes-cron-worker failed".into());
    }
    Ok(())
}

/// `release` or `debug`: the profile this binary (and so the binaries it
/// measures) was built with.
pub(crate) fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

impl Setup {
    /// Prepare everything. Call before any thread exists.
    pub(crate) fn prepare(opts: Options, zones: ZoneTable) -> Result<Setup, String> {
        let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(format!("/run/user/{}", uid())));
        // SAFETY: single-threaded (see the module doc).
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &runtime_dir) };
        if !std::env::var("DBUS_SESSION_BUS_ADDRESS").is_ok_and(|v| !v.trim().is_empty()) {
            let address = format!("unix:path={}/bus", runtime_dir.display());
            // SAFETY: single-threaded (see the module doc).
            unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", address) };
        }
        let manager = ensure_manager()?;
        let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .unwrap_or(runtime_dir);
        let bus_address = std::env::var("DBUS_SESSION_BUS_ADDRESS").unwrap_or_default();

        let setup = Self::rest(opts, manager.clone(), runtime_dir, bus_address, zones);
        if setup.is_err() && matches!(manager, ManagerUse::Booted { .. }) {
            stop_booted_manager();
        }
        setup
    }

    fn rest(
        opts: Options,
        manager: ManagerUse,
        runtime_dir: PathBuf,
        bus_address: String,
        zones: ZoneTable,
    ) -> Result<Setup, String> {
        build_binaries()?;
        let bench_exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let bin_dir = bench_exe
            .parent()
            .ok_or("no binary directory")?
            .to_path_buf();
        let gateway_bin = bin_dir.join("hermes-cron");
        let worker_bin = bin_dir.join("hermes-cron-worker");
        let stamp_exe = bin_dir.join("hermes-cron-bench-stamp");
        for b in [&gateway_bin, &worker_bin, &stamp_exe] {
            if !b.is_file() {
                return Err(format!(
                    "{} is missing: run `cargo build {}-p hermes-cron`",
                    b.display(),
                    if cfg!(debug_assertions) {
                        ""
                    } else {
                        "--release "
                    }
                ));
            }
        }

        let work = opts.dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("hermes-cron-bench-{}", std::process::id()))
        });
        mkdir_private(&work)?;
        let no_bus_dir = work.join("no-bus");
        mkdir_private(&no_bus_dir)?;

        let ready_path = work.join("ready.sock");
        let _ = std::fs::remove_file(&ready_path);
        let ready = UnixDatagram::bind(&ready_path)
            .map_err(|e| format!("cannot bind {}: {e}", ready_path.display()))?;
        // SAFETY: single-threaded (see the module doc).
        unsafe { std::env::set_var(READY_ENV, &ready_path) };

        let dispatch_home = Home::at(&work.join("dispatch-home"));
        dispatch_home
            .ensure()
            .map_err(|e| format!("cannot prepare {}: {e}", dispatch_home.root().display()))?;
        let launchers = make_launchers(&dispatch_home, &bench_exe, &worker_bin, &no_bus_dir)?;

        Ok(Setup {
            opts,
            work,
            bench_exe,
            stamp_exe,
            gateway_bin,
            worker_bin,
            no_bus_dir,
            ready: Mutex::new(Some(ready)),
            dispatch_home,
            launchers,
            manager,
            runtime_dir,
            bus_address,
            zones,
        })
    }

    /// The report socket (once; the rows share the async wrapper).
    pub(crate) fn take_ready_socket(&self) -> Option<UnixDatagram> {
        self.ready.lock().ok()?.take()
    }

    /// A fresh private directory under the work dir.
    pub(crate) fn fresh_dir(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.work.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        mkdir_private(&dir)?;
        Ok(dir)
    }

    /// Repetitions: `full`, or a fifth of it (at least `min`) with `--quick`.
    pub(crate) fn reps(&self, full: usize, min: usize) -> usize {
        if self.opts.quick {
            (full / 5).max(min)
        } else {
            full
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if !self.opts.keep {
            let _ = std::fs::remove_dir_all(&self.work);
        }
        if matches!(self.manager, ManagerUse::Booted { .. }) {
            stop_booted_manager();
        }
    }
}

/// The dispatchers: of the stand-in worker (the benchmark's own binary) or
/// the real one, scoped or with no bus.
fn make_launchers(
    home: &Home,
    bench_exe: &Path,
    worker_bin: &Path,
    no_bus_dir: &Path,
) -> Result<Launchers, String> {
    let config = Config::default();
    let no_bus = || -> Arc<dyn hermes_cron::systemd::UnitManager> {
        Arc::new(ZbusUnitManager::new(
            BusEnv::with_runtime_dir(no_bus_dir, uid()),
            ZbusTimeouts::default(),
        ))
    };
    let build = |worker: &Path, scoped: bool| -> Result<Launcher, String> {
        let manager = if scoped {
            session_manager(None)
        } else {
            no_bus()
        };
        Ok(Launcher::new(
            home,
            worker.to_path_buf(),
            config.cron.require_restart_safe_scope,
            Some(manager),
            hermes_cron::knobs::KILL_GRACE,
        ))
    };
    let launchers = Launchers {
        probe_scoped: build(bench_exe, true)?,
        probe_degraded: build(bench_exe, false)?,
        worker_scoped: build(worker_bin, true)?,
    };
    Ok(launchers)
}
