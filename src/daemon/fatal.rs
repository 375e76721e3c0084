//! What stops the gateway. A job's failure is a ledger row and the loop goes
//! on; a failed claim pass is retried with a backoff; a full disk or a lock
//! held past the busy timeout passes. These do not: the gateway records
//! `fatal: <why>` in its lifecycle and exits 1, so systemd restarts it.

use crate::db::DbError;
use crate::dispatch::{DispatchError, WorkerNotFound};
use crate::ids::ExecutionId;
use crate::ledger::LedgerError;

/// A failure the gateway does not survive.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Fatal {
    #[error("cannot build the runtime")]
    Runtime(#[source] std::io::Error),
    #[error("cannot start the {what}")]
    Thread {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot install signal handlers")]
    Signals(#[source] std::io::Error),
    #[error("cannot open the ledger")]
    Ledger(#[source] DbError),
    #[error("cannot dispatch")]
    Worker(#[source] WorkerNotFound),
    #[error("startup sweep failed")]
    Sweep(#[source] LedgerError),
    /// The ledger failed in a way that will not pass (not a busy lock, not
    /// a full disk) while recording a dispatch.
    #[error("the ledger failed while dispatching execution {execution}")]
    Dispatch {
        execution: ExecutionId,
        #[source]
        source: LedgerError,
    },
}

/// Whether a failed dispatch stops the gateway: only when the ledger failed
/// for good. Returns the fatal error, or the error back to be logged.
pub(crate) fn dispatch_failure(
    execution: &ExecutionId,
    e: DispatchError,
) -> Result<Fatal, DispatchError> {
    match e {
        DispatchError::Ledger(source) if !source.is_transient() => Ok(Fatal::Dispatch {
            execution: execution.clone(),
            source,
        }),
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(code: i32) -> DispatchError {
        DispatchError::Ledger(LedgerError::Sql {
            id: "e".into(),
            source: crate::db::SqlError::sqlite_failure(code),
        })
    }

    #[test]
    fn only_a_ledger_failing_for_good_stops_the_gateway() {
        let id = ExecutionId::from_string("e");
        assert!(dispatch_failure(&id, ledger(rusqlite::ffi::SQLITE_BUSY)).is_err());
        assert!(dispatch_failure(&id, ledger(rusqlite::ffi::SQLITE_FULL)).is_err());
        assert!(dispatch_failure(&id, ledger(rusqlite::ffi::SQLITE_CORRUPT)).is_ok());
        assert!(dispatch_failure(&id, ledger(rusqlite::ffi::SQLITE_READONLY)).is_ok());
    }
}
