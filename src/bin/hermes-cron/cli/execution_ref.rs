//! An execution named on the command line (`logs`, `wait`, `stop`, `runs`):
//! its whole id, or a beginning or end of it that only one row has (at least
//! `ledger::MIN_ID_PART` characters; the end tells apart runs made in the
//! same minute, whose UUIDv7 ids begin alike).

use super::fail::usage;
use hermes_cron::db::Conn;
use hermes_cron::ids::ExecutionId;
use hermes_cron::ledger::{self, MIN_ID_PART};

/// How many candidates an ambiguous part lists.
const SHOWN: usize = 5;

/// `key` as a whole execution id, if a row has it.
pub(super) fn exact(conn: &Conn, key: &str) -> anyhow::Result<Option<ExecutionId>> {
    let id = ExecutionId::from_string(key.trim());
    Ok(ledger::get_execution(conn, &id)?.map(|_| id))
}

/// The one row whose id begins or ends with `key`; None when none does;
/// refused, listing them, when several do.
pub(super) fn partial(conn: &Conn, key: &str) -> anyhow::Result<Option<ExecutionId>> {
    let mut found = ledger::executions_matching(conn, key, SHOWN + 1)?;
    match found.len() {
        0 | 1 => Ok(found.pop()),
        n => Err(usage(format!(
            "{key:?} begins or ends {} executions; give more of the id:\n{}",
            if n > SHOWN {
                format!("more than {SHOWN}")
            } else {
                n.to_string()
            },
            found
                .iter()
                .take(SHOWN)
                .map(|id| format!("  {id}"))
                .collect::<Vec<_>>()
                .join("\n")
        ))),
    }
}

/// The execution `key` names, whole or in part.
pub(super) fn resolve(conn: &Conn, key: &str) -> anyhow::Result<ExecutionId> {
    match exact(conn, key)? {
        Some(id) => Ok(id),
        None => partial(conn, key)?.ok_or_else(|| not_found(key)),
    }
}

/// No execution has `key` for id, or for a beginning or end of its id.
pub(super) fn not_found(key: &str) -> anyhow::Error {
    usage(format!(
        "no execution {key:?} (give its id, or at least {MIN_ID_PART} characters of its beginning or end); `hermes-cron runs` lists them"
    ))
}
