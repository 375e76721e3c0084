//! The SQLite database `cron/cron.db`: opening it, its pragmas, its migrations.

mod codec;
mod explain;
mod migrations;
mod open;
mod watch;

pub use codec::from_ms;

pub(crate) use codec::to_ms;
pub use explain::explain;
pub use open::{Db, DbError, JournalMode};
pub use watch::DbWatcher;
pub(crate) use watch::RECHECK_AFTER_CHANGE;
