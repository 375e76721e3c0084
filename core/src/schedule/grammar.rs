//! [`Schedule`], what a schedule string means, and the methods callers use:
//! the grammar (which parser a string goes to) and the stored (canonical)
//! form are here; each other method hands off to the file that owns the
//! job: fires and DST (`fires.rs`), anchored periods (`interval.rs`),
//! phrases for people (`describe.rs`). Pure. The top of the module: no
//! other file here uses this one.
//!
//! Invariant: a `Schedule` holds no `now` and no zone; the same value gives the
//! same fires for the same `(after, zone, anchor)`.
//!
//! Routing, on the first word and the shape of the text, in order (cron,
//! intervals, one-shots, phrases: the "Schedules" table of docs/schedules.md):
//! - `@reboot` -> `Reboot`; other `@...` -> a cron macro;
//! - `<ISO date>...` (`YYYY-MM-DD` first) -> a one-shot (naive means `zone`);
//! - 3 or more words starting with a digit, `*` or `?` -> a cron expression
//!   (so a 4- or 7-field typo gets the cron field-count message);
//! - `every <number>...` -> an interval; `every <word>...` -> a phrase;
//! - `in <duration>` -> a one-shot relative to `now`;
//! - `at <ISO date>...` -> a one-shot (the canonical form reads back this way);
//! - a single word starting with a digit that is not a time of day (`30m`)
//!   -> an interval;
//! - anything else -> a phrase (`daily at 8am`), which compiles to cron.
//!
//! Canonical forms, each read back by [`Schedule::from_canonical`] to an
//! equal value without `now` or the zone: the normalized cron expression,
//! `every <d>` (d as `format_duration` writes it), `at <RFC 3339 UTC>`,
//! `@reboot`, `@external` (which only the provider sync makes).
//! [`Schedule::parse`] accepts every canonical form too, except `@external`.

use super::Tz;
use super::cron_expr::CronSchedule;
use super::duration::format_duration;
use super::error::{Rejection, ScheduleError};
use super::fires::{self, Fire};
use super::instant::Timestamp;
use super::{describe, interval, oneshot, phrase};
use chrono::{NaiveDateTime, SecondsFormat};
use std::time::Duration;

/// A parsed schedule in a form that is stored and re-parsed without `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A cron expression (5 or 6 fields, macros and phrases compile to this).
    Cron(CronSchedule),
    /// A fixed period, anchored at the job's anchor instant.
    Every {
        /// The period (never zero).
        period: Duration,
    },
    /// A one-shot at an absolute instant.
    Once {
        /// When it fires.
        at: Timestamp,
        /// The wall time asked for when it fell in a DST gap (`at` is then
        /// the first instant after the gap), so the fire can say so; None
        /// otherwise.
        wanted: Option<NaiveDateTime>,
    },
    /// Once each time the gateway starts.
    Reboot,
    /// Whenever another scheduler says: the job's `next_run_at` is set from
    /// outside (a Hermes job's, by the provider sync) and the schedule itself
    /// names no instant. Stored as `@external`; users cannot type it.
    External,
}

/// The stored form of [`Schedule::External`]; not a form [`Schedule::parse`] accepts.
const EXTERNAL: &str = "@external";

const EXAMPLES: &str = "e.g. 0 8 * * *, every 5m, in 30s, 2026-12-01T08:00 or daily at 8am";

impl Schedule {
    /// Parse user text (see the module docs for the routing). `now`
    /// resolves relative one-shots (`in 30s`); `zone` resolves naive
    /// ISO-8601 instants.
    pub fn parse(text: &str, now: Timestamp, zone: Tz) -> Result<Schedule, ScheduleError> {
        route(text, now, zone).map_err(|r| ScheduleError::schedule(text, r))
    }

    /// The stored form: re-parseable by [`Schedule::from_canonical`] without `now`.
    pub fn canonical(&self) -> String {
        match self {
            Schedule::Cron(cron) => cron.expr.clone(),
            Schedule::Every { period } => format!("every {}", format_duration(*period)),
            Schedule::Once { at, wanted } => oneshot::canonical(*at, *wanted),
            Schedule::Reboot => "@reboot".to_string(),
            Schedule::External => EXTERNAL.to_string(),
        }
    }

    /// Parse the stored form. Only canonical forms (and cron macros) are accepted.
    pub fn from_canonical(text: &str) -> Result<Schedule, ScheduleError> {
        let trimmed = text.trim();
        let parsed = if trimmed == "@reboot" {
            Ok(Schedule::Reboot)
        } else if trimmed == EXTERNAL {
            Ok(Schedule::External)
        } else if let Some(period) = trimmed.strip_prefix("every ") {
            interval::parse_period(period).map(|period| Schedule::Every { period })
        } else if let Some(at) = trimmed.strip_prefix("at ") {
            oneshot::parse_canonical(at).map(once)
        } else {
            CronSchedule::compile(trimmed).map(Schedule::Cron)
        };
        parsed.map_err(|r| ScheduleError::stored(text, r))
    }

    /// The first fire strictly after `after`. `anchor` is the origin of
    /// `Every` periods (the job's creation or re-anchor instant); other kinds
    /// ignore it. `Reboot` never fires from the clock (None). A cron
    /// expression's wall times are read in `zone` under the DST policy in
    /// `fires.rs`.
    pub fn next_after(&self, after: Timestamp, zone: Tz, anchor: Timestamp) -> Option<Fire> {
        match self {
            Schedule::Cron(cron) => fires::next_cron_fire(cron, after, zone),
            Schedule::Every { period } => {
                interval::next_fire(*period, anchor, after).map(|at| fires::fire_at(at, zone))
            }
            Schedule::Once { at, wanted } => {
                (*at > after).then(|| fires::once_fire(*at, *wanted, zone))
            }
            Schedule::Reboot | Schedule::External => None,
        }
    }

    /// Whether the schedule fires more than once.
    pub fn is_recurring(&self) -> bool {
        matches!(self, Schedule::Cron(_) | Schedule::Every { .. })
    }

    /// The period around the fire at `slot` (the gap to the following fire),
    /// used for the misfire grace. None for one-shots and `@reboot`.
    ///
    /// For cron it is the real time to the next fire: a daily job is 24h,
    /// but 23h from the fire before a spring-forward and 25h from the fire
    /// before a fall-back. For `Every` it is the period.
    pub fn period_at(&self, slot: Timestamp, zone: Tz, anchor: Timestamp) -> Option<Duration> {
        match self {
            Schedule::Every { period } => Some(*period),
            Schedule::Cron(_) => fires::gap_to_next(slot, self.next_after(slot, zone, anchor)),
            Schedule::Once { .. } | Schedule::Reboot | Schedule::External => None,
        }
    }

    /// A short human phrase for `list` and `show` (`weekdays at 09:00`,
    /// `every 5m`, `once at 2026-12-01T13:00:00Z`).
    pub fn describe(&self) -> String {
        match self {
            Schedule::Cron(cron) => describe::cron(&cron.expr),
            Schedule::Every { period } => format!("every {}", format_duration(*period)),
            Schedule::Once { at, .. } => format!(
                "once at {}",
                at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
            ),
            Schedule::Reboot => "at each gateway start".to_string(),
            Schedule::External => "when Hermes says".to_string(),
        }
    }
}

/// [`Schedule::parse`] without the surrounding message.
fn route(text: &str, now: Timestamp, zone: Tz) -> Result<Schedule, Rejection> {
    let text = text.trim();
    let Some(first) = text.split_whitespace().next() else {
        return Err(Rejection::new(text, format!("empty schedule; {EXAMPLES}")));
    };
    let rest = text[first.len()..].trim_start();
    let words = text.split_whitespace().count();
    let starts_with_digit = first.starts_with(|c: char| c.is_ascii_digit());

    if first.starts_with('@') {
        if !first.eq_ignore_ascii_case("@reboot") {
            return cron(text);
        }
        return match rest.split_whitespace().next() {
            None => Ok(Schedule::Reboot),
            Some(extra) => Err(Rejection::new(
                extra,
                format!("unexpected {extra:?} after @reboot"),
            )),
        };
    }
    if oneshot::looks_like_iso(text) {
        return oneshot::parse_iso(text, zone).map(once);
    }
    if words >= 3 && (starts_with_digit || first.starts_with(['*', '?'])) {
        return cron(text);
    }
    let rest_is_numeric = rest.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c));
    match first.to_ascii_lowercase().as_str() {
        "every" if rest_is_numeric => {
            return interval::parse_period(rest).map(|period| Schedule::Every { period });
        }
        "in" if rest.is_empty() => {
            return Err(Rejection::new(
                first,
                "expected a delay after \"in\", e.g. in 30s or in 2h",
            ));
        }
        "in" => {
            return oneshot::parse_in(rest, now).map(|at| Schedule::Once { at, wanted: None });
        }
        "at" if oneshot::looks_like_iso(rest) => {
            // The stored form (`at <RFC 3339>[ wanted ...]`), else any ISO time.
            return oneshot::parse_canonical(rest)
                .or_else(|_| oneshot::parse_iso(rest, zone))
                .map(once);
        }
        _ => {}
    }
    if starts_with_digit && !phrase::is_time_of_day(text) {
        return interval::parse_period(text).map(|period| Schedule::Every { period });
    }
    let expr = phrase::compile(text)?;
    cron(&expr)
}

fn once((at, wanted): (Timestamp, Option<NaiveDateTime>)) -> Schedule {
    Schedule::Once { at, wanted }
}

fn cron(text: &str) -> Result<Schedule, Rejection> {
    CronSchedule::compile(text).map(Schedule::Cron)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-05-01T10:00:00Z".parse().unwrap()
    }

    fn parse_ok(text: &str) -> Schedule {
        Schedule::parse(text, now(), Tz::America__Toronto).unwrap_or_else(|e| panic!("{e}"))
    }

    fn cron_of(text: &str) -> String {
        match parse_ok(text) {
            Schedule::Cron(cron) => cron.expr,
            other => panic!("{text:?} parsed as {other:?}"),
        }
    }

    fn refused(text: &str) -> ScheduleError {
        Schedule::parse(text, now(), Tz::America__Toronto).expect_err(text)
    }

    #[test]
    fn cron_forms_and_macros() {
        assert_eq!(cron_of("0 8 * * *"), "0 8 * * *");
        assert_eq!(cron_of("*/5 * * * *"), "*/5 * * * *");
        assert_eq!(cron_of("30 0 8 * * mon-fri"), "30 0 8 * * MON-FRI");
        assert_eq!(cron_of("0 9 L * *"), "0 9 L * *");
        assert_eq!(cron_of("0 9 15W * *"), "0 9 15W * *");
        assert_eq!(cron_of("0 9 * * 1#2"), "0 9 * * 1#2");
        assert_eq!(cron_of("0 9 ? * *"), "0 9 ? * *");
        assert_eq!(cron_of("@weekly"), "0 0 * * 0");
        assert_eq!(cron_of("@midnight"), "0 0 * * *");
        assert_eq!(parse_ok("@reboot"), Schedule::Reboot);
        assert_eq!(parse_ok("@REBOOT"), Schedule::Reboot);
    }

    #[test]
    fn intervals() {
        let every = |s: u64| Schedule::Every {
            period: Duration::from_secs(s),
        };
        assert_eq!(parse_ok("every 30s"), every(30));
        assert_eq!(parse_ok("every 5m"), every(300));
        assert_eq!(parse_ok("every 2h"), every(7_200));
        assert_eq!(parse_ok("every 1d"), every(86_400));
        assert_eq!(parse_ok("Every 1h30m"), every(5_400));
        assert_eq!(parse_ok("every 5 minutes"), every(300));
        assert_eq!(parse_ok("30m"), every(1_800));
    }

    #[test]
    fn one_shots() {
        let at = |t: &str| Schedule::Once {
            at: t.parse().unwrap(),
            wanted: None,
        };
        assert_eq!(parse_ok("in 30s"), at("2026-05-01T10:00:30Z"));
        assert_eq!(parse_ok("in 2h"), at("2026-05-01T12:00:00Z"));
        // Naive ISO is in the zone (Toronto, -05:00 in December).
        assert_eq!(parse_ok("2026-12-01T08:00"), at("2026-12-01T13:00:00Z"));
        assert_eq!(parse_ok("2026-12-01 08:00"), at("2026-12-01T13:00:00Z"));
        assert_eq!(parse_ok("2026-12-01T08:00:00Z"), at("2026-12-01T08:00:00Z"));
        assert_eq!(
            parse_ok("at 2026-12-01T13:00:00Z"),
            at("2026-12-01T13:00:00Z")
        );
    }

    #[test]
    fn phrases() {
        assert_eq!(cron_of("daily at 8am"), "0 8 * * *");
        assert_eq!(cron_of("every day at 08:00"), "0 8 * * *");
        assert_eq!(cron_of("weekdays at 9am"), "0 9 * * 1-5");
        assert_eq!(cron_of("weekends at 10am"), "0 10 * * 0,6");
        assert_eq!(cron_of("every monday 9am"), "0 9 * * 1");
        assert_eq!(cron_of("every monday at 9am"), "0 9 * * 1");
        assert_eq!(cron_of("monday at 9am"), "0 9 * * 1");
        assert_eq!(cron_of("mon,wed at 9:30"), "30 9 * * 1,3");
        assert_eq!(cron_of("friday at 17:00"), "0 17 * * 5");
        assert_eq!(cron_of("noon"), "0 12 * * *");
        assert_eq!(cron_of("midnight"), "0 0 * * *");
        assert_eq!(cron_of("hourly"), "0 * * * *");
        assert_eq!(cron_of("daily"), "0 0 * * *");
        assert_eq!(cron_of("daily at 12pm"), "0 12 * * *");
        assert_eq!(cron_of("daily at 12am"), "0 0 * * *");
    }

    #[test]
    fn rejections_name_the_token() {
        let cases = [
            ("every 5x", "x"),
            ("5x", "x"),
            ("every 0s", "0s"),
            ("every 400d", "400d"),
            ("every 30", "30"),
            ("every -5m", "-"),
            ("in 0s", "0s"),
            ("in 5y", "y"),
            ("in", "in"),
            ("0 25 * * *", "25"),
            ("61 * * * *", "61"),
            ("0 8 * * funday", "funday"),
            ("0 8 * *", "0 8 * *"),
            ("@fortnightly", "@fortnightly"),
            ("@reboot now", "now"),
            ("2026-13-01T08:00", "2026-13-01"),
            ("2026-12-01T25:00", "25:00"),
            ("daily at 25:00", "25:00"),
            ("daily at 13pm", "13pm"),
            ("every funday at 9am", "funday"),
            ("mon,fnu at 9am", "fnu"),
            ("tomorrow", "tomorrow"),
            ("9am", "9am"),
            ("", ""),
        ];
        for (text, token) in cases {
            let err = refused(text);
            assert_eq!(err.token, token, "{text:?}: {}", err.message);
            assert!(
                err.message
                    .starts_with(&format!("invalid schedule {text:?}: ")),
                "{}",
                err.message
            );
            assert!(
                err.message.contains(&format!("{token:?}")),
                "{text:?}: {} does not quote {token:?}",
                err.message
            );
        }
        assert_eq!(
            refused("every 5x").message,
            "invalid schedule \"every 5x\": unknown unit \"x\" in \"5x\"; use s, m, h or d"
        );
    }

    #[test]
    fn canonical_round_trips_every_kind() {
        let texts = [
            "0 8 * * *",
            "30 0 8 * * mon-fri",
            "@daily",
            "0 9 * * 1#2",
            "every 30s",
            "every 1h30m",
            "every 1d",
            "30m",
            "in 30s",
            "2026-12-01T08:00",
            "2026-03-29T02:30",
            "@reboot",
            "weekdays at 9am",
            "mon,wed at 9:30",
        ];
        for text in texts {
            let schedule = parse_ok(text);
            let stored = schedule.canonical();
            assert_eq!(
                Schedule::from_canonical(&stored).unwrap(),
                schedule,
                "{text:?} -> {stored:?}"
            );
            assert_eq!(parse_ok(&stored), schedule, "{stored:?} re-parsed by parse");
        }
        assert_eq!(parse_ok("every 90s").canonical(), "every 1m30s");
        assert_eq!(
            parse_ok("2026-12-01T08:00").canonical(),
            "at 2026-12-01T13:00:00Z"
        );
        assert_eq!(parse_ok("@reboot").canonical(), "@reboot");
        assert_eq!(parse_ok("weekdays at 9am").canonical(), "0 9 * * 1-5");
    }

    #[test]
    fn a_one_shot_moved_by_a_gap_keeps_the_wall_time_in_its_stored_form() {
        let moved = Schedule::parse("2026-03-29T02:30", now(), Tz::Europe__Berlin).unwrap();
        let stored = moved.canonical();
        assert_eq!(stored, "at 2026-03-29T01:00:00Z wanted 2026-03-29T02:30:00");
        assert_eq!(Schedule::from_canonical(&stored).unwrap(), moved);
        // `parse` reads the stored form back too, whatever the zone.
        assert_eq!(Schedule::parse(&stored, now(), Tz::UTC).unwrap(), moved);
        // An explicit offset is an instant: nothing was moved.
        let exact = Schedule::parse("2026-03-29T02:30+01:00", now(), Tz::Europe__Berlin).unwrap();
        assert_eq!(exact.canonical(), "at 2026-03-29T01:30:00Z");
    }

    #[test]
    fn from_canonical_refuses_non_canonical_text() {
        let err = Schedule::from_canonical("in 30s").unwrap_err();
        assert!(
            err.message.starts_with("invalid stored schedule"),
            "{}",
            err.message
        );
        assert!(Schedule::from_canonical("daily at 8am").is_err());
        assert!(Schedule::from_canonical("at tomorrow").is_err());
        assert!(Schedule::from_canonical("every 0s").is_err());
    }

    fn phrase(text: &str) -> String {
        let now = "2026-05-01T10:00:00Z".parse().unwrap();
        Schedule::parse(text, now, Tz::UTC).unwrap().describe()
    }

    #[test]
    fn common_shapes() {
        assert_eq!(phrase("daily at 8am"), "daily at 08:00");
        assert_eq!(phrase("weekdays at 9am"), "weekdays at 09:00");
        assert_eq!(phrase("0 9 * * MON-FRI"), "weekdays at 09:00");
        assert_eq!(phrase("weekends at 10am"), "weekends at 10:00");
        assert_eq!(phrase("mon,wed at 9:30"), "mon,wed at 09:30");
        assert_eq!(phrase("0 17 * * fri"), "fri at 17:00");
        assert_eq!(phrase("hourly"), "hourly at :00");
        assert_eq!(phrase("@monthly"), "monthly on the 1st at 00:00");
        assert_eq!(phrase("@yearly"), "yearly on 1 January at 00:00");
        assert_eq!(phrase("every minute"), "every minute");
        assert_eq!(phrase("0 0 8 * * *"), "daily at 08:00");
    }

    #[test]
    fn other_kinds() {
        assert_eq!(phrase("every 90s"), "every 1m30s");
        assert_eq!(phrase("in 30s"), "once at 2026-05-01T10:00:30Z");
        assert_eq!(phrase("@reboot"), "at each gateway start");
        assert_eq!(phrase("*/5 9-17 * * *"), "cron */5 9-17 * * *");
        assert_eq!(phrase("0 9 * * 1#2"), "cron 0 9 * * 1#2");
    }
}
