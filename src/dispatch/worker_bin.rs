//! Finding the `hermes-cron-worker` binary: `HERMES_CRON_WORKER`, else next
//! to the running executable, else on `PATH`.

use std::path::PathBuf;

/// Names the worker binary explicitly (packagers, tests).
pub const WORKER_ENV: &str = "HERMES_CRON_WORKER";
const WORKER_NAME: &str = "hermes-cron-worker";

/// The worker binary could not be found.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot find the {WORKER_NAME} binary (looked at ${WORKER_ENV}, next to {exe}, and on PATH); install it next to hermes-cron or set {WORKER_ENV}"
)]
pub struct WorkerNotFound {
    exe: String,
}

pub fn locate_worker() -> Result<PathBuf, WorkerNotFound> {
    if let Some(p) = std::env::var_os(WORKER_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok();
    if let Some(dir) = exe.as_ref().and_then(|e| e.parent()) {
        let sibling = dir.join(WORKER_NAME);
        if sibling.is_file() {
            return Ok(sibling);
        }
        // `cargo test` puts test binaries in target/<profile>/deps.
        if let Some(up) = dir
            .parent()
            .map(|d| d.join(WORKER_NAME))
            .filter(|p| p.is_file())
        {
            return Ok(up);
        }
    }
    which::which(WORKER_NAME).map_err(|_| WorkerNotFound {
        exe: exe.map(|e| e.display().to_string()).unwrap_or_default(),
    })
}
