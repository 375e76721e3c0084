//! The timeline's zoom: the last hour, 24 hours or 7 days, chosen by the
//! page's query (`?window=1h`, `24h`, `7d`; anything else is the default
//! 24 hours), with the grid lines and labels of each.

use crate::schedule::{Timestamp, Tz};
use chrono::{NaiveDateTime, TimeDelta, TimeZone, Timelike};

/// How much of the past the timeline shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Window {
    /// The last hour.
    Hour,
    /// The last 24 hours (the default).
    #[default]
    Day,
    /// The last 7 days.
    Week,
}

impl Window {
    /// Every window, shortest first (the page's zoom links).
    pub const ALL: [Window; 3] = [Window::Hour, Window::Day, Window::Week];

    /// How long it is.
    pub fn span(self) -> TimeDelta {
        match self {
            Window::Hour => TimeDelta::hours(1),
            Window::Day => TimeDelta::hours(24),
            Window::Week => TimeDelta::days(7),
        }
    }

    /// Its value in the query (`?window=...`) and on its link.
    pub fn key(self) -> &'static str {
        match self {
            Window::Hour => "1h",
            Window::Day => "24h",
            Window::Week => "7d",
        }
    }

    /// The timeline's heading.
    pub fn heading(self) -> &'static str {
        match self {
            Window::Hour => "Last hour",
            Window::Day => "Last 24 hours",
            Window::Week => "Last 7 days",
        }
    }

    /// The window a request target asks for (`/?window=7d`).
    pub fn of_target(target: &str) -> Window {
        let query = target.split_once('?').map_or("", |(_, q)| q);
        let query = query.split('#').next().unwrap_or_default();
        query
            .split('&')
            .filter_map(|pair| pair.strip_prefix("window="))
            .find_map(|value| Window::ALL.into_iter().find(|w| w.key() == value))
            .unwrap_or_default()
    }

    /// Minutes of the zone's clock between two grid lines, and between two
    /// labels.
    fn steps(self) -> (u32, u32) {
        match self {
            Window::Hour => (10, 10),
            Window::Day => (60, 180),
            Window::Week => (360, 1440),
        }
    }

    /// How a label reads.
    fn label_format(self) -> &'static str {
        match self {
            Window::Week => "%a %d",
            _ => "%H:%M",
        }
    }

    /// The grid lines in `(start, now)`: instants whose clock in `zone` is a
    /// multiple of the step (a wall time the zone skips has none; one it
    /// repeats has its first), each with its label when it is a label's.
    pub fn ticks(
        self,
        start: Timestamp,
        now: Timestamp,
        zone: Tz,
    ) -> Vec<(Timestamp, Option<String>)> {
        let (step, every) = self.steps();
        let local = start.with_timezone(&zone).naive_local();
        let minute = local.hour() * 60 + local.minute();
        let first = minute - minute % step;
        let mut wall: NaiveDateTime = local
            .date()
            .and_hms_opt(first / 60, first % 60, 0)
            .expect("a valid time of day");
        let last_wall = now.with_timezone(&zone).naive_local() + TimeDelta::hours(2);
        let mut out: Vec<(Timestamp, Option<String>)> = Vec::new();
        while wall <= last_wall {
            let at = zone.from_local_datetime(&wall).earliest();
            if let Some(t) = at.map(|t| t.with_timezone(&chrono::Utc))
                && t > start
                && t < now
                && out.last().is_none_or(|(last, _)| *last < t)
            {
                let minute = wall.hour() * 60 + wall.minute();
                let label = minute.is_multiple_of(every).then(|| {
                    t.with_timezone(&zone)
                        .format(self.label_format())
                        .to_string()
                });
                out.push((t, label));
            }
            wall += TimeDelta::minutes(i64::from(step));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn the_query_chooses_the_window() {
        assert_eq!(Window::of_target("/"), Window::Day);
        assert_eq!(Window::of_target("/?window=1h"), Window::Hour);
        assert_eq!(Window::of_target("/?x=1&window=7d#jobs"), Window::Week);
        assert_eq!(Window::of_target("/?window=5y"), Window::Day);
    }

    #[test]
    fn each_window_has_its_grid() {
        let zone = Tz::UTC;
        let now = Utc.with_ymd_and_hms(2026, 6, 10, 12, 5, 0).unwrap();
        let hour = Window::Hour.ticks(now - Window::Hour.span(), now, zone);
        assert_eq!(hour.len(), 6, "{hour:?}");
        assert_eq!(hour[0].1.as_deref(), Some("11:10"));
        let day = Window::Day.ticks(now - Window::Day.span(), now, zone);
        assert_eq!(day.len(), 24);
        assert_eq!(day.iter().filter(|(_, l)| l.is_some()).count(), 8);
        let week = Window::Week.ticks(now - Window::Week.span(), now, zone);
        let labels: Vec<_> = week.iter().filter_map(|(_, l)| l.clone()).collect();
        assert_eq!(labels.len(), 7, "{labels:?}");
        assert_eq!(labels[0], "Thu 04");
    }

    #[test]
    fn the_week_s_days_begin_at_local_midnight_across_a_clock_change() {
        let zone = crate::schedule::ZoneTable::compiled_in_only()
            .parse("Europe/Berlin")
            .unwrap();
        // The week holding the change to summer time (29 March 2026).
        let now = Utc.with_ymd_and_hms(2026, 4, 1, 10, 0, 0).unwrap();
        let week = Window::Week.ticks(now - Window::Week.span(), now, zone);
        for (t, label) in &week {
            if label.is_some() {
                let local = t.with_timezone(&zone);
                assert_eq!((local.hour(), local.minute()), (0, 0), "{label:?}");
            }
        }
        assert_eq!(week.iter().filter(|(_, l)| l.is_some()).count(), 7);
    }
}
