//! Zone names: [`parse_zone`] turns an IANA name (`Europe/Berlin`, `UTC`)
//! into a [`Tz`]. Pure; the host's zone is read in `system_zone.rs`.
//!
//! Exact names are tried first, then a case-insensitive match (`utc`,
//! `europe/berlin`). A refusal suggests zones whose last segment matches
//! (`Berlin` -> `Europe/Berlin`).

use super::error::ScheduleError;
use chrono_tz::{TZ_VARIANTS, Tz};

/// Parse an IANA zone name (`Europe/Berlin`, `UTC`).
pub fn parse_zone(name: &str) -> Result<Tz, ScheduleError> {
    let wanted = name.trim();
    if let Ok(zone) = wanted.parse::<Tz>() {
        return Ok(zone);
    }
    if let Some(zone) = TZ_VARIANTS
        .iter()
        .find(|zone| zone.name().eq_ignore_ascii_case(wanted))
    {
        return Ok(*zone);
    }
    let last = wanted.rsplit('/').next().unwrap_or(wanted);
    let similar: Vec<&str> = TZ_VARIANTS
        .iter()
        .map(|zone| zone.name())
        .filter(|known| {
            !last.is_empty()
                && known
                    .rsplit('/')
                    .next()
                    .is_some_and(|tail| tail.eq_ignore_ascii_case(last))
        })
        .take(3)
        .collect();
    let hint = if similar.is_empty() {
        "use an IANA name such as Europe/Berlin, America/Toronto or UTC".to_string()
    } else {
        format!("did you mean {}?", similar.join(" or "))
    };
    Err(ScheduleError::zone(name, &hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_iana_names() {
        assert_eq!(parse_zone("Europe/Berlin").unwrap(), Tz::Europe__Berlin);
        assert_eq!(parse_zone("UTC").unwrap(), Tz::UTC);
        assert_eq!(
            parse_zone(" America/Toronto ").unwrap(),
            Tz::America__Toronto
        );
    }

    #[test]
    fn reads_names_in_any_case() {
        assert_eq!(parse_zone("utc").unwrap(), Tz::UTC);
        assert_eq!(parse_zone("europe/berlin").unwrap(), Tz::Europe__Berlin);
    }

    #[test]
    fn refusal_names_the_zone_and_suggests_a_match() {
        let err = parse_zone("Berlin").unwrap_err();
        assert_eq!(err.token, "Berlin");
        assert_eq!(
            err.message,
            "unknown time zone \"Berlin\"; did you mean Europe/Berlin?"
        );
        let err = parse_zone("Mars/Olympus").unwrap_err();
        assert_eq!(err.token, "Mars/Olympus");
        assert!(err.message.contains("IANA"), "{}", err.message);
        assert_eq!(parse_zone("").unwrap_err().token, "");
    }
}
