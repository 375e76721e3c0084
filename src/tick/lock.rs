//! `cron/.tick.lock`: at most one claim pass at a time, across processes.
//!
//! ## Locking
//! A non-blocking exclusive `flock` on the file. Contention is normal (another
//! tick is claiming) and not an error; anything else (EMFILE, EACCES, a missing
//! or read-only directory) is. The lock is held only around the claim
//! transaction and released by dropping the guard (closing the descriptor),
//! also when the process dies.

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::{Path, PathBuf};

/// A held tick lock; released on drop.
#[derive(Debug)]
pub(crate) struct TickLock {
    _lock: Flock<File>,
}

/// The outcome of trying to take the lock.
#[derive(Debug)]
pub(crate) enum TryLock {
    Acquired(TickLock),
    /// Another process holds it: it is claiming right now.
    Contended,
}

/// The lock could not be taken for a reason other than contention.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("failed to open the tick lock {}{hint}", path.display())]
    Open {
        path: PathBuf,
        hint: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to lock {}: {errno}", path.display())]
    Lock { path: PathBuf, errno: Errno },
}

fn hint_for(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOENT) => " (the cron directory is missing; is the home right?)",
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (permission denied; check the owner and mode of the home)"
        }
        Some(libc::EROFS) => " (the filesystem is read-only)",
        Some(libc::EMFILE) | Some(libc::ENFILE) => " (too many open files)",
        _ => "",
    }
}

impl TickLock {
    /// Try once to take the lock at `path`, creating the file (0600) if needed.
    pub(crate) fn try_acquire(path: &Path) -> Result<TryLock, LockError> {
        let file = crate::fsutil::open_lock_file(path).map_err(|source| LockError::Open {
            path: path.to_path_buf(),
            hint: hint_for(&source),
            source,
        })?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(TryLock::Acquired(TickLock { _lock: lock })),
            Err((_, Errno::EWOULDBLOCK)) => Ok(TryLock::Contended),
            Err((_, errno)) => Err(LockError::Lock {
                path: path.to_path_buf(),
                errno,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_taker_sees_contention_until_release() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".tick.lock");
        let first = TickLock::try_acquire(&path).unwrap();
        assert!(matches!(first, TryLock::Acquired(_)));
        assert!(matches!(
            TickLock::try_acquire(&path).unwrap(),
            TryLock::Contended
        ));
        drop(first);
        assert!(matches!(
            TickLock::try_acquire(&path).unwrap(),
            TryLock::Acquired(_)
        ));
    }

    #[test]
    fn missing_directory_is_an_error_with_a_hint() {
        let tmp = tempfile::tempdir().unwrap();
        let err = TickLock::try_acquire(&tmp.path().join("nope/.tick.lock")).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
