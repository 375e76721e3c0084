//! The hermes home directory and every path inside it.
//!
//! `$HERMES_HOME`, default `~/.hermes`. Directories are created 0700 and files
//! the project writes are 0600. Only this module knows the layout.
//!
//! The home is shared with the Hermes Agent, which has files of its own in
//! the same directories (`state/gateway.heartbeat`, `cron/.tick.lock`,
//! `cron/jobs.json`, `logs/gateway.log`, ...). Every file hermes-cron writes
//! outside `cron/cron.db` and `cron/output/<uuid>/` carries `hermes-cron` in
//! its name, so the two never touch each other's files. Names used by
//! earlier versions are moved by `legacy_names.rs`.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The environment variable naming the home.
/// Hermes's jobs, in `cron/`.
pub const HERMES_JOBS_FILE: &str = "jobs.json";
/// The file in `cron/` the provider plugin touches to make the gateway read
/// `jobs.json` now.
pub const POKE_FILE: &str = ".hermes-cron.poke";

pub(crate) const HOME_ENV: &str = "HERMES_HOME";

/// A hermes home: the root directory and the fixed layout under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

/// Failed to find or prepare the home directory.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    #[error("cannot find a home: set {HOME_ENV} or HOME, or pass --home DIR")]
    NoHome,
    #[error("failed to create {path}")]
    Create {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl Home {
    /// The home named by `--home`, else `$HERMES_HOME`, else `~/.hermes`.
    pub fn resolve(flag: Option<&Path>) -> Result<Home, HomeError> {
        if let Some(dir) = flag {
            return Ok(Home::at(dir));
        }
        if let Some(dir) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Home::at(Path::new(&dir)));
        }
        let user_home = std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .ok_or(HomeError::NoHome)?;
        Ok(Home::at(&Path::new(&user_home).join(".hermes")))
    }

    /// A home rooted at `dir` (made absolute against the current directory).
    pub fn at(dir: &Path) -> Home {
        let root = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(dir))
                .unwrap_or_else(|_| dir.to_path_buf())
        };
        Home { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.yaml")
    }
    pub fn cron_dir(&self) -> PathBuf {
        self.root.join("cron")
    }
    pub fn db_file(&self) -> PathBuf {
        self.cron_dir().join("cron.db")
    }
    /// `cron/jobs.json`, Hermes's jobs.
    pub fn hermes_jobs_file(&self) -> PathBuf {
        self.cron_dir().join(HERMES_JOBS_FILE)
    }
    /// `cron/executions.db`, Hermes's own ledger of its fires (read only).
    pub fn hermes_executions_file(&self) -> PathBuf {
        self.cron_dir().join("executions.db")
    }
    /// `cron/.hermes-cron.tick.lock` (Hermes's own ticker locks `cron/.tick.lock`).
    pub(crate) fn tick_lock(&self) -> PathBuf {
        self.cron_dir().join(".hermes-cron.tick.lock")
    }
    pub(crate) fn output_root(&self) -> PathBuf {
        self.cron_dir().join("output")
    }
    /// `cron/output/<job-id>/`
    pub(crate) fn output_dir(&self, job_id: &str) -> PathBuf {
        self.output_root().join(job_id)
    }
    /// `cron/output/<job-id>/<execution-id>.log`
    pub fn output_file(&self, job_id: &str, execution_id: &str) -> PathBuf {
        self.output_dir(job_id).join(format!("{execution_id}.log"))
    }
    /// `cron/usage/<execution-id>.json`: where a run may report the model
    /// usage of its run (`HERMES_CRON_USAGE_FILE`); its worker reads it into
    /// the row and removes it.
    pub fn usage_report(&self, execution_id: &str) -> PathBuf {
        self.cron_dir()
            .join("usage")
            .join(format!("{execution_id}.json"))
    }
    pub(crate) fn state_dir(&self) -> PathBuf {
        self.root.join("state")
    }
    /// `state/hermes-cron.heartbeat` (`state/gateway.heartbeat` is the Hermes chat gateway's).
    pub(crate) fn heartbeat_file(&self) -> PathBuf {
        self.state_dir().join("hermes-cron.heartbeat")
    }
    pub(crate) fn lifecycle_file(&self) -> PathBuf {
        self.state_dir().join("hermes-cron-lifecycle.jsonl")
    }
    /// The gateway's view of its database and lease (shared ledger only).
    pub fn cluster_file(&self) -> PathBuf {
        self.state_dir().join("hermes-cron-cluster.json")
    }

    pub(crate) fn metrics_file(&self) -> PathBuf {
        self.state_dir().join("hermes-cron.prom")
    }
    /// The gateway's instance lock: one gateway per home.
    pub(crate) fn instance_lock(&self) -> PathBuf {
        self.state_dir().join("hermes-cron.lock")
    }
    /// Detached workers' own log (their stderr).
    pub(crate) fn worker_log(&self) -> PathBuf {
        self.logs_dir().join("hermes-cron-worker.log")
    }
    /// The loop watchdog's forensic dump written at `stamp`.
    pub(crate) fn watchdog_dump(&self, stamp: &str) -> PathBuf {
        self.logs_dir()
            .join(format!("hermes-cron-watchdog-{stamp}.txt"))
    }
    pub(crate) fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// Create the home and its directories (0700) when missing. Existing
    /// directories keep their mode; `doctor` reports loose ones.
    pub fn ensure(&self) -> Result<(), HomeError> {
        for dir in [
            self.root.clone(),
            self.cron_dir(),
            self.output_root(),
            self.state_dir(),
            self.logs_dir(),
        ] {
            ensure_private_dir(&dir)?;
        }
        Ok(())
    }
}

/// Create `dir` (and missing parents of it) with mode 0700.
pub fn ensure_private_dir(dir: &Path) -> Result<(), HomeError> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| HomeError::Create {
            path: dir.to_path_buf(),
            source,
        })?;
    // The umask may have narrowed the mode further, never widened it; make it exact.
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(|source| {
        HomeError::Create {
            path: dir.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ensure_creates_private_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(&tmp.path().join("h"));
        home.ensure().unwrap();
        for dir in [home.root().to_path_buf(), home.cron_dir(), home.state_dir()] {
            let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
        assert!(home.db_file().ends_with("cron/cron.db"));
        assert!(home.tick_lock().ends_with("cron/.hermes-cron.tick.lock"));
    }

    #[test]
    fn flag_wins_over_environment() {
        let home = Home::resolve(Some(Path::new("/tmp/x"))).unwrap();
        assert_eq!(home.root(), Path::new("/tmp/x"));
    }
}
