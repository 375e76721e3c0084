//! The forensic dump the loop watchdog writes before it exits: every thread
//! of this process (name, state, wait channel, kernel stack where readable)
//! and what the loop was last doing. Read from `/proc/self/task`, so it works
//! however the loop is wedged. Holds no secrets: no environment, no argv.

use crate::fsutil::write_atomic;
use crate::home::Home;
use crate::schedule::Timestamp;
use std::fmt::Write as _;
use std::path::PathBuf;

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|e| format!("(unreadable: {e})"))
}

/// One thread's state letter and name from its `stat` line.
fn state_of(stat: &str) -> String {
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .map(|s| match s {
            "R" => "R (running)".to_string(),
            "S" => "S (sleeping)".to_string(),
            "D" => "D (disk sleep)".to_string(),
            "T" => "T (stopped)".to_string(),
            "t" => "t (tracing stop)".to_string(),
            "Z" => "Z (zombie)".to_string(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "?".into())
}

/// The text of the dump.
pub(crate) fn render(reason: &str, doing: &str, at: Timestamp) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "hermes-cron gateway forensic dump");
    let _ = writeln!(out, "at: {at}");
    let _ = writeln!(out, "pid: {}", std::process::id());
    let _ = writeln!(out, "reason: {reason}");
    let _ = writeln!(out, "loop was last doing: {doing}");
    let mut tids: Vec<u32> = std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    tids.sort_unstable();
    let _ = writeln!(out, "threads: {}", tids.len());
    for tid in tids {
        let base = format!("/proc/self/task/{tid}");
        let _ = writeln!(
            out,
            "\n--- thread {tid} \"{}\"",
            read(&format!("{base}/comm"))
        );
        let _ = writeln!(out, "state: {}", state_of(&read(&format!("{base}/stat"))));
        let _ = writeln!(out, "wchan: {}", read(&format!("{base}/wchan")));
        let _ = writeln!(out, "kernel stack:\n{}", read(&format!("{base}/stack")));
    }
    out
}

/// Write the dump to `logs/hermes-cron-watchdog-<instant>.txt`; returns its path.
pub(crate) fn write(home: &Home, reason: &str, doing: &str, at: Timestamp) -> Option<PathBuf> {
    let path = home.watchdog_dump(&at.format("%Y%m%dT%H%M%S%.3fZ").to_string());
    write_atomic(&path, render(reason, doing, at).as_bytes()).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_thread_with_its_state() {
        let text = render("test", "sleeping", chrono::DateTime::UNIX_EPOCH);
        assert!(text.contains("loop was last doing: sleeping"));
        assert!(text.contains("state: "));
        assert!(text.contains("wchan: "));
        let threads: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("threads: "))
            .unwrap()
            .parse()
            .unwrap();
        assert!(threads >= 1);
        assert_eq!(text.matches("--- thread ").count(), threads);
    }
}
