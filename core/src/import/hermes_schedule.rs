//! A Hermes job's `schedule` object as schedule text for `Schedule::parse`.
//! Pure; the text is validated (in the job's zone) by the caller.
//!
//! Hermes stores (`cron/jobs.py`, `parse_schedule`):
//! - `{"kind": "cron", "expr": "0 9 * * *", "display": ...}`: evaluated by
//!   croniter in the job's `timezone`, else the Hermes zone. croniter puts
//!   seconds *last* in a 6-field expression; ours are seconds-first, so a
//!   6-field `expr` is rotated (`0 9 * * * 30` -> `30 0 9 * * *`).
//! - `{"kind": "interval", "minutes": 30, ...}` -> `every 30m`. Hermes fires
//!   at creation (or last run) + period; hermes-cron anchors at the import.
//! - `{"kind": "once", "run_at": "<ISO-8601>", ...}`: Python `isoformat()`,
//!   usually with an offset and often with microseconds. An aware time
//!   becomes a UTC instant, rounded up to the second
//!   (`2026-05-02T08:00:00Z`); a naive one (older Hermes, system-local)
//!   stays naive and is read in the job's zone.
//! - A plain string (what Hermes' API accepts before parsing) is read as
//!   the same three kinds: `every ...`, a cron expression, an ISO time. A
//!   bare duration (`30m`) is refused: in Hermes it means "once, that long
//!   after creation".

use chrono::{DateTime, NaiveDateTime, SecondsFormat, TimeDelta, Timelike, Utc};
use serde_json::Value;

/// Why a schedule could not be read; `field` is dotted (`schedule.kind`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FieldError {
    pub(super) field: &'static str,
    pub(super) token: String,
    pub(super) message: String,
}

fn refuse(field: &'static str, token: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field,
        token: token.into(),
        message: message.into(),
    }
}

/// The JSON type of `value`, for messages.
pub(super) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The schedule text for a job's `schedule` value, and the field it came from.
pub(super) fn schedule_text(
    schedule: Option<&Value>,
) -> Result<(String, &'static str), FieldError> {
    match schedule {
        None | Some(Value::Null) => Err(refuse(
            "schedule",
            "",
            "missing; expected {\"kind\": \"cron\" | \"interval\" | \"once\", ...}",
        )),
        Some(Value::Object(map)) => {
            let kind = match map.get("kind") {
                Some(Value::String(kind)) => kind.as_str(),
                Some(other) => {
                    return Err(refuse(
                        "schedule.kind",
                        other.to_string(),
                        format!("expected a string, found {}", type_name(other)),
                    ));
                }
                None => {
                    return Err(refuse(
                        "schedule.kind",
                        "",
                        "missing; expected cron, interval or once",
                    ));
                }
            };
            match kind {
                "cron" => {
                    let expr = required_str(map.get("expr"), "schedule.expr")?;
                    Ok((cron_text(expr), "schedule.expr"))
                }
                "interval" => interval_text(map.get("minutes")).map(|t| (t, "schedule.minutes")),
                "once" => {
                    let run_at = required_str(map.get("run_at"), "schedule.run_at")?;
                    once_text(run_at)
                        .map(|t| (t, "schedule.run_at"))
                        .map_err(|m| refuse("schedule.run_at", run_at, m))
                }
                other => Err(refuse(
                    "schedule.kind",
                    other,
                    format!("unknown schedule kind {other:?}; expected cron, interval or once"),
                )),
            }
        }
        Some(Value::String(text)) => string_text(text).map(|t| (t, "schedule")),
        Some(other) => Err(refuse(
            "schedule",
            other.to_string(),
            format!("expected an object, found {}", type_name(other)),
        )),
    }
}

/// The schedule text of a *recurring* Hermes schedule (kind `cron` or
/// `interval`), for working out the slot after one Hermes never claimed
/// (`provider::plan_sync`); None for a one-shot or a schedule that cannot
/// be read.
pub(crate) fn recurring_text(schedule: Option<&Value>) -> Option<String> {
    let kind = schedule?.get("kind")?.as_str()?;
    if !matches!(kind, "cron" | "interval") {
        return None;
    }
    schedule_text(schedule).ok().map(|(text, _)| text)
}

fn required_str<'a>(value: Option<&'a Value>, field: &'static str) -> Result<&'a str, FieldError> {
    match value {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.trim()),
        Some(Value::String(_)) => Err(refuse(field, "", "is empty")),
        None | Some(Value::Null) => Err(refuse(field, "", "missing")),
        Some(other) => Err(refuse(
            field,
            other.to_string(),
            format!("expected a string, found {}", type_name(other)),
        )),
    }
}

/// croniter's 6-field form has seconds last; ours has them first.
fn cron_text(expr: &str) -> String {
    let mut fields: Vec<&str> = expr.split_whitespace().collect();
    if fields.len() == 6 {
        fields.rotate_right(1);
    }
    fields.join(" ")
}

fn interval_text(minutes: Option<&Value>) -> Result<String, FieldError> {
    let field = "schedule.minutes";
    match minutes {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(m) => Ok(format!("every {m}m")),
            None => Err(refuse(
                field,
                n.to_string(),
                format!("{n} is not a whole number of minutes"),
            )),
        },
        None | Some(Value::Null) => Err(refuse(field, "", "missing")),
        Some(other) => Err(refuse(
            field,
            other.to_string(),
            format!("expected a number, found {}", type_name(other)),
        )),
    }
}

/// A Python `isoformat()` instant as schedule text; see the module docs.
fn once_text(run_at: &str) -> Result<String, String> {
    let text = run_at.trim();
    let rfc = text
        .strip_suffix(['Z', 'z'])
        .map_or_else(|| text.to_string(), |t| format!("{t}+00:00"));
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(at) = DateTime::parse_from_str(&rfc, format) {
            let at = ceil_second(at.with_timezone(&Utc).naive_utc());
            return Ok(at.and_utc().to_rfc3339_opts(SecondsFormat::Secs, true));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(ceil_second(at).format("%Y-%m-%dT%H:%M:%S").to_string());
        }
    }
    Err(format!(
        "{text:?} is not an ISO-8601 time such as 2026-05-02T08:00:00+02:00"
    ))
}

fn ceil_second(at: NaiveDateTime) -> NaiveDateTime {
    let floor = at.with_nanosecond(0).unwrap_or(at);
    if floor == at {
        floor
    } else {
        floor + TimeDelta::seconds(1)
    }
}

/// A schedule given as a string, read the way Hermes reads one.
fn string_text(text: &str) -> Result<String, FieldError> {
    let text = text.trim();
    let words: Vec<&str> = text.split_whitespace().collect();
    if text.to_ascii_lowercase().starts_with("every ") {
        return Ok(text.to_string());
    }
    let cronish = |w: &&str| w.chars().all(|c| c.is_ascii_digit() || "*-,/".contains(c));
    if words.len() >= 5 && words[..5].iter().all(cronish) {
        return Ok(cron_text(text));
    }
    if text.len() >= 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-' {
        return once_text(text).map_err(|m| refuse("schedule", text, m));
    }
    Err(refuse(
        "schedule",
        text,
        format!(
            "{text:?} is not an interval (every 30m), a cron expression or an ISO time; a bare duration is a one-shot relative to the job's creation in Hermes, give its time instead"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text_of(v: Value) -> String {
        schedule_text(Some(&v))
            .unwrap_or_else(|e| panic!("{v}: {e:?}"))
            .0
    }

    #[test]
    fn the_three_kinds() {
        assert_eq!(
            text_of(json!({"kind": "cron", "expr": "0 9 * * 1-5"})),
            "0 9 * * 1-5"
        );
        assert_eq!(
            text_of(json!({"kind": "cron", "expr": " 0  9 * * *  15"})),
            "15 0 9 * * *"
        );
        assert_eq!(
            text_of(json!({"kind": "interval", "minutes": 90})),
            "every 90m"
        );
        assert_eq!(
            text_of(json!({"kind": "once", "run_at": "2026-05-02T10:00:00.250000+02:00"})),
            "2026-05-02T08:00:01Z"
        );
        assert_eq!(
            text_of(json!({"kind": "once", "run_at": "2026-05-02T10:00:00+02:00"})),
            "2026-05-02T08:00:00Z"
        );
        assert_eq!(
            text_of(json!({"kind": "once", "run_at": "2026-05-02T08:00:00Z"})),
            "2026-05-02T08:00:00Z"
        );
        assert_eq!(
            text_of(json!({"kind": "once", "run_at": "2026-05-02T10:00:00.5"})),
            "2026-05-02T10:00:01"
        );
        assert_eq!(text_of(json!("every 2h")), "every 2h");
        assert_eq!(text_of(json!("*/15 * * * *")), "*/15 * * * *");
        assert_eq!(text_of(json!("2026-05-02T10:00")), "2026-05-02T10:00:00");
    }

    #[test]
    fn refusals_name_the_field_and_token() {
        let cases = [
            (json!({"kind": "rrule"}), "schedule.kind", "rrule"),
            (json!({"expr": "0 9 * * *"}), "schedule.kind", ""),
            (json!({"kind": "cron"}), "schedule.expr", ""),
            (
                json!({"kind": "interval", "minutes": "30"}),
                "schedule.minutes",
                "\"30\"",
            ),
            (
                json!({"kind": "interval", "minutes": 2.5}),
                "schedule.minutes",
                "2.5",
            ),
            (
                json!({"kind": "once", "run_at": "tomorrow"}),
                "schedule.run_at",
                "tomorrow",
            ),
            (json!("30m"), "schedule", "30m"),
            (json!(42), "schedule", "42"),
        ];
        for (value, field, token) in cases {
            let err = schedule_text(Some(&value)).expect_err(&value.to_string());
            assert_eq!(
                (err.field, err.token.as_str()),
                (field, token),
                "{value}: {}",
                err.message
            );
        }
        assert_eq!(schedule_text(None).unwrap_err().field, "schedule");
    }
}
