//! Processes, as `/proc` shows them: command lines, states, children, and
//! signalling a worker only after checking it is one.

use std::path::Path;

/// Pids whose NUL-separated command line, joined with spaces (each argument
/// followed by one), satisfies `pred`.
pub(crate) fn processes_where(pred: impl Fn(u32, &str) -> bool) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if pred(pid, &cmdline) {
            out.push(pid);
        }
    }
    out
}

/// The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`, ...); `None` when
/// there is no such process.
pub(crate) fn proc_state(pid: u32) -> Option<char> {
    stat_fields(pid).and_then(|f| f.first()?.chars().next())
}

/// Whether `/proc/<pid>` exists (a zombie still does).
pub(crate) fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The children of `parent` as (pid, state), from the parent pid of every
/// `/proc/*/stat`.
pub(crate) fn children_of(parent: u32) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Some(fields) = stat_fields(pid) else {
            continue;
        };
        let ppid: Option<u32> = fields.get(1).and_then(|p| p.parse().ok());
        if ppid == Some(parent) {
            let state = fields[0].chars().next().unwrap_or('?');
            out.push((pid, state));
        }
    }
    out
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 onwards).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// SIGTERM a worker (it forwards the signal to its job), if `pid` still is one.
pub(crate) fn stop_worker(pid: i32) {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if String::from_utf8_lossy(&cmdline).contains("hermes-cron-worker") {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}
