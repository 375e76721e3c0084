//! What the ledger's backend allows and needs, answered once for every
//! caller: the embedded SQLite file is one host's; a PostgreSQL database is
//! shared by several hosts, and everything that differs follows from that.

use super::dialect::Dialect;

/// The backend's answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Several hosts may share the ledger: rows name their host, hosts
    /// hold leases, a host's Hermes jobs are pinned to it.
    pub shared: bool,
    /// A claim pass locks with a `flock` on the home's tick lock file
    /// (else with the database's advisory lock, across hosts).
    pub tick_flock: bool,
    /// Changes by other processes are announced on the ledger's `NOTIFY`
    /// channel (else seen by inotify on the home's `cron/`).
    pub notify: bool,
    /// Workers may be staged ahead of their instant: a staged worker holds
    /// a connection, which a server many hosts share cannot spare.
    pub staging: bool,
    /// The ledger has a clock of its own (the server's), which every host
    /// judges leases by (else this host's clock is the ledger's).
    pub server_clock: bool,
}

impl Caps {
    pub(crate) fn of(dialect: Dialect) -> Caps {
        let shared = dialect == Dialect::Postgres;
        Caps {
            shared,
            tick_flock: !shared,
            notify: shared,
            staging: !shared,
            server_clock: shared,
        }
    }
}
