//! Waiting on another connection's lock: how long (the busy timeout, 15 s
//! unless `HERMES_CRON_BUSY_TIMEOUT_MS` says otherwise), and telling a busy
//! SQLite error from others.

use std::time::Duration;

/// Override for the busy timeout in milliseconds (default 15000). On
/// PostgreSQL it is also the lock timeout and how long one statement may go
/// unanswered before the connection is given up.
pub(crate) const BUSY_TIMEOUT_ENV: &str = "HERMES_CRON_BUSY_TIMEOUT_MS";

const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// The busy timeout: the override when set and within 1..=600000 ms.
pub(crate) fn busy_timeout() -> Duration {
    std::env::var(BUSY_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (1..=600_000).contains(ms))
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_BUSY_TIMEOUT)
}

/// SQLITE_BUSY or SQLITE_LOCKED: another connection holds a lock we need.
pub(crate) fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
