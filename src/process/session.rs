//! Finding and stopping everything a degraded worker started: the worker
//! called `setsid`, so its session id is its pid, and its job (in a process
//! group of its own) and the job's children share that session unless they
//! left it on purpose.

use super::identity::identity_of;
use super::signal::signal_pid;
use hermes_cron_core::run::ProcessIdentity;
use nix::sys::signal::Signal;

/// Field `n` (counted after the command: 0 is field 3, the state) of
/// `/proc/<pid>/stat`: 2 is the process group (field 5), 3 the session (6).
fn stat_field(pid: u32, n: usize) -> Option<u32> {
    stat_word(pid, n)?.parse().ok()
}

fn stat_word(pid: u32, n: usize) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(n).map(str::to_string)
}

/// Whether `pid` is stopped (SIGSTOP, or a tracer's stop: state `T`, `t`):
/// it does nothing, recording included, until someone continues it.
pub(crate) fn is_stopped(pid: u32) -> bool {
    matches!(stat_word(pid, 0).as_deref(), Some("T" | "t"))
}

const PPID: usize = 1;
const PGRP: usize = 2;
const SESSION: usize = 3;

/// Whether `leader`, a session leader (a worker: it called `setsid`), has a
/// live child: its job still runs. A child that exited and waits to be
/// reaped (a zombie) does not count: the worker is recording how it ended.
pub(crate) fn has_live_child(leader: &ProcessIdentity) -> bool {
    members(SESSION, leader.pid)
        .into_iter()
        .any(|pid| stat_field(pid, PPID) == Some(leader.pid) && super::identity::pid_lives(pid))
}

/// The session id of `pid`.
pub(crate) fn session_of(pid: u32) -> Option<u32> {
    stat_field(pid, SESSION)
}

/// Every process whose field `n` is `value`.
fn members(n: usize, value: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| stat_field(*pid, n) == Some(value))
        .collect()
}

/// Every live process in session `sid`.
pub(crate) fn session_members(sid: u32) -> Vec<u32> {
    members(SESSION, sid)
}

/// Every process in process group `pgid`.
pub(crate) fn group_members(pgid: u32) -> Vec<u32> {
    members(PGRP, pgid)
}

/// Send `sig` (then SIGCONT, so a stopped process handles it) to every process
/// in the session led by `leader`. When the leader is gone its pid cannot have
/// been reused while the session still has members (the kernel keeps a pid
/// that is still some session's id), so a pid that now belongs to another
/// process means the session is empty: nothing is signalled.
pub fn signal_session(leader: &ProcessIdentity, sig: Signal) -> usize {
    let reused = identity_of(leader.pid).is_some_and(|now| now.start != leader.start);
    if reused {
        return 0;
    }
    let members = session_members(leader.pid);
    for pid in &members {
        let _ = signal_pid(*pid, sig);
        if sig != Signal::SIGKILL {
            let _ = signal_pid(*pid, Signal::SIGCONT);
        }
    }
    members.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_session_contains_us() {
        let me = std::process::id();
        let sid = session_of(me).unwrap();
        assert!(session_members(sid).contains(&me));
    }
}
