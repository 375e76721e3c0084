//! Hermes's `cron/jobs.json`, read for what hermes-cron needs to fire its
//! jobs: each job's id, name, whether it may fire, when it fires next, and
//! whether it is an agent prompt or a script. Tolerant as Hermes is: a
//! record that cannot be read is left out with a note naming it, and never
//! stops the others.

use crate::schedule::Timestamp;
use serde_json::Value;

/// One Hermes job, as the provider sync sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HermesJob {
    /// Hermes's id (12 hex digits when Hermes made it).
    pub id: String,
    /// Its name (its id when it has none).
    pub name: String,
    /// `enabled` and not `state: paused`.
    pub fires: bool,
    /// Hermes's `state` (`scheduled`, `paused`, `completed`, `error`).
    pub state: String,
    /// Why Hermes paused it, when it says.
    pub paused_reason: Option<String>,
    /// When Hermes wants it fired next (its `next_run_at`).
    pub next_run_at: Option<Timestamp>,
    /// A `no_agent` script job; otherwise an agent prompt.
    pub script: bool,
    /// An agent prompt with a pre-run `script` (its output feeds the prompt).
    pub pre_run_script: bool,
    /// The schedule as Hermes shows it (`0 8 * * *`, `every 60m`, ...).
    pub display: String,
    /// A recurring schedule (Hermes's kind `cron` or `interval`) as
    /// hermes-cron schedule text (`0 8 * * *`, `every 60m`); None for a
    /// one-shot or a schedule hermes-cron cannot read.
    pub recurring: Option<String>,
}

/// The readable jobs of a `jobs.json`, and a note for each record left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobsFile {
    /// The readable jobs, in file order, each id once.
    pub jobs: Vec<HermesJob>,
    /// A note for each record left out, naming it.
    pub notes: Vec<String>,
}

/// The file as a whole is not a Hermes jobs file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct JobsFileError {
    /// The file, as the caller named it.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

fn text<'a>(record: &'a Value, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

fn flag(record: &Value, key: &str, default: bool) -> bool {
    record.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// An ISO 8601 instant with an offset, to the millisecond (the ledger's
/// resolution, so a slot compares equal to its row).
pub(super) fn instant(value: &str) -> Option<Timestamp> {
    use chrono::SubsecRound;
    chrono::DateTime::parse_from_rfc3339(value.trim())
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc).trunc_subsecs(3))
}

fn read_record(index: usize, record: &Value) -> Result<HermesJob, String> {
    let Some(id) = text(record, "id").filter(|id| !id.trim().is_empty()) else {
        return Err(format!(
            "job #{} has no \"id\", so it cannot be fired (no Hermes ticker runs to give it one)",
            index + 1
        ));
    };
    let id = id.trim().to_string();
    let next_run_at = match record.get("next_run_at") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(instant(s).ok_or_else(|| {
            format!("job {id}: next_run_at {s:?} is not an ISO 8601 instant with an offset")
        })?),
        Some(other) => return Err(format!("job {id}: next_run_at {other} is not a string")),
    };
    let state = text(record, "state").unwrap_or("scheduled").to_string();
    let display = text(record, "schedule_display")
        .or_else(|| record.get("schedule").and_then(|s| text(s, "display")))
        .or_else(|| record.get("schedule").and_then(|s| text(s, "expr")))
        .unwrap_or("")
        .to_string();
    Ok(HermesJob {
        name: text(record, "name")
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(&id)
            .to_string(),
        fires: flag(record, "enabled", true) && state != "paused",
        paused_reason: text(record, "paused_reason").map(str::to_string),
        next_run_at,
        script: flag(record, "no_agent", false),
        pre_run_script: !flag(record, "no_agent", false)
            && text(record, "script").is_some_and(|s| !s.trim().is_empty()),
        state,
        display,
        recurring: crate::import::recurring_text(record.get("schedule")),
        id,
    })
}

/// Read `text`, the contents of `path` (named in errors and notes).
pub fn read_jobs_file(path: &str, text: &str) -> Result<JobsFile, JobsFileError> {
    let fail = |message: String| JobsFileError {
        path: path.to_string(),
        message,
    };
    let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| fail(format!("not JSON ({e})")))?;
    let records = match &value {
        Value::Object(o) => match o.get("jobs") {
            Some(Value::Array(a)) => a.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => return Err(fail("\"jobs\" is not a list".into())),
        },
        Value::Array(a) => a.as_slice(),
        _ => return Err(fail("neither {\"jobs\": [...]} nor a list of jobs".into())),
    };
    let mut file = JobsFile::default();
    for (i, record) in records.iter().enumerate() {
        match read_record(i, record) {
            Ok(job) if file.jobs.iter().any(|j| j.id == job.id) => file.notes.push(format!(
                "{path}: job {} appears twice; the first is used",
                job.id
            )),
            Ok(job) => file.jobs.push(job),
            Err(note) => file.notes.push(format!("{path}: {note}; left out")),
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{"jobs": [
      {"id": "a1b2c3d4e5f6", "name": "brief", "enabled": true, "state": "scheduled",
       "next_run_at": "2026-12-02T08:00:00+01:00", "no_agent": false,
       "schedule": {"kind": "cron", "expr": "0 8 * * *", "display": "0 8 * * *"}},
      {"id": "0000000000b2", "enabled": false, "state": "paused", "paused_reason": "holiday",
       "next_run_at": null, "no_agent": true, "schedule_display": "every 60m"},
      {"name": "no id"},
      {"id": "0000000000c3", "next_run_at": "tomorrow"},
      {"id": "a1b2c3d4e5f6", "name": "again"}
    ], "updated_at": "2026-12-01T10:00:00+00:00"}"#;

    #[test]
    fn reads_what_the_sync_needs_and_names_what_it_leaves_out() {
        let file = read_jobs_file("jobs.json", FILE).unwrap();
        assert_eq!(file.jobs.len(), 2, "{file:#?}");
        let brief = &file.jobs[0];
        assert_eq!(brief.name, "brief");
        assert!(brief.fires && !brief.script);
        assert_eq!(
            brief.next_run_at.unwrap().to_rfc3339(),
            "2026-12-02T07:00:00+00:00"
        );
        assert_eq!(brief.display, "0 8 * * *");
        assert_eq!(brief.recurring.as_deref(), Some("0 8 * * *"));
        let paused = &file.jobs[1];
        assert_eq!(
            paused.name, "0000000000b2",
            "a nameless job is called by its id"
        );
        assert!(!paused.fires && paused.script);
        assert_eq!(paused.paused_reason.as_deref(), Some("holiday"));
        assert_eq!(paused.display, "every 60m");
        assert_eq!(
            paused.recurring, None,
            "no schedule object: not known to recur"
        );
        assert_eq!(file.notes.len(), 3, "{:#?}", file.notes);
        assert!(file.notes[0].contains("job #3 has no \"id\""));
        assert!(file.notes[1].contains("0000000000c3") && file.notes[1].contains("tomorrow"));
        assert!(file.notes[2].contains("appears twice"));
    }

    #[test]
    fn fractional_seconds_to_the_millisecond_a_bare_list_and_a_bom_are_read() {
        let text =
            "\u{feff}[{\"id\": \"x\", \"next_run_at\": \"2026-12-01T15:30:12.123456+00:00\"}]";
        let file = read_jobs_file("jobs.json", text).unwrap();
        assert_eq!(
            file.jobs[0].next_run_at.unwrap().timestamp_micros() % 1_000_000,
            123000
        );
    }

    #[test]
    fn a_file_that_is_not_a_jobs_file_is_an_error_naming_it() {
        let e = read_jobs_file("/h/cron/jobs.json", "{\"jobs\": 3}").unwrap_err();
        assert_eq!(e.to_string(), "/h/cron/jobs.json: \"jobs\" is not a list");
        assert!(
            read_jobs_file("j", "{")
                .unwrap_err()
                .message
                .starts_with("not JSON")
        );
        assert!(read_jobs_file("j", "{}").unwrap().jobs.is_empty());
    }
}
