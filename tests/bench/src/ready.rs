//! Receiving the "running" reports of [`crate::probe`] inside the runtime.
//!
//! The reports carry their own CLOCK_MONOTONIC instant, so how late the
//! benchmark reads one does not change the figure. The kernel queues only a
//! few datagrams (`net.unix.max_dgram_qlen`, 10 here); a reporter that finds
//! the queue full blocks in `sendto` after it took its timestamp, which is
//! harmless.

use crate::probe::{Report, parse_report};
use std::time::Duration;
use tokio::net::UnixDatagram;

/// The report socket, registered with the runtime.
pub(crate) struct Ready {
    sock: UnixDatagram,
}

impl Ready {
    /// Wrap the socket bound by the setup. Must run inside the runtime.
    pub(crate) fn new(sock: std::os::unix::net::UnixDatagram) -> std::io::Result<Ready> {
        sock.set_nonblocking(true)?;
        Ok(Ready {
            sock: UnixDatagram::from_std(sock)?,
        })
    }

    /// Throw away reports already queued (from an earlier, failed attempt).
    pub(crate) fn drain(&self) {
        let mut buf = [0u8; 64];
        while self.sock.try_recv(&mut buf).is_ok() {}
    }

    /// The next report, if one comes within `timeout`.
    pub(crate) async fn next(&self, timeout: Duration) -> Option<Report> {
        let mut buf = [0u8; 64];
        loop {
            let n = tokio::time::timeout(timeout, self.sock.recv(&mut buf))
                .await
                .ok()?
                .ok()?;
            if let Some(r) = parse_report(&buf[..n]) {
                return Some(r);
            }
        }
    }

    /// The report of `pid` (any report when `None`) within `timeout`.
    pub(crate) async fn wait_for(
        &self,
        pid: Option<u32>,
        timeout: Duration,
    ) -> Result<Report, String> {
        let deadline = hermes_cron::clock::loop_now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(hermes_cron::clock::loop_now());
            let Some(r) = self.next(left).await else {
                return Err(format!(
                    "no running report{} within {timeout:?}",
                    pid.map(|p| format!(" from pid {p}")).unwrap_or_default()
                ));
            };
            if pid.is_none_or(|p| p == r.pid) {
                return Ok(r);
            }
        }
    }

    /// Up to `n` reports, waiting at most `timeout` in all.
    pub(crate) async fn collect(&self, n: usize, timeout: Duration) -> Vec<Report> {
        let deadline = hermes_cron::clock::loop_now() + timeout;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            let left = deadline.saturating_duration_since(hermes_cron::clock::loop_now());
            match self.next(left).await {
                Some(r) => got.push(r),
                None => break,
            }
        }
        got
    }
}
