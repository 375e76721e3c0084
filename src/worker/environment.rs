//! The worker gathers the layers of its job's environment
//! (`hermes_cron_core::run::compose` lays them out and documents the order):
//! its account from the password database, the bus variables it was given,
//! the job's env files, and the values of the variables the job passes
//! through. Nothing else of the worker's own environment (which is its
//! launcher's: the gateway's, or the shell's of a `run`) reaches the job.

use crate::home::Home;
use hermes_cron_core::run::{BUS_VARIABLES, Execution, Layers, RunSpec, compose, parse_env_file};

/// An `--env-file` the run cannot use: the command never starts.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EnvFileUnusable {
    #[error("cannot read --env-file {}: {why}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        why: String,
    },
    #[error("--env-file {}: {why}", path.display())]
    Malformed {
        path: std::path::PathBuf,
        why: String,
    },
}

/// The job's environment, or why it cannot be had (an env file that cannot
/// be read or parsed): the run then fails without starting the command.
pub(crate) fn job_environment(
    home: &Home,
    row: &Execution,
    spec: &RunSpec,
) -> Result<Vec<(String, String)>, EnvFileUnusable> {
    let account = Some(crate::process::account());
    let mut files = Vec::new();
    for path in &spec.env_files {
        let text = crate::small_file::read_text(path, crate::small_file::ENV_MAX).map_err(|e| {
            EnvFileUnusable::Unreadable {
                path: path.clone(),
                why: e.to_string(),
            }
        })?;
        let pairs = parse_env_file(&text).map_err(|e| EnvFileUnusable::Malformed {
            path: path.clone(),
            why: e.to_string(),
        })?;
        files.push(pairs);
    }
    let var = |name: &str| std::env::var(name).ok().map(|v| (name.to_string(), v));
    let mut ids = vec![
        ("HERMES_CRON_EXECUTION_ID".to_string(), row.id.to_string()),
        ("HERMES_CRON_JOB_NAME".to_string(), row.job_name.clone()),
    ];
    if let Some(job) = &row.job_id {
        ids.push(("HERMES_CRON_JOB_ID".to_string(), job.to_string()));
    }
    ids.push((
        "HERMES_CRON_USAGE_FILE".to_string(),
        home.usage_report(row.id.as_str()).display().to_string(),
    ));
    ids.push((
        crate::home::HOME_ENV.to_string(),
        home.root().display().to_string(),
    ));
    Ok(compose(&Layers {
        account: account.as_ref(),
        path: spec.path.as_deref(),
        bus: BUS_VARIABLES.iter().filter_map(|n| var(n)).collect(),
        config_env: Some(&spec.config_env),
        files,
        passed: spec.pass_env.iter().filter_map(|n| var(n)).collect(),
        job_env: Some(&spec.env),
        ids,
    }))
}
