//! Who owns a ledger row: a process, identified by its pid plus its start
//! time (clock ticks since boot), so a recycled pid is never mistaken for the
//! process that wrote the row. Owners are stored as `role:pid:start`. Finding
//! out whether such a process is alive is the main crate's (`process`).

use std::fmt;
use std::str::FromStr;

/// A process, identified across pid reuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessIdentity {
    /// The process id.
    pub pid: u32,
    /// Start time in clock ticks after boot.
    pub start: u64,
}

/// The kind of process that owns a ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnerRole {
    /// A `tick`, `run` or `spawn` CLI process that claimed the row.
    Cli,
    /// The gateway daemon that claimed the row.
    Gateway,
    /// The worker that adopted the row.
    Worker,
}

impl OwnerRole {
    /// The stored word: `cli`, `gateway`, `worker`.
    pub fn as_str(self) -> &'static str {
        match self {
            OwnerRole::Cli => "cli",
            OwnerRole::Gateway => "gateway",
            OwnerRole::Worker => "worker",
        }
    }

    /// The role in words: `command`, `gateway`, `worker`.
    pub fn describe(self) -> &'static str {
        match self {
            OwnerRole::Cli => "command",
            OwnerRole::Gateway => "gateway",
            OwnerRole::Worker => "worker",
        }
    }
}

/// The owner of a ledger row: only it may move the row on, by compare-and-set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    /// What kind of process it is.
    pub role: OwnerRole,
    /// Which process.
    pub process: ProcessIdentity,
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

/// Text that does not name an owner (`role:pid:start`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an owner (role:pid:start)")]
pub struct NotAnOwner(pub String);

impl FromStr for Owner {
    type Err = NotAnOwner;
    fn from_str(s: &str) -> Result<Owner, NotAnOwner> {
        let mut parts = s.split(':');
        let role = match parts.next() {
            Some("cli") => OwnerRole::Cli,
            Some("gateway") => OwnerRole::Gateway,
            Some("worker") => OwnerRole::Worker,
            _ => return Err(NotAnOwner(s.to_string())),
        };
        let pid = parts.next().and_then(|p| p.parse().ok());
        let start = parts.next().and_then(|p| p.parse().ok());
        match (pid, start, parts.next()) {
            (Some(pid), Some(start), None) => Ok(Owner {
                role,
                process: ProcessIdentity { pid, start },
            }),
            _ => Err(NotAnOwner(s.to_string())),
        }
    }
}

/// A row's owner as it was read: the stored text (what a compare-and-set
/// compares) and the owner it names, when it names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowOwner {
    stored: String,
    owner: Option<Owner>,
}

impl RowOwner {
    /// The stored text of a row's owner.
    pub fn stored(text: impl Into<String>) -> RowOwner {
        let stored = text.into();
        let owner = stored.parse().ok();
        RowOwner { stored, owner }
    }

    /// The text the row holds.
    pub fn as_stored(&self) -> &str {
        &self.stored
    }

    /// The process it names; None when the text is not an owner.
    pub fn owner(&self) -> Option<Owner> {
        self.owner
    }
}

impl From<Owner> for RowOwner {
    fn from(owner: Owner) -> RowOwner {
        RowOwner {
            stored: owner.to_string(),
            owner: Some(owner),
        }
    }
}

impl serde::Serialize for RowOwner {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.stored)
    }
}

impl fmt::Display for RowOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_round_trips() {
        let o = Owner {
            role: OwnerRole::Worker,
            process: ProcessIdentity { pid: 42, start: 7 },
        };
        assert_eq!(o.to_string().parse::<Owner>().unwrap(), o);
        assert!("worker:x:1".parse::<Owner>().is_err());
        let row = RowOwner::stored("cli:007:1");
        assert_eq!(row.as_stored(), "cli:007:1");
        assert_eq!(row.owner().unwrap().process.pid, 7);
        assert_eq!(RowOwner::stored("junk").owner(), None);
        assert_eq!(RowOwner::from(o).as_stored(), "worker:42:7");
    }
}
