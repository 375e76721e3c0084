//! The model usage a run reports of itself: a Hermes agent job's tokens,
//! API calls, model and cost, as `fire.py` reads them from Hermes's own
//! records and writes them to `HERMES_CRON_USAGE_FILE`. The worker keeps
//! only the fields below, of the right types, on the run's row.

use serde_json::{Map, Value};

/// The counts a report may give: non-negative integers.
pub const COUNTS: &[&str] = &[
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_calls",
];

/// The texts a report may give: the model, and where the cost came from
/// (`hermes_actual`, `hermes_estimated`) or why there is none (`unknown`).
pub const TEXTS: &[&str] = &["model", "cost_source"];

/// The token kinds the metrics count (`hermes_cron_job_tokens_total{kind}`),
/// each with the field it is read from.
pub const TOKEN_KINDS: &[(&str, &str)] = &[
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_tokens"),
    ("cache_write", "cache_write_tokens"),
    ("reasoning", "reasoning_tokens"),
];

/// What a kept usage adds to its job's totals: each token kind's count, and
/// `cost_usd` when it has a cost.
pub fn amounts(usage: &Value) -> Vec<(&'static str, f64)> {
    let mut out: Vec<(&'static str, f64)> = TOKEN_KINDS
        .iter()
        .filter_map(|(kind, field)| Some((*kind, usage.get(*field)?.as_u64()? as f64)))
        .collect();
    if let Some(cost) = usage.get("cost_usd").and_then(Value::as_f64) {
        out.push(("cost_usd", cost));
    }
    out
}

/// A kept usage in short: its tokens (input and output, cache reads and
/// writes included; reasoning is part of output) and its cost, when known.
pub fn tokens_and_cost(usage: &Value) -> (u64, Option<f64>) {
    let tokens = TOKEN_KINDS
        .iter()
        .filter(|(kind, _)| *kind != "reasoning")
        .filter_map(|(_, field)| usage.get(*field)?.as_u64())
        .sum();
    (tokens, usage.get("cost_usd").and_then(Value::as_f64))
}

/// Longest text kept.
const TEXT_MAX: usize = 200;

/// A usage report that cannot be kept, and why.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("the usage report {0}")]
pub struct BadReport(String);

/// The usage `text` reports, as the row keeps it: the known fields only,
/// `cost_usd` a non-negative number or null. Refused: not a JSON object, a
/// known field of the wrong type.
pub fn from_report(text: &str) -> Result<Value, BadReport> {
    let bad = |why: String| BadReport(why);
    let Value::Object(given) =
        serde_json::from_str::<Value>(text).map_err(|e| bad(format!("is not JSON: {e}")))?
    else {
        return Err(bad("is not a JSON object".into()));
    };
    let mut kept = Map::new();
    for name in COUNTS {
        match given.get(*name) {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.as_u64().is_some() => {
                kept.insert((*name).to_string(), Value::Number(n.clone()));
            }
            Some(other) => return Err(bad(format!("gives {name} {other}, not a count"))),
        }
    }
    for name in TEXTS {
        match given.get(*name) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                let s: String = s.chars().take(TEXT_MAX).collect();
                kept.insert((*name).to_string(), Value::String(s));
            }
            Some(other) => return Err(bad(format!("gives {name} {other}, not a text"))),
        }
    }
    match given.get("cost_usd") {
        None | Some(Value::Null) => {
            kept.insert("cost_usd".into(), Value::Null);
        }
        Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v.is_finite() && v >= 0.0) => {
            kept.insert("cost_usd".into(), Value::Number(n.clone()));
        }
        Some(other) => return Err(bad(format!("gives cost_usd {other}, not an amount"))),
    }
    Ok(Value::Object(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_fields_are_kept_and_others_dropped() {
        let v = from_report(
            r#"{"input_tokens": 1134, "output_tokens": 56, "cache_read_tokens": 100,
                "cache_write_tokens": 0, "reasoning_tokens": 7, "api_calls": 1,
                "model": "some-model", "cost_usd": null, "cost_source": "unknown", "x": 1}"#,
        )
        .unwrap();
        assert_eq!(v["input_tokens"], 1134);
        assert_eq!(v["api_calls"], 1);
        assert_eq!(v["model"], "some-model");
        assert_eq!(v["cost_usd"], Value::Null);
        assert!(v.get("x").is_none());
    }

    #[test]
    fn in_short_reasoning_is_not_counted_twice() {
        let v = from_report(
            r#"{"input_tokens": 100, "output_tokens": 20, "reasoning_tokens": 5,
                "cache_read_tokens": 3, "cost_usd": 0.5}"#,
        )
        .unwrap();
        assert_eq!(tokens_and_cost(&v), (123, Some(0.5)));
    }

    #[test]
    fn amounts_are_the_token_kinds_and_a_known_cost() {
        let v =
            from_report(r#"{"input_tokens": 3, "reasoning_tokens": 1, "cost_usd": 0.5}"#).unwrap();
        assert_eq!(
            amounts(&v),
            [("input", 3.0), ("reasoning", 1.0), ("cost_usd", 0.5)]
        );
        let unknown = from_report(r#"{"output_tokens": 2}"#).unwrap();
        assert_eq!(amounts(&unknown), [("output", 2.0)]);
    }

    #[test]
    fn wrong_types_are_refused_saying_which_field() {
        for (text, field) in [
            (r#"{"input_tokens": -1}"#, "input_tokens"),
            (r#"{"output_tokens": "5"}"#, "output_tokens"),
            (r#"{"model": 5}"#, "model"),
            (r#"{"cost_usd": -0.5}"#, "cost_usd"),
        ] {
            let e = from_report(text).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
        assert!(from_report("[1]").is_err());
        assert!(from_report("nope").is_err());
    }
}
