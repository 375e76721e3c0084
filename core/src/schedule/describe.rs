//! Words for people: a short phrase for a schedule, for `list` and `show`
//! (`weekdays at 09:00`, `every 5m`, `once at 2026-12-01T13:00:00Z`), and
//! the `Display` of [`DstNote`] for `next`. Pure.
//!
//! Covers the shapes phrases and macros produce; any other cron expression
//! is shown as `cron <expr>`. Wall times are in the job's zone, which the
//! caller shows next to the phrase.

use super::duration::format_duration;
use super::types::{DstNote, Schedule};
use chrono::SecondsFormat;
use std::fmt;

const DAY_NAMES: [&str; 8] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// A short human phrase for `schedule`.
pub(crate) fn describe(schedule: &Schedule) -> String {
    match schedule {
        Schedule::Reboot => "at each gateway start".to_string(),
        Schedule::External => "when Hermes says".to_string(),
        Schedule::Once { at, .. } => format!(
            "once at {}",
            at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
        ),
        Schedule::Every { period } => format!("every {}", format_duration(*period)),
        Schedule::Cron(cron) => describe_cron(&cron.expr),
    }
}

fn describe_cron(expr: &str) -> String {
    let fallback = || format!("cron {expr}");
    let fields: Vec<&str> = expr.split(' ').collect();
    let fields = match fields.as_slice() {
        ["0", rest @ ..] if rest.len() == 5 => rest,
        five if five.len() == 5 => five,
        _ => return fallback(),
    };
    let [minute, hour, dom, month, dow] = fields else {
        return fallback();
    };
    let number = |f: &str| f.parse::<u32>().ok();
    match (number(minute), number(hour), *dom, *month, *dow) {
        (Some(m), Some(h), "*", "*", dow) => match days(dow) {
            Some(days) => format!("{days} at {h:02}:{m:02}"),
            None => fallback(),
        },
        (Some(0), Some(0), "1", "*", "*") => "monthly on the 1st at 00:00".to_string(),
        (Some(0), Some(0), "1", "1", "*") => "yearly on 1 January at 00:00".to_string(),
        (Some(m), None, "*", "*", "*") if *hour == "*" => format!("hourly at :{m:02}"),
        _ if fields == ["*", "*", "*", "*", "*"] => "every minute".to_string(),
        _ => fallback(),
    }
}

impl fmt::Display for DstNote {
    /// `exact`, `moved by a DST gap from 02:30`, `repeated hour, pass 1 of 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DstNote::Exact => f.write_str("exact"),
            DstNote::MovedByGap { wanted } => {
                write!(f, "moved by a DST gap from {}", wanted.format("%H:%M:%S"))
            }
            DstNote::RepeatedHour { pass } => write!(f, "repeated hour, pass {pass} of 2"),
        }
    }
}

/// `*` -> daily, `1-5` -> weekdays, `0,6` -> weekends, `1,3` -> mon,wed.
fn days(dow: &str) -> Option<String> {
    match dow {
        "*" => return Some("daily".to_string()),
        "1-5" | "MON-FRI" => return Some("weekdays".to_string()),
        "0,6" | "6,0" | "SAT,SUN" | "SUN,SAT" => return Some("weekends".to_string()),
        _ => {}
    }
    let names: Option<Vec<&str>> = dow
        .split(',')
        .map(|day| {
            let index = match day.parse::<usize>() {
                Ok(n) => n,
                Err(_) => DAY_NAMES.iter().position(|n| n.eq_ignore_ascii_case(day))?,
            };
            DAY_NAMES.get(index).copied()
        })
        .collect();
    names.map(|names| names.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Tz;

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
    fn dst_notes_read_well() {
        let wanted = "2026-03-29T02:30:00".parse().unwrap();
        assert_eq!(DstNote::Exact.to_string(), "exact");
        assert_eq!(
            DstNote::MovedByGap { wanted }.to_string(),
            "moved by a DST gap from 02:30:00"
        );
        assert_eq!(
            DstNote::RepeatedHour { pass: 2 }.to_string(),
            "repeated hour, pass 2 of 2"
        );
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
