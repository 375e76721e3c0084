//! One PostgreSQL connection, served by an OS thread of its own.
//!
//! `postgres::Client` drives its socket with a tokio runtime of its own and
//! panics when called on a thread already inside one (the gateway's event
//! loop is). So the client lives on a thread that does nothing else; a
//! caller sends it one statement at a time and blocks on the answer, as it
//! blocks on SQLite. The gateway, the worker and the CLI all use it alike.
//!
//! A connection that breaks, or does not answer within the timeout (a
//! partition, where packets vanish and TCP would wait for minutes), is given
//! up: the caller gets [`SqlError::Unreachable`] at once, the thread is left
//! to end by itself, and the next statement connects afresh. The server
//! ends a session left idle inside a transaction
//! (`idle_in_transaction_session_timeout`), so the locks a partitioned
//! host held are released for the others.
//!
//! ## Locking
//! Nothing is shared with the thread but two channels; one caller at a time
//! (the `Db` is not `Sync`).

use super::error::{SqlError, SqlResult};
use super::pg_target::{NotAConnectionString, Target};
use super::pg_tls::TlsPolicy;
use super::value::{Row, Value};
use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Statement};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// What the thread is asked to do.
enum Job {
    Execute(String, Vec<Value>),
    Query(String, Vec<Value>),
    Batch(String),
}

enum Reply {
    Count(u64),
    Rows(Vec<Row>),
    Done,
}

struct Worker {
    jobs: mpsc::Sender<Job>,
    replies: mpsc::Receiver<SqlResult<Reply>>,
}

/// A PostgreSQL connection (see the module docs).
pub(crate) struct PgConn {
    config: postgres::Config,
    /// What its TLS checks (`pg_tls.rs`).
    tls: TlsPolicy,
    location: String,
    /// How long one statement may take before the connection is given up.
    timeout: Duration,
    /// Server-side limits set on each new session.
    session: String,
    worker: RefCell<Option<Worker>>,
    in_transaction: Cell<bool>,
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConn")
            .field("location", &self.location)
            .finish()
    }
}

impl PgConn {
    /// A connection to `url` (a `postgresql://` URL or `key=value` pairs,
    /// read by `pg_target`); nothing is sent until the first statement.
    pub(crate) fn new(url: &str, timeout: Duration) -> Result<PgConn, NotAConnectionString> {
        let Target {
            mut config,
            tls,
            shown,
        } = super::pg_target::parse(url)?;
        let secs = timeout.max(Duration::from_secs(1));
        config
            .connect_timeout(secs)
            .tcp_user_timeout(secs)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(5))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3);
        if config.get_application_name().is_none() {
            config.application_name("hermes-cron");
        }
        let ms = timeout.as_millis();
        let session = format!(
            "SET lock_timeout = {ms}; SET idle_in_transaction_session_timeout = {}; SET TIME ZONE 'UTC'",
            ms.max(1000)
        );
        Ok(PgConn {
            config,
            tls,
            location: shown,
            timeout,
            session,
            worker: RefCell::new(None),
            in_transaction: Cell::new(false),
        })
    }

    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    pub(crate) fn in_transaction(&self) -> bool {
        self.in_transaction.get()
    }

    pub(crate) fn set_in_transaction(&self, v: bool) {
        self.in_transaction.set(v);
    }

    /// Whether a connection is open now (no statement is sent).
    pub(crate) fn is_connected(&self) -> bool {
        self.worker.borrow().is_some()
    }

    fn unreachable(&self, detail: impl Into<String>) -> SqlError {
        SqlError::Unreachable {
            location: self.location.clone(),
            detail: detail.into(),
        }
    }

    fn call(&self, job: Job) -> SqlResult<Reply> {
        let mut slot = self.worker.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.spawn()?);
        }
        let worker = slot.as_ref().expect("just set");
        if worker.jobs.send(job).is_err() {
            *slot = None;
            self.in_transaction.set(false);
            return Err(self.unreachable("the connection closed"));
        }
        match worker.replies.recv_timeout(self.timeout) {
            Ok(Err(e)) if e.is_unreachable() => {
                *slot = None;
                self.in_transaction.set(false);
                Err(e)
            }
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => {
                *slot = None;
                self.in_transaction.set(false);
                Err(self.unreachable(format!("no answer within {} ms", self.timeout.as_millis())))
            }
            Err(RecvTimeoutError::Disconnected) => {
                *slot = None;
                self.in_transaction.set(false);
                Err(self.unreachable("the connection closed"))
            }
        }
    }

    fn spawn(&self) -> SqlResult<Worker> {
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let (replies_tx, replies_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let config = self.config.clone();
        let session = self.session.clone();
        let tls = self.tls.clone();
        std::thread::Builder::new()
            .name("hermes-cron-pg".into())
            .spawn(move || serve(config, tls, session, ready_tx, jobs_rx, replies_tx))
            .map_err(|e| self.unreachable(format!("cannot start its thread: {e}")))?;
        match ready_rx.recv_timeout(self.timeout + Duration::from_secs(1)) {
            Ok(Ok(())) => Ok(Worker {
                jobs: jobs_tx,
                replies: replies_rx,
            }),
            Ok(Err(e)) => Err(self.unreachable(e)),
            Err(_) => Err(self.unreachable(format!(
                "no connection within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }

    pub(crate) fn execute(&self, sql: &str, params: Vec<Value>) -> SqlResult<usize> {
        match self.call(Job::Execute(sql.to_string(), params))? {
            Reply::Count(n) => Ok(n as usize),
            _ => Ok(0),
        }
    }

    pub(crate) fn query(&self, sql: &str, params: Vec<Value>) -> SqlResult<Vec<Row>> {
        match self.call(Job::Query(sql.to_string(), params))? {
            Reply::Rows(rows) => Ok(rows),
            _ => Ok(Vec::new()),
        }
    }

    pub(crate) fn batch(&self, sql: &str) -> SqlResult<()> {
        self.call(Job::Batch(sql.to_string())).map(|_| ())
    }
}

fn serve(
    config: postgres::Config,
    tls: TlsPolicy,
    session: String,
    ready: mpsc::Sender<Result<(), String>>,
    jobs: mpsc::Receiver<Job>,
    replies: mpsc::Sender<SqlResult<Reply>>,
) {
    let mut client = match connect(&config, &tls) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(crate::text::Chain(&e).to_string()));
            return;
        }
    };
    if let Err(e) = client.batch_execute(&session) {
        let _ = ready.send(Err(crate::text::Chain(&e).to_string()));
        return;
    }
    if ready.send(Ok(())).is_err() {
        return;
    }
    let mut cache: HashMap<String, Statement> = HashMap::new();
    while let Ok(job) = jobs.recv() {
        let result = run(&mut client, &mut cache, job);
        let broken = matches!(&result, Err(e) if e.is_unreachable()) || client.is_closed();
        if replies.send(result).is_err() || broken {
            return;
        }
    }
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error(transparent)]
    Tls(#[from] super::pg_tls::TlsError),
    /// The server refused, or could not be reached; with the fix when a
    /// TLS check refused the server.
    #[error("{detail}{}", fix.as_deref().map(|f| format!("; {f}")).unwrap_or_default())]
    Refused { detail: String, fix: Option<String> },
}

/// A client connected to `config` under `tls`.
pub(crate) fn connect(config: &postgres::Config, tls: &TlsPolicy) -> Result<Client, ConnectError> {
    let connector = tls.connector()?;
    config.connect(connector).map_err(|e| {
        let detail = crate::text::Chain(&e).to_string();
        let fix = super::pg_tls::fix_for(&detail, tls);
        ConnectError::Refused { detail, fix }
    })
}

fn prepared(
    client: &mut Client,
    cache: &mut HashMap<String, Statement>,
    sql: &str,
) -> SqlResult<Statement> {
    if let Some(stmt) = cache.get(sql) {
        return Ok(stmt.clone());
    }
    let stmt = client.prepare(&super::dialect::to_postgres(sql))?;
    if cache.len() > 256 {
        cache.clear();
    }
    cache.insert(sql.to_string(), stmt.clone());
    Ok(stmt)
}

fn run(client: &mut Client, cache: &mut HashMap<String, Statement>, job: Job) -> SqlResult<Reply> {
    match job {
        Job::Batch(sql) => {
            client.batch_execute(&sql)?;
            Ok(Reply::Done)
        }
        Job::Execute(sql, params) => {
            let stmt = prepared(client, cache, &sql)?;
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            Ok(Reply::Count(client.execute(&stmt, &refs)?))
        }
        Job::Query(sql, params) => {
            let stmt = prepared(client, cache, &sql)?;
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            let rows = client.query(&stmt, &refs)?;
            let names: Arc<[String]> = stmt
                .columns()
                .iter()
                .map(|c| c.name().to_string())
                .collect();
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let mut values = Vec::with_capacity(names.len());
                for (i, col) in row.columns().iter().enumerate() {
                    values.push(read(&row, i, col.type_())?);
                }
                out.push(Row::new(names.clone(), values));
            }
            Ok(Reply::Rows(out))
        }
    }
}

fn read(row: &postgres::Row, i: usize, ty: &Type) -> SqlResult<Value> {
    let int = |v: Option<i64>| v.map_or(Value::Null, Value::Int);
    Ok(match *ty {
        Type::INT8 => int(row.try_get::<_, Option<i64>>(i)?),
        Type::INT4 => int(row.try_get::<_, Option<i32>>(i)?.map(i64::from)),
        Type::INT2 => int(row.try_get::<_, Option<i16>>(i)?.map(i64::from)),
        Type::BOOL => int(row.try_get::<_, Option<bool>>(i)?.map(i64::from)),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)?
            .map_or(Value::Null, Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map_or(Value::Null, |f| Value::Real(f64::from(f))),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::Text),
        ref other => {
            return Err(SqlError::Column(format!(
                "column {i} has type {other}, which the ledger does not use (cast it to BIGINT or TEXT)"
            )));
        }
    })
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    i.to_string().as_str().to_sql(ty, out)
                }
                ref other => Err(format!("cannot bind an integer as {other}").into()),
            },
            Value::Real(r) => match *ty {
                Type::FLOAT8 => r.to_sql(ty, out),
                Type::FLOAT4 => (*r as f32).to_sql(ty, out),
                ref other => Err(format!("cannot bind a real as {other}").into()),
            },
            Value::Text(t) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    t.as_str().to_sql(ty, out)
                }
                Type::INT8 => t.parse::<i64>()?.to_sql(ty, out),
                ref other => Err(format!("cannot bind text as {other}").into()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_server_is_said_quickly() {
        // A port nothing listens on: refused at once.
        let conn = PgConn::new(
            "host=127.0.0.1 port=1 user=x dbname=x connect_timeout=2",
            Duration::from_secs(2),
        )
        .unwrap();
        let err = conn.query("SELECT 1", vec![]).unwrap_err();
        assert!(err.is_unreachable(), "{err}");
        assert!(err.to_string().contains("127.0.0.1"), "{err}");
    }
}
