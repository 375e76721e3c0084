//! Whether a job's program is there, looked up as its worker will: a path
//! (a relative one from the job's workdir, else its account's home), else a
//! name on the job's `PATH` (its `--env PATH=...`, else `cron.path`). The
//! one lookup of `add` and `edit` (which refuse) and `doctor` (which reports).

use crate::job::Job;
use hermes_cron_core::run::lookup_path;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// Why a job's program would not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// A path that is no executable file.
    NotExecutable,
    /// A name found on none of `path`'s directories.
    NotOnPath { path: String },
}

/// Why `job`'s program is missing; None when it is there, or is a shell
/// command (`sh` reads it).
pub fn program_missing(job: &Job, cron_path: &str) -> Option<Missing> {
    if job.shell {
        return None;
    }
    let program = job.argv.first()?;
    let base = job
        .workdir
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::process::account().home));
    if program.contains('/') {
        let path = base.join(program);
        let executable = std::fs::metadata(&path)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        return (!executable).then_some(Missing::NotExecutable);
    }
    let path = lookup_path(&job.env, cron_path);
    match which::which_in(program, Some(path), base) {
        Ok(_) => None,
        Err(_) => Some(Missing::NotOnPath {
            path: path.to_string(),
        }),
    }
}
