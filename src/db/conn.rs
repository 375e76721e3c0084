//! A connection to the ledger, whichever backend holds it: the one API every
//! statement goes through ([`Conn::execute`], [`Conn::query`],
//! [`Conn::query_row`], [`Conn::query_opt`], [`Conn::execute_batch`],
//! [`Conn::savepoint`]) and the write transaction ([`Tx`]).
//!
//! Statements are written once, in the portable subset `dialect.rs`
//! describes; SQLite runs them as written, PostgreSQL after its parameters
//! are renumbered. Both keep prepared statements cached per connection.
//!
//! ## Locking
//! A [`Tx`] is a read-then-write transaction that holds the write lock from
//! its first statement: SQLite's `BEGIN IMMEDIATE`; on PostgreSQL a `BEGIN`
//! followed by the transaction-scoped advisory lock [`LockKey::Write`], so
//! the same code is serialised the same way on both. Single statements and
//! savepoints (the ledger's moves) take no such lock: their compare-and-set
//! decides.

use super::dialect::{Dialect, LockKey};
use super::error::{SqlError, SqlResult};
use super::pg::PgConn;
use super::value::{Params, Row, Value};
use std::sync::Arc;

/// One connection, SQLite or PostgreSQL.
#[derive(Debug)]
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<PgBackend>),
}

/// A PostgreSQL connection and the advisory-lock namespace of its schema.
#[derive(Debug)]
pub struct PgBackend {
    pub(crate) conn: PgConn,
    pub(crate) namespace: i32,
}

fn values(params: Params<'_>) -> Vec<Value> {
    params.iter().map(|p| p.to_value()).collect()
}

fn sqlite_value(v: &Value) -> rusqlite::types::ToSqlOutput<'_> {
    use rusqlite::types::{ToSqlOutput, ValueRef};
    match v {
        Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
        Value::Real(r) => ToSqlOutput::Borrowed(ValueRef::Real(*r)),
        Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
    }
}

struct Bound(Value);

impl rusqlite::ToSql for Bound {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(sqlite_value(&self.0))
    }
}

fn bind(params: Params<'_>) -> Vec<Bound> {
    params.iter().map(|p| Bound(p.to_value())).collect()
}

/// Each row of a SQLite query, read whole, handed to `f` as it is stepped.
fn sqlite_each(
    conn: &rusqlite::Connection,
    sql: &str,
    params: Params<'_>,
    mut f: impl FnMut(Row) -> SqlResult<()>,
) -> SqlResult<()> {
    use rusqlite::types::ValueRef;
    let mut stmt = conn.prepare_cached(sql)?;
    let names: Arc<[String]> = stmt.column_names().map(str::to_string).collect();
    let bound = bind(params);
    let mut rows = stmt.query(rusqlite::params_from_iter(bound.iter()))?;
    while let Some(row) = rows.next()? {
        let mut vals = Vec::with_capacity(names.len());
        for i in 0..names.len() {
            vals.push(match row.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Int(i),
                ValueRef::Real(r) => Value::Real(r),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::Text(String::from_utf8_lossy(b).into_owned()),
            });
        }
        f(Row::new(names.clone(), vals))?;
    }
    Ok(())
}

fn sqlite_rows(conn: &rusqlite::Connection, sql: &str, params: Params<'_>) -> SqlResult<Vec<Row>> {
    let mut out = Vec::new();
    sqlite_each(conn, sql, params, |row| {
        out.push(row);
        Ok(())
    })?;
    Ok(out)
}

impl Conn {
    /// A bare PostgreSQL connection to `url` (no ledger, no migration), for
    /// tools and tests that make databases or schemas.
    pub fn postgres(url: &str) -> Result<Conn, super::pg_target::NotAConnectionString> {
        let conn = PgConn::new(url, super::busy::busy_timeout())?;
        Ok(Conn::Postgres(Box::new(PgBackend { conn, namespace: 0 })))
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// What this connection's backend allows and needs.
    pub fn caps(&self) -> super::Caps {
        super::Caps::of(self.dialect())
    }

    /// The SQLite connection, for what only SQLite has (pragmas); None on
    /// PostgreSQL.
    pub fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Conn::Sqlite(c) => Some(c),
            Conn::Postgres(_) => None,
        }
    }

    /// Run one statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: Params<'_>) -> SqlResult<usize> {
        match self {
            Conn::Sqlite(c) => {
                let bound = bind(params);
                Ok(c.prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(bound.iter()))?)
            }
            Conn::Postgres(p) => p.conn.execute(sql, values(params)),
        }
    }

    /// Every row of a query.
    pub fn query(&self, sql: &str, params: Params<'_>) -> SqlResult<Vec<Row>> {
        match self {
            Conn::Sqlite(c) => sqlite_rows(c, sql, params),
            Conn::Postgres(p) => p.conn.query(sql, values(params)),
        }
    }

    /// Each row of a query handed to `f` in turn: on SQLite as the
    /// statement steps (a large result is never all in memory); on
    /// PostgreSQL after the whole result arrived.
    pub fn for_each(
        &self,
        sql: &str,
        params: Params<'_>,
        mut f: impl FnMut(&Row) -> SqlResult<()>,
    ) -> SqlResult<()> {
        match self {
            Conn::Sqlite(c) => sqlite_each(c, sql, params, |row| f(&row)),
            Conn::Postgres(p) => p.conn.query(sql, values(params))?.iter().try_for_each(f),
        }
    }

    /// Every row of a query, each converted by `f`.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: Params<'_>,
        f: impl FnMut(&Row) -> SqlResult<T>,
    ) -> SqlResult<Vec<T>> {
        self.query(sql, params)?.iter().map(f).collect()
    }

    /// The first row of a query, converted by `f`; None when there is none.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: Params<'_>,
        f: impl FnOnce(&Row) -> SqlResult<T>,
    ) -> SqlResult<Option<T>> {
        self.query(sql, params)?.first().map(f).transpose()
    }

    /// The first row of a query, converted by `f`; [`SqlError::NoRows`] when
    /// there is none.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: Params<'_>,
        f: impl FnOnce(&Row) -> SqlResult<T>,
    ) -> SqlResult<T> {
        self.query_opt(sql, params, f)?.ok_or(SqlError::NoRows)
    }

    /// Several statements without parameters.
    pub fn execute_batch(&self, sql: &str) -> SqlResult<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(p) => p.conn.batch(sql),
        }
    }

    /// Whether no transaction is open on this connection.
    pub fn is_autocommit(&self) -> bool {
        match self {
            Conn::Sqlite(c) => c.is_autocommit(),
            Conn::Postgres(p) => !p.conn.in_transaction(),
        }
    }

    /// Run `f` inside a savepoint: a transaction of its own when none is
    /// open, or a nested one inside the caller's transaction.
    ///
    /// On any failure the connection is left as it was found. Outside a
    /// transaction the final release is the commit, and a commit that fails
    /// (a full disk, a lock held past the timeout) would otherwise leave the
    /// transaction open: every later write would silently join it and never
    /// be committed. So the whole transaction is rolled back.
    pub fn savepoint<T>(&self, f: impl FnOnce(&Conn) -> SqlResult<T>) -> SqlResult<T> {
        let outermost = self.is_autocommit();
        let (begin, commit, undo) = match (self, outermost) {
            (Conn::Sqlite(_), true) => {
                ("SAVEPOINT ledger_write", "RELEASE ledger_write", "ROLLBACK")
            }
            (Conn::Postgres(_), true) => ("BEGIN", "COMMIT", "ROLLBACK"),
            (_, false) => (
                "SAVEPOINT ledger_write",
                "RELEASE ledger_write",
                "ROLLBACK TO ledger_write; RELEASE ledger_write",
            ),
        };
        self.execute_batch(begin)?;
        self.mark_transaction(outermost, true);
        let result = f(self).and_then(|v| self.execute_batch(commit).map(|()| v));
        if result.is_err() {
            let _ = self.execute_batch(undo);
        }
        self.mark_transaction(outermost, false);
        result
    }

    /// Run `f`'s reads in one consistent snapshot of the ledger: a deferred
    /// transaction on SQLite, `REPEATABLE READ, READ ONLY` on PostgreSQL.
    /// Inside a caller's transaction, `f` simply runs in it.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Conn) -> SqlResult<T>) -> SqlResult<T> {
        if !self.is_autocommit() {
            return f(self);
        }
        self.execute_batch(match self {
            Conn::Sqlite(_) => "BEGIN",
            Conn::Postgres(_) => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        })?;
        self.mark_transaction(true, true);
        let result = f(self);
        let end = self.execute_batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
        self.mark_transaction(true, false);
        let value = result?;
        end.map(|()| value)
    }

    fn mark_transaction(&self, outermost: bool, open: bool) {
        if let (Conn::Postgres(p), true) = (self, outermost) {
            p.conn.set_in_transaction(open);
        }
    }

    /// Tell listening gateways that job definitions, owed retries or owed
    /// alert deliveries changed: PostgreSQL `NOTIFY` on the ledger's channel, delivered when
    /// the surrounding transaction commits (call it after the write: in
    /// autocommit it is delivered at once). SQLite has no need: gateways
    /// watch its file.
    pub fn notify_jobs_changed(&self) -> SqlResult<()> {
        match self {
            Conn::Sqlite(_) => Ok(()),
            Conn::Postgres(p) => p
                .conn
                .query(
                    "SELECT pg_notify(?1, '')::TEXT",
                    vec![Value::Text(super::dialect::channel(p.namespace))],
                )
                .map(|_| ()),
        }
    }

    /// Take a transaction-scoped advisory lock without waiting (PostgreSQL);
    /// true when taken. SQLite has none: always true.
    pub(crate) fn try_lock(&self, key: LockKey) -> SqlResult<bool> {
        match self {
            Conn::Sqlite(_) => Ok(true),
            Conn::Postgres(p) => p
                .conn
                .query(
                    "SELECT pg_try_advisory_xact_lock(?1, ?2) AS taken",
                    vec![Value::Int(p.namespace.into()), Value::Int(key as i64)],
                )?
                .first()
                .ok_or(SqlError::NoRows)?
                .get("taken"),
        }
    }

    /// Take a transaction-scoped advisory lock, waiting up to the lock
    /// timeout (PostgreSQL; a no-op on SQLite).
    pub(crate) fn lock(&self, key: LockKey) -> SqlResult<()> {
        match self {
            Conn::Sqlite(_) => Ok(()),
            Conn::Postgres(p) => p
                .conn
                .query(
                    "SELECT pg_advisory_xact_lock(?1, ?2)::TEXT",
                    vec![Value::Int(p.namespace.into()), Value::Int(key as i64)],
                )
                .map(|_| ()),
        }
    }

    /// Begin a write transaction (see the module docs).
    pub fn immediate(&self) -> SqlResult<Tx<'_>> {
        match self {
            Conn::Sqlite(_) => self.execute_batch("BEGIN IMMEDIATE")?,
            Conn::Postgres(p) => {
                self.execute_batch("BEGIN")?;
                p.conn.set_in_transaction(true);
                if let Err(e) = self.lock(LockKey::Write) {
                    let _ = self.execute_batch("ROLLBACK");
                    p.conn.set_in_transaction(false);
                    return Err(e);
                }
            }
        }
        Ok(Tx {
            conn: self,
            done: false,
        })
    }
}

impl Conn {
    /// A write transaction only if the advisory lock `key` is free now
    /// (PostgreSQL: taken without waiting, then the write lock); None when
    /// another connection holds it. On SQLite, a plain [`Conn::immediate`]
    /// (its callers hold a `flock` instead).
    pub(crate) fn try_immediate(&self, key: LockKey) -> SqlResult<Option<Tx<'_>>> {
        match self {
            Conn::Sqlite(_) => self.immediate().map(Some),
            Conn::Postgres(p) => {
                self.execute_batch("BEGIN")?;
                p.conn.set_in_transaction(true);
                let tx = Tx {
                    conn: self,
                    done: false,
                };
                if !self.try_lock(key)? {
                    tx.rollback()?;
                    return Ok(None);
                }
                self.lock(LockKey::Write)?;
                Ok(Some(tx))
            }
        }
    }
}

/// A write transaction; rolled back when dropped without [`Tx::commit`].
#[derive(Debug)]
pub struct Tx<'c> {
    conn: &'c Conn,
    done: bool,
}

impl Tx<'_> {
    pub fn commit(mut self) -> SqlResult<()> {
        self.done = true;
        let result = self.conn.execute_batch("COMMIT");
        if result.is_err() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.conn.mark_transaction(true, false);
        result
    }

    pub fn rollback(mut self) -> SqlResult<()> {
        self.done = true;
        let result = self.conn.execute_batch("ROLLBACK");
        self.conn.mark_transaction(true, false);
        result
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Conn::Postgres(p) = self.conn
                && !p.conn.is_connected()
            {
                // The connection went away with its transaction.
                p.conn.set_in_transaction(false);
                return;
            }
            let _ = self.conn.execute_batch("ROLLBACK");
            self.conn.mark_transaction(true, false);
        }
    }
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
        let writer = rusqlite::Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode=DELETE; CREATE TABLE t (x INTEGER);")
            .unwrap();
        writer.busy_timeout(Duration::from_millis(50)).unwrap();
        let writer = Conn::Sqlite(writer);
        let reader = rusqlite::Connection::open(&path).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM t;")
            .unwrap();

        let failed = writer.savepoint(|c| c.execute("INSERT INTO t VALUES (1)", crate::params![]));
        assert!(failed.is_err(), "the commit should meet the reader's lock");
        assert!(
            writer.is_autocommit(),
            "a failed commit left the writer inside an open transaction"
        );

        reader.execute_batch("COMMIT").unwrap();
        writer
            .savepoint(|c| c.execute("INSERT INTO t VALUES (2)", crate::params![]))
            .unwrap();
        drop(writer);
        let n: i64 = reader
            .query_row("SELECT count(*) FROM t WHERE x = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "the later write was committed");
    }
}
