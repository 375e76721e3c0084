//! A Hermes `cron/jobs.json` into an [`ImportPlan`]. Pure: `now` and the
//! default zone are arguments.
//!
//! ## The schema read (learned from NousResearch/hermes-agent `cron/jobs.py`,
//! `cron/scheduler.py` and the docs page "Script-Only Cron Jobs")
//! - Top level `{"jobs": [...], "updated_at": "..."}`; a bare array of jobs
//!   is also accepted (Hermes' `load_jobs` repairs that shape).
//! - A job: `id` (12 hex), `name`, `prompt`, `skills`/`skill`, `script`,
//!   `no_agent`, `schedule` (see `hermes_schedule.rs`), `schedule_display`,
//!   `repeat: {times, completed}`, `enabled`, `state` (`scheduled`, `paused`,
//!   `completed`), `paused_at`, `paused_reason`, `timezone` (IANA, newer
//!   Hermes), `workdir`, `deliver` (`local`, `origin`, `telegram`, ...),
//!   `origin`, `model`, `provider`, `base_url`, `context_from`,
//!   `enabled_toolsets`, `created_at`, `next_run_at`, `last_run_at`,
//!   `last_status`, `last_error`. Unknown fields are ignored.
//!
//! ## What is imported
//! - Script jobs (`script` set, and `no_agent: true` or no prompt and no
//!   skills) become commands (`hermes_script.rs`) with an empty environment
//!   (Hermes gives cron scripts none of its own).
//! - Agent jobs (a prompt or skills, without `no_agent`) are skipped with the
//!   reason, including prompt jobs whose script only feeds the prompt.
//! - Finished jobs (`state: completed`, `repeat.completed >= repeat.times`,
//!   a one-shot with `last_run_at` or in the past) are skipped.
//! - `enabled: false` or `state: paused` -> `enabled = false`.
//! - `timezone` -> the job's zone (validated), else the default zone.
//! - Notes: `deliver` other than `local` (hermes-cron delivers nothing),
//!   a recurring `repeat.times` limit (not supported), Python scripts run by
//!   `python3` from PATH.
//!
//! A job that does not fit the schema (not an object, a missing or mistyped
//! schedule field, an invalid expression, zone or workdir) is an
//! [`ImportError::Job`] naming the job and field; invalid JSON is an
//! [`ImportError::Json`] with line and column. Either way nothing is imported.
//! Only importable jobs are validated: a skipped agent job's schedule is not
//! read.

use super::checked;
use super::hermes_schedule::{self, type_name};
use super::hermes_script;
use super::names::{self, NameBook};
use super::plan::{ImportError, ImportNote, ImportPlan, ImportedJob, NotImported};
use crate::job::{Env, validate_name};
use crate::schedule::{Schedule, Timestamp, Tz, parse_zone};
use serde_json::{Map, Value};
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
    now: Timestamp,
    default_zone: Tz,
) -> Result<ImportPlan, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(source.file, &e))?;
    let shape = |message: String| ImportError::Shape {
        file: source.file.to_string(),
        message,
    };
    let jobs = match &value {
        Value::Array(jobs) => jobs,
        Value::Object(top) => match top.get("jobs") {
            Some(Value::Array(jobs)) => jobs,
            Some(other) => {
                return Err(shape(format!(
                    "\"jobs\" is {}, expected an array of jobs",
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
    let mut reader = Reader {
        source,
        now,
        default_zone,
        plan: ImportPlan::default(),
        names: NameBook::default(),
    };
    for (index, job) in jobs.iter().enumerate() {
        reader.job(index, job)?;
    }
    Ok(reader.plan)
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

struct Reader<'a> {
    source: Source<'a>,
    now: Timestamp,
    default_zone: Tz,
    plan: ImportPlan,
    names: NameBook,
}

/// One job object and how to name it in errors.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    file: &'a str,
    label: String,
}

impl<'a> Fields<'a> {
    fn error(
        &self,
        field: &str,
        token: impl Into<String>,
        message: impl Into<String>,
    ) -> ImportError {
        ImportError::Job {
            file: self.file.to_string(),
            job: self.label.clone(),
            field: field.to_string(),
            token: token.into(),
            message: message.into(),
        }
    }

    /// A string field, trimmed; missing, null and empty are `None`.
    fn text(&self, field: &str) -> Result<Option<&'a str>, ImportError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim()).filter(|s| !s.is_empty())),
            Some(other) => Err(self.error(
                field,
                other.to_string(),
                format!("expected a string, found {}", type_name(other)),
            )),
        }
    }

    fn flag(&self, field: &str) -> Result<Option<bool>, ImportError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.error(
                field,
                other.to_string(),
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
}

impl Reader<'_> {
    fn skip(&mut self, origin: String, reason: String) {
        self.plan.skipped.push(NotImported { origin, reason });
    }

    fn note(&mut self, origin: &str, message: String) {
        self.plan.notes.push(ImportNote {
            origin: origin.to_string(),
            message,
        });
    }

    fn job(&mut self, index: usize, job: &Value) -> Result<(), ImportError> {
        let position = format!("#{}", index + 1);
        let Some(map) = job.as_object() else {
            return Err(ImportError::Job {
                file: self.source.file.to_string(),
                job: position,
                field: "job".to_string(),
                token: job.to_string(),
                message: format!("expected a job object, found {}", type_name(job)),
            });
        };
        let label = match map.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_string(),
            Some(Value::Number(id)) => id.to_string(),
            _ => position,
        };
        let job = Fields {
            map,
            file: self.source.file,
            label,
        };
        let origin = format!("{} job {}", self.source.file, job.label);

        let script = job.text("script")?;
        let prompt = job.text("prompt")?;
        let skills = job.skills();
        let no_agent = job.flag("no_agent")?.unwrap_or(false);
        let script = match script {
            Some(script) if no_agent || (prompt.is_none() && skills.is_empty()) => script,
            _ => {
                let reason = not_a_command(script, prompt, &skills, no_agent);
                self.skip(origin, reason);
                return Ok(());
            }
        };
        let state = job.text("state")?;
        let (times, completed) = job.repeat();
        if state == Some("completed") {
            self.skip(
                origin,
                "finished in Hermes (state \"completed\")".to_string(),
            );
            return Ok(());
        }
        if let Some(times) = times
            && completed >= times
        {
            self.skip(
                origin,
                format!("finished in Hermes: ran {completed} of {times} times"),
            );
            return Ok(());
        }

        let tz = match job.text("timezone")? {
            Some(name) => {
                Some(parse_zone(name).map_err(|e| job.error("timezone", e.token, e.message))?)
            }
            None => None,
        };
        let zone = tz.unwrap_or(self.default_zone);
        let (text, field) = hermes_schedule::schedule_text(map.get("schedule"))
            .map_err(|e| job.error(e.field, e.token, e.message))?;
        let checked = checked::check(&text, self.now, zone)
            .map_err(|e| job.error(field, e.token, e.message))?;
        if let Schedule::Once { at, .. } = checked.schedule {
            if let Some(ran) = job.text("last_run_at")? {
                self.skip(origin, format!("one-shot already ran in Hermes at {ran}"));
                return Ok(());
            }
            if checked.next.is_none() {
                self.skip(origin, format!("one-shot at {at} is in the past"));
                return Ok(());
            }
        }

        let workdir = match job.text("workdir")? {
            Some(dir) if Path::new(dir).is_absolute() => Some(PathBuf::from(dir)),
            Some(dir) => {
                return Err(job.error("workdir", dir, format!("{dir:?} is not an absolute path")));
            }
            None => None,
        };
        let command = hermes_script::script_command(script, self.source.home, workdir.as_deref());
        let wanted = job
            .text("name")?
            .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|n| validate_name(n).is_ok())
            .unwrap_or_else(|| names::path_stem(script));
        let name = self.names.claim(&wanted, &job.label);
        let enabled = job.flag("enabled")?.unwrap_or(true) && state != Some("paused");

        if command.python {
            self.note(
                &origin,
                format!(
                    "{script} runs under python3 from PATH; Hermes ran it under its own Python"
                ),
            );
        }
        if let Some(deliver) = job.text("deliver")?
            && deliver != "local"
        {
            self.note(
                &origin,
                format!(
                    "deliver {deliver:?} was dropped: hermes-cron keeps output under cron/output/ and delivers it nowhere"
                ),
            );
        }
        if let Some(times) = times
            && checked.schedule.is_recurring()
        {
            self.note(
                &origin,
                format!(
                    "repeat limit of {times} runs ({completed} done) is not supported: imported without a limit"
                ),
            );
        }
        self.plan.jobs.push(ImportedJob {
            name,
            schedule: text,
            tz: tz.map(|z| z.name().to_string()),
            argv: command.argv,
            shell: command.shell,
            env: Env::default(),
            workdir: command.workdir,
            enabled,
            origin,
            next: checked.next,
        });
        Ok(())
    }
}

/// Why a job without a runnable script is skipped.
fn not_a_command(
    script: Option<&str>,
    prompt: Option<&str>,
    skills: &[&str],
    no_agent: bool,
) -> String {
    if no_agent {
        return "no_agent is set but there is no script: nothing to run".to_string();
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
        (None, true) => return "nothing to run: no script, prompt or skills".to_string(),
    };
    let feeds = script
        .map(|s| format!("; its script {s} only feeds the prompt"))
        .unwrap_or_default();
    format!(
        "{what} is not importable: it runs in a Hermes agent{feeds}, and hermes-cron runs commands, not agent prompts"
    )
}
