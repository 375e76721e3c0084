//! A private session `dbus-daemon` for tests, killed when its guard drops.
//!
//! Started as `dbus-daemon --config-file=F --nofork --print-address` with a minimal
//! session configuration (`<type>session</type>`, one `unix:path=` listen, `EXTERNAL`
//! auth, an allow-all policy, no service directories, so nothing can be activated).
//! Ready when it prints its address.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running private bus. Dropping it kills the daemon and reaps it.
pub(crate) struct DbusDaemon {
    child: Child,
    socket: PathBuf,
    address: String,
}

impl DbusDaemon {
    /// Starts a daemon listening on `dir/bus`; the config file goes in `dir` too.
    pub(crate) fn start(dir: &Path) -> DbusDaemon {
        let socket = dir.join("bus");
        let config = dir.join("session.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                socket.display()
            ),
        )
        .expect("write dbus-daemon config");
        let log = dir.join("dbus-daemon.log");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("dbus-daemon log"))
            .spawn()
            .expect("dbus-daemon must be installed (apt-get install -y dbus)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read dbus-daemon address");
        assert!(
            line.starts_with("unix:"),
            "dbus-daemon did not print an address: {line:?}; its stderr: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        DbusDaemon {
            child,
            socket,
            address: line.trim().to_owned(),
        }
    }

    /// The address the daemon printed (`unix:path=...,guid=...`).
    pub(crate) fn address(&self) -> &str {
        &self.address
    }
}

impl Drop for DbusDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}
