//! Opening `cron/cron.db`: pragmas, journal mode and migrations.
//!
//! One `Db` holds one connection. Callers never hold two read contexts at
//! once and never open a second connection while a statement of the first is
//! live: under the rollback journal (network filesystems, or
//! `HERMES_CRON_JOURNAL=delete`) that is a self-deadlock until the busy
//! timeout.
//!
//! ## Locking
//! Writers take SQLite's RESERVED lock with `BEGIN IMMEDIATE` (see
//! [`Db::immediate`]) so a read-then-write transaction never fails half way on
//! an upgrade from SHARED. Migrations run under `BEGIN EXCLUSIVE`.

use super::migrations::{MIGRATIONS, SCHEMA_VERSION};
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Test and operator override for the journal: `wal` (default) or `delete`
/// (forces the rollback journal, as on filesystems where WAL is unavailable).
pub(crate) const JOURNAL_ENV: &str = "HERMES_CRON_JOURNAL";

/// Override for the busy timeout in milliseconds (default 15000).
pub(crate) const BUSY_TIMEOUT_ENV: &str = "HERMES_CRON_BUSY_TIMEOUT_MS";

const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// The journal the database ended up in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalMode {
    Wal,
    /// A rollback journal (`delete`, `truncate`, `persist`...), by request or
    /// because WAL could not be enabled here.
    Rollback {
        mode: String,
        requested: bool,
    },
}

/// Failed to open, configure or migrate the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("failed to open the database {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("failed to configure the database {} ({what})", path.display())]
    Configure {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "the database {} has schema version {found}, newer than this build's {SCHEMA_VERSION}; upgrade hermes-cron",
        path.display()
    )]
    TooNew { path: PathBuf, found: i64 },
    #[error("failed to migrate the database {} to version {version}", path.display())]
    Migrate {
        path: PathBuf,
        version: i64,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{JOURNAL_ENV}={0:?} is not a journal mode; use wal or delete")]
    BadJournalEnv(String),
}

/// An open, migrated database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
    journal: JournalMode,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.path)
            .field("journal", &self.journal)
            .finish()
    }
}

impl Db {
    /// Open (creating when missing) and migrate the database at `path`.
    /// The parent directory must exist.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let requested = requested_journal()?;
        let busy = busy_timeout();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| DbError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        // Best effort: SQLite creates the file with the umask; tighten it.
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        let configure = |what: &'static str, source| DbError::Configure {
            path: path.to_path_buf(),
            what,
            source,
        };
        conn.busy_timeout(busy)
            .map_err(|e| configure("busy_timeout", e))?;
        let mode =
            set_journal_mode(&conn, requested, busy).map_err(|e| configure("journal_mode", e))?;
        let journal = if mode.eq_ignore_ascii_case("wal") {
            JournalMode::Wal
        } else {
            JournalMode::Rollback {
                mode: mode.to_ascii_lowercase(),
                requested: requested != "wal",
            }
        };
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| configure("synchronous", e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| configure("foreign_keys", e))?;
        let mut db = Db {
            conn,
            path: path.to_path_buf(),
            journal,
        };
        db.migrate()?;
        Ok(db)
    }

    /// Open an existing database read-only: no migration, no pragma writes.
    /// For `doctor`, which must change nothing. The journal mode is read as
    /// it is; a schema newer than this build is refused.
    pub fn open_read_only(path: &Path) -> Result<Db, DbError> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| DbError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let configure = |what: &'static str, source| DbError::Configure {
            path: path.to_path_buf(),
            what,
            source,
        };
        conn.busy_timeout(busy_timeout())
            .map_err(|e| configure("busy_timeout", e))?;
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .map_err(|e| configure("journal_mode", e))?;
        let found: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| configure("user_version", e))?;
        if found > SCHEMA_VERSION {
            return Err(DbError::TooNew {
                path: path.to_path_buf(),
                found,
            });
        }
        let journal = if mode.eq_ignore_ascii_case("wal") {
            JournalMode::Wal
        } else {
            JournalMode::Rollback {
                mode: mode.to_ascii_lowercase(),
                requested: false,
            }
        };
        Ok(Db {
            conn,
            path: path.to_path_buf(),
            journal,
        })
    }

    /// An in-memory database with the full schema, for unit tests.
    #[cfg(test)]
    pub(crate) fn open_in_memory() -> Result<Db, DbError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| DbError::Open {
            path: path.clone(),
            source,
        })?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|source| DbError::Configure {
                path: path.clone(),
                what: "foreign_keys",
                source,
            })?;
        let mut db = Db {
            conn,
            path,
            journal: JournalMode::Rollback {
                mode: "memory".into(),
                requested: true,
            },
        };
        db.migrate()?;
        Ok(db)
    }

    fn migrate(&mut self) -> Result<(), DbError> {
        let path = self.path.clone();
        let version = |conn: &Connection| -> Result<i64, DbError> {
            conn.pragma_query_value(None, "user_version", |row| row.get(0))
                .map_err(|source| DbError::Configure {
                    path: path.clone(),
                    what: "user_version",
                    source,
                })
        };
        let found = version(&self.conn)?;
        if found == SCHEMA_VERSION {
            return Ok(());
        }
        if found > SCHEMA_VERSION {
            return Err(DbError::TooNew { path, found });
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Exclusive)
            .map_err(|source| DbError::Migrate {
                path: path.clone(),
                version: found + 1,
                source,
            })?;
        // Another process may have migrated while we waited for the lock.
        let mut current = version(&tx)?;
        while current < SCHEMA_VERSION {
            let next = current + 1;
            let fail = |source| DbError::Migrate {
                path: path.clone(),
                version: next,
                source,
            };
            tx.execute_batch(MIGRATIONS[current as usize])
                .map_err(fail)?;
            tx.pragma_update(None, "user_version", next).map_err(fail)?;
            current = next;
        }
        tx.commit().map_err(|source| DbError::Migrate {
            path,
            version: SCHEMA_VERSION,
            source,
        })
    }

    /// The connection, for single statements and read transactions.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// A write transaction that holds the RESERVED lock from its first statement.
    pub fn immediate(&mut self) -> rusqlite::Result<Transaction<'_>> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn journal(&self) -> &JournalMode {
        &self.journal
    }
}

impl JournalMode {
    pub(crate) fn is_wal(&self) -> bool {
        matches!(self, JournalMode::Wal)
    }
}

fn requested_journal() -> Result<&'static str, DbError> {
    match std::env::var(JOURNAL_ENV) {
        Err(_) => Ok("wal"),
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" | "wal" => Ok("wal"),
            "delete" => Ok("delete"),
            _ => Err(DbError::BadJournalEnv(v)),
        },
    }
}

/// `PRAGMA journal_mode = ...`, retried on SQLITE_BUSY until `busy` has
/// passed. Switching a database into or out of WAL takes an exclusive lock
/// without consulting the busy handler, so processes opening a new home at
/// the same moment would otherwise fail at once with "database is locked".
fn set_journal_mode(
    conn: &Connection,
    requested: &str,
    busy: Duration,
) -> rusqlite::Result<String> {
    let start = crate::clock::monotonic();
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", requested, |row| row.get(0)) {
            Err(e) if super::explain::is_busy(&e) && crate::clock::elapsed(start) < busy => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            done => return done,
        }
    }
}

pub(crate) fn busy_timeout() -> Duration {
    std::env::var(BUSY_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (1..=600_000).contains(ms))
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_BUSY_TIMEOUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_a_new_file_and_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cron.db");
        let db = Db::open(&path).unwrap();
        assert!(db.journal().is_wal());
        drop(db);
        let db = Db::open(&path).unwrap();
        let v: i64 = db
            .conn()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    /// Migration 7 widens the state CHECK in place: a ledger written by the
    /// previous schema keeps its rows, takes `staged`, still refuses unknown
    /// states, and still freezes terminal rows; a second connection that was
    /// open during the upgrade sees the new schema too.
    #[test]
    fn a_version_6_ledger_learns_the_staged_state_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cron.db");
        let old = Connection::open(&path).unwrap();
        for (i, sql) in MIGRATIONS[..6].iter().enumerate() {
            old.execute_batch(sql).unwrap();
            old.pragma_update(None, "user_version", i as i64 + 1)
                .unwrap();
        }
        old.execute_batch(
            "INSERT INTO executions (id, job_name, source, state, spec, claimed_at)
                 VALUES ('done', 'n', 'manual', 'succeeded', '{}', 0),
                        ('live', 'n', 'manual', 'claimed', '{}', 0);",
        )
        .unwrap();
        let db = Db::open(&path).unwrap();
        let conn = db.conn();
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM executions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
        // The connection opened before the upgrade reloads the schema too.
        old.execute(
            "UPDATE executions SET state = 'staged' WHERE id = 'live'",
            [],
        )
        .expect("staged is a state now");
        assert!(
            conn.execute("UPDATE executions SET state = 'held' WHERE id = 'live'", [])
                .is_err()
        );
        assert!(
            conn.execute(
                "UPDATE executions SET state = 'failed' WHERE id = 'done'",
                []
            )
            .is_err(),
            "terminal rows stay frozen"
        );
        conn.execute(
            "UPDATE executions SET state = 'running' WHERE id = 'live'",
            [],
        )
        .expect("a staged row moves on");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let plan: String = conn
            .query_row(
                "EXPLAIN QUERY PLAN SELECT id FROM executions WHERE state IN ('claimed', 'staged', 'running')",
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("executions_active"), "{plan}");
    }

    #[test]
    fn refuses_a_newer_schema() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cron.db");
        drop(Db::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(conn);
        let err = Db::open(&path).unwrap_err();
        assert!(matches!(err, DbError::TooNew { .. }), "{err}");
    }
}
