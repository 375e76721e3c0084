//! A failed statement, from either backend, and what kind of failure it is:
//! one that may pass by itself (a lock held past the timeout, a full disk,
//! a database out of reach) or one that will not.

/// A statement failed.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", pg_message(.0))]
    Postgres(postgres::Error),
    /// PostgreSQL could not be reached, or stopped answering.
    #[error("the database at {location} cannot be reached: {detail}")]
    Unreachable { location: String, detail: String },
    /// A value read did not convert (a schema this build does not know).
    #[error("unexpected column: {0}")]
    Column(String),
    /// A row a statement had to return is not there.
    #[error("query returned no rows")]
    NoRows,
}

pub type SqlResult<T> = Result<T, SqlError>;

/// PostgreSQL SQLSTATEs that mean "a lock we need is held": `lock_timeout`
/// (55P03), a serialization failure (40001), a deadlock (40P01).
const PG_BUSY: [&str; 3] = ["55P03", "40001", "40P01"];
/// `disk_full` (53100), `out_of_memory` (53200), `too_many_connections` (53300),
/// `admin_shutdown`/`crash_shutdown`/`cannot_connect_now` (57P01-57P03),
/// `idle_in_transaction_session_timeout` (25P03).
const PG_PASSING: [&str; 7] = [
    "53100", "53200", "53300", "57P01", "57P02", "57P03", "25P03",
];

impl From<postgres::Error> for SqlError {
    fn from(e: postgres::Error) -> SqlError {
        SqlError::Postgres(e)
    }
}

impl SqlError {
    fn sqlite_code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            SqlError::Sqlite(e) => e.sqlite_error_code(),
            _ => None,
        }
    }

    fn pg_state(&self) -> Option<&str> {
        match self {
            SqlError::Postgres(e) => e.code().map(|c| c.code()),
            _ => None,
        }
    }

    /// Another connection holds a lock we need (SQLite busy or locked, a
    /// PostgreSQL lock timeout or serialization failure).
    pub fn is_busy(&self) -> bool {
        matches!(
            self.sqlite_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        ) || self.pg_state().is_some_and(|s| PG_BUSY.contains(&s))
    }

    /// The disk holding the database is full.
    pub fn is_disk_full(&self) -> bool {
        self.sqlite_code() == Some(rusqlite::ErrorCode::DiskFull)
            || self.pg_state() == Some("53100")
    }

    /// The database cannot be reached (PostgreSQL only: a partition, a
    /// server restart, a connection that stopped answering).
    pub fn is_unreachable(&self) -> bool {
        match self {
            SqlError::Unreachable { .. } => true,
            SqlError::Postgres(e) => e.is_closed() || e.code().is_none() && !is_query_error(e),
            _ => false,
        }
    }

    /// The SQLite file is damaged, or is not a database at all.
    pub fn is_damaged(&self) -> bool {
        matches!(
            self.sqlite_code(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
    }

    /// Whether the failure may pass by itself: retried later, never a
    /// reason to stop.
    pub fn is_transient(&self) -> bool {
        self.is_busy()
            || self.is_disk_full()
            || self.is_unreachable()
            || self.pg_state().is_some_and(|s| PG_PASSING.contains(&s))
    }

    /// A SQLite error with this primary code (tests of the failure paths).
    #[doc(hidden)]
    pub fn sqlite_failure(code: std::ffi::c_int) -> SqlError {
        SqlError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            None,
        ))
    }
}

/// What PostgreSQL said: the server's message and SQLSTATE, else the
/// client's own text (its `Display` alone is only "db error").
fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!(
            "PostgreSQL: {} (SQLSTATE {})",
            db.message(),
            db.code().code()
        ),
        None => crate::text::Chain(e).to_string(),
    }
}

/// A PostgreSQL error without a SQLSTATE that is still about the query,
/// not the connection (a value that did not convert).
fn is_query_error(e: &postgres::Error) -> bool {
    let text = e.to_string();
    text.contains("error serializing") || text.contains("error deserializing")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_what_passes_by_itself() {
        assert!(SqlError::sqlite_failure(rusqlite::ffi::SQLITE_BUSY).is_busy());
        assert!(SqlError::sqlite_failure(rusqlite::ffi::SQLITE_FULL).is_disk_full());
        assert!(SqlError::sqlite_failure(rusqlite::ffi::SQLITE_FULL).is_transient());
        assert!(!SqlError::sqlite_failure(rusqlite::ffi::SQLITE_CORRUPT).is_transient());
        let gone = SqlError::Unreachable {
            location: "postgresql://db/x".into(),
            detail: "timed out".into(),
        };
        assert!(gone.is_unreachable() && gone.is_transient());
        assert!(!SqlError::NoRows.is_transient());
    }
}
