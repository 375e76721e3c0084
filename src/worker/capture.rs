//! Capturing a job's output: stdout and stderr share one pipe (so their
//! order is kept), read on a thread, written to the output file up to the cap,
//! then a truncation mark; the rest is drained and counted but not stored.
//! Optionally teed to the worker's own stdout (foreground runs).
//!
//! A full disk is a truncation too: the first failed write ends the file's
//! growth (a mark is attempted), and the job keeps running.
//!
//! What has been captured so far is kept where the worker can read it
//! ([`Capture::finish`]): a process the command left running may hold the
//! pipe open after the command ended, and its run is recorded then with the
//! output as it stood, not as nothing.

use crate::clock::monotonic;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// When the job last wrote output (for the idle timeout): shared by the
/// capture thread, which stamps it, and the supervisor, which reads it.
#[derive(Clone, Debug)]
pub(crate) struct Activity {
    since: Instant,
    /// Milliseconds after `since` of the last output.
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    /// Activity counted from now (the job's start counts as activity).
    pub(crate) fn starting_now() -> Activity {
        Activity {
            since: monotonic(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn stamp(&self) {
        let ms = monotonic()
            .saturating_duration_since(self.since)
            .as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// When the job last wrote output (or started).
    pub(crate) fn last(&self) -> Instant {
        self.since + Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// What ended up in the output file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    /// Bytes of job output stored in the file (the mark not included).
    pub stored: u64,
    /// Bytes the job wrote in all.
    pub total: u64,
    pub truncated: bool,
    /// A write to the file failed (e.g. ENOSPC).
    pub write_failed: bool,
}

/// The mark appended when the cap is reached.
pub(crate) fn truncation_mark(cap: u64) -> String {
    format!("\n[hermes-cron: output truncated at {cap} bytes]\n")
}

/// The output thread's result, when it reaches EOF, and what it has
/// captured so far.
pub(crate) struct Capture {
    done: mpsc::Receiver<Captured>,
    so_far: Arc<Mutex<Captured>>,
}

impl Capture {
    /// What was captured, once the pipe reached EOF or `patience` passed
    /// (then as it stood, and true: the pipe is still held open by a
    /// process the command left running).
    pub(crate) fn finish(self, patience: Duration) -> (Captured, bool) {
        match self.done.recv_timeout(patience) {
            Ok(got) => (got, false),
            Err(e) => {
                let so_far = self.so_far.lock().map(|c| *c).unwrap_or_default();
                (so_far, e == mpsc::RecvTimeoutError::Timeout)
            }
        }
    }
}

/// Read `pipe` until EOF on a new thread, stamping `activity` on output.
pub(crate) fn spawn_capture(
    pipe: OwnedFd,
    file: Option<File>,
    cap: u64,
    tee: bool,
    activity: Activity,
) -> Capture {
    let so_far = Arc::new(Mutex::new(Captured::default()));
    let shared = so_far.clone();
    let (tx, done) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("output".into())
        .spawn(move || {
            let _ = tx.send(capture(
                File::from(pipe),
                file,
                cap,
                tee,
                &activity,
                &shared,
            ));
        })
        .expect("spawning the output thread");
    Capture { done, so_far }
}

fn capture(
    mut pipe: File,
    mut file: Option<File>,
    cap: u64,
    tee: bool,
    activity: &Activity,
    so_far: &Mutex<Captured>,
) -> Captured {
    let mut got = Captured::default();
    let mut buf = vec![0u8; 64 * 1024];
    let stdout = std::io::stdout();
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        activity.stamp();
        got.total += n as u64;
        if tee {
            let mut out = stdout.lock();
            let _ = out.write_all(&buf[..n]).and_then(|_| out.flush());
        }
        if let Some(f) = file.as_mut() {
            store(f, &buf[..n], cap, &mut got);
        }
        if let Ok(mut s) = so_far.lock() {
            *s = got;
        }
    }
    if let Some(f) = file.as_mut() {
        let _ = f.flush();
        let _ = f.sync_data();
    }
    got
}

/// Write `chunk` to `f` as far as the cap (and the disk) allows, counting
/// it in `got`; the truncation mark once it does not.
fn store(f: &mut File, chunk: &[u8], cap: u64, got: &mut Captured) {
    if got.truncated {
        return;
    }
    let n = chunk.len();
    let room = cap.saturating_sub(got.stored) as usize;
    let take = n.min(room);
    if take > 0 {
        if f.write_all(&chunk[..take]).is_err() {
            got.write_failed = true;
            got.truncated = true;
            let _ = f.write_all(truncation_mark(got.stored).as_bytes());
            return;
        }
        got.stored += take as u64;
    }
    if take < n {
        got.truncated = true;
        let _ = f.write_all(truncation_mark(cap).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn run(input: &[u8], cap: u64) -> (Captured, String) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.log");
        let file = File::create(&path).unwrap();
        let (r, w) = nix::unistd::pipe().unwrap();
        let handle = spawn_capture(r, Some(file), cap, false, Activity::starting_now());
        let mut w = File::from(w);
        w.write_all(input).unwrap();
        drop(w);
        let (got, held) = handle.finish(Duration::from_secs(30));
        assert!(!held);
        (got, std::fs::read_to_string(&path).unwrap())
    }

    #[test]
    fn stores_everything_under_the_cap() {
        let (got, text) = run(b"hello\n", 100);
        assert_eq!(
            got,
            Captured {
                stored: 6,
                total: 6,
                truncated: false,
                write_failed: false
            }
        );
        assert_eq!(text, "hello\n");
    }

    #[test]
    fn truncates_at_the_cap_with_a_mark() {
        let data = vec![b'x'; 5000];
        let (got, text) = run(&data, 1024);
        assert!(got.truncated);
        assert_eq!((got.stored, got.total), (1024, 5000));
        assert!(text.starts_with(&"x".repeat(1024)));
        assert!(text.ends_with(&truncation_mark(1024)));
    }
}
