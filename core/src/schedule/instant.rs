//! [`Timestamp`], the instant every schedule computes. Imports no sibling,
//! so the zone and every algorithm can use it.

use chrono::{DateTime, Utc};

/// A point in time, in UTC: what the ledger stores and every schedule
/// computes. (Not a monotonic `std::time::Instant`: this one is wall time.)
pub type Timestamp = DateTime<Utc>;
