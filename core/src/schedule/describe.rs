//! Words for people: a short phrase for a cron expression, for `list` and
//! `show` (`weekdays at 09:00`, `hourly at :00`). `Schedule::describe`
//! (`grammar.rs`) words the other kinds (`every 5m`, `once at ...`). Pure.
//!
//! Covers the shapes phrases and macros produce; any other cron expression
//! is shown as `cron <expr>`. Wall times are in the job's zone, which the
//! caller shows next to the phrase.

const DAY_NAMES: [&str; 8] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// A short human phrase for the normalized cron expression `expr`.
pub(crate) fn cron(expr: &str) -> String {
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
