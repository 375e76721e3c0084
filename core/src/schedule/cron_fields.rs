//! Checks one cron field at a time, so that a refusal names the field and the
//! exact item that failed (`hour "25" is out of range 0-23`) instead of
//! croner's field-less "Number out of bounds". Pure, text only.
//!
//! Accepted per field (Vixie syntax plus croner's extensions):
//! - every field: `*`, `*/n`, `a`, `a-b`, `a-b/n`, and comma lists of those;
//! - month: names `JAN`..`DEC`; day-of-week: names `SUN`..`SAT`, `0`-`7`
//!   (both 0 and 7 are Sunday), `a#k` / `a-b#k` (k in 1-5 or `L`), `aL`, and
//!   a leading `+` (croner: day-of-month AND day-of-week);
//! - day-of-month: `L`, `LW`, `nW`; day fields also take `?` (same as `*`).
//!
//! Names are three letters, case-insensitive, and only in their own field
//! (croner would read `MON` in the month field as January). A single value
//! with a step (`0/5`) is refused as in Vixie cron: write `*/5` or `0-59/5`.

use super::error::Rejection;

/// Which special forms a field takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Plain,
    DayOfMonth,
    Month,
    DayOfWeek,
}

/// One cron field: its name in messages, its range, its special forms.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldSpec {
    pub(crate) name: &'static str,
    min: u32,
    max: u32,
    kind: Kind,
}

pub(crate) const SECOND: FieldSpec = FieldSpec::new("second", 0, 59, Kind::Plain);
pub(crate) const MINUTE: FieldSpec = FieldSpec::new("minute", 0, 59, Kind::Plain);
pub(crate) const HOUR: FieldSpec = FieldSpec::new("hour", 0, 23, Kind::Plain);
pub(crate) const DAY_OF_MONTH: FieldSpec = FieldSpec::new("day-of-month", 1, 31, Kind::DayOfMonth);
pub(crate) const MONTH: FieldSpec = FieldSpec::new("month", 1, 12, Kind::Month);
pub(crate) const DAY_OF_WEEK: FieldSpec = FieldSpec::new("day-of-week", 0, 7, Kind::DayOfWeek);

/// The fields of a 5-field and of a 6-field (seconds first) expression.
pub(crate) const FIVE: [FieldSpec; 5] = [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];
pub(crate) const SIX: [FieldSpec; 6] = [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];

const MONTH_NAMES: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl FieldSpec {
    const fn new(name: &'static str, min: u32, max: u32, kind: Kind) -> Self {
        FieldSpec {
            name,
            min,
            max,
            kind,
        }
    }

    fn range_hint(&self) -> String {
        match self.kind {
            Kind::Month => "use 1-12 or JAN..DEC".to_string(),
            Kind::DayOfWeek => "use 0-7 (0 and 7 are Sunday) or SUN..SAT".to_string(),
            _ => format!("use {}-{}", self.min, self.max),
        }
    }
}

/// Check one field as typed. Ok means croner will accept it with the meaning
/// documented above.
pub(crate) fn check_field(spec: &FieldSpec, field: &str) -> Result<(), Rejection> {
    let items = match (spec.kind, field.strip_prefix('+')) {
        (Kind::DayOfWeek, Some(rest)) => rest,
        _ => field,
    };
    for item in items.split(',') {
        let at = Place { spec, field, item };
        if item.is_empty() {
            return Err(Rejection::new(
                field,
                format!("{} {field:?} has an empty item", spec.name),
            ));
        }
        if let Some(bad) = item
            .chars()
            .find(|c| !c.is_ascii_alphanumeric() && !"*?/-#".contains(*c))
        {
            return Err(at.reject(item, &format!("has an unexpected {bad:?}")));
        }
        check_item(&at)?;
    }
    Ok(())
}

/// Where an item sits, for messages.
struct Place<'a> {
    spec: &'a FieldSpec,
    field: &'a str,
    item: &'a str,
}

impl Place<'_> {
    /// `hour "25" is out of range 0-23`, or `... "25" in "1,25" ...` inside a list.
    fn reject(&self, piece: &str, what: &str) -> Rejection {
        let context = if piece == self.field {
            String::new()
        } else {
            format!(" in {:?}", self.field)
        };
        Rejection::new(
            piece,
            format!("{} {piece:?}{context} {what}", self.spec.name),
        )
    }
}

fn check_item(at: &Place) -> Result<(), Rejection> {
    let spec = at.spec;
    let item = at.item;
    let day_field = matches!(spec.kind, Kind::DayOfMonth | Kind::DayOfWeek);
    if item == "?" && day_field {
        return Ok(());
    }
    if spec.kind == Kind::DayOfMonth {
        if item.eq_ignore_ascii_case("L") || item.eq_ignore_ascii_case("LW") {
            return Ok(());
        }
        if let Some(day) = item.strip_suffix(['W', 'w']) {
            return value(at, day, false).map(drop);
        }
    }
    if spec.kind == Kind::DayOfWeek {
        if let Some((days, nth)) = item.split_once('#') {
            let nth_ok = nth.eq_ignore_ascii_case("L")
                || nth.parse::<u32>().is_ok_and(|n| (1..=5).contains(&n));
            if !nth_ok {
                return Err(at.reject(
                    item,
                    "needs 1-5 or L after '#' (the nth weekday of the month)",
                ));
            }
            return range_or_value(at, days, None);
        }
        if let Some(day) = item.strip_suffix(['L', 'l']) {
            return value(at, day, false).map(drop);
        }
    }
    let (base, step) = match item.split_once('/') {
        Some((base, step)) => (base, Some(step)),
        None => (item, None),
    };
    if let Some(step) = step {
        let ok = !step.is_empty()
            && step.bytes().all(|b| b.is_ascii_digit())
            && step.parse::<u32>().is_ok_and(|n| n >= 1);
        if !ok {
            return Err(at.reject(item, "needs a step of 1 or more after '/'"));
        }
    }
    if base == "*" {
        return Ok(());
    }
    range_or_value(at, base, step)
}

/// `a`, `a-b` (the step, if any, was checked by the caller).
fn range_or_value(at: &Place, base: &str, step: Option<&str>) -> Result<(), Rejection> {
    match base.split_once('-') {
        Some((from, to)) => {
            let low = value(at, from, false)?;
            let high = value(at, to, true)?;
            if low > high {
                return Err(at.reject(base, &format!("runs backwards; write {to}-{from}")));
            }
            Ok(())
        }
        None if step.is_some() => Err(at.reject(at.item, &single_value_step(at, base, step))),
        None => value(at, base, false).map(drop),
    }
}

/// Why `a/n` is refused, and what to write instead. `a-max/n` is what it
/// means elsewhere (Quartz, croner); `*/n` only when `a` is the first value.
/// In the hour field the two differ under DST (docs/schedules.md):
/// `0-23/2` names its hours, and one inside a DST gap runs right after it,
/// while `*/2` is a wildcard, and an hour inside a gap is skipped.
fn single_value_step(at: &Place, base: &str, step: Option<&str>) -> String {
    let step = step.unwrap_or_default();
    let spec = at.spec;
    let range = format!("{base}-{}/{step}", spec.max);
    let from_first = base.parse::<u32>().is_ok_and(|v| v == spec.min);
    match (spec.name, from_first) {
        ("hour", true) => format!(
            "steps from a single value; write {range} (named hours: one inside a DST gap runs at the end of the gap) or */{step} (a wildcard: an hour inside a DST gap is skipped)"
        ),
        (_, true) => format!("steps from a single value; write {range} or */{step}"),
        (_, false) => format!("steps from a single value; write {range}"),
    }
}

/// One number or name. `range_end` lets `SUN` close a range as 7 (`FRI-SUN`).
fn value(at: &Place, text: &str, range_end: bool) -> Result<u32, Rejection> {
    let spec = at.spec;
    if text.is_empty() {
        return Err(at.reject(
            at.item,
            &format!("is missing a value; {}", spec.range_hint()),
        ));
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<u32>() {
            Ok(n) if (spec.min..=spec.max).contains(&n) => Ok(n),
            _ => Err(at.reject(text, &format!("is out of range {}-{}", spec.min, spec.max))),
        };
    }
    let names: &[&str] = match spec.kind {
        Kind::Month => &MONTH_NAMES,
        Kind::DayOfWeek => &DAY_NAMES,
        _ => &[],
    };
    if let Some(index) = names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        let index = index as u32;
        return Ok(match spec.kind {
            Kind::Month => index + 1,
            _ if range_end && index == 0 => 7,
            _ => index,
        });
    }
    let what = match spec.kind {
        Kind::Month => "is not a month",
        Kind::DayOfWeek => "is not a day of the week",
        _ => "is not a number",
    };
    Err(at.reject(text, &format!("{what}; {}", spec.range_hint())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(spec: FieldSpec, field: &str) {
        if let Err(e) = check_field(&spec, field) {
            panic!("{field:?} refused: {}", e.reason);
        }
    }

    fn refused(spec: FieldSpec, field: &str) -> Rejection {
        check_field(&spec, field).expect_err(field)
    }

    #[test]
    fn accepts_vixie_forms() {
        for f in [
            "*",
            "*/5",
            "0",
            "59",
            "1-5",
            "0-59/15",
            "1,2,3",
            "0,30",
            "1-3,10-20/5",
        ] {
            ok(MINUTE, f);
        }
        ok(HOUR, "0-23");
        ok(MONTH, "jan");
        ok(MONTH, "JAN-MAR,dec");
        ok(DAY_OF_WEEK, "mon-fri");
        ok(DAY_OF_WEEK, "FRI-SUN");
        ok(DAY_OF_WEEK, "0-7");
    }

    #[test]
    fn accepts_day_extensions() {
        for f in ["L", "l", "LW", "15W", "1,L", "?"] {
            ok(DAY_OF_MONTH, f);
        }
        for f in ["5L", "5#2", "MON#1", "1-5#2", "5#L", "+MON", "?"] {
            ok(DAY_OF_WEEK, f);
        }
    }

    #[test]
    fn out_of_range_names_the_value_and_field() {
        let r = refused(HOUR, "25");
        assert_eq!(r.token, "25");
        assert_eq!(r.reason, "hour \"25\" is out of range 0-23");
        let r = refused(MINUTE, "5,61");
        assert_eq!(r.token, "61");
        assert_eq!(r.reason, "minute \"61\" in \"5,61\" is out of range 0-59");
        assert_eq!(refused(DAY_OF_MONTH, "32").token, "32");
        assert_eq!(refused(DAY_OF_MONTH, "0").token, "0");
        assert_eq!(refused(MONTH, "13").token, "13");
        assert_eq!(refused(DAY_OF_WEEK, "8").token, "8");
        assert_eq!(refused(SECOND, "60").token, "60");
    }

    #[test]
    fn names_only_in_their_own_field() {
        let r = refused(MONTH, "MON");
        assert_eq!(r.token, "MON");
        assert!(r.reason.contains("is not a month"), "{}", r.reason);
        let r = refused(DAY_OF_WEEK, "funday");
        assert_eq!(r.token, "funday");
        assert!(r.reason.contains("SUN..SAT"), "{}", r.reason);
        assert_eq!(refused(HOUR, "JAN").token, "JAN");
        assert_eq!(refused(DAY_OF_WEEK, "MONDAY").token, "MONDAY");
    }

    #[test]
    fn bad_steps_ranges_and_specials() {
        assert_eq!(refused(MINUTE, "*/0").token, "*/0");
        assert_eq!(refused(MINUTE, "*/").token, "*/");
        let r = refused(MINUTE, "0/5");
        assert_eq!(r.token, "0/5");
        assert_eq!(
            r.reason,
            "minute \"0/5\" steps from a single value; write 0-59/5 or */5"
        );
        // Not from the first value: `*/5` would mean something else.
        let r = refused(MINUTE, "3/5");
        assert_eq!(
            r.reason,
            "minute \"3/5\" steps from a single value; write 3-59/5"
        );
        // In the hour field `0-23/2` and `*/2` differ under DST: say how.
        let r = refused(HOUR, "0/2");
        assert!(
            r.reason.contains("write 0-23/2 (named hours"),
            "{}",
            r.reason
        );
        assert!(
            r.reason
                .contains("*/2 (a wildcard: an hour inside a DST gap is skipped)"),
            "{}",
            r.reason
        );
        let r = refused(HOUR, "5-1");
        assert_eq!(r.token, "5-1");
        assert_eq!(r.reason, "hour \"5-1\" runs backwards; write 1-5");
        assert_eq!(refused(HOUR, "L").token, "L");
        assert_eq!(refused(MINUTE, "1,,2").token, "1,,2");
        assert_eq!(refused(DAY_OF_WEEK, "MON#6").token, "MON#6");
        assert_eq!(refused(DAY_OF_WEEK, "MON#0").token, "MON#0");
        assert_eq!(refused(DAY_OF_MONTH, "32W").token, "32");
        assert_eq!(refused(HOUR, "?").token, "?");
        let r = refused(MINUTE, "5%");
        assert_eq!(r.token, "5%");
        assert!(r.reason.contains("'%'"), "{}", r.reason);
        assert_eq!(refused(MINUTE, "-5").token, "-5");
    }
}
