//! Schedules: the grammar, the zone, and the pure fire computation.
//!
//! No clock reads and no IO: every function takes `now`, `after` and the zone
//! as arguments. (The host's own zone, and the host's zoneinfo files, are
//! read by the main crate, `src/host_zone.rs`, into a [`ZoneTable`] that is
//! handed to whatever reads zone names; fire computation only ever sees a
//! loaded [`Zone`].)
//!
//! ## Map (each file uses only the ones listed before it)
//! - `instant.rs`: [`Timestamp`]. `error.rs`: [`ScheduleError`].
//! - `zone/`: [`Zone`] (a `chrono::TimeZone` over the host's TZif rules, a
//!   POSIX TZ string, or the compiled-in copy), names to zones ([`ZoneTable`],
//!   a value the caller holds), comparing rules.
//! - `duration.rs`; `cron_fields.rs` + `cron_expr.rs`: [`CronSchedule`],
//!   validation with named fields; `phrase.rs`: `daily at 8am` and friends,
//!   compiled to cron; `describe.rs`: cron expressions in words.
//! - `wall.rs`: wall <-> instant. `fires.rs`: [`Fire`], [`DstNote`], the DST
//!   policy and the fires of cron, intervals and one-shots.
//! - `interval.rs`: `every 5m`, anchored periods. `oneshot.rs`: `in 30s`, ISO instants.
//! - `grammar.rs`: [`Schedule`] and its methods (the grammar, the canonical
//!   (stored) form, and hand-offs to the files above).
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
mod instant;
mod interval;
mod oneshot;
mod phrase;
mod wall;
mod zone;

#[cfg(test)]
mod dst_oracle;
#[cfg(test)]
mod dst_tests;

pub use cron_expr::CronSchedule;
pub use duration::{format_duration, parse_duration};
pub use error::ScheduleError;
pub use fires::{DstNote, Fire, local_instant};
pub use grammar::Schedule;
pub use instant::Timestamp;
/// The zone type under its old name (it was `chrono_tz::Tz`).
pub use zone::Zone as Tz;
#[cfg(any(test, feature = "testing"))]
pub use zone::fixture as tzif_fixture;
pub use zone::{
    COMPILED_IN_TZDB_VERSION, Zone, ZoneDifference, ZoneFiles, ZoneOffset, ZoneOrigin, ZoneTable,
    compiled_in_zone, first_difference,
};
