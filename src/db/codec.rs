//! How instants are stored: INTEGER milliseconds since the Unix epoch, UTC.
//!
//! Integers keep the due-job index and the ledger's UNIQUE key cheap and exact.

use chrono::{DateTime, TimeZone, Utc};

/// An instant as stored in the database.
pub(crate) fn to_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// A stored instant. Out-of-range values (corruption) clamp to the epoch
/// rather than panic.
pub fn from_ms(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_milliseconds() {
        let at = Utc.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap();
        assert_eq!(from_ms(to_ms(at)), at);
        assert_eq!(from_ms(i64::MAX), DateTime::<Utc>::UNIX_EPOCH);
    }
}
