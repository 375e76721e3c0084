//! The benchmark binary's other lives: a worker stand-in and a trivial job
//! (the timer's service and the jobs of rows 3 and 4 are
//! `hermes-cron-bench-stamp`, `src/stamp.rs`). Each reports the instant it is "running" on the
//! CLOCK_MONOTONIC clock, which every process on the host shares, so the
//! figure does not depend on when the benchmark gets around to reading it.
//!
//! "Running" is defined once, here, for every peer: **the launched program is
//! executing its own `main` after `exec`, and, when it was started held on a
//! go pipe (our dispatch), after it has read its go line (its first byte).** That is the first
//! instant a worker may do its work, in its scope when it has one
//! (`systemd-run --scope` and our scoped dispatch both move the process before
//! it gets there).
//!
//! | argv\[1\] | role |
//! |---|---|
//! | `--home` | started by our dispatcher (`HeldWorker`): read the first byte of the go line, then report |
//! | `probe` | started by a peer (`systemd-run --scope`, fork+exec): report at once |
//! | `ready` | a job run by the real worker: report at once |
//!
//! Reports go to the datagram socket named by [`READY_ENV`] as `"<pid> <ns>"`.

use std::io::Read;
use std::os::unix::net::UnixDatagram;

/// The socket the benchmark listens on, inherited by every process it starts.
pub(crate) const READY_ENV: &str = "HERMES_BENCH_READY";

/// If this process was started in one of the roles above, play it and
/// return the exit code.
pub(crate) fn role() -> Option<i32> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("--home") => Some(held()),
        Some("probe" | "ready") => Some(report()),
        _ => None,
    }
}

/// A held worker: wait for the first byte of the go line, as `hermes-cron-worker` does; EOF
/// means the launcher gave up, so exit without reporting.
fn held() -> i32 {
    let mut byte = [0u8; 1];
    loop {
        match std::io::stdin().lock().read(&mut byte) {
            Ok(1) => return report(),
            Ok(_) => return 0,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return 0,
        }
    }
}

fn report() -> i32 {
    let at = mono_ns();
    let Some(path) = std::env::var_os(READY_ENV) else {
        return 2;
    };
    let msg = format!("{} {at}", std::process::id());
    match UnixDatagram::unbound().and_then(|s| s.send_to(msg.as_bytes(), path)) {
        Ok(_) => 0,
        Err(_) => 3,
    }
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in nanoseconds: comparable across processes.
pub(crate) fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// A report: which process, and when it was running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Report {
    pub pid: u32,
    pub at_ns: u64,
}

/// Parse `"<pid> <ns>"`.
pub(crate) fn parse_report(bytes: &[u8]) -> Option<Report> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (pid, at) = text.trim().split_once(' ')?;
    Some(Report {
        pid: pid.parse().ok()?,
        at_ns: at.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        assert_eq!(
            parse_report(b"42 123456789"),
            Some(Report {
                pid: 42,
                at_ns: 123_456_789
            })
        );
        assert_eq!(parse_report(b"42"), None);
        assert_eq!(parse_report(b"x 1"), None);
    }

    #[test]
    fn clocks_move_forward() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(b >= a);
    }
}
