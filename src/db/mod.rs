//! The ledger's database: the embedded SQLite file `cron/cron.db` (the
//! default) or a PostgreSQL database shared by several hosts. Opening it,
//! its migrations (the same on both), and the one connection API every
//! statement goes through (`conn.rs`, in the portable SQL of `dialect.rs`).

mod busy;
mod caps;
mod codec;
mod conn;
mod dialect;
mod error;
mod explain;
mod listen;
mod migrations;
mod open;
mod pg;
mod pg_target;
mod pg_tls;
#[cfg(test)]
pub(crate) mod test_backends;
mod value;
mod watch;

pub use caps::Caps;
pub use conn::{Conn, Tx};
pub use dialect::Dialect;
pub(crate) use dialect::LockKey;
pub use error::{SqlError, SqlResult};
#[cfg(test)]
pub(crate) use migrations::SCHEMA_VERSION;
pub use value::{FromValue, Params, Row, RowIndex, ToValue, Value};

pub use codec::from_ms;

pub(crate) use codec::to_ms;
pub use explain::explain;
pub use listen::PgListener;
pub use open::{DATABASE_ENV, Db, DbError, JournalMode, Location};
pub use pg_target::NotAConnectionString;
pub use pg_target::tls_of;
pub use pg_tls::TlsChecked;
pub use watch::DbWatcher;
pub(crate) use watch::RECHECK_AFTER_CHANGE;
