//! Opening the ledger: the SQLite file `cron/cron.db` (pragmas, journal
//! mode), or the PostgreSQL database `HERMES_CRON_DATABASE` names; and
//! migrating either.
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
//! an upgrade from SHARED; on PostgreSQL the same transaction takes the
//! advisory lock `LockKey::Write` (see `conn.rs`). Migrations run under
//! `BEGIN EXCLUSIVE` (SQLite) or the advisory lock `LockKey::Migrate`.

use super::busy::{busy_timeout, is_busy};
use super::conn::{Conn, PgBackend, Tx};
use super::dialect::{Dialect, LockKey, lock_namespace};
use super::error::SqlError;
use super::migrations::{MIGRATIONS, SCHEMA_VERSION};
use super::pg::PgConn;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Test and operator override for the journal: `wal` (default) or `delete`
/// (forces the rollback journal, as on filesystems where WAL is unavailable).
pub(crate) const JOURNAL_ENV: &str = "HERMES_CRON_JOURNAL";

/// A PostgreSQL connection string (`postgresql://user@host/db`, or
/// `key=value` pairs): the ledger lives there instead of `cron/cron.db`.
pub const DATABASE_ENV: &str = "HERMES_CRON_DATABASE";

/// The config key that does the same (the variable wins).
pub(super) const DATABASE_KEY: &str = "cron.database";
/// The key's leaf, which any spelling of it in `config.yaml` contains.
const DATABASE_WORD: &[u8] = b"database";

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
    /// A database server (PostgreSQL) keeps its own log.
    Server,
}

impl JournalMode {
    /// The journal SQLite says it is in (`requested`: by the operator).
    fn of(mode: &str, requested: bool) -> JournalMode {
        if mode.eq_ignore_ascii_case("wal") {
            JournalMode::Wal
        } else {
            JournalMode::Rollback {
                mode: mode.to_ascii_lowercase(),
                requested,
            }
        }
    }
}

/// Where a home's ledger is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// The embedded SQLite file (the default).
    Sqlite(PathBuf),
    /// A PostgreSQL database, by connection string.
    Postgres(String),
}

impl Location {
    /// The ledger of `home`: `HERMES_CRON_DATABASE` when set and not empty,
    /// else config `cron.database` when set, else the home's SQLite file.
    ///
    /// A config file that cannot be read, or that names the key but does not
    /// load or holds an invalid `cron.database`, is an error, not the SQLite
    /// default: on a host of a cluster
    /// that default would be a ledger of its own, where every occurrence the
    /// others run would run again.
    pub fn of_home(home: &crate::home::Home) -> Result<Location, DbError> {
        if let Ok(url) = std::env::var(DATABASE_ENV)
            && !url.trim().is_empty()
        {
            return Ok(Location::Postgres(url.trim().to_string()));
        }
        let path = home.config_file();
        // `config.yaml` is Hermes's too, often long, and every worker comes
        // here: it is parsed only when the key's name is in it at all.
        let named = match crate::small_file::read(&path, crate::small_file::CONFIG_MAX) {
            Ok(bytes) => bytes
                .windows(DATABASE_WORD.len())
                .any(|w| w == DATABASE_WORD),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(DbError::Config {
                    path,
                    why: e.to_string(),
                });
            }
        };
        if !named {
            return Ok(Location::Sqlite(home.db_file()));
        }
        // Only `cron.database` is read here, and no zone name changes it or
        // its warning: the compiled-in zones judge `timezone` well enough.
        let zones = crate::schedule::ZoneTable::compiled_in_only();
        let loaded = crate::config::load(&path, &zones).map_err(|e| DbError::Config {
            path: path.clone(),
            why: crate::text::Chain(&e).to_string(),
        })?;
        if let Some(w) = loaded.warnings.iter().find(|w| w.key == DATABASE_KEY) {
            return Err(DbError::Config {
                path,
                why: w.message.clone(),
            });
        }
        Ok(match loaded.config.cron.database {
            Some(url) => Location::Postgres(url),
            None => Location::Sqlite(home.db_file()),
        })
    }

    /// Whether a ledger may be there already: the SQLite file exists; a
    /// PostgreSQL database is asked when opened.
    pub fn may_exist(&self) -> bool {
        match self {
            Location::Sqlite(p) => p.exists(),
            Location::Postgres(_) => true,
        }
    }

    /// For messages: the file, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => super::pg_target::shown(url),
        }
    }
}

/// Failed to open, configure or migrate the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("failed to open the database {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: SqlError,
    },
    #[error("failed to configure the database {} ({what})", path.display())]
    Configure {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: SqlError,
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
        source: SqlError,
    },
    #[error("{JOURNAL_ENV}={0:?} is not a journal mode; use wal or delete")]
    BadJournalEnv(String),
    #[error(
        "{DATABASE_ENV}: {0}; use postgresql://USER@HOST/DATABASE or host=... user=... dbname=..."
    )]
    BadUrl(String),
    #[error(
        "the PostgreSQL database {0} has no hermes-cron ledger yet; any other hermes-cron command (or starting the gateway) creates it"
    )]
    NoLedger(String),
    #[error(
        "cannot tell where the ledger is: {}: {why}; fix {DATABASE_KEY} there (or set {DATABASE_ENV})",
        path.display()
    )]
    Config { path: PathBuf, why: String },
    #[error(
        "the schema named first in the search_path of {0} does not exist; create it (CREATE SCHEMA ...) or fix the connection string's options"
    )]
    NoSchema(String),
    #[error(
        "the ledger {path} is damaged ({why}); hermes-cron will not write over it: restore it from a backup, or move it aside (`mv {path} {path}.damaged`, keeping it for what it still holds) and a new, empty ledger is made on the next command"
    )]
    Damaged { path: String, why: String },
}

impl DbError {
    /// The database's own error under this one, if it is one.
    pub(crate) fn sql(&self) -> Option<&SqlError> {
        match self {
            DbError::Open { source, .. }
            | DbError::Configure { source, .. }
            | DbError::Migrate { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `e`, or [`DbError::Damaged`] when SQLite said the file at `path` is
/// damaged or not a database.
fn damaged(path: &Path, e: DbError) -> DbError {
    match e.sql() {
        Some(sql) if sql.is_damaged() => DbError::Damaged {
            path: path.display().to_string(),
            why: format!("SQLite: {sql}"),
        },
        _ => e,
    }
}

/// Make a new ledger at `path`: whole (migrated) in a file of its own
/// beside it, then hard-linked into place, which fails, harmlessly, when
/// another process made it first. A process killed half way leaves a
/// stray temporary file, never an empty `path`.
fn create_new(path: &Path) -> Result<(), DbError> {
    let name = path
        .file_name()
        .map_or("cron.db".into(), |n| n.to_string_lossy());
    let temp = path.with_file_name(format!(".{name}.new-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    drop(Db::open_file(&temp)?);
    let linked = match std::fs::hard_link(&temp, path) {
        // A filesystem without hard links: a rename, unless another
        // process made it meanwhile.
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists && !path.exists() => {
            std::fs::rename(&temp, path)
        }
        linked => linked,
    };
    for leftover in ["", "-wal", "-shm", "-journal"] {
        let mut p = temp.as_os_str().to_owned();
        p.push(leftover);
        let _ = std::fs::remove_file(std::path::PathBuf::from(p));
    }
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(DbError::Open {
            path: path.to_path_buf(),
            source: SqlError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                Some(format!("cannot put the new ledger in place: {e}")),
            )),
        }),
    }
}

/// An open, migrated database.
pub struct Db {
    conn: Conn,
    path: PathBuf,
    journal: JournalMode,
    /// Where it is (to open another connection to it).
    location: Location,
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
    /// Open (creating when missing) and migrate the ledger of `home`.
    pub fn open_home(home: &crate::home::Home) -> Result<Db, DbError> {
        Db::open_at(&Location::of_home(home)?)
    }

    /// Open (creating when missing) and migrate the ledger at `location`.
    pub fn open_at(location: &Location) -> Result<Db, DbError> {
        match location {
            Location::Sqlite(path) => Db::open(path),
            Location::Postgres(url) => Db::open_postgres(url, true),
        }
    }

    /// Open the ledger of `home` to read it only: SQLite read-only, no
    /// migration (see [`Db::open_read_only`]).
    pub fn open_home_read_only(home: &crate::home::Home) -> Result<Db, DbError> {
        match Location::of_home(home)? {
            Location::Sqlite(path) => Db::open_read_only(&path),
            Location::Postgres(url) => Db::open_postgres(&url, false),
        }
    }

    /// A PostgreSQL ledger at `url`, migrated when `migrate` (else a schema
    /// newer than this build, or none at all, is refused).
    pub fn open_postgres(url: &str, migrate: bool) -> Result<Db, DbError> {
        let pg = PgConn::new(url, busy_timeout()).map_err(|e| DbError::BadUrl(e.to_string()))?;
        let path = PathBuf::from(pg.location());
        let schema: Option<String> = pg
            .query("SELECT current_schema() AS s", vec![])
            .and_then(|rows| match rows.first() {
                Some(r) => r.get("s"),
                None => Ok(None),
            })
            .map_err(|source| DbError::Open {
                path: path.clone(),
                source,
            })?;
        let Some(schema) = schema else {
            return Err(DbError::NoSchema(path.display().to_string()));
        };
        let mut db = Db {
            conn: Conn::Postgres(Box::new(PgBackend {
                conn: pg,
                namespace: lock_namespace(&schema),
            })),
            path,
            journal: JournalMode::Server,
            location: Location::Postgres(url.to_string()),
        };
        if migrate {
            db.migrate()?;
        } else {
            let found = db.pg_version(false)?;
            match found {
                None => return Err(DbError::NoLedger(db.path.display().to_string())),
                Some(v) if v > SCHEMA_VERSION => {
                    return Err(DbError::TooNew {
                        path: db.path.clone(),
                        found: v,
                    });
                }
                Some(_) => {}
            }
        }
        Ok(db)
    }

    /// Open (creating when missing) and migrate the database at `path`.
    /// The parent directory must exist.
    ///
    /// A new ledger is made whole beside it and linked into place (never
    /// over another process's), so `path` is never an empty file unless
    /// something emptied it: an empty or damaged file is refused
    /// ([`DbError::Damaged`]), never taken for a new ledger.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        match std::fs::metadata(path) {
            Ok(meta) if meta.len() == 0 => {
                return Err(DbError::Damaged {
                    path: path.display().to_string(),
                    why: "it is empty: 0 bytes".into(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_new(path)?,
            _ => {}
        }
        Db::open_file(path).map_err(|e| damaged(path, e))
    }

    /// [`Db::open`] on a file that may not exist yet.
    fn open_file(path: &Path) -> Result<Db, DbError> {
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
            source: source.into(),
        })?;
        // Best effort: SQLite creates the file with the umask; tighten it.
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        let configure = |what: &'static str, source: rusqlite::Error| DbError::Configure {
            path: path.to_path_buf(),
            what,
            source: source.into(),
        };
        conn.busy_timeout(busy)
            .map_err(|e| configure("busy_timeout", e))?;
        let mode =
            set_journal_mode(&conn, requested, busy).map_err(|e| configure("journal_mode", e))?;
        let journal = JournalMode::of(&mode, requested != "wal");
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| configure("synchronous", e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| configure("foreign_keys", e))?;
        let mut db = Db {
            conn: Conn::Sqlite(conn),
            path: path.to_path_buf(),
            journal,
            location: Location::Sqlite(path.to_path_buf()),
        };
        db.migrate()?;
        Ok(db)
    }

    /// Check the whole SQLite file (`PRAGMA quick_check`): what the gateway
    /// does before it trusts a ledger. A shared ledger is the server's to
    /// keep whole: nothing to check here.
    pub fn check_whole(&self) -> Result<(), DbError> {
        let Conn::Sqlite(conn) = &self.conn else {
            return Ok(());
        };
        let damaged = |why: String| DbError::Damaged {
            path: self.path.display().to_string(),
            why,
        };
        let verdict: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| damaged(format!("SQLite: {e}")))?;
        match verdict.as_str() {
            "ok" => Ok(()),
            other => Err(damaged(format!(
                "PRAGMA quick_check: {}",
                crate::text::one_line(other, 200)
            ))),
        }
    }

    /// Open an existing database read-only: no migration, no pragma writes.
    /// For `doctor`, which must change nothing. The journal mode is read as
    /// it is; a schema newer than this build is refused.
    pub fn open_read_only(path: &Path) -> Result<Db, DbError> {
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            return Err(DbError::Damaged {
                path: path.display().to_string(),
                why: "it is empty: 0 bytes".into(),
            });
        }
        Db::open_read_only_file(path).map_err(|e| damaged(path, e))
    }

    fn open_read_only_file(path: &Path) -> Result<Db, DbError> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| DbError::Open {
            path: path.to_path_buf(),
            source: source.into(),
        })?;
        let configure = |what: &'static str, source: rusqlite::Error| DbError::Configure {
            path: path.to_path_buf(),
            what,
            source: source.into(),
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
        Ok(Db {
            conn: Conn::Sqlite(conn),
            path: path.to_path_buf(),
            journal: JournalMode::of(&mode, false),
            location: Location::Sqlite(path.to_path_buf()),
        })
    }

    /// An in-memory database with the full schema, for unit tests.
    #[cfg(test)]
    pub(crate) fn open_in_memory() -> Result<Db, DbError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| DbError::Open {
            path: path.clone(),
            source: source.into(),
        })?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|source| DbError::Configure {
                path: path.clone(),
                what: "foreign_keys",
                source: source.into(),
            })?;
        let mut db = Db {
            conn: Conn::Sqlite(conn),
            location: Location::Sqlite(path.clone()),
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
        match self.conn.dialect() {
            Dialect::Sqlite => self.migrate_sqlite(),
            Dialect::Postgres => self.migrate_postgres(),
        }
    }

    fn migrate_sqlite(&mut self) -> Result<(), DbError> {
        let path = self.path.clone();
        let Conn::Sqlite(conn) = &mut self.conn else {
            unreachable!("migrate_sqlite on a PostgreSQL connection")
        };
        let version = |conn: &Connection| -> Result<i64, DbError> {
            conn.pragma_query_value(None, "user_version", |row| row.get(0))
                .map_err(|source| DbError::Configure {
                    path: path.clone(),
                    what: "user_version",
                    source: source.into(),
                })
        };
        let found = version(conn)?;
        if found == SCHEMA_VERSION {
            return Ok(());
        }
        if found > SCHEMA_VERSION {
            return Err(DbError::TooNew { path, found });
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Exclusive)
            .map_err(|source| DbError::Migrate {
                path: path.clone(),
                version: found + 1,
                source: source.into(),
            })?;
        // Another process may have migrated while we waited for the lock.
        let mut current = version(&tx)?;
        while current < SCHEMA_VERSION {
            let next = current + 1;
            let fail = |source: rusqlite::Error| DbError::Migrate {
                path: path.clone(),
                version: next,
                source: source.into(),
            };
            for step in MIGRATIONS[current as usize] {
                if let Some(sql) = step.sql_for(Dialect::Sqlite) {
                    tx.execute_batch(&sql).map_err(fail)?;
                }
            }
            tx.pragma_update(None, "user_version", next).map_err(fail)?;
            current = next;
        }
        tx.commit().map_err(|source| DbError::Migrate {
            path,
            version: SCHEMA_VERSION,
            source: source.into(),
        })
    }

    /// The PostgreSQL schema version; None when there is no ledger yet.
    /// With `locked`, inside the migration's transaction.
    fn pg_version(&self, locked: bool) -> Result<Option<i64>, DbError> {
        let read = |c: &Conn| -> Result<Option<i64>, SqlError> {
            c.query_opt(
                "SELECT version FROM schema_version",
                crate::params![],
                |r| r.get::<_, i64>("version"),
            )
        };
        let exists = self
            .conn
            .query_row(
                "SELECT to_regclass('schema_version') IS NOT NULL AS present",
                crate::params![],
                |r| r.get::<_, bool>("present"),
            )
            .map_err(|source| DbError::Configure {
                path: self.path.clone(),
                what: "schema_version",
                source,
            })?;
        if !exists {
            return Ok(None);
        }
        let _ = locked;
        read(&self.conn).map_err(|source| DbError::Configure {
            path: self.path.clone(),
            what: "schema_version",
            source,
        })
    }

    fn migrate_postgres(&mut self) -> Result<(), DbError> {
        let path = self.path.clone();
        if self.pg_version(false)? == Some(SCHEMA_VERSION) {
            return Ok(());
        }
        let fail = |version: i64| {
            let path = path.clone();
            move |source: SqlError| DbError::Migrate {
                path,
                version,
                source,
            }
        };
        let conn = &self.conn;
        conn.execute_batch("BEGIN").map_err(fail(0))?;
        if let Conn::Postgres(p) = conn {
            p.conn.set_in_transaction(true);
        }
        let tx = TxGuard(conn);
        conn.lock(LockKey::Migrate).map_err(fail(0))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL);
             INSERT INTO schema_version (version)
                 SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM schema_version);",
        )
        .map_err(fail(0))?;
        // Another process may have migrated while we waited for the lock.
        let mut current = self.pg_version(true)?.unwrap_or(0);
        if current > SCHEMA_VERSION {
            return Err(DbError::TooNew {
                path: path.clone(),
                found: current,
            });
        }
        while current < SCHEMA_VERSION {
            let next = current + 1;
            for step in MIGRATIONS[current as usize] {
                if let Some(sql) = step.sql_for(Dialect::Postgres) {
                    conn.execute_batch(&sql).map_err(fail(next))?;
                }
            }
            conn.execute(
                "UPDATE schema_version SET version = ?1",
                crate::params![next],
            )
            .map_err(fail(next))?;
            current = next;
        }
        std::mem::forget(tx);
        let done = conn.execute_batch("COMMIT");
        if let Conn::Postgres(p) = conn {
            p.conn.set_in_transaction(false);
        }
        done.map_err(fail(SCHEMA_VERSION))
    }

    /// The connection, for single statements and read transactions.
    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// A write transaction that holds the write lock from its first
    /// statement (see `conn.rs`).
    pub fn immediate(&mut self) -> Result<Tx<'_>, SqlError> {
        self.conn.immediate()
    }

    pub fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    /// What the ledger's backend allows and needs.
    pub fn caps(&self) -> super::Caps {
        self.conn.caps()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this ledger is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    pub fn journal(&self) -> &JournalMode {
        &self.journal
    }
}

impl JournalMode {
    /// Readers and writers do not block each other (SQLite's WAL, or a
    /// database server).
    pub(crate) fn is_wal(&self) -> bool {
        matches!(self, JournalMode::Wal | JournalMode::Server)
    }
}

/// Rolls the migration's transaction back unless forgotten.
struct TxGuard<'c>(&'c Conn);

impl Drop for TxGuard<'_> {
    fn drop(&mut self) {
        let _ = self.0.execute_batch("ROLLBACK");
        if let Conn::Postgres(p) = self.0 {
            p.conn.set_in_transaction(false);
        }
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
            Err(e) if is_busy(&e) && crate::clock::elapsed(start) < busy => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            done => return done,
        }
    }
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
            .sqlite()
            .unwrap()
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
        for (i, steps) in MIGRATIONS[..6].iter().enumerate() {
            for sql in steps.iter().filter_map(|s| s.sql_for(Dialect::Sqlite)) {
                old.execute_batch(&sql).unwrap();
            }
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
        let conn = db.conn().sqlite().expect("a SQLite ledger");
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
