//! The SQLite database `cron/cron.db`: opening it, its pragmas, its migrations.

mod codec;
mod explain;
mod migrations;
mod open;
mod watch;

pub use codec::{from_ms, to_ms};
pub use explain::explain;
pub use migrations::{MIGRATIONS, SCHEMA_VERSION};
pub use open::{Db, DbError, JOURNAL_ENV, JournalMode};
pub use watch::{DbWatcher, RECHECK_AFTER_CHANGE};
