//! The host's time zones, and all the IO about zones:
//!
//! - [`ZoneDir`]: the host's zoneinfo (`$TZDIR`, else `/usr/share/zoneinfo`),
//!   the TZif files the core's zone table reads through [`ZoneFiles`].
//!   [`table`] makes the process's [`ZoneTable`] over it, once, in each
//!   binary's `main`, which hands it down (the CLI's context, the gateway's
//!   `Deps`, the claim's context); a zone name read in it comes from the
//!   host's file, and the compiled-in copy answers only for a zone the host
//!   lacks, or when there is no host database.
//! - [`system_zone`]: the host's own zone, read in the table it is given:
//!   `TZ`, else `/etc/timezone`, else the target of the `/etc/localtime`
//!   link, else UTC.
//!
//! `TZ` may hold a zone name (`Europe/Berlin`, `:Europe/Berlin`), a path
//! into a zoneinfo tree, or a POSIX rule string (`CET-1CEST,M3.5.0,M10.5.0/3`),
//! which is used as it is. A value that is none of these is refused: it is
//! named in a warning (once per process) and by `doctor`, and the next
//! source is used (glibc would silently use UTC). The readers of each
//! source are pure and tested.

use crate::schedule::{Tz, ZoneFiles, ZoneTable};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the host's zoneinfo is when `TZDIR` is not set.
pub const DEFAULT_ZONEINFO: &str = "/usr/share/zoneinfo";

/// TZif files are a few kB; anything this large is not one.
const MAX_TZIF: u64 = 1 << 20;

/// A zoneinfo directory (the host's, or a test fixture).
#[derive(Clone, Debug)]
pub struct ZoneDir {
    dir: PathBuf,
}

impl ZoneDir {
    /// `$TZDIR` if set and not empty, else `/usr/share/zoneinfo`.
    pub fn from_env() -> ZoneDir {
        let dir = std::env::var_os("TZDIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| PathBuf::from(DEFAULT_ZONEINFO), PathBuf::from);
        ZoneDir { dir }
    }

    /// The zoneinfo at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> ZoneDir {
        ZoneDir { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the directory exists (zones it lacks come from the
    /// compiled-in copy; without it, all of them do).
    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// The tz database release, and where it was read: `tzdata.zi`'s first
    /// line (`# version 2025b`), `+VERSION`, or the dpkg status of the
    /// `tzdata` package (`2025b-0+deb12u2`, for the default directory only).
    pub fn version(&self) -> Option<(String, &'static str)> {
        let first_line = |path: PathBuf| -> Option<String> {
            let text = std::fs::read_to_string(path).ok()?;
            Some(text.lines().next()?.trim().to_string())
        };
        if let Some(v) = first_line(self.dir.join("tzdata.zi"))
            .as_deref()
            .and_then(version_of_tzdata_zi)
        {
            return Some((v, "tzdata.zi"));
        }
        if let Some(v) = first_line(self.dir.join("+VERSION")).filter(|v| !v.is_empty()) {
            return Some((v, "+VERSION"));
        }
        if self.dir == Path::new(DEFAULT_ZONEINFO) {
            let status = std::fs::read_to_string("/var/lib/dpkg/status").ok()?;
            return dpkg_version(&status, "tzdata").map(|v| (v, "dpkg"));
        }
        None
    }
}

/// `# version 2025b` -> `2025b`.
fn version_of_tzdata_zi(first_line: &str) -> Option<String> {
    let v = first_line.strip_prefix("# version")?.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The `Version:` of an installed package in a dpkg status file.
fn dpkg_version(status: &str, package: &str) -> Option<String> {
    status.split("\n\n").find_map(|stanza| {
        let mut lines = stanza.lines();
        let is_it = lines
            .clone()
            .any(|l| l.trim_end() == format!("Package: {package}"));
        let installed = lines
            .clone()
            .any(|l| l.starts_with("Status:") && l.trim_end().ends_with(" installed"));
        if !(is_it && installed) {
            return None;
        }
        lines.find_map(|l| l.strip_prefix("Version:").map(|v| v.trim().to_string()))
    })
}

impl ZoneFiles for ZoneDir {
    fn tzif(&self, name: &str) -> Option<Vec<u8>> {
        let file = std::fs::File::open(self.dir.join(name)).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(MAX_TZIF).read_to_end(&mut bytes).ok()?;
        bytes.starts_with(b"TZif").then_some(bytes)
    }

    fn names(&self) -> Vec<String> {
        match std::fs::read_to_string(self.dir.join("tzdata.zi")) {
            Ok(text) => names_in_tzdata_zi(&text),
            Err(_) => {
                let mut out = Vec::new();
                walk(&self.dir, "", 0, &mut out);
                out
            }
        }
    }
}

/// The zones (`Z name ...`) and links (`L target name`) of a `tzdata.zi`.
fn names_in_tzdata_zi(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            match words.next()? {
                "Z" => words.next(),
                "L" => words.nth(1),
                _ => None,
            }
        })
        .map(str::to_string)
        .collect()
}

/// Zone names under `dir` when there is no `tzdata.zi`: files whose every
/// segment starts with an upper-case letter (`leapseconds`, `zone.tab`,
/// `posix/`, `right/` are not zones, or are copies).
fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
            continue;
        }
        let full = format!("{prefix}{name}");
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth < 3 {
            walk(&entry.path(), &format!("{full}/"), depth + 1, out);
        } else if !kind.is_dir() {
            out.push(full);
        }
    }
}

/// The zone table over the host's zoneinfo ([`ZoneDir::from_env`]): made
/// once by each binary's `main` and handed down.
pub fn table() -> ZoneTable {
    ZoneTable::new(Box::new(ZoneDir::from_env()))
}

/// The host's own zone, where it came from, and what was refused on the way.
#[derive(Clone, Debug)]
pub struct SystemZone {
    pub zone: Tz,
    /// `TZ`, `/etc/timezone`, `/etc/localtime` or `default`.
    pub source: &'static str,
    /// Sources that were set but named no zone: (source, value, why).
    pub refused: Vec<(&'static str, String, String)>,
}

/// The host's zone, read in `zones`: `TZ`, else `/etc/timezone`, else the
/// `/etc/localtime` link, else UTC. A refused source is warned about once
/// per process.
pub fn system_zone(zones: &ZoneTable) -> Tz {
    static WARNED: OnceLock<()> = OnceLock::new();
    let found = find_system_zone(zones);
    if !found.refused.is_empty() {
        WARNED.get_or_init(|| {
            for (source, value, why) in &found.refused {
                tracing::warn!(
                    "{source}={value:?} is not a time zone ({why}); using {} from {}. Fix: set {source} to an IANA name such as Europe/Berlin",
                    found.zone.name(),
                    found.source
                );
            }
        });
    }
    found.zone
}

/// [`system_zone`], explained (for `doctor`).
pub fn find_system_zone(zones: &ZoneTable) -> SystemZone {
    let mut refused = Vec::new();
    if let Ok(value) = std::env::var("TZ") {
        match from_tz_var(&value, zones) {
            Ok(Some(zone)) => return found(zone, "TZ", refused),
            Ok(None) => {}
            Err(why) => refused.push(("TZ", value, why)),
        }
    }
    if let Ok(content) = std::fs::read_to_string("/etc/timezone") {
        match from_etc_timezone(&content, zones) {
            Ok(Some(zone)) => return found(zone, "/etc/timezone", refused),
            Ok(None) => {}
            Err(why) => refused.push(("/etc/timezone", content.trim().to_string(), why)),
        }
    }
    if let Some(zone) = std::fs::read_link("/etc/localtime")
        .ok()
        .as_deref()
        .and_then(|target| from_localtime_link(target, zones))
    {
        return found(zone, "/etc/localtime", refused);
    }
    found(Tz::UTC, "default", refused)
}

fn found(
    zone: Tz,
    source: &'static str,
    refused: Vec<(&'static str, String, String)>,
) -> SystemZone {
    SystemZone {
        zone,
        source,
        refused,
    }
}

/// `TZ=Europe/Berlin`, `TZ=:Europe/Berlin`, a path into a zoneinfo tree, or
/// a POSIX rule string. Ok(None): empty, or `:/etc/localtime` (the next
/// sources say which zone that is). Err: why the value names no zone.
fn from_tz_var(value: &str, zones: &ZoneTable) -> Result<Option<Tz>, String> {
    let value = value.trim();
    let value = value.strip_prefix(':').unwrap_or(value).trim();
    if value.is_empty() || value == "/etc/localtime" {
        return Ok(None);
    }
    if value.starts_with('/') {
        return from_zoneinfo_path(value, zones).map(Some).ok_or_else(|| {
            "a file outside a zoneinfo directory; hermes-cron reads zones by name".to_string()
        });
    }
    zones.parse(value).map(Some).map_err(|e| e.message)
}

/// The first line of `/etc/timezone` that is not blank or a comment.
fn from_etc_timezone(content: &str, zones: &ZoneTable) -> Result<Option<Tz>, String> {
    match content
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
    {
        Some(line) => zones.parse(line).map(Some).map_err(|e| e.message),
        None => Ok(None),
    }
}

/// `/usr/share/zoneinfo/Europe/Berlin`, `../usr/share/zoneinfo/posix/UTC`, ...
fn from_localtime_link(target: &Path, zones: &ZoneTable) -> Option<Tz> {
    from_zoneinfo_path(target.to_str()?, zones)
}

fn from_zoneinfo_path(path: &str, zones: &ZoneTable) -> Option<Tz> {
    let (_, name) = path.rsplit_once("zoneinfo/")?;
    let name = name
        .strip_prefix("posix/")
        .or_else(|| name.strip_prefix("right/"))
        .unwrap_or(name);
    zones.parse(name).ok()
}

#[cfg(test)]
mod tests;
