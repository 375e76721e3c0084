//! Naming the cause of a failed ledger operation in words an operator can
//! act on. SQLite says `database is locked` or `disk I/O error (4874)`; the
//! usual causes are another process holding the write lock past the busy
//! timeout, and a full filesystem (which SQLite reports as `database or disk
//! is full`, or, when even its shared-memory file cannot grow, as an I/O error).

use super::busy::is_busy;
use super::error::SqlError;
use std::path::Path;

/// Why `err` (or an error in its source chain) happened, as a clause to add
/// to its message; None when there is nothing more to say. `dir` is the
/// directory holding the database.
pub fn explain(err: &(dyn std::error::Error + 'static), dir: &Path) -> Option<String> {
    let mut found: Option<Found<'_>> = None;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(s) = e.downcast_ref::<SqlError>() {
            found = Some(Found::Ours(s));
            break;
        }
        if let Some(s) = e.downcast_ref::<rusqlite::Error>() {
            found = Some(Found::Sqlite(s));
            break;
        }
        cur = e.source();
    }
    let busy = match found {
        Some(Found::Ours(e)) => e.is_busy(),
        Some(Found::Sqlite(e)) => is_busy(e),
        None => false,
    };
    if busy {
        return Some(format!(
            "another process held the database's write lock for longer than the busy timeout ({} ms, {})",
            super::busy::busy_timeout().as_millis(),
            super::busy::BUSY_TIMEOUT_ENV
        ));
    }
    if let Some(Found::Ours(e)) = found
        && e.is_unreachable()
    {
        return Some(
            "the database server is out of reach (a network partition, or the server is down); nothing is claimed until it answers again"
                .into(),
        );
    }
    let sqlite = match found {
        Some(Found::Ours(SqlError::Sqlite(e))) | Some(Found::Sqlite(e)) => Some(e),
        _ => None,
    };
    let code = sqlite.and_then(|e| e.sqlite_error_code());
    if matches!(
        code,
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    ) {
        return Some(format!(
            "the ledger {} is damaged; hermes-cron will not write over it: restore it from a backup, or move it aside (keeping it) and a new, empty ledger is made on the next command",
            dir.join("cron.db").display()
        ));
    }
    let free = free_bytes(dir);
    if code == Some(rusqlite::ErrorCode::DiskFull) || (sqlite.is_some() && free == Some(0)) {
        return Some(format!(
            "the filesystem holding {} is full ({} bytes free)",
            dir.display(),
            free.map_or("?".into(), |f| f.to_string())
        ));
    }
    None
}

#[derive(Clone, Copy)]
enum Found<'a> {
    Ours(&'a SqlError),
    Sqlite(&'a rusqlite::Error),
}

fn free_bytes(dir: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(dir).ok()?;
    Some(st.blocks_available() as u64 * st.fragment_size() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_held_lock_and_a_full_disk() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let why = explain(&busy, Path::new("/")).unwrap();
        assert!(
            why.contains("write lock") && why.contains("busy timeout"),
            "{why}"
        );
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        let why = explain(&full, Path::new("/")).unwrap();
        assert!(why.contains("is full"), "{why}");
        let other = rusqlite::Error::QueryReturnedNoRows;
        assert_eq!(explain(&other, Path::new("/")), None);
    }
}
