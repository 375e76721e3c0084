//! Schedules: the grammar, the zone, and the pure fire computation.
//!
//! No clock reads and no IO: every function takes `now`, `after` and the zone
//! as arguments. (The host's own zone, and the host's zoneinfo files, are
//! read by the main crate, `src/host_zone.rs`, and handed in through
//! [`ZoneFiles`]; fire computation only ever sees a loaded [`Zone`].)
//!
//! ## Map
//! - `types.rs`: [`Schedule`], [`Fire`], [`DstNote`], [`Timestamp`]; thin methods.
//! - `grammar.rs`: routing a string to its parser; the canonical (stored) form.
//! - `cron_expr.rs` + `cron_fields.rs`: [`CronSchedule`], validation with named fields.
//! - `phrase.rs`: `daily at 8am` and friends, compiled to cron.
//! - `interval.rs`: `every 5m`, anchored periods. `oneshot.rs`: `in 30s`, ISO instants.
//! - `fires.rs`: the DST policy and `next_after` for cron (`wall.rs`: wall <-> instant).
//! - `zone/`: [`Zone`] (a `chrono::TimeZone` over the host's TZif rules, a
//!   POSIX TZ string, or the compiled-in copy), names to zones, comparing rules.
//! - `duration.rs`, `describe.rs`, `error.rs`.
//!
//! ## DST policy (decided in `fires.rs`, where it is documented in full)
//! A wall time inside a spring-forward gap runs once at the first real instant
//! after the gap (`DstNote::MovedByGap`); a fixed-hour time inside a repeated
//! hour runs once, on the first pass; a schedule whose hour field is written
//! with `*` runs at each real instant (both passes, nothing in a gap). The hour
//! field alone decides "wildcard", unlike croner, which also looks at the
//! minute and second fields.

mod cron_expr;
mod cron_fields;
mod describe;
mod duration;
mod error;
mod fires;
mod grammar;
mod interval;
mod oneshot;
mod phrase;
mod types;
mod wall;
mod zone;

#[cfg(test)]
mod dst_oracle;
#[cfg(test)]
mod dst_tests;

pub use cron_expr::CronSchedule;
pub use duration::{format_duration, parse_duration};
pub use error::ScheduleError;
pub use types::{DstNote, Fire, Schedule, Timestamp};
pub use wall::local_instant;
/// The zone type under its old name (it was `chrono_tz::Tz`).
pub use zone::Zone as Tz;
#[cfg(any(test, feature = "testing"))]
pub use zone::fixture as tzif_fixture;
pub use zone::{
    COMPILED_IN_TZDB_VERSION, Zone, ZoneDifference, ZoneFiles, ZoneOffset, ZoneOrigin, ZoneTable,
    compiled_in_zone, first_difference, install_zone_files, parse_zone,
};
