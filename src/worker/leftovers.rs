//! The rest of a run whose command was killed from outside. A kanban
//! dispatcher stops a worker by SIGTERM, then SIGKILL, of the pid `spawn`
//! reported, which is the command's; the run ends with it. What the command
//! started is SIGKILLed too: every process of the run's scope (its cgroup
//! holds also those that left the command's session), else of the detached
//! worker's session (the command and its children share it), else of the
//! command's process group (a foreground `run`: the session is the
//! caller's terminal's).

use crate::process::{
    group_members, own_unit_members, pid_lives, session_members, session_of, signal_pid,
};
use nix::sys::signal::Signal;
use std::collections::BTreeSet;
use std::time::Duration;

/// Rounds of looking and killing: a process may fork while it is killed.
const ROUNDS: usize = 5;

/// The live processes of the run but this worker and its command (a zombie
/// it has not reaped yet).
fn the_rest(unit: Option<&str>, command: u32) -> Vec<u32> {
    let me = std::process::id();
    let all = match unit.and_then(own_unit_members) {
        Some(pids) => pids,
        None if session_of(me) == Some(me) => session_members(me),
        None => group_members(command),
    };
    all.into_iter()
        .filter(|pid| *pid != me && *pid != command && pid_lives(*pid))
        .collect()
}

/// SIGKILL what is left of the run (in scope `unit`, if it has one) whose
/// command `command` has ended; how many processes were killed.
pub(super) fn end_the_rest(unit: Option<&str>, command: u32) -> usize {
    let mut killed = BTreeSet::new();
    for round in 0..ROUNDS {
        let left = the_rest(unit, command);
        if left.is_empty() {
            break;
        }
        for pid in left {
            let _ = signal_pid(pid, Signal::SIGKILL);
            killed.insert(pid);
        }
        if round + 1 < ROUNDS {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    killed.len()
}
