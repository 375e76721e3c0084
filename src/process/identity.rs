//! Who a process is, read from `/proc`: its pid plus its start time (clock
//! ticks since boot, field 22 of `/proc/<pid>/stat`), so a recycled pid is
//! never mistaken for the process that wrote a row. The types are
//! `hermes_cron_core::run::{ProcessIdentity, Owner}`.

use hermes_cron_core::run::{Owner, OwnerRole, ProcessIdentity};

/// What `/proc/<pid>/stat` says about a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    state: char,
    start: u64,
}

fn read_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parse the fields we need; the command name (field 2) may hold spaces and
/// parentheses, so fields are counted after its last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); starttime is field 22 -> index 19.
    Some(Stat {
        state: fields.first()?.chars().next()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// This process.
pub(crate) fn current() -> ProcessIdentity {
    let pid = std::process::id();
    identity_of(pid).unwrap_or(ProcessIdentity { pid, start: 0 })
}

/// This process in `role`.
pub fn owner(role: OwnerRole) -> Owner {
    Owner {
        role,
        process: current(),
    }
}

/// The process with `pid` now, if it exists.
pub fn identity_of(pid: u32) -> Option<ProcessIdentity> {
    read_stat(pid).map(|s| ProcessIdentity {
        pid,
        start: s.start,
    })
}

/// Whether this very process is still alive: same pid, same start time,
/// and not a zombie (a zombie can no longer write anything).
pub fn is_alive(p: &ProcessIdentity) -> bool {
    match read_stat(p.pid) {
        Some(stat) => stat.start == p.start && stat.state != 'Z' && stat.state != 'X',
        None => false,
    }
}

/// Whether a process with `pid` exists and is not a zombie.
pub(crate) fn pid_lives(pid: u32) -> bool {
    read_stat(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_hostile_command_names() {
        let line =
            "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 12345 1000 10 rest";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: 'S',
                start: 12345
            })
        );
    }

    #[test]
    fn current_process_is_alive_and_a_changed_start_is_not() {
        let me = current();
        assert!(me.start > 0);
        assert!(is_alive(&me));
        assert!(!is_alive(&ProcessIdentity {
            start: me.start + 1,
            ..me
        }));
    }

    #[test]
    fn owner_text_round_trips() {
        let o = owner(OwnerRole::Worker);
        assert_eq!(o.to_string().parse::<Owner>().unwrap(), o);
    }
}
