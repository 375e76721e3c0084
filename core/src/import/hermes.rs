//! A Hermes `cron/jobs.json` into an [`ImportPlan`]. Pure: `now`, the
//! default zone, the existing jobs and a file probe come from the caller
//! ([`ImportContext`]).
//!
//! ## The schema read (Hermes Agent 0.19.0, `cron/jobs.py`, checked against
//! files its `hermes cron create` and `pause` wrote: `fixtures/`)
//! - Top level `{"jobs": [...], "updated_at": "..."}`; a bare array of jobs
//!   (Hermes's `load_jobs` wraps it); and jobs keyed by id, `{"jobs":
//!   {"<id>": {...}}}`, read in id order with the key as the id of a record
//!   that has none (Hermes 0.19.0 itself cannot load that shape: its `cron
//!   list` and ticker fail on it; a note says so). Anything else (not JSON,
//!   another top level, no `jobs`, `jobs` holding no object at all, or one
//!   job object instead of jobs) refuses the whole file.
//! - A job: `id` (12 hex; older writers `job_id`), `name`, `prompt`,
//!   `skills`/`skill`, `script`, `no_agent`, `schedule` (see
//!   `hermes_schedule.rs`), `schedule_display`, `repeat: {times, completed}`,
//!   `enabled`, `state` (`scheduled`, `paused`, `completed`, `error`),
//!   `paused_at`, `paused_reason`, `timezone` (IANA; not written by 0.19.0,
//!   which has one zone for all jobs), `workdir`, `deliver` (`local`,
//!   `origin`, `telegram`, ..., or a list), `origin`, `model`, `provider`,
//!   `base_url`, `context_from`, `enabled_toolsets`, `created_at`,
//!   `next_run_at`, `last_run_at`, `last_status`, `last_error`. Unknown
//!   fields are ignored.
//!
//! ## What is imported
//! - Script jobs (`script` set, and `no_agent: true` or no prompt and no
//!   skills) become commands (`hermes_script.rs`) with an empty environment
//!   (Hermes gives cron scripts none of its own), and keep their Hermes id
//!   (`hermes_id`). A Hermes job whose id an existing job has is not
//!   imported again.
//! - Agent jobs (a prompt or skills, without `no_agent`) are skipped with the
//!   reason, including prompt jobs whose script only feeds the prompt.
//! - Finished jobs (`state: completed`, `repeat.completed >= repeat.times`,
//!   a one-shot with `last_run_at` or in the past) are skipped.
//! - Hermes fires a job only while `enabled` is true, and `hermes cron
//!   pause` sets `enabled: false` with `state: paused`; a provider's claim
//!   also refuses `state: paused`. So `enabled: false` or `state: paused` ->
//!   imported paused, with Hermes's `paused_reason` as the pause reason
//!   (else "paused in Hermes ..." or "disabled in Hermes ...").
//! - `timezone` -> the job's zone (validated), else the default zone.
//! - Notes: `deliver` other than `local` (hermes-cron delivers nothing),
//!   a recurring `repeat.times` limit (not supported), Python scripts run by
//!   `python3` from PATH, a `workdir` (Hermes 0.19.0 runs scripts in their
//!   own directory whatever the workdir), a renamed job, a script that does
//!   not exist (with a probe), two records with one id, the id-keyed shape,
//!   and, when anything was imported, that Hermes keeps firing the
//!   originals: each imported job runs twice until its original is paused
//!   in Hermes or Hermes uses hermes-cron as its cron provider.
//!
//! A record that does not fit the schema (not an object, a missing or
//! mistyped field, an invalid expression, zone or workdir) is skipped alone,
//! as [`SkipCode::Malformed`] naming the field, the way Hermes's scheduler
//! skips a broken record and runs the others. Only importable jobs are
//! validated: a skipped agent job's schedule is not read.

use super::checked;
use super::context::{ExistingJob, ImportContext};
use super::hermes_schedule::{self, type_name};
use super::hermes_script;
use super::names::{self, NameBook};
use super::plan::{
    ImportError, ImportNote, ImportPlan, ImportedJob, NotImported, NoteCode, SkipCode,
};
use crate::job::{Env, validate_name};
use crate::schedule::Schedule;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which file, and the Hermes home it belongs to when known.
#[derive(Clone, Copy, Debug)]
pub(super) struct Source<'a> {
    /// The name used in origins and errors.
    pub(super) file: &'a str,
    /// `<home>` when the file is `<home>/cron/jobs.json`.
    pub(super) home: Option<&'a Path>,
}

/// Read a Hermes `jobs.json`.
pub(super) fn parse(
    source: Source<'_>,
    text: &str,
    cx: &ImportContext<'_>,
) -> Result<ImportPlan, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(source.file, &e))?;
    let (records, keyed) = records(source.file, &value)?;
    let mut reader = Reader {
        source,
        cx,
        plan: ImportPlan::default(),
        names: NameBook::with_existing(cx.existing),
        already: cx
            .existing
            .iter()
            .filter_map(|j| Some((j.hermes_id.as_deref()?, j)))
            .collect(),
        imported_ids: HashMap::new(),
        originals: Vec::new(),
    };
    if keyed && !records.is_empty() {
        reader.note(
            source.file,
            NoteCode::KeyedById,
            format!(
                "\"jobs\" is an object keyed by job id; read as its {} jobs, in id order (Hermes 0.19.0 cannot load this shape: its cron list and ticker fail on it)",
                records.len()
            ),
        );
    }
    for record in &records {
        reader.record(record);
    }
    reader.warn_runs_twice();
    Ok(reader.plan)
}

/// One entry of `jobs`: its 1-based position, its key in the id-keyed
/// shape, and the value.
struct Record<'v> {
    position: usize,
    key: Option<&'v str>,
    value: &'v Value,
}

/// Fields of a job that are never ids: `jobs` holding them is one job, not
/// jobs keyed by id.
const JOB_FIELDS: [&str; 5] = ["id", "schedule", "script", "prompt", "no_agent"];

/// The records of a jobs.json, and whether they were keyed by id; a shape
/// that is not a jobs.json is refused.
fn records<'v>(file: &str, value: &'v Value) -> Result<(Vec<Record<'v>>, bool), ImportError> {
    let shape = |message: String| ImportError::Shape {
        file: file.to_string(),
        message,
    };
    let list = |jobs: &'v [Value]| -> Vec<Record<'v>> {
        jobs.iter()
            .enumerate()
            .map(|(i, value)| Record {
                position: i + 1,
                key: None,
                value,
            })
            .collect()
    };
    let (records, keyed) = match value {
        Value::Array(jobs) => (list(jobs), false),
        Value::Object(top) => match top.get("jobs") {
            Some(Value::Array(jobs)) => (list(jobs), false),
            Some(Value::Object(by_id)) => {
                if let Some(field) = JOB_FIELDS.iter().find(|f| by_id.contains_key(**f)) {
                    return Err(shape(format!(
                        "\"jobs\" is one job (it has {field:?}), expected an array of jobs or an object keyed by job id"
                    )));
                }
                let records = by_id
                    .iter()
                    .enumerate()
                    .map(|(i, (key, value))| Record {
                        position: i + 1,
                        key: Some(key.as_str()),
                        value,
                    })
                    .collect();
                (records, true)
            }
            Some(other) => {
                return Err(shape(format!(
                    "\"jobs\" is {}, expected an array of jobs or an object keyed by job id",
                    type_name(other)
                )));
            }
            None => {
                return Err(shape(
                    "no \"jobs\" array; expected a Hermes cron/jobs.json ({\"jobs\": [...]})"
                        .to_string(),
                ));
            }
        },
        other => {
            return Err(shape(format!(
                "the top level is {}, expected {{\"jobs\": [...]}}",
                type_name(other)
            )));
        }
    };
    if let Some(first) = records.first()
        && !records.iter().any(|r| r.value.is_object())
    {
        return Err(shape(format!(
            "no entry of \"jobs\" is a job object (the first is {}); not a Hermes cron/jobs.json",
            type_name(first.value)
        )));
    }
    Ok((records, keyed))
}

/// serde_json's message without its ` at line L column C` suffix.
fn json_error(file: &str, e: &serde_json::Error) -> ImportError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    ImportError::Json {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: full.strip_suffix(&suffix).unwrap_or(&full).to_string(),
    }
}

/// The Hermes id of a record: `id`, else the legacy `job_id` (which Hermes's
/// ticker moves to `id`), else its key in the id-keyed shape.
fn hermes_id(record: &Record<'_>) -> Option<String> {
    let map = record.value.as_object();
    let field = |name: &str| match map?.get(name)? {
        Value::String(id) if !id.trim().is_empty() => Some(id.trim().to_string()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    };
    field("id")
        .or_else(|| field("job_id"))
        .or_else(|| record.key.map(str::to_string))
}

/// Why a record does not fit the schema: the field (dotted) and what is
/// wrong with it.
struct Bad {
    field: String,
    message: String,
}

fn bad(field: &str, message: impl Into<String>) -> Bad {
    Bad {
        field: field.to_string(),
        message: message.into(),
    }
}

/// The imported jobs that Hermes keeps: how to name each one to `hermes cron
/// pause`, and whether it was imported active.
struct Original {
    reference: String,
    active: bool,
}

struct Reader<'a> {
    source: Source<'a>,
    cx: &'a ImportContext<'a>,
    plan: ImportPlan,
    names: NameBook,
    /// Hermes id -> the job that has it already.
    already: HashMap<&'a str, &'a ExistingJob>,
    /// Hermes id -> the name it was imported under, in this file.
    imported_ids: HashMap<String, String>,
    originals: Vec<Original>,
}

/// One job object.
struct Fields<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    /// A string field, trimmed; missing, null and empty are `None`.
    fn text(&self, field: &str) -> Result<Option<&'a str>, Bad> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim()).filter(|s| !s.is_empty())),
            Some(other) => Err(bad(
                field,
                format!("expected a string, found {}", type_name(other)),
            )),
        }
    }

    /// A string field that is only reported, never relied on: anything
    /// but a non-empty string is `None`.
    fn loose_text(&self, field: &str) -> Option<&'a str> {
        self.map
            .get(field)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }

    fn flag(&self, field: &str) -> Result<Option<bool>, Bad> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(bad(
                field,
                format!("expected true or false, found {}", type_name(other)),
            )),
        }
    }

    /// `repeat.times` (a positive limit) and `repeat.completed`.
    fn repeat(&self) -> (Option<u64>, u64) {
        let repeat = self.map.get("repeat").and_then(Value::as_object);
        let get = |key: &str| repeat.and_then(|r| r.get(key)).and_then(Value::as_u64);
        (
            get("times").filter(|t| *t > 0),
            get("completed").unwrap_or(0),
        )
    }

    /// The skill names, from `skills` (list or string) or legacy `skill`.
    fn skills(&self) -> Vec<&'a str> {
        let mut out = Vec::new();
        for key in ["skills", "skill"] {
            match self.map.get(key) {
                Some(Value::String(s)) => out.push(s.trim()),
                Some(Value::Array(items)) => out.extend(items.iter().filter_map(Value::as_str)),
                _ => {}
            }
        }
        out.retain(|s| !s.trim().is_empty());
        out
    }

    /// `deliver`: a string, or a list (Hermes joins it with commas).
    fn deliver(&self) -> Option<String> {
        match self.map.get("deliver")? {
            Value::String(s) => Some(s.trim().to_string()),
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        }
        .filter(|d| !d.is_empty())
    }
}

impl Reader<'_> {
    fn skip(&mut self, origin: String, code: SkipCode, reason: String) {
        self.plan.skipped.push(NotImported {
            origin,
            reason,
            code,
        });
    }

    fn note(&mut self, origin: &str, code: NoteCode, message: String) {
        self.plan.notes.push(ImportNote {
            origin: origin.to_string(),
            message,
            code,
        });
    }

    /// One record: imported, skipped with the reason, or skipped as
    /// malformed.
    fn record(&mut self, record: &Record<'_>) {
        let id = hermes_id(record);
        let label = id
            .clone()
            .unwrap_or_else(|| format!("#{}", record.position));
        let origin = format!("{} job {label}", self.source.file);
        if let Err(Bad { field, message }) = self.job(record, id, &label, &origin) {
            self.skip(
                origin,
                SkipCode::Malformed,
                format!("malformed record: {field}: {message}"),
            );
        }
    }

    fn job(
        &mut self,
        record: &Record<'_>,
        hermes_id: Option<String>,
        label: &str,
        origin: &str,
    ) -> Result<(), Bad> {
        let Some(map) = record.value.as_object() else {
            return Err(bad(
                "job",
                format!("expected a job object, found {}", type_name(record.value)),
            ));
        };
        let job = Fields { map };
        if let Some(existing) = hermes_id.as_deref().and_then(|id| self.already.get(id)) {
            let reason = if existing.managed {
                format!(
                    "hermes-cron already fires it as Hermes's cron provider (managed job {})",
                    existing.id
                )
            } else {
                format!(
                    "already imported as job {:?} ({})",
                    existing.name, existing.id
                )
            };
            self.skip(origin.to_string(), SkipCode::AlreadyImported, reason);
            return Ok(());
        }

        let script = job.text("script")?;
        let prompt = job.text("prompt")?;
        let skills = job.skills();
        let no_agent = job.flag("no_agent")?.unwrap_or(false);
        let script = match script {
            Some(script) if no_agent || (prompt.is_none() && skills.is_empty()) => script,
            _ => {
                let (code, reason) = not_a_command(script, prompt, &skills, no_agent);
                self.skip(origin.to_string(), code, reason);
                return Ok(());
            }
        };
        let state = job.text("state")?;
        let (times, completed) = job.repeat();
        if state == Some("completed") {
            self.skip(
                origin.to_string(),
                SkipCode::Finished,
                "finished in Hermes (state \"completed\")".to_string(),
            );
            return Ok(());
        }
        if let Some(times) = times
            && completed >= times
        {
            self.skip(
                origin.to_string(),
                SkipCode::Finished,
                format!("finished in Hermes: ran {completed} of {times} times"),
            );
            return Ok(());
        }

        let zones = self.cx.zones;
        let tz = match job.text("timezone")? {
            Some(name) => Some(zones.parse(name).map_err(|e| bad("timezone", e.message))?),
            None => None,
        };
        let zone = tz.unwrap_or(self.cx.default_zone);
        let (text, field) = hermes_schedule::schedule_text(map.get("schedule"))
            .map_err(|e| bad(e.field, e.message))?;
        let checked =
            checked::check(&text, self.cx.now, zone).map_err(|e| bad(field, e.message))?;
        if let Schedule::Once { at, .. } = checked.schedule {
            if let Some(ran) = job.text("last_run_at")? {
                self.skip(
                    origin.to_string(),
                    SkipCode::Finished,
                    format!("one-shot already ran in Hermes at {ran}"),
                );
                return Ok(());
            }
            if checked.next.is_none() {
                self.skip(
                    origin.to_string(),
                    SkipCode::Finished,
                    format!("one-shot at {at} is in the past"),
                );
                return Ok(());
            }
        }

        let workdir = match job.text("workdir")? {
            Some(dir) if Path::new(dir).is_absolute() => Some(PathBuf::from(dir)),
            Some(dir) => {
                return Err(bad("workdir", format!("{dir:?} is not an absolute path")));
            }
            None => None,
        };
        let enabled_flag = job.flag("enabled")?.unwrap_or(true);
        let deliver = job.deliver();

        // Everything below only adds notes: the record is importable.
        let command = hermes_script::script_command(script, self.source.home, workdir.as_deref());
        let name = self.name(&job, script, label, origin);
        let paused = state == Some("paused");
        let enabled = enabled_flag && !paused;
        let pause_reason = (!enabled).then(|| match job.loose_text("paused_reason") {
            Some(reason) => reason.to_string(),
            None => {
                let what = if paused { "paused" } else { "disabled" };
                match job.loose_text("paused_at") {
                    Some(at) => format!("{what} in Hermes at {at}"),
                    None if paused => "paused in Hermes".to_string(),
                    None => "disabled in Hermes (enabled: false)".to_string(),
                }
            }
        });

        if command.python {
            self.note(
                origin,
                NoteCode::RunsDifferently,
                format!(
                    "{script} runs under python3 from PATH; Hermes ran it under its own Python"
                ),
            );
        }
        if let Some(dir) = &workdir {
            self.note(
                origin,
                NoteCode::RunsDifferently,
                format!(
                    "workdir {}: hermes-cron runs the script there; Hermes 0.19.0 ran it in the script's own directory (it does not apply workdir to script jobs)",
                    dir.display()
                ),
            );
        }
        if let Some(location) = hermes_script::script_location(
            script,
            self.source.home.or(self.cx.run_home),
            self.cx.user_home,
        ) && self.cx.is_missing(&location)
        {
            self.note(
                origin,
                NoteCode::ScriptMissing,
                format!(
                    "script {script:?} does not exist at {}: the job fails until it is there",
                    location.display()
                ),
            );
        }
        if let Some(deliver) = deliver
            && deliver != "local"
        {
            self.note(
                origin,
                NoteCode::Dropped,
                format!(
                    "deliver {deliver:?} was dropped: hermes-cron keeps output under cron/output/ and delivers it nowhere"
                ),
            );
        }
        if let Some(times) = times
            && checked.schedule.is_recurring()
        {
            self.note(
                origin,
                NoteCode::Dropped,
                format!(
                    "repeat limit of {times} runs ({completed} done) is not supported: imported without a limit"
                ),
            );
        }
        if let Some(id) = &hermes_id {
            if let Some(first) = self.imported_ids.get(id) {
                self.note(
                    origin,
                    NoteCode::DuplicateHermesId,
                    format!(
                        "Hermes id {id} is also the id of the job imported as {first:?}: `show {id}` names both, use the name or the hermes-cron id"
                    ),
                );
            } else {
                self.imported_ids.insert(id.clone(), name.clone());
            }
        }
        let reference = match (&hermes_id, job.loose_text("name")) {
            (Some(id), _) => id.clone(),
            (None, Some(name)) => format!("{name:?}"),
            (None, None) => origin.to_string(),
        };
        self.originals.push(Original {
            reference,
            active: enabled,
        });
        self.plan.jobs.push(ImportedJob {
            name,
            schedule: text,
            tz: tz.map(|z| z.name().to_string()),
            argv: command.argv,
            shell: command.shell,
            env: Env::default(),
            workdir: command.workdir,
            enabled,
            pause_reason,
            hermes_id,
            origin: origin.to_string(),
            next: checked.next,
        });
        Ok(())
    }

    /// The job's name: Hermes's (spaces collapsed) when it is a valid name,
    /// else the script's stem; made unique. A name other than Hermes's is
    /// noted.
    fn name(&mut self, job: &Fields<'_>, script: &str, label: &str, origin: &str) -> String {
        let hermes = job.loose_text("name");
        let collapsed = hermes.map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "));
        let invalid = collapsed.as_deref().and_then(|n| validate_name(n).err());
        let wanted = match (&collapsed, &invalid) {
            (Some(name), None) => name.clone(),
            _ => names::path_stem(script),
        };
        let claimed = self.names.claim(&wanted, label, origin);
        let name = claimed.name;
        let why = match (hermes, invalid, claimed.taken_by) {
            (Some(hermes), Some(invalid), _) => Some(format!(
                "name {hermes:?} is not a valid job name ({invalid}): imported as {name:?}"
            )),
            (_, None, Some(holder)) => Some(format!(
                "name {wanted:?} is taken by {holder}: imported as {name:?}"
            )),
            (Some(hermes), None, None) if hermes != name => Some(format!(
                "name {hermes:?} imported as {name:?} (spaces collapsed)"
            )),
            _ => None,
        };
        if let Some(why) = why {
            self.note(origin, NoteCode::Renamed, why);
        }
        name
    }

    /// After the last record: when jobs were imported, that Hermes keeps
    /// firing the originals.
    fn warn_runs_twice(&mut self) {
        if self.originals.is_empty() {
            return;
        }
        let active: Vec<&str> = self
            .originals
            .iter()
            .filter(|o| o.active)
            .map(|o| o.reference.as_str())
            .collect();
        // With hermes-cron as Hermes's provider the originals fire here too,
        // so that is no way out of the double fire: it is the alternative
        // to importing at all.
        let provider = "(to have hermes-cron fire Hermes's jobs without copying them, use `hermes-cron hermes install` instead of importing)";
        let message = if active.is_empty() {
            format!(
                "Hermes keeps its own copy of each imported job: they are paused here as they are there, and one resumed in both places runs twice; keep the original paused in Hermes (`hermes cron pause <id>`) {provider}"
            )
        } else {
            const SHOWN: usize = 10;
            let mut list = active
                .iter()
                .take(SHOWN)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if active.len() > SHOWN {
                list.push_str(&format!(" and {} more", active.len() - SHOWN));
            }
            format!(
                "Hermes keeps firing the originals: each of the {} imported active job(s) runs twice until its original is paused in Hermes (`hermes cron pause <id>`: {list}) {provider}",
                active.len()
            )
        };
        self.note(self.source.file, NoteCode::RunsTwice, message);
    }
}

/// Why a job without a runnable script is skipped.
fn not_a_command(
    script: Option<&str>,
    prompt: Option<&str>,
    skills: &[&str],
    no_agent: bool,
) -> (SkipCode, String) {
    if no_agent {
        return (
            SkipCode::NothingToRun,
            "no_agent is set but there is no script: nothing to run".to_string(),
        );
    }
    let what = match (prompt, skills.is_empty()) {
        (Some(prompt), _) => {
            let short: String = prompt.chars().take(40).collect();
            let more = if prompt.chars().count() > 40 {
                "..."
            } else {
                ""
            };
            format!("agent-prompt job (prompt {:?})", format!("{short}{more}"))
        }
        (None, false) => format!("agent skill job (skills {})", skills.join(", ")),
        (None, true) => {
            return (
                SkipCode::NothingToRun,
                "nothing to run: no script, prompt or skills".to_string(),
            );
        }
    };
    let feeds = script
        .map(|s| format!("; its script {s} only feeds the prompt"))
        .unwrap_or_default();
    (
        SkipCode::AgentJob,
        format!(
            "{what} is not importable: it runs in a Hermes agent{feeds}, and hermes-cron runs commands, not agent prompts"
        ),
    )
}
