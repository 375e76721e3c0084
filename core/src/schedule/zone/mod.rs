//! [`Zone`]: a `chrono::TimeZone` whose rules come from the host's zoneinfo
//! (TZif files), from a POSIX TZ string, or from the copy compiled in with
//! chrono-tz. Pure: the TZif bytes are handed in (`table.rs`,
//! [`ZoneFiles`]); nothing here opens a file.
//!
//! - `Zone` is `Copy`, like `chrono_tz::Tz`: rules loaded at run time are
//!   interned (`&'static`, one allocation per distinct zone name and
//!   table, never freed), so `Fire` and `DateTime<Zone>` stay `Copy`-cheap.
//! - Reading a wall time (`offset_from_local_datetime`) for loaded rules:
//!   the candidate offsets are those in effect a day before, at, and a day
//!   after the wall time read as UTC; a candidate `o` is kept when the
//!   instant `wall - o` really has offset `o`. None kept: a gap; one: a
//!   single instant; two: a repeated wall time, the larger offset (the
//!   earlier instant) first. Checked on this machine's tzdata 2025b: equal
//!   to chrono-tz (also 2025b) for all 597 zones, every 30 minutes of
//!   2026-2027, wall and UTC; equal to a brute force over each zone's own
//!   rules (every offset it ever uses tried) every 15 minutes within 3 hours
//!   of every transition from 1900 to 2037 (1.1 M wall times).
//! - `rules.rs`: the `Zone` type and its `TimeZone` impl over either kind of
//!   rules. `table.rs`: names -> zones in a [`ZoneTable`] the caller holds (host
//!   first, compiled-in as a fallback, case-insensitive, POSIX TZ strings). `compare.rs`: where two zones'
//!   rules first disagree (for `doctor`).

mod compare;
#[cfg(any(test, feature = "testing"))]
pub mod fixture;
mod rules;
mod table;

#[cfg(test)]
mod tests;

pub use compare::{ZoneDifference, first_difference};
pub use rules::{Zone, ZoneOffset, ZoneOrigin};
pub use table::{COMPILED_IN_TZDB_VERSION, ZoneFiles, ZoneTable, compiled_in_zone};
