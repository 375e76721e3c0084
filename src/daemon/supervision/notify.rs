//! systemd's notify protocol (`sd_notify`): `READY=1`, `WATCHDOG=1`,
//! `STATUS=...` as datagrams to `$NOTIFY_SOCKET`. All no-ops without it.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

/// A notifier bound to `$NOTIFY_SOCKET`, or a no-op.
#[derive(Debug)]
pub(crate) struct Notifier {
    target: Option<(UnixDatagram, SocketAddr)>,
    watchdog: Option<Duration>,
}

impl Notifier {
    /// From the environment: `NOTIFY_SOCKET` and `WATCHDOG_USEC` (honoured
    /// only when `WATCHDOG_PID` is unset or ours).
    pub(crate) fn from_env() -> Notifier {
        let target = std::env::var("NOTIFY_SOCKET").ok().and_then(|path| {
            let addr = if let Some(name) = path.strip_prefix('@') {
                SocketAddr::from_abstract_name(name.as_bytes()).ok()?
            } else {
                SocketAddr::from_pathname(&path).ok()?
            };
            Some((UnixDatagram::unbound().ok()?, addr))
        });
        let ours = std::env::var("WATCHDOG_PID")
            .ok()
            .and_then(|p| p.parse::<u32>().ok())
            .is_none_or(|p| p == std::process::id());
        let watchdog = std::env::var("WATCHDOG_USEC")
            .ok()
            .and_then(|u| u.parse::<u64>().ok())
            .filter(|u| *u > 0 && ours)
            .map(Duration::from_micros);
        Notifier { target, watchdog }
    }

    fn send(&self, msg: &str) {
        if let Some((sock, addr)) = &self.target {
            let _ = sock.send_to_addr(msg.as_bytes(), addr);
        }
    }

    pub(crate) fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={}", one_line(status)));
    }

    pub(crate) fn status(&self, status: &str) {
        self.send(&format!("STATUS={}", one_line(status)));
    }

    pub(crate) fn stopping(&self) {
        self.send("STOPPING=1");
    }

    /// How often to send `WATCHDOG=1` (half the timeout), if systemd asked.
    pub(crate) fn watchdog_period(&self) -> Option<Duration> {
        self.watchdog.map(|w| w / 2)
    }

    pub(crate) fn watchdog(&self) {
        if self.watchdog.is_some() {
            self.send("WATCHDOG=1");
        }
    }
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_to_a_datagram_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("notify");
        let server = UnixDatagram::bind(&path).unwrap();
        let n = Notifier {
            target: Some((
                UnixDatagram::unbound().unwrap(),
                SocketAddr::from_pathname(&path).unwrap(),
            )),
            watchdog: Some(Duration::from_secs(10)),
        };
        n.ready("2 jobs\nactive");
        let mut buf = [0u8; 256];
        let len = server.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1\nSTATUS=2 jobs active");
        assert_eq!(n.watchdog_period(), Some(Duration::from_secs(5)));
    }
}
