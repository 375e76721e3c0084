//! Row 6a's peer: a `systemd --user` holding 10,000 timers, the memory a
//! user pays for 10,000 scheduled jobs without us.
//!
//! The manager the other rows use cannot be the peer: its memory depends on
//! everything it has served before (a burst of a thousand `systemd-run`
//! clients grows its heap for good). So a second, private manager is booted
//! for this measurement only, with `tests/support/user-manager.sh` (its own
//! runtime dir, bus, config dir and cgroup), preloaded with one template
//! timer (`OnCalendar=daily`, a trivial `Type=oneshot` service) instantiated
//! 10,000 times in `timers.target.wants/`. Its `VmRSS` is read once all the
//! timers are active and it has been idle for 3 s; then it is stopped by the
//! pid the script recorded.

use super::common::{poll, status_kib};
use crate::setup::Setup;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// VmRSS and VmHWM (KiB) of the private manager with `n` timers.
pub(super) struct Reading {
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

struct Private {
    runtime: PathBuf,
    config: PathBuf,
    cgroup: String,
}

impl Private {
    fn script(&self, verb: &str) -> Command {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../support/user-manager.sh");
        let mut cmd = Command::new(script);
        cmd.arg(verb)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}/bus", self.runtime.display()),
            )
            .env("XDG_CONFIG_HOME", &self.config)
            .env("HERMES_USER_MANAGER_CGROUP", &self.cgroup)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn systemctl(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("systemctl")
            .arg("--user")
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}/bus", self.runtime.display()),
            )
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.runtime.join("hermes-cron-user-manager.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

fn write_units(config: &Path, n: usize) -> Result<(), String> {
    let units = config.join("systemd/user");
    let wants = units.join("timers.target.wants");
    std::fs::create_dir_all(&wants).map_err(|e| e.to_string())?;
    let write = |name: &str, text: &str| {
        std::fs::write(units.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    write(
        "hcbench@.service",
        "[Unit]\nDescription=bench job %i\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n",
    )?;
    write(
        "hcbench@.timer",
        "[Unit]\nDescription=bench timer %i\n\n[Timer]\nOnCalendar=daily\nAccuracySec=1us\n",
    )?;
    for i in 0..n {
        std::os::unix::fs::symlink(
            "../hcbench@.timer",
            wants.join(format!("hcbench@{i}.timer")),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Boot the private manager with `n` timers, read its memory, stop it.
pub(super) async fn measure(setup: &Setup, n: usize) -> Result<Reading, String> {
    let dir = setup.fresh_dir("timer-manager")?;
    let p = Private {
        runtime: dir.join("run"),
        config: dir.join("config"),
        cgroup: format!(
            "user.slice/user-{uid}.slice/hermes-cron-bench-{pid}.service",
            // SAFETY: getuid cannot fail.
            uid = unsafe { libc::getuid() },
            pid = std::process::id()
        ),
    };
    write_units(&p.config, n)?;
    let booted = p.script("start").status().map_err(|e| e.to_string())?;
    if !booted.success() {
        return Err("user-manager.sh start failed for the private manager".into());
    }
    let result = settle_and_read(&p, n).await;
    let _ = p.script("stop").status();
    // The manager's last processes leave its cgroups a moment after it exits.
    for _ in 0..50 {
        if remove_cgroup(&p.cgroup) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    result
}

/// Remove the (now empty) cgroup the script made for the private manager,
/// deepest first, in every hierarchy. Best effort; true when none is left.
fn remove_cgroup(cgroup: &str) -> bool {
    fn dirs(dir: &Path, out: &mut Vec<PathBuf>) {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs(&e.path(), out);
                }
            }
        }
        out.push(dir.to_path_buf());
    }
    for root in [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/systemd",
        "/sys/fs/cgroup/unified",
    ] {
        let top = Path::new(root).join(cgroup);
        if top.is_dir() {
            let mut all = Vec::new();
            dirs(&top, &mut all);
            for d in all {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
    [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/systemd",
        "/sys/fs/cgroup/unified",
    ]
    .iter()
    .all(|root| !Path::new(root).join(cgroup).is_dir())
}

async fn settle_and_read(p: &Private, n: usize) -> Result<Reading, String> {
    let pid = p.pid().ok_or("the private manager's pid file is missing")?;
    let active = poll(Duration::from_secs(180), || {
        let out = p.systemctl(&[
            "list-units",
            "--type=timer",
            "--state=active",
            "--no-legend",
            "--plain",
            "hcbench@*",
        ])?;
        (out.lines().count() >= n).then_some(())
    })
    .await;
    if active.is_none() {
        return Err(format!(
            "the private manager did not activate {n} timers in 180 s"
        ));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    Ok(Reading {
        rss_kib: status_kib(pid, "VmRSS").ok_or("no VmRSS for the private manager")?,
        hwm_kib: status_kib(pid, "VmHWM").ok_or("no VmHWM for the private manager")?,
    })
}
