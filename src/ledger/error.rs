//! Failures of the ledger, typed: a failed SQL statement (with whether it
//! may pass by itself), or a move the row's state does not allow (a bug).

use crate::db::SqlError;
use crate::ids::ExecutionId;
use hermes_cron_core::run::{ExecState, Move};

/// Failed to read or write the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("ledger write failed for execution {id}")]
    Sql {
        id: String,
        #[source]
        source: SqlError,
    },
    #[error("failed to read the ledger ({what})")]
    Read {
        what: &'static str,
        #[source]
        source: SqlError,
    },
    /// A caller asked for a move the row's state does not allow: a bug in
    /// the caller, never a condition of the database.
    #[error("execution {id}: `{}` does not move a row from `{from}` to `{to}`", mv.name())]
    NotAllowed {
        id: ExecutionId,
        mv: Move,
        from: ExecState,
        to: ExecState,
    },
}

impl LedgerError {
    /// The database error behind this one, if any.
    pub(crate) fn sql(&self) -> Option<&SqlError> {
        match self {
            LedgerError::Sql { source, .. } | LedgerError::Read { source, .. } => Some(source),
            LedgerError::NotAllowed { .. } => None,
        }
    }

    /// Whether the database said the disk is full.
    pub(crate) fn is_disk_full(&self) -> bool {
        self.sql().is_some_and(SqlError::is_disk_full)
    }

    /// Whether the database is out of reach (PostgreSQL: a partition, a
    /// server down).
    pub(crate) fn is_unreachable(&self) -> bool {
        self.sql().is_some_and(SqlError::is_unreachable)
    }

    /// Whether the failure may pass by itself (a lock held past the busy
    /// timeout, a full disk, a database out of reach): retried later, never
    /// a reason to stop. Anything else (a corrupt or unreadable database, a
    /// refused move) will not.
    pub(crate) fn is_transient(&self) -> bool {
        self.sql().is_some_and(SqlError::is_transient)
    }
}

/// A write to row `id` failed.
pub(super) fn sql_err(id: &ExecutionId) -> impl FnOnce(SqlError) -> LedgerError + '_ {
    move |source| LedgerError::Sql {
        id: id.to_string(),
        source,
    }
}

/// Check that `mv` may take a row from `from` to `to`.
pub(super) fn check(
    id: &ExecutionId,
    mv: Move,
    from: Option<ExecState>,
    to: ExecState,
) -> Result<(), LedgerError> {
    if mv.allows(from, to) {
        return Ok(());
    }
    Err(LedgerError::NotAllowed {
        id: id.clone(),
        mv,
        from: from.unwrap_or(to),
        to,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(code: i32) -> LedgerError {
        LedgerError::Sql {
            id: "x".into(),
            source: SqlError::sqlite_failure(code),
        }
    }

    #[test]
    fn knows_what_passes_by_itself() {
        assert!(sqlite(rusqlite::ffi::SQLITE_FULL).is_disk_full());
        assert!(sqlite(rusqlite::ffi::SQLITE_FULL).is_transient());
        assert!(sqlite(rusqlite::ffi::SQLITE_BUSY).is_transient());
        assert!(!sqlite(rusqlite::ffi::SQLITE_BUSY).is_disk_full());
        assert!(!sqlite(rusqlite::ffi::SQLITE_CORRUPT).is_transient());
        let refused = LedgerError::NotAllowed {
            id: ExecutionId::from_string("e"),
            mv: Move::Finish,
            from: ExecState::Claimed,
            to: ExecState::Succeeded,
        };
        assert!(!refused.is_transient());
        assert!(refused.to_string().contains("`finish`"), "{refused}");
    }
}
