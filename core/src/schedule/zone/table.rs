//! Names to zones: a [`ZoneTable`], made once by whoever does the IO (the
//! main crate's `host_zone::table()`, over the host's zoneinfo) and handed
//! to every function that reads a zone name; no table is process-wide.
//!
//! A name is looked up, in order:
//! 1. exactly, in the host's zoneinfo (when the table was made over a
//!    [`ZoneFiles`]), then in the compiled-in copy (a zone the host lacks);
//! 2. case-insensitively (`europe/london`), against the host's names and
//!    the compiled-in ones; the zone keeps the database's spelling;
//! 3. as a POSIX TZ string (`CET-1CEST,M3.5.0,M10.5.0/3`, `<+0330>-3:30`),
//!    which is its own rule and its own name.
//!
//! A leading `:` (glibc's "this names a file" mark, `TZ=:Europe/Berlin`) is
//! dropped. Anything else is refused, naming the text and suggesting zones
//! whose last segment matches (`Berlin` -> `Europe/Berlin`).
//!
//! Every answer is remembered per typed name, and loaded rules are interned
//! per zone name, so looking a zone up again in the same table costs one
//! hash lookup, and the host's file is read once per table (a process makes
//! one: a tzdata upgrade is seen by the next process, e.g. after a gateway
//! restart). Interned rules are never freed, so zones stay `Copy`.
//!
//! No IO here: the host's files come through [`ZoneFiles`], implemented by
//! the main crate (`src/host_zone.rs`). A table made with
//! [`ZoneTable::compiled_in_only`] (the core's own tests, the fuzz targets)
//! answers from the compiled-in copy and POSIX strings only.

use super::super::error::ScheduleError;
use super::rules::{LoadedRules, Zone, ZoneOrigin};
use chrono_tz::TZ_VARIANTS;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

/// The tz database release compiled in (chrono-tz's), e.g. `2025b`.
pub const COMPILED_IN_TZDB_VERSION: &str = chrono_tz::IANA_TZDB_VERSION;

/// A tz database the core can read zones from without doing the IO itself.
pub trait ZoneFiles: Send + Sync {
    /// The TZif bytes of the zone `name`, or None when there is no such
    /// zone. `name` is relative and stays inside the database: no leading
    /// `/`, no `.` or `..` segment, no empty segment (checked before the call).
    fn tzif(&self, name: &str) -> Option<Vec<u8>>;

    /// Every zone name the database holds, for case-insensitive lookups and
    /// suggestions. Asked at most once per table, and only when a name is
    /// not found as typed.
    fn names(&self) -> Vec<String>;
}

/// Typed names remembered at most (beyond, lookups still work, uncached).
const MAX_REMEMBERED: usize = 4_096;
/// Distinct POSIX TZ strings loaded at most per table (each is interned for
/// the life of the process; real hosts use one or two).
const MAX_POSIX: usize = 1_024;

const IANA_HINT: &str = "use an IANA name such as Europe/Berlin, America/Toronto or UTC";

#[derive(Default)]
struct State {
    /// Typed name (trimmed) -> zone.
    by_text: HashMap<Box<str>, Zone>,
    /// Database name or POSIX string -> zone.
    by_name: HashMap<Box<str>, Zone>,
    /// The host's zone names, once asked for.
    host_names: Option<Arc<Vec<String>>>,
    posix_loaded: usize,
}

/// Zone names to zones, over an optional host database: the process's
/// (made by its `main`), a test fixture's, or none.
pub struct ZoneTable {
    files: Option<Box<dyn ZoneFiles>>,
    state: Mutex<State>,
}

impl ZoneTable {
    /// A table over `files` (the host's zoneinfo, or a test fixture).
    pub fn new(files: Box<dyn ZoneFiles>) -> ZoneTable {
        ZoneTable {
            files: Some(files),
            state: Mutex::new(State::default()),
        }
    }

    /// A table with no host database: compiled-in zones and POSIX strings.
    pub fn compiled_in_only() -> ZoneTable {
        ZoneTable {
            files: None,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether the table reads a host database.
    pub fn has_host_database(&self) -> bool {
        self.files.is_some()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Parse a zone name or POSIX TZ string (see the module docs).
    pub fn parse(&self, text: &str) -> Result<Zone, ScheduleError> {
        let typed = text.trim();
        if let Some(zone) = self.lock().by_text.get(typed) {
            return Ok(*zone);
        }
        let zone = self.resolve(typed)?;
        let mut state = self.lock();
        if state.by_text.len() < MAX_REMEMBERED {
            state.by_text.insert(typed.into(), zone);
        }
        Ok(zone)
    }

    /// The zone `name` reads as, else `fallback` (no name, or a stored one
    /// that does not read here): how a job's own zone is used.
    pub fn zone_or(&self, name: Option<&str>, fallback: Zone) -> Zone {
        name.and_then(|name| self.parse(name).ok())
            .unwrap_or(fallback)
    }

    fn resolve(&self, typed: &str) -> Result<Zone, ScheduleError> {
        let name = typed.strip_prefix(':').map_or(typed, str::trim_start);
        if name.is_empty() {
            return Err(ScheduleError::zone(typed, IANA_HINT));
        }
        if let Some(zone) = self.named(name) {
            return Ok(zone);
        }
        if let Some(canonical) = self.case_insensitive(name)
            && let Some(zone) = self.named(&canonical)
        {
            return Ok(zone);
        }
        if looks_like_posix(name) {
            return self.posix(typed, name);
        }
        Err(self.unknown(typed, name))
    }

    /// A database name as spelt: the host's file, else the compiled-in copy.
    fn named(&self, name: &str) -> Option<Zone> {
        if let Some(zone) = self.lock().by_name.get(name) {
            return Some(*zone);
        }
        let host = self
            .files
            .as_ref()
            .filter(|_| is_safe_name(name))
            .and_then(|files| files.tzif(name))
            .and_then(|bytes| tz::TimeZone::from_tz_data(&bytes).ok());
        match host {
            Some(rules) => Some(self.intern(name, ZoneOrigin::Host, rules)),
            None => {
                let zone = Zone::compiled_in(name.parse::<chrono_tz::Tz>().ok()?);
                self.lock().by_name.insert(name.into(), zone);
                Some(zone)
            }
        }
    }

    fn intern(&self, name: &str, origin: ZoneOrigin, tz: tz::TimeZone) -> Zone {
        let mut state = self.lock();
        if let Some(zone) = state.by_name.get(name) {
            return *zone;
        }
        let rules: &'static LoadedRules = Box::leak(Box::new(LoadedRules {
            name: name.into(),
            origin,
            tz,
        }));
        let zone = Zone::loaded(rules);
        state.by_name.insert(name.into(), zone);
        zone
    }

    fn host_names(&self) -> Arc<Vec<String>> {
        if let Some(names) = &self.lock().host_names {
            return names.clone();
        }
        let names = Arc::new(self.files.as_ref().map(|f| f.names()).unwrap_or_default());
        self.lock().host_names = Some(names.clone());
        names
    }

    /// The database spelling of `name`, matched ignoring ASCII case.
    fn case_insensitive(&self, name: &str) -> Option<String> {
        let host = self.host_names();
        host.iter()
            .map(String::as_str)
            .chain(TZ_VARIANTS.iter().map(|tz| tz.name()))
            .find(|known| known.eq_ignore_ascii_case(name))
            .map(str::to_string)
    }

    fn posix(&self, typed: &str, name: &str) -> Result<Zone, ScheduleError> {
        if let Some(zone) = self.lock().by_name.get(name) {
            return Ok(*zone);
        }
        let rules = POSIX_ONLY.parse_posix_tz(name).map_err(|e| {
            ScheduleError::zone(
                typed,
                &format!(
                    "it is not a zone name, and not a valid POSIX TZ string ({e}); {IANA_HINT}, or a full POSIX rule such as CET-1CEST,M3.5.0,M10.5.0/3"
                ),
            )
        })?;
        {
            let mut state = self.lock();
            if state.posix_loaded >= MAX_POSIX {
                return Err(ScheduleError::zone(
                    typed,
                    &format!("too many different POSIX TZ strings in one process; {IANA_HINT}"),
                ));
            }
            state.posix_loaded += 1;
        }
        Ok(self.intern(name, ZoneOrigin::Posix, rules))
    }

    fn unknown(&self, typed: &str, name: &str) -> ScheduleError {
        let last = name.rsplit('/').next().unwrap_or(name);
        let host = self.host_names();
        let mut similar: Vec<&str> = Vec::new();
        for known in host
            .iter()
            .map(String::as_str)
            .chain(TZ_VARIANTS.iter().map(|tz| tz.name()))
        {
            let tail = known.rsplit('/').next().unwrap_or(known);
            if !last.is_empty() && tail.eq_ignore_ascii_case(last) && !similar.contains(&known) {
                similar.push(known);
            }
            if similar.len() == 3 {
                break;
            }
        }
        let hint = if similar.is_empty() {
            IANA_HINT.to_string()
        } else {
            format!("did you mean {}?", similar.join(" or "))
        };
        ScheduleError::zone(typed, &hint)
    }
}

impl fmt::Debug for ZoneTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZoneTable")
            .field("host_database", &self.has_host_database())
            .finish_non_exhaustive()
    }
}

/// tz-rs settings that never touch a file: a pure POSIX TZ string parse.
static POSIX_ONLY: tz::TimeZoneSettings<'static> =
    tz::TimeZoneSettings::new(&[], |_| Err("no files are read here".into()));

/// A POSIX TZ string has an offset (a digit); a `/` only after a `,` (in
/// a rule's time: `M10.5.0/3`), where zone names have no `,`.
fn looks_like_posix(name: &str) -> bool {
    let before_rules = name.split(',').next().unwrap_or(name);
    name.bytes().any(|b| b.is_ascii_digit()) && !before_rules.contains('/')
}

/// Names that stay inside the database: relative, no `.`/`..`/empty
/// segment, only the characters zone names use.
fn is_safe_name(name: &str) -> bool {
    name.len() <= 255
        && !name.starts_with('/')
        && name.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_+-.".contains(&b))
        })
}

/// The compiled-in rules of the zone `name` (exact, else ignoring case),
/// whatever the host has: what `doctor` compares the host's rules with.
pub fn compiled_in_zone(name: &str) -> Option<Zone> {
    let name = name.trim();
    name.parse::<chrono_tz::Tz>()
        .ok()
        .or_else(|| {
            TZ_VARIANTS
                .iter()
                .find(|tz| tz.name().eq_ignore_ascii_case(name))
                .copied()
        })
        .map(Zone::compiled_in)
}
