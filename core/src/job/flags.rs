//! Turning `add`/`edit` flags into a validated job. Pure: `now`, the
//! fallback zone and the zone table are passed in; checking that the program exists is IO and
//! happens at the CLI edge.

use super::model::{Env, Job, JobState};
use super::policy::{CatchUp, Overlap};
use crate::alert::{JobAlerts, KindSet, check_url, parse_alert_after};
use crate::ids::{JobId, looks_like_uuid};
use crate::schedule::{self, Schedule, Timestamp, Tz, ZoneTable};
use std::path::PathBuf;
use std::time::Duration;

/// The longest job name accepted, in bytes.
const MAX_NAME_BYTES: usize = 1024;
/// The most retries a job may ask for.
const MAX_RETRIES: u32 = 100;

/// A job's flags as the user gave them; `None` means "not given".
#[derive(Clone, Debug, Default)]
pub struct JobInput {
    /// `--name` (required by `add`).
    pub name: Option<String>,
    /// `--schedule`, as typed (required by `add`).
    pub schedule: Option<String>,
    /// `--tz ZONE` (empty: none of its own).
    pub tz: Option<String>,
    /// `--timeout D`, or `off`.
    pub timeout: Option<String>,
    /// `--idle-timeout D`, or `off`.
    pub idle_timeout: Option<String>,
    /// `--overlap skip|allow|replace`.
    pub overlap: Option<String>,
    /// `--catch-up once|skip|all`.
    pub catch_up: Option<String>,
    /// `--retries N` (at most 100).
    pub retries: Option<u32>,
    /// `--retry-backoff D`: the first retry's delay.
    pub retry_backoff: Option<String>,
    /// `--memory-max SIZE` (`512M`, `2G`, a number of bytes).
    pub memory_max: Option<String>,
    /// `--cpu-weight N` (1..10000).
    pub cpu_weight: Option<u64>,
    /// `--tasks-max N` (at least 1).
    pub tasks_max: Option<u64>,
    /// `K=V` pairs; on edit they replace the whole environment.
    pub env: Option<Vec<String>>,
    /// `--env-file PATH` (absolute); on edit they replace the list.
    pub env_files: Option<Vec<PathBuf>>,
    /// `--pass-env NAME`; on edit they replace the list.
    pub pass_env: Option<Vec<String>>,
    /// `--workdir DIR` (absolute).
    pub workdir: Option<PathBuf>,
    /// Where the flags were typed (the shell's working directory): a relative
    /// program (`./standup.sh`) is read from there, or from this command's
    /// `--workdir`, and stored absolute. None: left as given.
    pub cwd: Option<PathBuf>,
    /// The workdir of a new job given no `--workdir` (the account's home, as
    /// cron's). None: none stored (the run then starts in its `HOME`).
    pub default_workdir: Option<PathBuf>,
    /// `--shell` (`Some(false)`: `--no-shell`).
    pub shell: Option<bool>,
    /// `--require-scope` (`Some(false)`: `--no-require-scope`).
    pub require_scope: Option<bool>,
    /// `--on HOST|LABEL`; `Some("")` (edit `--on any`) unpins.
    pub run_on: Option<String>,
    /// The command after `--`.
    pub argv: Option<Vec<String>>,
    /// `--alert-on KINDS` (`default`: the config's).
    pub alert_on: Option<String>,
    /// `--alert-after N`.
    pub alert_after: Option<u32>,
    /// `--on-alert CMD` (empty: none of its own).
    pub on_alert: Option<String>,
    /// `--alert-webhook URL` (empty: none of its own).
    pub alert_webhook: Option<String>,
    /// `--alert-ping URL` (empty: none).
    pub alert_ping: Option<String>,
}

/// Bad job input: names the flag and says what is accepted.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A flag's value is not accepted.
    #[error("{flag}: {message}")]
    Invalid {
        /// The flag (`--timeout`), or `COMMAND`.
        flag: &'static str,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// The schedule's own message says what is wrong (printed once: it is
    /// this error's message, not a cause behind it).
    #[error("--schedule: {0}")]
    Schedule(schedule::ScheduleError),
}

impl From<schedule::ScheduleError> for JobError {
    fn from(e: schedule::ScheduleError) -> JobError {
        JobError::Schedule(e)
    }
}

/// A size (`--memory-max`) that does not read as one.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SizeError {
    #[error("{0:?} is not a size; use e.g. 512M, 2G or a number of bytes")]
    NotANumber(String),
    #[error("unknown size unit {unit:?} in {text:?}; use K, M, G or T")]
    Unit { unit: String, text: String },
    #[error("{0:?} is out of range")]
    OutOfRange(String),
}

fn invalid(flag: &'static str, message: impl Into<String>) -> JobError {
    JobError::Invalid {
        flag,
        message: message.into(),
    }
}

/// Check a job name: not empty, no NUL, not shaped like an id, bounded.
pub fn validate_name(name: &str) -> Result<(), JobError> {
    if name.trim().is_empty() {
        return Err(invalid("--name", "a job needs a non-empty name"));
    }
    if name.contains('\0') {
        return Err(invalid("--name", "names cannot contain NUL bytes"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(invalid(
            "--name",
            format!("{} bytes is too long; at most {MAX_NAME_BYTES}", name.len()),
        ));
    }
    if looks_like_uuid(name) {
        return Err(invalid(
            "--name",
            format!("{name:?} looks like a job id; pick a name that is not a UUID"),
        ));
    }
    Ok(())
}

/// Parse a byte size: `512M`, `2G`, `1048576`, `64K` (powers of 1024).
pub(crate) fn parse_bytes(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| SizeError::NotANumber(text.to_string()))?;
    let mult: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        other => {
            return Err(SizeError::Unit {
                unit: other.to_string(),
                text: text.to_string(),
            });
        }
    };
    n.checked_mul(mult)
        .filter(|b| *b > 0)
        .ok_or_else(|| SizeError::OutOfRange(text.to_string()))
}

/// `--env K=V` pairs into an environment (a later K wins).
pub fn parse_env(pairs: &[String]) -> Result<Env, JobError> {
    let mut env: Vec<(String, String)> = Vec::new();
    for pair in pairs {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| invalid("--env", format!("{pair:?} is not KEY=VALUE")))?;
        if !is_env_name(k) {
            return Err(invalid(
                "--env",
                format!("{k:?} is not a variable name; use letters, digits and _"),
            ));
        }
        if v.contains('\0') {
            return Err(invalid(
                "--env",
                format!("the value of {k} contains a NUL byte"),
            ));
        }
        env.retain(|(existing, _)| existing != k);
        env.push((k.to_string(), v.to_string()));
    }
    Ok(Env(env))
}

/// Check `--pass-env` names: environment variable names, each once.
pub fn parse_pass_env(names: &[String]) -> Result<Vec<String>, JobError> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let name = name.trim();
        if !is_env_name(name) {
            return Err(invalid(
                "--pass-env",
                format!(
                    "{name:?} is not a variable name (letters, digits and _, not first a digit)"
                ),
            ));
        }
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}

/// `[A-Za-z_][A-Za-z0-9_]*`
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_duration_flag(flag: &'static str, text: &str) -> Result<Duration, JobError> {
    let d = schedule::parse_duration(text).map_err(|e| invalid(flag, e.message))?;
    if d.is_zero() {
        return Err(invalid(flag, "must be longer than zero"));
    }
    Ok(d)
}

/// The zone a job's schedule is evaluated in: `tz` read in `zones`, else
/// `fallback`.
pub(super) fn job_zone(tz: Option<&str>, fallback: Tz, zones: &ZoneTable) -> Result<Tz, JobError> {
    match tz {
        Some(name) => zones.parse(name).map_err(|e| invalid("--tz", e.message)),
        None => Ok(fallback),
    }
}

/// `program` read from `base` when it is a relative path (`./standup.sh`,
/// `bin/x`; a bare name is looked up on `PATH` and left alone), with its `.`
/// parts dropped; None when there is nothing to resolve.
fn absolute_program(program: &str, base: &std::path::Path) -> Option<String> {
    let path = std::path::Path::new(program);
    if !program.contains('/') || path.is_absolute() {
        return None;
    }
    let joined: PathBuf = base.join(path).components().collect();
    joined.to_str().map(str::to_string)
}

/// The zone of a job without `--tz`, as the process making or editing it
/// reads it.
#[derive(Clone, Copy, Debug)]
pub enum FallbackZone {
    /// Config `timezone`: every process on the home reads the same one, so
    /// the job keeps no zone of its own and follows the config.
    Configured(Tz),
    /// This process's system zone (`TZ`, `/etc/timezone`, ...), which another
    /// process on the home (the gateway, under its unit) may not share: a job
    /// whose next run is computed in it keeps it as its own zone.
    System(Tz),
}

impl FallbackZone {
    /// The zone itself.
    pub fn zone(self) -> Tz {
        match self {
            FallbackZone::Configured(zone) | FallbackZone::System(zone) => zone,
        }
    }
}

impl JobInput {
    /// A new job from `add`'s flags. `fallback_zone` is the config or system
    /// zone; `--tz` is read in `zones`.
    pub fn build(
        &self,
        id: JobId,
        now: Timestamp,
        fallback_zone: FallbackZone,
        zones: &ZoneTable,
    ) -> Result<Job, JobError> {
        let name = self
            .name
            .clone()
            .ok_or_else(|| invalid("--name", "required"))?;
        let schedule_text = self
            .schedule
            .clone()
            .ok_or_else(|| invalid("--schedule", "required"))?;
        let argv = self.argv.clone().unwrap_or_default();
        // The schedule is parsed by `apply`, in the job's zone.
        let mut job = Job::new(id, name, schedule_text, Schedule::Reboot, argv, now);
        self.apply(&mut job, now, fallback_zone, zones, true)?;
        Ok(job)
    }

    /// Apply `edit`'s flags to `job`. A new schedule or zone re-anchors the job at `now`.
    pub fn apply_edit(
        &self,
        job: &mut Job,
        now: Timestamp,
        fallback_zone: FallbackZone,
        zones: &ZoneTable,
    ) -> Result<(), JobError> {
        self.apply(job, now, fallback_zone, zones, false)
    }

    fn apply(
        &self,
        job: &mut Job,
        now: Timestamp,
        fallback: FallbackZone,
        zones: &ZoneTable,
        new: bool,
    ) -> Result<(), JobError> {
        if let Some(name) = &self.name {
            validate_name(name)?;
            job.name = name.clone();
        }
        if let Some(tz) = &self.tz {
            let tz = tz.trim();
            job.tz = if tz.is_empty() {
                None
            } else {
                Some(
                    job_zone(Some(tz), fallback.zone(), zones)?
                        .name()
                        .to_string(),
                )
            };
        }
        let zone = job_zone(job.tz.as_deref(), fallback.zone(), zones)?;
        let reschedule = new || self.schedule.is_some() || self.tz.is_some();
        // The next run below is computed in this process's own zone: the job
        // keeps it, so the gateway (whose zone may differ) reads it the same.
        if reschedule && job.tz.is_none() && matches!(fallback, FallbackZone::System(_)) {
            job.tz = Some(zone.name().to_string());
        }
        if let Some(text) = &self.schedule {
            job.schedule = Schedule::parse(text, now, zone)?;
            job.schedule_text = text.trim().to_string();
        }
        if reschedule {
            job.anchor = now;
            job.next_run_at = job.schedule.next_after(now, zone, now).map(|f| f.at);
            if let Schedule::Once { at, .. } = job.schedule
                && at <= now
            {
                return Err(invalid(
                    "--schedule",
                    format!(
                        "{:?} is in the past ({at}); one-shots must be in the future",
                        job.schedule_text
                    ),
                ));
            }
            if job.state == JobState::Completed {
                job.state = JobState::Active;
            }
        }
        if let Some(argv) = &self.argv {
            job.argv = argv.clone();
        }
        if job.argv.is_empty() || job.argv.iter().all(|a| a.trim().is_empty()) {
            return Err(invalid(
                "COMMAND",
                "give the command after `--`, e.g. -- echo hi",
            ));
        }
        if job.argv.iter().any(|a| a.contains('\0')) {
            return Err(invalid("COMMAND", "arguments cannot contain NUL bytes"));
        }
        if let Some(shell) = self.shell {
            job.shell = shell;
        }
        if let Some(env) = &self.env {
            job.env = parse_env(env)?;
        }
        if let Some(files) = &self.env_files {
            if let Some(f) = files.iter().find(|f| !f.is_absolute()) {
                return Err(invalid(
                    "--env-file",
                    format!("{} is not an absolute path", f.display()),
                ));
            }
            job.env_files = files.clone();
        }
        if let Some(names) = &self.pass_env {
            job.pass_env = parse_pass_env(names)?;
        }
        if let Some(dir) = &self.workdir {
            if !dir.is_absolute() {
                return Err(invalid(
                    "--workdir",
                    format!("{} is not an absolute path", dir.display()),
                ));
            }
            job.workdir = Some(dir.clone());
        }
        if new && job.workdir.is_none() {
            job.workdir = self.default_workdir.clone();
        }
        if self.argv.is_some() && !job.shell {
            let base = self.workdir.as_ref().or(self.cwd.as_ref());
            if let Some(program) = base.and_then(|base| absolute_program(&job.argv[0], base)) {
                job.argv[0] = program;
            }
        }
        if let Some(t) = &self.timeout {
            job.timeout = Some(match t.trim() {
                "off" | "none" => Duration::ZERO,
                t => parse_duration_flag("--timeout", t)?,
            });
        }
        if let Some(t) = &self.idle_timeout {
            job.idle_timeout = match t.trim() {
                "off" | "none" => None,
                t => Some(parse_duration_flag("--idle-timeout", t)?),
            };
        }
        if let Some(o) = &self.overlap {
            job.overlap = o
                .parse::<Overlap>()
                .map_err(|m| invalid("--overlap", m.to_string()))?;
        }
        if let Some(c) = &self.catch_up {
            job.catch_up = Some(
                c.parse::<CatchUp>()
                    .map_err(|m| invalid("--catch-up", m.to_string()))?,
            );
        }
        if let Some(r) = self.retries {
            if r > MAX_RETRIES {
                return Err(invalid(
                    "--retries",
                    format!("{r} is too many; at most {MAX_RETRIES}"),
                ));
            }
            job.retries = r;
        }
        if let Some(b) = &self.retry_backoff {
            job.retry_backoff = parse_duration_flag("--retry-backoff", b)?;
        }
        if let Some(m) = &self.memory_max {
            job.resources.memory_max =
                Some(parse_bytes(m).map_err(|e| invalid("--memory-max", e.to_string()))?);
        }
        if let Some(w) = self.cpu_weight {
            if !(1..=10_000).contains(&w) {
                return Err(invalid("--cpu-weight", format!("{w} is outside 1..10000")));
            }
            job.resources.cpu_weight = Some(w);
        }
        if let Some(t) = self.tasks_max {
            if t == 0 {
                return Err(invalid("--tasks-max", "must be at least 1"));
            }
            job.resources.tasks_max = Some(t);
        }
        if let Some(r) = self.require_scope {
            job.require_scope = r;
        }
        if let Some(on) = &self.run_on {
            let on = on.trim();
            job.run_on = if on.is_empty() || on == "any" {
                None
            } else if crate::cluster::valid_name(on) {
                Some(on.to_string())
            } else {
                return Err(invalid(
                    "--on",
                    format!(
                        "{on:?} is not a host name or label (1-64 of A-Z a-z 0-9 . : -); `any` runs it on any host"
                    ),
                ));
            };
        }
        self.apply_alerts(&mut job.alerts)?;
        job.updated_at = now;
        Ok(())
    }

    fn apply_alerts(&self, a: &mut JobAlerts) -> Result<(), JobError> {
        if let Some(on) = &self.alert_on {
            a.on = match on.trim() {
                "default" => None,
                text => {
                    Some(KindSet::parse(text).map_err(|m| invalid("--alert-on", m.to_string()))?)
                }
            };
        }
        if let Some(n) = self.alert_after {
            a.after =
                Some(parse_alert_after(n).map_err(|m| invalid("--alert-after", m.to_string()))?);
        }
        if let Some(cmd) = &self.on_alert {
            if cmd.contains('\0') {
                return Err(invalid("--on-alert", "the command contains a NUL byte"));
            }
            a.command = Some(cmd.trim().to_string()).filter(|c| !c.is_empty());
        }
        for (flag, given, slot) in [
            ("--alert-webhook", &self.alert_webhook, &mut a.webhook),
            ("--alert-ping", &self.alert_ping, &mut a.ping),
        ] {
            if let Some(url) = given {
                *slot = match url.trim() {
                    "" => None,
                    u => Some(check_url(u).map_err(|m| invalid(flag, format!("{u:?} {m}")))?),
                };
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relative program is stored absolute, read from where it was typed
    /// (or from this command's `--workdir`), and a new job without
    /// `--workdir` gets the default one (issue 24, bug 2: the run used
    /// whatever directory its launcher had).
    #[test]
    fn a_relative_program_is_stored_absolute_and_a_new_job_gets_the_default_workdir() {
        let zones = ZoneTable::compiled_in_only();
        let now: Timestamp = "2026-06-01T05:00:00Z".parse().unwrap();
        let zone = FallbackZone::Configured(Tz::UTC);
        let input = |argv: &[&str], workdir: Option<&str>| JobInput {
            name: Some("standup".into()),
            schedule: Some("every monday 9am".into()),
            argv: Some(argv.iter().map(|a| a.to_string()).collect()),
            workdir: workdir.map(PathBuf::from),
            cwd: Some("/home/ann/proj".into()),
            default_workdir: Some("/home/ann".into()),
            ..JobInput::default()
        };
        let job = input(&["./standup.sh", "./notes"], None)
            .build(JobId::generate(), now, zone, &zones)
            .unwrap();
        assert_eq!(job.argv, ["/home/ann/proj/standup.sh", "./notes"]);
        assert_eq!(
            job.workdir.as_deref(),
            Some(std::path::Path::new("/home/ann"))
        );
        let job = input(&["bin/x"], Some("/srv/app"))
            .build(JobId::generate(), now, zone, &zones)
            .unwrap();
        assert_eq!(job.argv, ["/srv/app/bin/x"]);
        assert_eq!(
            job.workdir.as_deref(),
            Some(std::path::Path::new("/srv/app"))
        );
        for argv in [&["backup"][..], &["/usr/bin/true"], &["../up.sh"]] {
            let job = input(argv, None)
                .build(JobId::generate(), now, zone, &zones)
                .unwrap();
            let expected = match argv[0] {
                "../up.sh" => "/home/ann/proj/../up.sh",
                other => other,
            };
            assert_eq!(job.argv[0], expected);
        }
        // A shell command is sh's to read, in the workdir.
        let mut shell = input(&["./standup.sh | tee log"], None);
        shell.shell = Some(true);
        let job = shell.build(JobId::generate(), now, zone, &zones).unwrap();
        assert_eq!(job.argv, ["./standup.sh | tee log"]);
        // An edit that does not give --workdir keeps the job's.
        let mut edited = job.clone();
        JobInput {
            argv: Some(vec!["./other.sh".into()]),
            shell: Some(false),
            cwd: Some("/tmp".into()),
            default_workdir: Some("/elsewhere".into()),
            ..JobInput::default()
        }
        .apply_edit(&mut edited, now, zone, &zones)
        .unwrap();
        assert_eq!(edited.argv, ["/tmp/other.sh"]);
        assert_eq!(edited.workdir, job.workdir);
    }

    /// A job whose next run this process computes in its own system zone
    /// keeps that zone (issue 24, bug 1: the gateway's system zone may
    /// differ); a configured zone is followed, not copied.
    #[test]
    fn a_job_scheduled_in_the_system_zone_keeps_it_and_a_configured_zone_is_followed() {
        let zones = ZoneTable::compiled_in_only();
        let now: Timestamp = "2026-06-01T05:00:00Z".parse().unwrap();
        let input = JobInput {
            name: Some("brief".into()),
            schedule: Some("daily at 8am".into()),
            argv: Some(vec!["true".into()]),
            ..JobInput::default()
        };
        let berlin = Tz::Europe__Berlin;
        let pinned = input
            .build(JobId::generate(), now, FallbackZone::System(berlin), &zones)
            .unwrap();
        assert_eq!(pinned.tz.as_deref(), Some("Europe/Berlin"));
        assert_eq!(
            pinned.next_run_at,
            Some("2026-06-01T06:00:00Z".parse().unwrap())
        );
        let followed = input
            .build(
                JobId::generate(),
                now,
                FallbackZone::Configured(berlin),
                &zones,
            )
            .unwrap();
        assert_eq!(followed.tz, None);
        assert_eq!(followed.next_run_at, pinned.next_run_at);
        // An edit that does not reschedule leaves an earlier job's zone alone;
        // one that does (a new schedule, `--tz ''`) keeps the zone it used.
        let mut old = followed.clone();
        let rename = JobInput {
            name: Some("b2".into()),
            ..JobInput::default()
        };
        rename
            .apply_edit(&mut old, now, FallbackZone::System(Tz::UTC), &zones)
            .unwrap();
        assert_eq!(old.tz, None);
        let clear = JobInput {
            tz: Some(String::new()),
            ..JobInput::default()
        };
        clear
            .apply_edit(&mut old, now, FallbackZone::System(Tz::UTC), &zones)
            .unwrap();
        assert_eq!(old.tz.as_deref(), Some("UTC"));
        assert_eq!(
            old.next_run_at,
            Some("2026-06-01T08:00:00Z".parse().unwrap())
        );
    }

    #[test]
    fn sizes_and_env_are_checked_naming_the_flag() {
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("1024").unwrap(), 1024);
        assert!(parse_bytes("12Q").unwrap_err().to_string().contains("Q"));
        let env = parse_env(&["A=1".into(), "B=x=y".into(), "A=2".into()]).unwrap();
        assert_eq!(
            env.0,
            vec![("B".into(), "x=y".into()), ("A".into(), "2".into())]
        );
        let err = parse_env(&["1X=2".into()]).unwrap_err().to_string();
        assert!(err.starts_with("--env"), "{err}");
    }

    #[test]
    fn alert_flags_are_checked_naming_the_flag() {
        let mut a = JobAlerts::default();
        let input = JobInput {
            alert_on: Some("failed,recovered".into()),
            alert_after: Some(3),
            on_alert: Some("notify-send x".into()),
            alert_ping: Some("https://hc-ping.com/u".into()),
            ..JobInput::default()
        };
        input.apply_alerts(&mut a).unwrap();
        assert_eq!(a.after, Some(3));
        assert_eq!(a.on.unwrap().text(), "failed,recovered");
        let clear = JobInput {
            alert_on: Some("default".into()),
            on_alert: Some(String::new()),
            alert_ping: Some(String::new()),
            ..JobInput::default()
        };
        clear.apply_alerts(&mut a).unwrap();
        assert_eq!((a.on, a.command, a.ping), (None, None, None));
        let bad = [
            (
                JobInput {
                    alert_on: Some("sometimes".into()),
                    ..JobInput::default()
                },
                "--alert-on",
            ),
            (
                JobInput {
                    alert_after: Some(0),
                    ..JobInput::default()
                },
                "--alert-after",
            ),
            (
                JobInput {
                    alert_webhook: Some("mailto:x".into()),
                    ..JobInput::default()
                },
                "--alert-webhook",
            ),
        ];
        for (input, flag) in bad {
            let err = input
                .apply_alerts(&mut JobAlerts::default())
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(flag), "{err}");
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(validate_name("brief").is_ok());
        assert!(validate_name("a;b c\nd ../é").is_ok());
        assert!(validate_name("  ").is_err());
        assert!(validate_name("0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f").is_err());
    }
}
