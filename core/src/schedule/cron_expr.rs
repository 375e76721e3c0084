//! [`CronSchedule`]: a validated, normalized cron expression and its parsed
//! croner form. Pure.
//!
//! - Accepts 5 fields (`m h dom mon dow`) or 6 (seconds first), and the macros
//!   `@yearly @annually @monthly @weekly @daily @midnight @hourly`, which are
//!   expanded (`@daily` is stored as `0 0 * * *`). `@reboot` is not a cron
//!   expression; the grammar turns it into `Schedule::Reboot`.
//! - Normal form (`expr`): fields upper-cased and separated by one space.
//!   Normalizing twice changes nothing, so `from_canonical` round-trips.
//! - Day-of-month and day-of-week combine with OR when both are restricted
//!   (POSIX/Vixie); croner's `+` prefix on day-of-week asks for AND.
//! - Validated eagerly: each field is checked by `cron_fields` (messages name
//!   the field and item), then croner parses it, then a search from a fixed
//!   reference date proves the expression matches some real date (`0 0 31 2 *`
//!   is refused, where Vixie cron would accept it and never run it).
//! - Croner is used only for wall-clock matching (`NaiveDateTime`); what DST
//!   does to a match is decided in `fires.rs`, not by croner.

use super::cron_fields::{self, FIVE, FieldSpec, SIX};
use super::error::{Rejection, ScheduleError};
use chrono::{NaiveDate, NaiveDateTime};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// A validated cron expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSchedule {
    /// The expression as stored, e.g. `0 8 * * *`. Read-only: build a
    /// `CronSchedule` with [`CronSchedule::parse`].
    pub expr: String,
    /// The parsed form of `expr`, used for wall-clock matching (boxed:
    /// it is ~340 bytes and would bloat every `Schedule`).
    cron: Box<Cron>,
    /// Whether the hour field is written with `*` (`*`, `*/n`): see `fires.rs`.
    wildcard_hour: bool,
}

const MACROS: [(&str, &str); 7] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

impl CronSchedule {
    /// Validate and normalize a cron expression or macro (`0 8 * * MON-FRI`, `@daily`).
    pub fn parse(text: &str) -> Result<CronSchedule, ScheduleError> {
        Self::compile(text).map_err(|r| ScheduleError::schedule(text, r))
    }

    /// Whether the hour field is written with `*` (`*` or `*/n`).
    pub fn has_wildcard_hour(&self) -> bool {
        self.wildcard_hour
    }

    /// [`CronSchedule::parse`] without the surrounding message.
    pub(crate) fn compile(text: &str) -> Result<CronSchedule, Rejection> {
        let text = text.trim();
        let expanded = match text.strip_prefix('@') {
            Some(_) => MACROS
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(text))
                .map(|(_, expr)| *expr)
                .ok_or_else(|| {
                    Rejection::new(
                        text,
                        format!(
                            "unknown macro {text:?}; use @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @reboot"
                        ),
                    )
                })?,
            None => text,
        };
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        let specs: &[FieldSpec] = match fields.len() {
            5 => &FIVE,
            6 => &SIX,
            n => {
                return Err(Rejection::new(
                    text,
                    format!(
                        "a cron expression has 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), not {n}"
                    ),
                ));
            }
        };
        for (spec, field) in specs.iter().zip(&fields) {
            cron_fields::check_field(spec, field).map_err(|mut r| {
                if specs.len() == 6 {
                    r.reason.push_str(
                        " (6 fields are second minute hour day-of-month month day-of-week; there is no year field)",
                    );
                }
                r
            })?;
        }
        let expr = fields.join(" ").to_ascii_uppercase();
        let cron = parser()
            .parse(&expr)
            .map_err(|e| blame_field(specs, &fields, &e))?;
        let hour_field = fields[specs.len() - 4];
        let schedule = CronSchedule {
            wildcard_hour: hour_field.starts_with('*'),
            expr,
            cron: Box::new(cron),
        };
        if schedule.next_wall_match(reference_start()).is_none() {
            let days = fields[specs.len() - 3..].join(" ");
            return Err(Rejection::new(
                days.clone(),
                format!(
                    "never matches a real date: no day fits day-of-month, month and day-of-week {days:?}"
                ),
            ));
        }
        Ok(schedule)
    }

    /// The first wall-clock time strictly after `after` (to the second) that
    /// the expression matches, ignoring zones. None if there is none before
    /// croner's search limit (the year 5000).
    pub(crate) fn next_wall_match(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        self.cron.find_next_occurrence(&after, false).ok()
    }
}

fn parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
}

/// Every expression repeats within 400 years of the Gregorian calendar, so a
/// search from here that finds nothing proves the expression never matches.
fn reference_start() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
}

/// Croner refused an expression `cron_fields` passed: find the field it
/// refuses on its own (all other fields `*`) and name it.
fn blame_field(
    specs: &[FieldSpec],
    fields: &[&str],
    error: &croner::errors::CronError,
) -> Rejection {
    for (index, (spec, field)) in specs.iter().zip(fields).enumerate() {
        let alone: Vec<&str> = (0..fields.len())
            .map(|i| if i == index { *field } else { "*" })
            .collect();
        if parser()
            .parse(&alone.join(" ").to_ascii_uppercase())
            .is_err()
        {
            return Rejection::new(*field, format!("{} {field:?}: {error}", spec.name));
        }
    }
    let whole = fields.join(" ");
    Rejection::new(whole.clone(), format!("{whole:?}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall(text: &str) -> NaiveDateTime {
        text.parse().unwrap()
    }

    fn expr(text: &str) -> String {
        CronSchedule::parse(text).unwrap().expr
    }

    #[test]
    fn five_and_six_fields_normalize() {
        assert_eq!(expr("0 8 * * *"), "0 8 * * *");
        assert_eq!(expr("  0   8 * *   mon-fri "), "0 8 * * MON-FRI");
        assert_eq!(expr("30 0 8 * * *"), "30 0 8 * * *");
        assert_eq!(expr("0 9 * jan,jul sun"), "0 9 * JAN,JUL SUN");
        assert_eq!(expr("0 0 L * *"), "0 0 L * *");
        assert_eq!(expr("0 0 15w * *"), "0 0 15W * *");
        assert_eq!(expr("0 0 * * 5#2"), "0 0 * * 5#2");
        assert_eq!(expr("0 0 * * fri#l"), "0 0 * * FRI#L");
        let once = CronSchedule::parse("0 8 * * mon").unwrap();
        assert_eq!(CronSchedule::parse(&once.expr).unwrap(), once);
    }

    #[test]
    fn macros_expand() {
        assert_eq!(expr("@yearly"), "0 0 1 1 *");
        assert_eq!(expr("@annually"), "0 0 1 1 *");
        assert_eq!(expr("@monthly"), "0 0 1 * *");
        assert_eq!(expr("@weekly"), "0 0 * * 0");
        assert_eq!(expr("@DAILY"), "0 0 * * *");
        assert_eq!(expr("@midnight"), "0 0 * * *");
        assert_eq!(expr("@hourly"), "0 * * * *");
    }

    #[test]
    fn unknown_macro_is_named() {
        let err = CronSchedule::parse("@fortnightly").unwrap_err();
        assert_eq!(err.token, "@fortnightly");
        assert!(err.message.contains("@hourly"), "{}", err.message);
    }

    #[test]
    fn field_count_is_checked() {
        let err = CronSchedule::parse("0 8 * *").unwrap_err();
        assert!(err.message.contains("not 4"), "{}", err.message);
        let err = CronSchedule::parse("0 0 8 * * * 2026").unwrap_err();
        assert!(err.message.contains("not 7"), "{}", err.message);
    }

    #[test]
    fn bad_field_is_named() {
        let err = CronSchedule::parse("0 25 * * *").unwrap_err();
        assert_eq!(err.token, "25");
        assert_eq!(
            err.message,
            "invalid schedule \"0 25 * * *\": hour \"25\" is out of range 0-23"
        );
        assert_eq!(CronSchedule::parse("0 8 * foo *").unwrap_err().token, "foo");
        let err = CronSchedule::parse("0 8 * * 1 2026").unwrap_err();
        assert_eq!(err.token, "2026");
        assert!(err.message.contains("no year field"), "{}", err.message);
    }

    #[test]
    fn never_matching_dates_are_refused() {
        let err = CronSchedule::parse("0 0 31 2 *").unwrap_err();
        assert_eq!(err.token, "31 2 *");
        assert!(err.message.contains("never matches"), "{}", err.message);
        assert!(CronSchedule::parse("0 0 30 2 *").is_err());
        // Rare but real: February 29th.
        assert!(CronSchedule::parse("0 0 29 2 *").is_ok());
    }

    #[test]
    fn wildcard_hour_is_the_hour_field_written_with_a_star() {
        let wild = |t: &str| CronSchedule::parse(t).unwrap().has_wildcard_hour();
        assert!(wild("*/30 * * * *"));
        assert!(wild("0 */2 * * *"));
        assert!(wild("@hourly"));
        assert!(wild("0 0 * * * *"));
        assert!(!wild("0,30 1 * * *"));
        assert!(!wild("*/15 2 * * *"));
        assert!(!wild("0 1-3 * * *"));
        assert!(!wild("0 0 2 * * *"));
    }

    #[test]
    fn dom_or_dow_like_vixie() {
        // The 13th or any Friday.
        let c = CronSchedule::parse("0 0 13 * FRI").unwrap();
        let next = c.next_wall_match(wall("2026-02-01T00:00:00")).unwrap();
        assert_eq!(next, wall("2026-02-06T00:00:00")); // a Friday
        let next = c.next_wall_match(wall("2026-02-10T00:00:00")).unwrap();
        assert_eq!(next, wall("2026-02-13T00:00:00")); // the 13th, also a Friday
        let c = CronSchedule::parse("0 0 14 * FRI").unwrap();
        let next = c.next_wall_match(wall("2026-02-10T00:00:00")).unwrap();
        assert_eq!(next, wall("2026-02-13T00:00:00")); // Friday before the 14th
    }

    #[test]
    fn next_wall_match_is_strictly_after() {
        let c = CronSchedule::parse("0 9 * * *").unwrap();
        assert_eq!(
            c.next_wall_match(wall("2026-01-01T09:00:00")),
            Some(wall("2026-01-02T09:00:00"))
        );
        assert_eq!(
            c.next_wall_match(wall("2026-01-01T08:59:59")),
            Some(wall("2026-01-01T09:00:00"))
        );
    }
}
