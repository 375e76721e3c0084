//! Running the real `hermes-cron gateway` as a child, scoped (the session bus
//! of the setup) or degraded (pointed at an empty runtime dir: no bus).

use super::common::poll;
use crate::setup::Setup;
use hermes_cron::dispatch::WORKER_ENV;
use hermes_cron::home::Home;
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running gateway.
pub(super) struct Gateway {
    child: Option<Child>,
    pub log: PathBuf,
}

impl Gateway {
    /// Start `hermes-cron --home HOME gateway`; its log goes to `gateway.log`
    /// next to the home.
    pub(super) fn start(setup: &Setup, home: &Home, scoped: bool) -> Result<Gateway, String> {
        Gateway::start_with(setup, home, scoped, &[])
    }

    /// [`Gateway::start`] with `env` added (a shared ledger, a host name).
    pub(super) fn start_with(
        setup: &Setup,
        home: &Home,
        scoped: bool,
        env: &[(&str, &str)],
    ) -> Result<Gateway, String> {
        let log = home.root().join("gateway.log");
        let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&setup.gateway_bin);
        cmd.arg("--home")
            .arg(home.root())
            .arg("gateway")
            .env(WORKER_ENV, &setup.worker_bin)
            .env("HERMES_CRON_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        for (k, v) in env {
            cmd.env(k, v);
        }
        if scoped {
            cmd.env("XDG_RUNTIME_DIR", &setup.runtime_dir)
                .env("DBUS_SESSION_BUS_ADDRESS", &setup.bus_address);
        } else {
            cmd.env("XDG_RUNTIME_DIR", &setup.no_bus_dir)
                .env_remove("DBUS_SESSION_BUS_ADDRESS");
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", setup.gateway_bin.display()))?;
        Ok(Gateway {
            child: Some(child),
            log,
        })
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Wait for "gateway ready" in its log, and check the dispatch mode it
    /// announced.
    pub(super) async fn ready(&mut self, scoped: bool) -> Result<(), String> {
        let line = poll(Duration::from_secs(60), || {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                return Some(Err(format!("gateway exited {status}")));
            }
            self.log_text()
                .lines()
                .find(|l| l.contains("gateway ready"))
                .map(|l| Ok(l.to_string()))
        })
        .await
        .unwrap_or_else(|| Err("gateway not ready after 60 s".into()))
        .map_err(|e| format!("{e}; log:\n{}", self.log_text()))?;
        let want = if scoped {
            "dispatch=scoped"
        } else {
            "dispatch=degraded"
        };
        if !line.contains(want) {
            return Err(format!("gateway ready without {want}: {line}"));
        }
        Ok(())
    }

    /// SIGTERM, then wait (SIGKILL after 30 s).
    pub(super) async fn stop(mut self) -> Result<(), String> {
        self.terminate().await
    }

    async fn terminate(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let exited = poll(Duration::from_secs(30), || child.try_wait().ok().flatten()).await;
        match exited {
            Some(_) => Ok(()),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err("gateway ignored SIGTERM for 30 s".into())
            }
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
