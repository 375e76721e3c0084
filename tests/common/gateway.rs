//! Running the real gateway (`hermes-cron gateway`) on a test home: start it
//! (scoped through the real user manager, or degraded with no bus), wait for
//! its startup sweep, stop it with SIGTERM or SIGKILL, and find the workers
//! of a home.

use super::{Cmd, Out, Running, TestHome, wait_for};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

/// How long a gateway may take to finish its startup sweep on a loaded machine.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Which dispatch the gateway gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The real systemd user manager's session bus.
    Scoped,
    /// No bus at all.
    Degraded,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Scoped => "scoped",
            Mode::Degraded => "degraded",
        }
    }
}

/// The real user manager's bus: the test's own environment when it names
/// one (tests/run-all.sh exports it), else `/run/user/<uid>`.
pub fn real_bus() -> Vec<(&'static str, String)> {
    let uid = nix::unistd::getuid().as_raw();
    let runtime = std::env::var("XDG_RUNTIME_DIR")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| format!("/run/user/{uid}"));
    let address = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| format!("unix:path={runtime}/bus"));
    vec![
        ("XDG_RUNTIME_DIR", runtime),
        ("DBUS_SESSION_BUS_ADDRESS", address),
    ]
}

impl TestHome {
    /// Give every later command of this home the bus of `mode`.
    pub fn use_mode(&mut self, mode: Mode) {
        if mode == Mode::Scoped {
            for (k, v) in real_bus() {
                self.set_env(k, v);
            }
        }
    }

    /// Wait until `status` says a scope can be made right now; panics with
    /// the way to boot a user manager when none answers. A scoped test must
    /// never pass silently degraded.
    pub fn require_scopes(&self) {
        let mut last = String::new();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_for("the systemd user manager", Duration::from_secs(30), || {
                let out = self.run(&["status", "--json"]);
                let v: serde_json::Value = serde_json::from_str(&out.stdout).ok()?;
                last = v["capability_now"].to_string();
                (v["capability_now"]["mode"] == "scoped").then_some(())
            })
        }));
        if found.is_err() {
            panic!(
                "no systemd user manager answers ({last}); scoped tests need one. As root, boot \
                 one with `eval \"$(tests/support/user-manager.sh start)\"` (tests/run-all.sh does)"
            );
        }
    }

    /// `hermes-cron gateway`, started in the background with `env` added.
    pub fn gateway(&self, env: &[(&str, &str)]) -> Gateway {
        let mut cmd: Cmd = self.cmd(&["gateway"]).timeout(Duration::from_secs(120));
        for (k, v) in env {
            cmd = cmd.env(k, *v);
        }
        Gateway {
            run: Some(cmd.spawn()),
        }
    }

    /// Live `hermes-cron-worker` processes of this home, by pid.
    pub fn live_workers(&self) -> Vec<i32> {
        let needle = format!("--home\0{}\0", self.path().display());
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let cmdline = String::from_utf8_lossy(&raw);
            if cmdline.contains("hermes-cron-worker") && cmdline.contains(&needle) {
                out.push(pid);
            }
        }
        out
    }

    /// The detached workers' own diagnostics (`logs/worker.log`).
    pub fn worker_log(&self) -> String {
        std::fs::read_to_string(self.path().join("logs").join("worker.log")).unwrap_or_default()
    }
}

/// A gateway running in the background; SIGKILLed if dropped running (a
/// failed test must not leave it behind).
pub struct Gateway {
    run: Option<Running>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(mut run) = self.run.take()
            && run.try_status().is_none()
        {
            let _ = run.child.kill();
            let _ = run.child.wait();
        }
    }
}

impl Gateway {
    fn running(&self) -> &Running {
        self.run.as_ref().expect("the gateway handle")
    }

    pub fn pid(&self) -> u32 {
        self.running().pid()
    }

    pub fn stderr(&self) -> String {
        self.running().stderr_so_far()
    }

    /// Exited already? (reaps it)
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.run.as_mut().expect("the gateway handle").try_status()
    }

    /// Wait until its startup sweep is done and it says it is ready.
    #[track_caller]
    pub fn wait_ready(&mut self) {
        let start = hermes_cron::clock::monotonic();
        loop {
            if self.stderr().contains("gateway ready") {
                return;
            }
            if let Some(status) = self.exited() {
                panic!(
                    "the gateway exited ({status}) before it was ready\n{}",
                    self.stderr()
                );
            }
            assert!(
                start.elapsed() < READY_TIMEOUT,
                "the gateway was not ready within {READY_TIMEOUT:?}\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait at most `timeout` for it to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let start = hermes_cron::clock::monotonic();
        loop {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            if start.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Wait until it died by SIGKILL (a crash point fired); panics otherwise.
    #[track_caller]
    pub fn wait_killed(&mut self, point: &str, timeout: Duration) {
        match self.wait_exit(timeout) {
            Some(s) if s.signal() == Some(libc::SIGKILL) => assert!(
                self.stderr()
                    .contains(&format!("crash point {point} reached")),
                "the gateway was killed, but not at {point}\n{}",
                self.stderr()
            ),
            Some(s) => panic!(
                "the gateway exited ({s}) instead of dying at {point}\n{}",
                self.stderr()
            ),
            None => panic!(
                "the gateway did not reach crash point {point} within {timeout:?}\n{}",
                self.stderr()
            ),
        }
    }

    /// Send `sig` (if it is still running).
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child, not yet reaped (pid not reused).
        unsafe {
            libc::kill(self.pid() as i32, sig);
        }
    }

    /// SIGTERM, then wait for it to exit; asserts a clean exit 0.
    #[track_caller]
    pub fn stop(mut self) -> Out {
        if self.exited().is_none() {
            self.signal(libc::SIGTERM);
        }
        let out = self.run.take().expect("the gateway handle").wait();
        assert_eq!(
            out.status.code(),
            Some(0),
            "the gateway did not stop cleanly on SIGTERM\n{out}"
        );
        out
    }

    /// SIGTERM, then wait for it to exit, whatever the outcome.
    pub fn terminate(mut self) -> Out {
        if self.exited().is_none() {
            self.signal(libc::SIGTERM);
        }
        self.run.take().expect("the gateway handle").wait()
    }

    /// SIGKILL, then reap it.
    pub fn kill(mut self) -> Out {
        if self.exited().is_none() {
            self.signal(libc::SIGKILL);
        }
        self.run.take().expect("the gateway handle").wait()
    }
}

/// The number of lines of `text` containing `needle`.
pub fn count(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

/// Whether `path` names a live process directory.
pub fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}
