//! A savepoint around one ledger write: a transaction of its own in
//! autocommit mode, or a nested one inside the caller's transaction (a claim).

use rusqlite::Connection;

/// Run `f` inside a savepoint: a transaction of its own in autocommit mode,
/// or a nested one inside the caller's transaction.
///
/// On any failure the connection is left as it was found. In autocommit mode
/// the final `RELEASE` is the commit, and a commit that fails (a full disk, a
/// lock held past the busy timeout) leaves the transaction open: every later
/// write on the connection would silently join it and never be committed,
/// and every later `BEGIN` would fail. So the whole transaction is rolled back.
pub(super) fn in_savepoint<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let outermost = conn.is_autocommit();
    conn.execute_batch("SAVEPOINT ledger_write")?;
    let result = f(conn).and_then(|v| conn.execute_batch("RELEASE ledger_write").map(|()| v));
    if result.is_err() {
        let undo = if outermost {
            "ROLLBACK"
        } else {
            "ROLLBACK TO ledger_write; RELEASE ledger_write"
        };
        let _ = conn.execute_batch(undo);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn regression_a_failed_commit_does_not_leave_the_connection_in_a_transaction() {
        // Rollback journal: a commit needs the EXCLUSIVE lock, which a reader
        // holding SHARED denies; the RELEASE that commits then fails BUSY.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t (x INTEGER);")
            .unwrap();
        writer.busy_timeout(Duration::from_millis(50)).unwrap();
        let reader = Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM t;")
            .unwrap();

        let failed = in_savepoint(&writer, |c| c.execute("INSERT INTO t VALUES (1)", []));
        assert!(failed.is_err(), "the commit should meet the reader's lock");
        assert!(
            writer.is_autocommit(),
            "a failed commit left the writer inside an open transaction"
        );

        reader.execute_batch("COMMIT").unwrap();
        in_savepoint(&writer, |c| c.execute("INSERT INTO t VALUES (2)", [])).unwrap();
        drop(writer);
        let n: i64 = reader
            .query_row("SELECT count(*) FROM t WHERE x = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "the later write was committed");
    }
}
