//! Who a process is: its pid plus its start time (clock ticks since boot,
//! field 22 of `/proc/<pid>/stat`), so a recycled pid is never mistaken for
//! the process that wrote a row. Owners of ledger rows are written as
//! `role:pid:start`.

use std::fmt;
use std::str::FromStr;

/// A process, identified across pid reuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessIdentity {
    pub pid: u32,
    /// Start time in clock ticks after boot.
    pub start: u64,
}

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

impl ProcessIdentity {
    /// This process.
    pub fn current() -> ProcessIdentity {
        let pid = std::process::id();
        ProcessIdentity::of(pid).unwrap_or(ProcessIdentity { pid, start: 0 })
    }

    /// The process with `pid` now, if it exists.
    pub fn of(pid: u32) -> Option<ProcessIdentity> {
        read_stat(pid).map(|s| ProcessIdentity {
            pid,
            start: s.start,
        })
    }

    /// Whether this very process is still alive: same pid, same start time,
    /// and not a zombie (a zombie can no longer write anything).
    pub fn is_alive(&self) -> bool {
        match read_stat(self.pid) {
            Some(stat) => stat.start == self.start && stat.state != 'Z' && stat.state != 'X',
            None => false,
        }
    }
}

/// The kind of process that owns a ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerRole {
    /// A `tick`, `run` or `spawn` CLI process that claimed the row.
    Cli,
    /// The gateway daemon that claimed the row.
    Gateway,
    /// The worker that adopted the row.
    Worker,
}

impl OwnerRole {
    fn as_str(self) -> &'static str {
        match self {
            OwnerRole::Cli => "cli",
            OwnerRole::Gateway => "gateway",
            OwnerRole::Worker => "worker",
        }
    }
}

/// The owner of a ledger row: only it may move the row on, by compare-and-set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub role: OwnerRole,
    pub process: ProcessIdentity,
}

impl Owner {
    /// This process in `role`.
    pub fn current(role: OwnerRole) -> Owner {
        Owner {
            role,
            process: ProcessIdentity::current(),
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.role.as_str(),
            self.process.pid,
            self.process.start
        )
    }
}

impl FromStr for Owner {
    type Err = String;
    fn from_str(s: &str) -> Result<Owner, String> {
        let mut parts = s.split(':');
        let role = match parts.next() {
            Some("cli") => OwnerRole::Cli,
            Some("gateway") => OwnerRole::Gateway,
            Some("worker") => OwnerRole::Worker,
            _ => return Err(format!("{s:?} is not an owner")),
        };
        let pid = parts.next().and_then(|p| p.parse().ok());
        let start = parts.next().and_then(|p| p.parse().ok());
        match (pid, start, parts.next()) {
            (Some(pid), Some(start), None) => Ok(Owner {
                role,
                process: ProcessIdentity { pid, start },
            }),
            _ => Err(format!("{s:?} is not an owner")),
        }
    }
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
        let me = ProcessIdentity::current();
        assert!(me.start > 0);
        assert!(me.is_alive());
        assert!(
            !ProcessIdentity {
                start: me.start + 1,
                ..me
            }
            .is_alive()
        );
    }

    #[test]
    fn owner_round_trips() {
        let o = Owner::current(OwnerRole::Worker);
        assert_eq!(o.to_string().parse::<Owner>().unwrap(), o);
        assert!("worker:x:1".parse::<Owner>().is_err());
    }
}
