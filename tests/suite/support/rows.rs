//! Ledger rows as the CLI prints them (`runs --json`, `run`, `spawn`): a
//! field as text, filters, a compact listing for failure messages, and the
//! execution id a command printed.

use serde_json::Value;

/// A field of a row as a string ("" when null).
pub(crate) fn s(row: &Value, key: &str) -> String {
    match &row[key] {
        Value::String(v) => v.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Rows whose `key` equals `value`.
pub(crate) fn with<'a>(rows: &'a [Value], key: &str, value: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r[key] == value).collect()
}

/// A compact view of rows for failure messages: job, state/reason code,
/// source, attempt, slot.
pub(crate) fn summary(rows: &[Value]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{} {}/{} {} a{} {}",
                r["job_name"].as_str().unwrap_or("?"),
                r["state"].as_str().unwrap_or("?"),
                r["reason_code"].as_str().unwrap_or("-"),
                r["source"].as_str().unwrap_or("?"),
                r["attempt"],
                r["scheduled_for"].as_str().unwrap_or("-"),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The execution id a `run`/`spawn` printed first on stdout.
pub(crate) fn execution_id_in(stdout: &str) -> String {
    stdout
        .split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("no execution id in {stdout:?}"))
        .to_owned()
}
