//! A [`Zone`]: a name and its rules (the host's, a POSIX string's, or the
//! compiled-in copy), as a `chrono::TimeZone` (the module documentation of
//! `zone/` says how a wall time is read).

use super::super::instant::Timestamp;
use chrono::{FixedOffset, MappedLocalTime, NaiveDate, NaiveDateTime, Offset, TimeZone};
use chrono_tz::OffsetName;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Where a zone's rules come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ZoneOrigin {
    /// A TZif file of the host's zoneinfo (`$TZDIR`, else `/usr/share/zoneinfo`).
    Host,
    /// A POSIX TZ string (`CET-1CEST,M3.5.0,M10.5.0/3`), which is its own rule.
    Posix,
    /// The copy of the tz database compiled in (chrono-tz), see
    /// [`COMPILED_IN_TZDB_VERSION`](super::COMPILED_IN_TZDB_VERSION).
    CompiledIn,
}

impl ZoneOrigin {
    /// `host`, `posix` or `compiled_in`.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneOrigin::Host => "host",
            ZoneOrigin::Posix => "posix",
            ZoneOrigin::CompiledIn => "compiled_in",
        }
    }
}

/// Rules read at run time, interned by [`ZoneTable`].
pub(super) struct LoadedRules {
    pub(super) name: Box<str>,
    pub(super) origin: ZoneOrigin,
    pub(super) tz: tz::TimeZone,
}

#[derive(Clone, Copy)]
enum Rules {
    Loaded(&'static LoadedRules),
    CompiledIn(chrono_tz::Tz),
}

/// A time zone: a name and its rules. Get one with [`ZoneTable::parse`](super::ZoneTable::parse).
#[derive(Clone, Copy)]
pub struct Zone(Rules);

impl Zone {
    /// UTC (the compiled-in rules; they are the same everywhere).
    pub const UTC: Zone = Zone(Rules::CompiledIn(chrono_tz::UTC));

    /// A zone with the compiled-in rules of `tz` (not the host's).
    pub const fn compiled_in(tz: chrono_tz::Tz) -> Zone {
        Zone(Rules::CompiledIn(tz))
    }

    pub(super) fn loaded(rules: &'static LoadedRules) -> Zone {
        Zone(Rules::Loaded(rules))
    }

    /// The zone's name: an IANA name as spelt in the database
    /// (`Europe/Berlin`), or the POSIX TZ string.
    pub fn name(self) -> &'static str {
        match self.0 {
            Rules::Loaded(rules) => &rules.name,
            Rules::CompiledIn(tz) => tz.name(),
        }
    }

    /// Where the rules come from.
    pub fn origin(self) -> ZoneOrigin {
        match self.0 {
            Rules::Loaded(rules) => rules.origin,
            Rules::CompiledIn(_) => ZoneOrigin::CompiledIn,
        }
    }

    /// The offset in effect at `at`, with its abbreviation.
    pub fn offset_at(self, at: Timestamp) -> ZoneOffset {
        self.offset_from_utc_datetime(&at.naive_utc())
    }

    /// The UTC offset in seconds at a Unix time (loaded rules only).
    fn seconds_at_unix(self, unix: i64) -> i32 {
        match self.0 {
            Rules::Loaded(rules) => {
                let tz = rules.tz.as_ref();
                tz.find_local_time_type(unix)
                    .ok()
                    .or_else(|| fallback_type(tz, unix))
                    .map_or(0, tz::LocalTimeType::ut_offset)
            }
            Rules::CompiledIn(_) => self.at_unix(unix).fixed.local_minus_utc(),
        }
    }

    /// The offset in effect at a Unix time (seconds).
    fn at_unix(self, unix: i64) -> ZoneOffset {
        match self.0 {
            Rules::Loaded(rules) => {
                let tz = rules.tz.as_ref();
                let kind = tz
                    .find_local_time_type(unix)
                    .ok()
                    .or_else(|| fallback_type(tz, unix));
                match kind {
                    Some(kind) => ZoneOffset::new(
                        self,
                        kind.ut_offset(),
                        Abbr::new(kind.time_zone_designation()),
                    ),
                    None => ZoneOffset::new(self, 0, Abbr::new("UTC")),
                }
            }
            Rules::CompiledIn(tz) => {
                let naive = chrono::DateTime::from_timestamp(unix, 0)
                    .unwrap_or_default()
                    .naive_utc();
                from_chrono_tz(self, tz.offset_from_utc_datetime(&naive))
            }
        }
    }
}

/// The local time type where tz-rs has none: past the last transition of a
/// TZif file without a footer rule (the last type stays), or out of its
/// range (the nearest end of the table).
fn fallback_type(tz: tz::TimeZoneRef<'_>, unix: i64) -> Option<&tz::LocalTimeType> {
    let types = tz.local_time_types();
    match tz.transitions().last() {
        Some(last) if unix >= last.unix_leap_time() => types.get(last.local_time_type_index()),
        _ => types.first(),
    }
}

fn from_chrono_tz(zone: Zone, offset: chrono_tz::TzOffset) -> ZoneOffset {
    let seconds = offset.fix().local_minus_utc();
    let abbr = match offset.abbreviation() {
        Some(name) => Abbr::new(name),
        None => Abbr::numeric(seconds),
    };
    ZoneOffset::new(zone, seconds, abbr)
}

impl PartialEq for Zone {
    /// Same name and same rules (loaded rules are compared by identity: a
    /// zone read from the host is not equal to the compiled-in one).
    fn eq(&self, other: &Zone) -> bool {
        match (self.0, other.0) {
            (Rules::Loaded(a), Rules::Loaded(b)) => std::ptr::eq(a, b),
            (Rules::CompiledIn(a), Rules::CompiledIn(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Zone {}

impl Hash for Zone {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
        self.origin().hash(state);
    }
}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.origin().as_str())
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<chrono_tz::Tz> for Zone {
    fn from(tz: chrono_tz::Tz) -> Zone {
        Zone::compiled_in(tz)
    }
}

/// The compiled-in rules of the zones the tests use, named as in chrono-tz
/// (`Tz::Europe__Berlin`). Programs read zones by name with
/// [`ZoneTable::parse`](super::ZoneTable::parse), which prefers the host's rules.
#[cfg(any(test, feature = "testing"))]
#[allow(non_upper_case_globals)]
impl Zone {
    /// CET/CEST: a gap at 02:00 in March, a repeated hour at 02:00 in October.
    pub const Europe__Berlin: Zone = Zone::compiled_in(chrono_tz::Tz::Europe__Berlin);
    /// GMT/BST, changing at 01:00 UTC.
    pub const Europe__London: Zone = Zone::compiled_in(chrono_tz::Tz::Europe__London);
    /// Eastern time, changing at 02:00 (the rules of New York).
    pub const America__Toronto: Zone = Zone::compiled_in(chrono_tz::Tz::America__Toronto);
    /// Eastern time, changing at 02:00.
    pub const America__New_York: Zone = Zone::compiled_in(chrono_tz::Tz::America__New_York);
    /// Changing at midnight: a September day has no 00:00.
    pub const America__Santiago: Zone = Zone::compiled_in(chrono_tz::Tz::America__Santiago);
    /// A 30-minute shift (+10:30/+11:00).
    pub const Australia__Lord_Howe: Zone = Zone::compiled_in(chrono_tz::Tz::Australia__Lord_Howe);
    /// +12:45/+13:45, changing at 02:45.
    pub const Pacific__Chatham: Zone = Zone::compiled_in(chrono_tz::Tz::Pacific__Chatham);
    /// Skipped 30 December 2011 whole (it crossed the date line).
    pub const Pacific__Apia: Zone = Zone::compiled_in(chrono_tz::Tz::Pacific__Apia);
    /// Changing at midnight (summer time again since 2023).
    pub const Africa__Cairo: Zone = Zone::compiled_in(chrono_tz::Tz::Africa__Cairo);
    /// No DST: +09:00 all year.
    pub const Asia__Tokyo: Zone = Zone::compiled_in(chrono_tz::Tz::Asia__Tokyo);
}

/// A zone abbreviation (`CEST`, `+0330`), inline so offsets stay `Copy`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Abbr {
    bytes: [u8; 7],
    len: u8,
}

impl Abbr {
    /// TZif designations are 3 to 6 ASCII bytes; longer ones are cut.
    fn new(text: &str) -> Abbr {
        let mut bytes = [0; 7];
        let mut len = 0;
        for (slot, b) in bytes.iter_mut().zip(text.bytes().filter(u8::is_ascii)) {
            *slot = b;
            len += 1;
        }
        Abbr { bytes, len }
    }

    /// `+03`, `+0530`, `-0930`: what tzdata writes for zones without letters.
    fn numeric(seconds: i32) -> Abbr {
        let sign = if seconds < 0 { '-' } else { '+' };
        let minutes = seconds.unsigned_abs() / 60;
        let (h, m) = (minutes / 60, minutes % 60);
        let text = if m == 0 {
            format!("{sign}{h:02}")
        } else {
            format!("{sign}{h:02}{m:02}")
        };
        Abbr::new(&text)
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("?")
    }
}

/// The offset of a [`Zone`] at some instant: the UTC offset and its
/// abbreviation (what `%Z` prints).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ZoneOffset {
    zone: Zone,
    fixed: FixedOffset,
    abbr: Abbr,
}

impl ZoneOffset {
    fn new(zone: Zone, seconds: i32, abbr: Abbr) -> ZoneOffset {
        // TZif allows offsets chrono does not (|offset| >= 24h); none exist.
        let fixed = FixedOffset::east_opt(seconds)
            .or_else(|| FixedOffset::east_opt(seconds.clamp(-86_399, 86_399)))
            .unwrap_or(FixedOffset::east_opt(0).expect("zero offset"));
        ZoneOffset { zone, fixed, abbr }
    }

    /// The abbreviation (`CEST`, `+0330`).
    pub fn abbreviation(&self) -> &str {
        self.abbr.as_str()
    }
}

impl Offset for ZoneOffset {
    fn fix(&self) -> FixedOffset {
        self.fixed
    }
}

impl fmt::Display for ZoneOffset {
    /// The abbreviation, like chrono-tz's offsets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.abbr.as_str())
    }
}

impl fmt::Debug for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.abbr.as_str())
    }
}

impl TimeZone for Zone {
    type Offset = ZoneOffset;

    fn from_offset(offset: &ZoneOffset) -> Zone {
        offset.zone
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> MappedLocalTime<ZoneOffset> {
        self.offset_from_local_datetime(&local.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> MappedLocalTime<ZoneOffset> {
        if let Rules::CompiledIn(tz) = self.0 {
            return tz
                .offset_from_local_datetime(local)
                .map(|offset| from_chrono_tz(*self, offset));
        }
        let wall = local.and_utc().timestamp();
        // Offsets in effect a day either side of the wall time read as UTC:
        // the instant sought is within 16 hours of it (no zone is further
        // from UTC), and no zone changes offset twice in a day.
        let mut candidates = [0i32; 3];
        let mut distinct = 0;
        for days in -1i64..=1 {
            let seconds = self.seconds_at_unix(wall + days * 86_400);
            if !candidates[..distinct].contains(&seconds) {
                candidates[distinct] = seconds;
                distinct += 1;
            }
        }
        // Keep a candidate when the instant it gives really has it.
        let mut found = [ZoneOffset::new(*self, 0, Abbr::new("")); 3];
        let mut count = 0;
        for &candidate in &candidates[..distinct] {
            let real = self.at_unix(wall - i64::from(candidate));
            if real.fixed.local_minus_utc() == candidate {
                found[count] = real;
                count += 1;
            }
        }
        let found = &mut found[..count];
        // The larger offset reads this wall time at the earlier instant.
        found.sort_by_key(|o| std::cmp::Reverse(o.fixed.local_minus_utc()));
        match found {
            [] => MappedLocalTime::None,
            [one] => MappedLocalTime::Single(*one),
            [first, second, ..] => MappedLocalTime::Ambiguous(*first, *second),
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> ZoneOffset {
        self.offset_from_utc_datetime(&utc.and_time(chrono::NaiveTime::MIN))
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> ZoneOffset {
        if let Rules::CompiledIn(tz) = self.0 {
            return from_chrono_tz(*self, tz.offset_from_utc_datetime(utc));
        }
        self.at_unix(utc.and_utc().timestamp())
    }
}
