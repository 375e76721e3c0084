//! Which ledger a test home uses, and the PostgreSQL server of the suite.
//!
//! `HERMES_CRON_TEST_PG` names a throwaway PostgreSQL server
//! (`tests/run-all.sh` starts one with `tests/support/pg-server.sh` and
//! sets it); the cluster tests need it. By default each home has its own
//! SQLite file. With `HERMES_CRON_TEST_LEDGER=postgresql` too (run-all's
//! PostgreSQL pass), each home gets a fresh schema of that server instead,
//! and every command of the home finds it through `HERMES_CRON_DATABASE`:
//! the same tests then run on the PostgreSQL backend.
//!
//! [`open`] reads a home's ledger directly (through the library's
//! connection, read-only on SQLite), whichever backend holds it.

use hermes_cron::db::{Conn, Db};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The PostgreSQL server of the suite.
pub(crate) const TEST_PG_ENV: &str = "HERMES_CRON_TEST_PG";
/// `postgresql`: every home keeps its ledger in a schema of that server.
pub(crate) const TEST_LEDGER_ENV: &str = "HERMES_CRON_TEST_LEDGER";

fn registry() -> &'static Mutex<HashMap<PathBuf, String>> {
    static R: std::sync::OnceLock<Mutex<HashMap<PathBuf, String>>> = std::sync::OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The server's connection string, when there is one.
pub(crate) fn pg_base() -> Option<String> {
    std::env::var(TEST_PG_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// The server's connection string; panics saying how to get one (the
/// cluster tests cannot run without PostgreSQL).
#[track_caller]
pub(crate) fn pg_server() -> String {
    pg_base().unwrap_or_else(|| {
        panic!(
            "{TEST_PG_ENV} is not set: this test needs PostgreSQL. tests/run-all.sh starts one; by hand: eval \"$(tests/support/pg-server.sh start)\""
        )
    })
}

/// Whether this run's homes keep their ledger in PostgreSQL.
pub(crate) fn on_postgres() -> bool {
    std::env::var(TEST_LEDGER_ENV).is_ok_and(|v| v.trim().eq_ignore_ascii_case("postgresql"))
        && pg_base().is_some()
}

/// `base` with `search_path` set to `schema` (key=value form or URL).
pub(crate) fn with_schema(base: &str, schema: &str) -> String {
    if base.contains("://") {
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}options=-csearch_path%3D{schema}")
    } else {
        format!("{base} options='-c search_path={schema}'")
    }
}

/// A fresh, empty schema on the test server; its connection string.
pub(crate) fn fresh_schema(base: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let schema = format!(
        "t_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        hermes_cron::ids::ExecutionId::generate()
            .as_str()
            .replace('-', "")
            .get(20..)
            .unwrap_or("x")
    );
    let admin = Conn::postgres(base).unwrap_or_else(|e| panic!("{TEST_PG_ENV}: {e}"));
    admin
        .execute_batch(&format!("CREATE SCHEMA {schema}"))
        .unwrap_or_else(|e| panic!("cannot create schema {schema} on {base}: {e}"));
    with_schema(base, &schema)
}

/// For a new home at `home`: the connection string of its PostgreSQL
/// ledger (a fresh schema), or None on SQLite.
pub(crate) fn for_new_home(home: &Path) -> Option<String> {
    if !on_postgres() {
        return None;
    }
    let url = fresh_schema(&pg_base()?);
    register(home, &url);
    Some(url)
}

/// The home at `home` keeps its ledger at `url` (PostgreSQL).
pub(crate) fn register(home: &Path, url: &str) {
    registry()
        .lock()
        .unwrap()
        .insert(home.to_path_buf(), url.to_string());
}

/// The PostgreSQL ledger of the home whose SQLite file would be `db_file`.
fn url_of(db_file: &Path) -> Option<String> {
    let home = db_file.parent()?.parent()?;
    registry().lock().unwrap().get(home).cloned()
}

/// Open the ledger of the home whose SQLite file would be `db_file`: its
/// PostgreSQL schema when it has one, else the file, read-only. None when
/// there is none yet.
pub(crate) fn open(db_file: &Path) -> Option<Db> {
    match url_of(db_file) {
        Some(url) => Db::open_postgres(&url, false).ok(),
        None if db_file.exists() => Db::open_read_only(db_file).ok(),
        None => None,
    }
}

/// Run one statement on the ledger of the home whose SQLite file would be
/// `db_file`, whichever backend holds it: how a test makes a row an earlier
/// version (or another writer) would have left.
#[track_caller]
pub(crate) fn execute(db_file: &Path, sql: &str, params: hermes_cron::db::Params<'_>) {
    let db = match url_of(db_file) {
        Some(url) => Db::open_postgres(&url, false),
        None => Db::open(db_file),
    }
    .unwrap_or_else(|e| panic!("cannot open the ledger of {}: {e}", db_file.display()));
    db.conn()
        .execute(sql, params)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}
