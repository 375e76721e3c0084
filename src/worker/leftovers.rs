//! The rest of a run whose command was killed from outside. A kanban
//! dispatcher stops a worker by SIGTERM, then SIGKILL, of the pid `spawn`
//! reported, which is the command's; the run ends with it. What the command
//! started is SIGKILLed too: every process of the run's scope (its cgroup
//! holds also those that left the command's session), else of the detached
//! worker's session (the command and its children share it), else of the
//! command's process group (a foreground `run`: the session is the
//! caller's terminal's).
//!
//! A command that ended by itself may leave processes behind (a daemon it
//! started): they are not killed, but the row says which still run
//! ([`left_running`]), and that its scope lasts as long as they do.

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

/// What the run's command, ended by itself, left running (in scope `unit`,
/// if it has one): nothing is killed; a note for the row, or None when
/// nothing is left.
pub(super) fn left_running(unit: Option<&str>, command: u32) -> Option<String> {
    let left = the_rest(unit, command);
    if left.is_empty() {
        return None;
    }
    let named: Vec<String> = left
        .iter()
        .take(5)
        .map(
            |pid| match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
                Ok(name) => format!("{pid} ({})", crate::text::one_line(name.trim(), 32)),
                Err(_) => pid.to_string(),
            },
        )
        .collect();
    let more = if left.len() > named.len() {
        ", ..."
    } else {
        ""
    };
    let where_ = match unit {
        Some(unit) => format!(
            "its scope {unit} stays until they end (`systemctl --user stop {unit}` ends them)"
        ),
        None => "they run on outside any scope".to_string(),
    };
    Some(format!(
        "{} process(es) the command started still run after it ended: {}{more}; {where_}",
        left.len(),
        named.join(", ")
    ))
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
