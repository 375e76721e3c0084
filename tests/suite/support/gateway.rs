//! The real gateway (`hermes-cron gateway`) on a test home, two ways: as our
//! child process ([`Gateway`]: SIGKILLed and reaped if dropped running), or
//! as a transient user service of the real user manager ([`Service`]:
//! stopped and reset when dropped). Either way its stderr goes to a log file
//! the home remembers for its failure messages ([`TestHome::diag`]).

use super::cli::Running;
use super::home::TestHome;
use super::real_manager;
use super::waiting::{poll, wait_for_or};
use nix::sys::signal::Signal;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Output};
use std::time::Duration;

/// How long a gateway may take to finish its startup sweep on a loaded machine.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a gateway may take to exit after SIGTERM.
pub(crate) const STOP_TIMEOUT: Duration = Duration::from_secs(60);

impl TestHome {
    /// `hermes-cron gateway` on this home, started in the background with
    /// `env` added to the home's.
    pub(crate) fn gateway(&self, env: &[(&str, &str)]) -> Gateway {
        let mut cmd = self.cmd(&["gateway"]);
        for (k, v) in env {
            cmd = cmd.env(k, *v);
        }
        let run = cmd.spawn();
        self.add_log(run.stderr_path());
        Gateway { run }
    }
}

/// A gateway running as our child.
pub(crate) struct Gateway {
    run: Running,
}

impl Gateway {
    pub(crate) fn pid(&self) -> u32 {
        self.run.pid()
    }

    /// Its stderr so far: the log.
    pub(crate) fn log(&self) -> String {
        self.run.stderr()
    }

    /// Its exit status, if it has exited (reaps it).
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.run.try_status()
    }

    /// Wait until a log line contains `needle`; panics with the log if it
    /// exits first or the timeout passes.
    #[track_caller]
    pub(crate) fn wait_log(&mut self, needle: &str, timeout: Duration) {
        let log = self.run.stderr_path().to_path_buf();
        let mut exited = None;
        wait_for_or(
            &format!("the gateway to log {needle:?}"),
            timeout,
            || {
                if self.log().contains(needle) {
                    return Some(());
                }
                if let Some(status) = self.exited() {
                    // It may have logged it just before it exited.
                    if !self.log().contains(needle) {
                        exited = Some(status);
                    }
                    return Some(());
                }
                None
            },
            || format!("log:\n{}", std::fs::read_to_string(log).unwrap_or_default()),
        );
        if let Some(status) = exited {
            panic!(
                "the gateway exited ({status}) before logging {needle:?}:\n{}",
                self.log()
            );
        }
    }

    /// Wait until its startup sweep is done and it says it is ready.
    #[track_caller]
    pub(crate) fn wait_ready(&mut self) {
        self.wait_log("gateway ready", READY_TIMEOUT);
    }

    /// Wait at most `timeout` for it to exit by itself.
    pub(crate) fn exit_within(&mut self, timeout: Duration) -> Option<ExitStatus> {
        poll(timeout, || self.exited())
    }

    /// Wait for it to exit, at most `timeout`; panics with the log otherwise.
    #[track_caller]
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let log = self.run.stderr_path().to_path_buf();
        wait_for_or(
            "the gateway to exit",
            timeout,
            || self.exited(),
            || format!("log:\n{}", std::fs::read_to_string(log).unwrap_or_default()),
        )
    }

    /// Wait until it died by SIGKILL at crash point `point`; panics otherwise.
    #[track_caller]
    pub(crate) fn wait_killed(&mut self, point: &str, timeout: Duration) {
        match self.exit_within(timeout) {
            Some(s) if s.signal() == Some(libc::SIGKILL) => assert!(
                self.log().contains(&format!("crash point {point} reached")),
                "the gateway was killed, but not at {point}\n{}",
                self.log()
            ),
            Some(s) => panic!(
                "the gateway exited ({s}) instead of dying at {point}\n{}",
                self.log()
            ),
            None => panic!(
                "the gateway did not reach crash point {point} within {timeout:?}\n{}",
                self.log()
            ),
        }
    }

    /// Send `sig` (if it is still running: our child, not yet reaped, so the
    /// pid is still its own).
    pub(crate) fn signal(&mut self, sig: Signal) {
        if self.exited().is_none() {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid() as i32), sig);
        }
    }

    /// SIGTERM, then wait for it to exit; asserts a clean exit 0.
    #[track_caller]
    pub(crate) fn stop(&mut self) -> ExitStatus {
        let status = self.terminate();
        assert_eq!(
            status.code(),
            Some(0),
            "the gateway did not stop cleanly on SIGTERM ({status})\n{}",
            self.log()
        );
        status
    }

    /// SIGTERM, then wait for it to exit, whatever the outcome.
    #[track_caller]
    pub(crate) fn terminate(&mut self) -> ExitStatus {
        self.signal(Signal::SIGTERM);
        self.wait_exit(STOP_TIMEOUT)
    }

    /// SIGKILL, then reap it.
    pub(crate) fn kill(&mut self) -> ExitStatus {
        self.signal(Signal::SIGKILL);
        self.wait_exit(STOP_TIMEOUT)
    }
}

/// A gateway run as a transient user service of the real user manager
/// (`systemd-run --user -p Type=notify -p KillMode=mixed`), its stderr
/// appended to a log file. Stopped and reset when dropped.
pub(crate) struct Service {
    pub unit: String,
    pub log: PathBuf,
}

impl Service {
    /// Start the gateway of `home` as `hermes-gw-<tag>-<rand>.service`, with
    /// the environment the home gives its commands and `env` on top (later
    /// values win). The unit also inherits the manager's own environment: a
    /// variable the home scrubs must be set (e.g. to "") to hide it. Returns
    /// once systemd reports the start job done (for `Type=notify`: after
    /// `READY=1`).
    pub(crate) fn start(home: &TestHome, tag: &str, env: &[(&str, &str)]) -> Service {
        let unit = format!("hermes-gw-{tag}-{}.service", rand_suffix());
        let log = home.scratch().join(format!("service-{unit}.log"));
        home.add_log(&log);
        // The home's command, as the manager must run it: its environment
        // (scrubbed, the home's bus and variables) becomes --setenv.
        let mut gateway = home.cmd(&["gateway"]);
        for (k, v) in env {
            gateway = gateway.env(k, *v);
        }
        let gateway = gateway.command();
        let mut c = Command::new("systemd-run");
        c.envs(real_manager::command_env(&real_manager::bus_env()))
            .args(["--user", "--quiet", "--collect"])
            .arg(format!("--unit={unit}"))
            .args(["-p", "Type=notify", "-p", "KillMode=mixed"])
            .arg("-p")
            .arg(format!("StandardError=append:{}", log.display()))
            .args(["-p", "StandardOutput=null"]);
        for (k, v) in gateway.get_envs() {
            if let Some(v) = v {
                let mut set = std::ffi::OsString::from("--setenv=");
                set.push(k);
                set.push("=");
                set.push(v);
                c.arg(set);
            }
        }
        c.arg(gateway.get_program()).args(gateway.get_args());
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

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// One property (`systemctl --user show -p P --value`).
    pub(crate) fn show(&self, prop: &str) -> String {
        let out = systemctl(&["show", "-p", prop, "--value", "--", &self.unit]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub(crate) fn main_pid(&self) -> u32 {
        self.show("MainPID").parse().unwrap_or(0)
    }

    /// `systemctl --user restart` (waits for the new start job, i.e. `READY=1`).
    pub(crate) fn restart(&self) {
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

/// `systemctl --user ARGS` against the real user manager.
pub(crate) fn systemctl(args: &[&str]) -> Output {
    real_manager::systemctl(&real_manager::bus_env(), args)
}

/// A short random suffix for unit names.
fn rand_suffix() -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    id[id.len() - 10..].to_string()
}

/// The number of lines of `text` containing `needle`.
pub(crate) fn count(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}
