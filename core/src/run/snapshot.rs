//! What a worker runs: a snapshot of the job taken at claim time, stored on
//! the row, so an edit between the claim and the start cannot change what
//! this occurrence does.

use crate::job::{Env, Job, Resources, RetryPolicy};
use std::path::PathBuf;

/// The command and limits of one occurrence.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunSpec {
    /// The command: a program and its arguments, or (with `shell`) the words of a shell line.
    pub argv: Vec<String>,
    /// Run `argv` joined by spaces through `/bin/sh -c`.
    pub shell: bool,
    /// The job's `--env`.
    pub env: Env,
    /// The job's `--env-file`s, read by the worker.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_files: Vec<PathBuf>,
    /// The job's `--pass-env` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// `cron.env` when the run was claimed.
    #[serde(default, skip_serializing_if = "Env::is_empty")]
    pub config_env: Env,
    /// `cron.path` when the run was claimed (None: the default PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The command's working directory (None: the worker's own).
    pub workdir: Option<PathBuf>,
    /// The wall-clock limit in seconds (0: none).
    pub timeout_s: u64,
    /// No output for this long stops the run (`idle`); None: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_s: Option<u64>,
    /// The most output kept in the output file, in bytes; the rest is dropped.
    pub output_max_bytes: u64,
    /// Append to the output file (a caller's log) instead of starting it afresh.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub output_append: bool,
    /// How often the worker stamps `heartbeat_at`, in seconds.
    pub heartbeat_interval_s: u64,
    /// Attempts after the first.
    pub retries: u32,
    /// The first retry's backoff in seconds; it doubles with each attempt.
    pub retry_backoff_s: u64,
    /// The limits its scope gets.
    #[serde(default)]
    pub resources: Resources,
    /// Never run outside a restart-safe scope: refused instead of degraded.
    #[serde(default)]
    pub require_scope: bool,
    /// The exit status by which the command says it chose not to run (a
    /// Hermes job's fire that Hermes declined): recorded `skipped`
    /// (`declined`), not `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declined_exit: Option<i32>,
    /// The exit status by which the command says it ran the job but could
    /// not deliver its result (a Hermes fire whose answer Hermes could not
    /// send): recorded `failed` (`delivery_failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_failed_exit: Option<i32>,
    /// Where its alerts go and when (the job's settings over the config's);
    /// None: nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert: Option<crate::alert::AlertSpec>,
}

impl RunSpec {
    /// The snapshot of `job` under the config: its defaults, and `cron.env`
    /// and `cron.path` as they are now (an edit of the config after the
    /// claim does not change this occurrence).
    pub fn of_job(job: &Job, cfg: &crate::config::CronConfig) -> RunSpec {
        RunSpec {
            argv: job.argv.clone(),
            shell: job.shell,
            env: job.env.clone(),
            env_files: job.env_files.clone(),
            pass_env: job.pass_env.clone(),
            config_env: cfg.env.clone(),
            path: Some(cfg.path.clone()),
            workdir: job.workdir.clone(),
            // `--timeout off` (zero): no wall-clock limit.
            timeout_s: job
                .timeout
                .map(|d| if d.is_zero() { 0 } else { d.as_secs().max(1) })
                .unwrap_or(cfg.script_timeout_seconds),
            idle_timeout_s: job.idle_timeout.map(|d| d.as_secs().max(1)),
            output_max_bytes: cfg.output_max_bytes,
            output_append: false,
            heartbeat_interval_s: cfg.heartbeat_interval_s,
            retries: job.retries,
            retry_backoff_s: job.retry_backoff.as_secs(),
            resources: job.resources,
            require_scope: job.require_scope,
            declined_exit: job.managed.then_some(crate::provider::DECLINED_EXIT),
            delivery_failed_exit: job.managed.then_some(crate::provider::DELIVERY_FAILED_EXIT),
            alert: crate::alert::AlertSpec::merge(&job.alerts, cfg.alert_defaults()),
        }
    }

    /// The program and arguments to exec: argv, or `sh -c <argv joined>`.
    pub fn command(&self) -> Vec<String> {
        if self.shell {
            vec!["/bin/sh".into(), "-c".into(), self.argv.join(" ")]
        } else {
            self.argv.clone()
        }
    }

    /// What its exit statuses mean beyond success and failure.
    pub fn exit_meanings(&self) -> crate::run::ExitMeanings {
        crate::run::ExitMeanings {
            declined: self.declined_exit,
            delivery_failed: self.delivery_failed_exit,
        }
    }

    /// The occurrence's retry policy (its job's, at claim time).
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            retries: self.retries,
            backoff: std::time::Duration::from_secs(self.retry_backoff_s),
        }
    }

    /// The spec as stored on the row (`{}` if it cannot be written, which a plain struct never is).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}
