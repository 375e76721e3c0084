//! English phrases that compile to cron expressions. Pure, text only.
//!
//! Grammar (case-insensitive; `,` may have spaces around it):
//! - single words: `noon` (`0 12 * * *`), `midnight` and `daily`
//!   (`0 0 * * *`), `hourly` (`0 * * * *`); `every hour`, `every minute`;
//! - `[every] DAYS [at] [TIME]`, where DAYS is `day` (after `every`), `daily`,
//!   `weekday(s)`, `weekend(s)`, or a comma list of day names (`monday`,
//!   `mondays`, `mon`, `tues`, `thurs`, ...). Without a TIME it is midnight.
//! - TIME: `8am`, `8:30am`, `8 am`, `12pm` (noon), `12am` (midnight),
//!   `08:00`, `17:00`, `9:30`, `noon`, `midnight`.
//!
//! The result is a 5-field expression with numeric days, sorted
//! (`mon,wed at 9:30` -> `30 9 * * 1,3`). Every refusal names its token.

use super::error::Rejection;

/// Day names, Sunday = 0. Full names also take a plural `s`.
const DAYS: [(u8, &[&str]); 7] = [
    (0, &["sunday", "sun"]),
    (1, &["monday", "mon"]),
    (2, &["tuesday", "tue", "tues"]),
    (3, &["wednesday", "wed", "weds"]),
    (4, &["thursday", "thu", "thur", "thurs"]),
    (5, &["friday", "fri"]),
    (6, &["saturday", "sat"]),
];

const DAY_HINT: &str = "use monday..sunday, mon..sun, weekdays, weekends or daily";
const TIME_HINT: &str = "use e.g. 8am, 8:30am, 08:00 or 17:30";

/// Whether `token` reads as a time of day (`9am`, `17:00`), for routing.
pub(crate) fn is_time_of_day(token: &str) -> bool {
    parse_time(token).is_ok()
}

/// Compile a phrase to a 5-field cron expression.
pub(crate) fn compile(text: &str) -> Result<String, Rejection> {
    let tokens = tokenize(text);
    let lower: Vec<String> = tokens.iter().map(|t| t.to_ascii_lowercase()).collect();
    let word = |i: usize| lower.get(i).map(String::as_str);

    if tokens.len() == 1 {
        match lower[0].as_str() {
            "noon" => return Ok("0 12 * * *".to_string()),
            "midnight" | "daily" => return Ok("0 0 * * *".to_string()),
            "hourly" => return Ok("0 * * * *".to_string()),
            _ => {}
        }
    }
    let every = word(0) == Some("every");
    let mut i = usize::from(every);
    let Some(first) = tokens.get(i) else {
        return Err(Rejection::new(
            text.trim(),
            "expected a period or a day after \"every\", e.g. every 5m or every monday at 9am",
        ));
    };
    if every && tokens.len() == 2 {
        match lower[1].as_str() {
            "hour" => return Ok("0 * * * *".to_string()),
            "minute" => return Ok("* * * * *".to_string()),
            _ => {}
        }
    }
    let days = match (lower[i].as_str(), every) {
        ("day", true) | ("daily", false) => "*".to_string(),
        ("weekday" | "weekdays", _) => "1-5".to_string(),
        ("weekend" | "weekends", _) => "0,6".to_string(),
        (_, false) if !first.contains(',') && day_number(&lower[i]).is_none() => {
            return Err(unrecognized(first));
        }
        _ => day_list(first)?,
    };
    i += 1;
    let at = word(i) == Some("at");
    if at {
        i += 1;
    }
    let (hour, minute) = match tokens.get(i) {
        Some(time) => parse_time(time)?,
        None if at => {
            return Err(Rejection::new(
                tokens[i - 1],
                format!("expected a time after \"at\"; {TIME_HINT}"),
            ));
        }
        None => (0, 0),
    };
    if let Some(extra) = tokens.get(i + 1) {
        return Err(Rejection::new(
            *extra,
            format!("unexpected {extra:?} after the time; phrases look like \"weekdays at 9am\""),
        ));
    }
    Ok(format!("{minute} {hour} * * {days}"))
}

/// Words, with `a , b` joined into `a,b` and `8 am` into `8am`.
fn tokenize(text: &str) -> Vec<&str> {
    // Joining needs owned pieces; keep slices of `text` by merging spans.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut pos = 0;
    for word in text.split_whitespace() {
        let start = pos + text[pos..].find(word).unwrap_or(0);
        let end = start + word.len();
        pos = end;
        let joins_previous = word.starts_with(',')
            || word.eq_ignore_ascii_case("am")
            || word.eq_ignore_ascii_case("pm")
            || spans
                .last()
                .is_some_and(|&(s, e)| text[s..e].ends_with(','));
        match spans.last_mut() {
            Some(last) if joins_previous => last.1 = end,
            _ => spans.push((start, end)),
        }
    }
    spans.into_iter().map(|(s, e)| &text[s..e]).collect()
}

/// Words joined by `tokenize` keep their inner spaces; drop them.
fn squeeze(token: &str) -> String {
    token.split_whitespace().collect()
}

fn unrecognized(token: &str) -> Rejection {
    let token = squeeze(token);
    if token.eq_ignore_ascii_case("at") || is_time_of_day(&token) {
        return Rejection::new(
            token,
            "a time needs a day, e.g. \"daily at 9am\" or \"weekdays at 9am\"",
        );
    }
    Rejection::new(
        token.clone(),
        format!(
            "unrecognized {token:?}; expected a cron expression (0 8 * * *), an interval (every 5m), a one-shot (in 30s, 2026-12-01T08:00) or a phrase (daily at 8am)"
        ),
    )
}

fn day_number(word: &str) -> Option<u8> {
    let word = word.to_ascii_lowercase();
    DAYS.iter()
        .find(|(_, names)| {
            names.contains(&word.as_str()) || word.strip_suffix('s').is_some_and(|w| names[0] == w)
        })
        .map(|(n, _)| *n)
}

/// `mon,wed` -> `1,3`; sorted, without repeats.
fn day_list(token: &str) -> Result<String, Rejection> {
    let list = squeeze(token);
    let mut numbers = Vec::new();
    for name in list.split(',') {
        if name.is_empty() {
            return Err(Rejection::new(
                list.clone(),
                format!("day list {list:?} has an empty item; {DAY_HINT}"),
            ));
        }
        let n = day_number(name)
            .ok_or_else(|| Rejection::new(name, format!("unknown day {name:?}; {DAY_HINT}")))?;
        numbers.push(n);
    }
    numbers.sort_unstable();
    numbers.dedup();
    Ok(numbers
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(","))
}

/// A time of day as (hour 0-23, minute).
fn parse_time(token: &str) -> Result<(u32, u32), Rejection> {
    let typed = squeeze(token);
    let lower = typed.to_ascii_lowercase();
    match lower.as_str() {
        "noon" => return Ok((12, 0)),
        "midnight" => return Ok((0, 0)),
        _ => {}
    }
    let reject = |what: &str| Rejection::new(typed.clone(), format!("time {typed:?} {what}"));
    let (body, meridiem) = match (lower.strip_suffix("am"), lower.strip_suffix("pm")) {
        (Some(body), _) => (body, Some(0)),
        (_, Some(body)) => (body, Some(12)),
        _ => (lower.as_str(), None),
    };
    let (hour_text, minute_text) = match body.split_once(':') {
        Some((h, m)) => (h, Some(m)),
        None => (body, None),
    };
    let digits = |s: &str, max_len: usize| {
        !s.is_empty() && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit())
    };
    if !digits(hour_text, 2) || minute_text.is_some_and(|m| !digits(m, 2)) {
        return Err(reject(&format!("is not a time; {TIME_HINT}")));
    }
    let hour: u32 = hour_text.parse().unwrap_or(u32::MAX);
    let minute: u32 = match minute_text {
        Some(m) if m.len() != 2 => return Err(reject("needs two-digit minutes, e.g. 9:05")),
        Some(m) => m.parse().unwrap_or(u32::MAX),
        None => 0,
    };
    if minute > 59 {
        return Err(reject("has minutes out of range 00-59"));
    }
    match meridiem {
        Some(offset) if (1..=12).contains(&hour) => Ok((hour % 12 + offset, minute)),
        Some(_) => Err(reject("has an hour out of range 1-12 for am/pm")),
        None if minute_text.is_none() => Err(reject(&format!(
            "needs minutes or am/pm, e.g. {hour_text}:00 or {hour_text}am"
        ))),
        None if hour <= 23 => Ok((hour, minute)),
        None => Err(reject("has an hour out of range 0-23")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cron(text: &str) -> String {
        compile(text).unwrap_or_else(|e| panic!("{text:?}: {}", e.reason))
    }

    fn refused(text: &str) -> Rejection {
        compile(text).expect_err(text)
    }

    #[test]
    fn single_words() {
        assert_eq!(cron("noon"), "0 12 * * *");
        assert_eq!(cron("Midnight"), "0 0 * * *");
        assert_eq!(cron("daily"), "0 0 * * *");
        assert_eq!(cron("hourly"), "0 * * * *");
        assert_eq!(cron("every hour"), "0 * * * *");
        assert_eq!(cron("every minute"), "* * * * *");
    }

    #[test]
    fn day_specs() {
        assert_eq!(cron("daily at 8am"), "0 8 * * *");
        assert_eq!(cron("every day at 08:00"), "0 8 * * *");
        assert_eq!(cron("weekdays at 9am"), "0 9 * * 1-5");
        assert_eq!(cron("every weekday at 9am"), "0 9 * * 1-5");
        assert_eq!(cron("weekends at 10am"), "0 10 * * 0,6");
        assert_eq!(cron("every monday 9am"), "0 9 * * 1");
        assert_eq!(cron("every monday at 9am"), "0 9 * * 1");
        assert_eq!(cron("monday at 9am"), "0 9 * * 1");
        assert_eq!(cron("Mondays at 9am"), "0 9 * * 1");
        assert_eq!(cron("mon,wed at 9:30"), "30 9 * * 1,3");
        assert_eq!(cron("wed, mon ,wed at 9:30"), "30 9 * * 1,3");
        assert_eq!(cron("friday at 17:00"), "0 17 * * 5");
        assert_eq!(cron("sun,sat at noon"), "0 12 * * 0,6");
        assert_eq!(cron("every tues"), "0 0 * * 2");
        assert_eq!(cron("EVERY THURS AT 6 PM"), "0 18 * * 4");
    }

    #[test]
    fn times() {
        let time = |t: &str| parse_time(t).unwrap_or_else(|e| panic!("{t}: {}", e.reason));
        assert_eq!(time("8am"), (8, 0));
        assert_eq!(time("8:30am"), (8, 30));
        assert_eq!(time("12pm"), (12, 0));
        assert_eq!(time("12am"), (0, 0));
        assert_eq!(time("12:30am"), (0, 30));
        assert_eq!(time("1pm"), (13, 0));
        assert_eq!(time("08:00"), (8, 0));
        assert_eq!(time("17:00"), (17, 0));
        assert_eq!(time("9:30"), (9, 30));
        assert_eq!(time("0:00"), (0, 0));
        assert_eq!(time("23:59"), (23, 59));
        assert_eq!(time("noon"), (12, 0));
        assert_eq!(time("midnight"), (0, 0));
    }

    #[test]
    fn bad_times_are_named() {
        let r = refused("daily at 25:00");
        assert_eq!(r.token, "25:00");
        assert_eq!(r.reason, "time \"25:00\" has an hour out of range 0-23");
        let r = refused("daily at 13pm");
        assert_eq!(r.token, "13pm");
        assert!(r.reason.contains("1-12"), "{}", r.reason);
        assert_eq!(refused("daily at 0am").token, "0am");
        assert_eq!(refused("daily at 9:60").token, "9:60");
        assert_eq!(refused("daily at 9:5").token, "9:5");
        assert_eq!(refused("daily at 24:00").token, "24:00");
        let r = refused("daily at 9");
        assert_eq!(r.token, "9");
        assert!(r.reason.contains("9:00 or 9am"), "{}", r.reason);
        assert_eq!(refused("daily at nine").token, "nine");
        assert_eq!(refused("daily at").token, "at");
    }

    #[test]
    fn bad_days_are_named() {
        let r = refused("every funday 9am");
        assert_eq!(r.token, "funday");
        assert_eq!(r.reason, format!("unknown day \"funday\"; {DAY_HINT}"));
        assert_eq!(refused("mon,funday at 9am").token, "funday");
        assert_eq!(refused("mon,,wed at 9am").token, "mon,,wed");
        assert_eq!(refused("every").token, "every");
    }

    #[test]
    fn other_refusals_are_named() {
        let r = refused("tomorrow at 9am");
        assert_eq!(r.token, "tomorrow");
        assert!(r.reason.contains("unrecognized"), "{}", r.reason);
        let r = refused("at 9am");
        assert_eq!(r.token, "at");
        assert!(r.reason.contains("daily at 9am"), "{}", r.reason);
        assert_eq!(refused("9am").token, "9am");
        assert_eq!(refused("daily at 9am sharp").token, "sharp");
        assert_eq!(refused("every day sometime").token, "sometime");
    }
}
