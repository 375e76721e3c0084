//! `hermes-cron-bench-stamp FILE`: the job of rows 3 and 4, and the service
//! of their timer peer. It appends the instant it is running (CLOCK_REALTIME
//! at the top of `main`, in nanoseconds) and, when it runs as a hermes-cron
//! job, its `HERMES_CRON_EXECUTION_ID`, as one line to FILE.
//!
//! A program of its own, as small as a Rust program gets: the start lateness
//! the rows measure is the scheduler's, not the time the dynamic loader
//! takes over a large benchmark binary (exec of this one is a few hundred
//! microseconds, and the same for hermes-cron and for the systemd timer).

use std::io::Write;

fn main() {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let at = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    let Some(file) = std::env::args_os().nth(1) else {
        std::process::exit(2);
    };
    // One short line per write(2) with O_APPEND: concurrent jobs never interleave.
    let line = match std::env::var("HERMES_CRON_EXECUTION_ID") {
        Ok(id) => format!("{at} {id}\n"),
        Err(_) => format!("{at}\n"),
    };
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    std::process::exit(if written.is_ok() { 0 } else { 3 });
}
