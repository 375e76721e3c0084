//! Unit tests' ledgers on both backends: an in-memory SQLite database and a
//! fresh schema of the PostgreSQL server named by `HERMES_CRON_TEST_PG`
//! (`tests/run-all.sh` starts one; without it these tests fail, saying how
//! to get one).

use super::{Conn, Db};
use crate::ids::ExecutionId;

pub(crate) const TEST_PG_ENV: &str = "HERMES_CRON_TEST_PG";

/// A fresh PostgreSQL ledger (its own schema).
pub(crate) fn postgres() -> Db {
    let base = std::env::var(TEST_PG_ENV).unwrap_or_else(|_| {
        panic!(
            "{TEST_PG_ENV} is not set: these tests need PostgreSQL. tests/run-all.sh starts one; by hand: eval \"$(tests/support/pg-server.sh start)\""
        )
    });
    let schema = format!(
        "u_{}_{}",
        std::process::id(),
        ExecutionId::generate().as_str().replace('-', "")
    );
    Conn::postgres(&base)
        .unwrap()
        .execute_batch(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    Db::open_postgres(&format!("{base} options='-c search_path={schema}'"), true)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `f` on each backend.
pub(crate) fn on_both(f: impl Fn(&Db)) {
    for db in [Db::open_in_memory().unwrap(), postgres()] {
        eprintln!("backend: {}", db.dialect().as_str());
        f(&db);
    }
}
