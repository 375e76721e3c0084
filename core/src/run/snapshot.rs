//! What a worker runs: a snapshot of the job taken at claim time, stored on
//! the row, so an edit between the claim and the start cannot change what
//! this occurrence does.

use crate::job::{Env, Job, Resources, RetryPolicy};
use std::path::PathBuf;

/// The command and limits of one occurrence.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunSpec {
    pub argv: Vec<String>,
    pub shell: bool,
    pub env: Env,
    pub workdir: Option<PathBuf>,
    pub timeout_s: u64,
    pub output_max_bytes: u64,
    pub heartbeat_interval_s: u64,
    pub retries: u32,
    pub retry_backoff_s: u64,
    #[serde(default)]
    pub resources: Resources,
    #[serde(default)]
    pub require_scope: bool,
}

impl RunSpec {
    /// The snapshot of `job` under the config defaults.
    pub fn of_job(job: &Job, cfg: &crate::config::CronConfig) -> RunSpec {
        RunSpec {
            argv: job.argv.clone(),
            shell: job.shell,
            env: job.env.clone(),
            workdir: job.workdir.clone(),
            timeout_s: job
                .timeout
                .map(|d| d.as_secs().max(1))
                .unwrap_or(cfg.script_timeout_seconds),
            output_max_bytes: cfg.output_max_bytes,
            heartbeat_interval_s: cfg.heartbeat_interval_s,
            retries: job.retries,
            retry_backoff_s: job.retry_backoff.as_secs(),
            resources: job.resources,
            require_scope: job.require_scope,
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

    /// The occurrence's retry policy (its job's, at claim time).
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            retries: self.retries,
            backoff: std::time::Duration::from_secs(self.retry_backoff_s),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}
