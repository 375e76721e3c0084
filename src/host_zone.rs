//! The host's zone: `TZ`, else `/etc/timezone`, else the target of the
//! `/etc/localtime` link, else UTC. The IO is in [`system_zone`] only; the
//! readers of each source are pure and tested.
//!
//! A source that is present but names no known zone is skipped (glibc would
//! fall back to UTC for a bad `TZ`; the next source is a better guess here).
//! POSIX rule strings such as `CET-1CEST,M3.5.0` are not zone names and are
//! skipped the same way.

use crate::schedule::parse_zone;
use chrono_tz::Tz;
use std::path::Path;

/// The host's zone: `TZ`, else `/etc/timezone`, else the `/etc/localtime` link, else UTC.
pub fn system_zone() -> Tz {
    std::env::var("TZ")
        .ok()
        .as_deref()
        .and_then(from_tz_var)
        .or_else(|| {
            std::fs::read_to_string("/etc/timezone")
                .ok()
                .as_deref()
                .and_then(from_etc_timezone)
        })
        .or_else(|| {
            std::fs::read_link("/etc/localtime")
                .ok()
                .as_deref()
                .and_then(from_localtime_link)
        })
        .unwrap_or(Tz::UTC)
}

/// `TZ=Europe/Berlin`, `TZ=:Europe/Berlin`, or a path into a zoneinfo tree.
fn from_tz_var(value: &str) -> Option<Tz> {
    let value = value.trim().trim_start_matches(':');
    if value.is_empty() {
        return None;
    }
    from_zoneinfo_path(value).or_else(|| parse_zone(value).ok())
}

/// The first line of `/etc/timezone` that is not blank or a comment.
fn from_etc_timezone(content: &str) -> Option<Tz> {
    content
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .and_then(|line| parse_zone(line).ok())
}

/// `/usr/share/zoneinfo/Europe/Berlin`, `../usr/share/zoneinfo/posix/UTC`, ...
fn from_localtime_link(target: &Path) -> Option<Tz> {
    from_zoneinfo_path(target.to_str()?)
}

fn from_zoneinfo_path(path: &str) -> Option<Tz> {
    let (_, name) = path.rsplit_once("zoneinfo/")?;
    let name = name
        .strip_prefix("posix/")
        .or_else(|| name.strip_prefix("right/"))
        .unwrap_or(name);
    parse_zone(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tz_variable_forms() {
        assert_eq!(from_tz_var("Europe/Berlin"), Some(Tz::Europe__Berlin));
        assert_eq!(from_tz_var(":America/Toronto"), Some(Tz::America__Toronto));
        assert_eq!(
            from_tz_var("/usr/share/zoneinfo/Pacific/Chatham"),
            Some(Tz::Pacific__Chatham)
        );
        assert_eq!(from_tz_var(""), None);
        assert_eq!(from_tz_var("CET-1CEST,M3.5.0,M10.5.0/3"), None);
    }

    #[test]
    fn etc_timezone_takes_the_first_real_line() {
        assert_eq!(
            from_etc_timezone("# comment\n\nEurope/Berlin\n"),
            Some(Tz::Europe__Berlin)
        );
        assert_eq!(from_etc_timezone("nonsense\n"), None);
    }

    #[test]
    fn localtime_link_targets() {
        let link = |p: &str| from_localtime_link(Path::new(p));
        assert_eq!(
            link("/usr/share/zoneinfo/Europe/Berlin"),
            Some(Tz::Europe__Berlin)
        );
        assert_eq!(link("../usr/share/zoneinfo/posix/UTC"), Some(Tz::UTC));
        assert_eq!(
            link("/var/db/timezone/zoneinfo/Australia/Lord_Howe"),
            Some(Tz::Australia__Lord_Howe)
        );
        assert_eq!(link("/etc/some-file"), None);
    }

    #[test]
    fn system_zone_always_answers() {
        // Whatever the host says, a zone comes back (UTC at worst).
        let _zone: Tz = system_zone();
    }
}
