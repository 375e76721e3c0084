//! One gateway per home, and a home fit to run from.
//!
//! ## Locking
//! `state/hermes-cron.lock` is `flock`ed exclusively for the gateway's whole life
//! (released by the kernel when it exits, however it exits); a second gateway
//! on the same home refuses to start and names the first one's pid, unless
//! that pid is gone while the lock is still held (see `GONE_HOLDER_WAIT`).

use crate::clock::monotonic;
use crate::home::Home;
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

/// The held instance lock.
#[derive(Debug)]
pub(crate) struct InstanceLock {
    _lock: Flock<File>,
}

/// How long to wait for the lock when the gateway that recorded itself in it
/// is gone. A gateway killed while forking a worker leaves its descriptor of
/// the lock (close-on-exec) in that child until the child's exec, a moment
/// later; a restart in that moment must not be refused.
const GONE_HOLDER_WAIT: Duration = Duration::from_secs(3);

/// This home cannot be served by this gateway.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InstanceError {
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot lock {}: {errno}", path.display())]
    Lock { path: PathBuf, errno: Errno },
    #[error(
        "another gateway (pid {pid}) is already running on {}; stop it first or use another --home",
        home.display()
    )]
    Running { pid: String, home: PathBuf },
    #[error(
        "refusing home {}: it is owned by uid {owner}, not by you (uid {uid}); run the gateway as its owner, or fix it with `chown -R {uid} {}`",
        home.display(),
        home.display()
    )]
    NotOurs { home: PathBuf, owner: u32, uid: u32 },
    #[error(
        "refusing home {}: mode {mode:04o} lets group or others write to it; fix it with `chmod 700 {}`",
        home.display(),
        home.display()
    )]
    Writable { home: PathBuf, mode: u32 },
}

/// Take the instance lock, or say who holds it. An earlier hermes-cron
/// gateway (which locked `state/gateway.lock`) still running on the home is
/// refused the same way, so the earlier file can be moved out of the way.
pub(crate) fn acquire(home: &Home) -> Result<InstanceLock, InstanceError> {
    let lock = lock(home, home.instance_lock())?;
    let earlier = crate::legacy_names::earlier_instance_lock(home);
    if earlier.exists() {
        drop(self::lock(home, earlier)?);
    }
    Ok(lock)
}

fn lock(home: &Home, path: PathBuf) -> Result<InstanceLock, InstanceError> {
    let mut file = crate::fsutil::open_lock_file(&path).map_err(|source| InstanceError::Open {
        path: path.clone(),
        source,
    })?;
    let deadline = monotonic() + GONE_HOLDER_WAIT;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut lock) => {
                let _ = lock.set_len(0);
                let _ = lock.rewind();
                let _ = write!(lock, "{}", std::process::id());
                return Ok(InstanceLock { _lock: lock });
            }
            Err((mut held, nix::errno::Errno::EWOULDBLOCK)) => {
                let mut pid = String::new();
                let _ = held.rewind();
                let _ = held.read_to_string(&mut pid);
                let recorded_alive = pid.trim().parse::<i32>().is_ok_and(|p| {
                    nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).is_ok()
                });
                if !recorded_alive && monotonic() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                    file = held;
                    continue;
                }
                return Err(InstanceError::Running {
                    pid: pid.trim().to_string(),
                    home: home.root().to_path_buf(),
                });
            }
            Err((_, errno)) => return Err(InstanceError::Lock { path, errno }),
        }
    }
}

/// Refuse a home owned by another user or writable by group or others.
pub(crate) fn check_private(home: &Home) -> Result<(), InstanceError> {
    let root = home.root();
    let Ok(meta) = std::fs::metadata(root) else {
        return Ok(());
    };
    let uid = nix::unistd::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(InstanceError::NotOurs {
            home: root.to_path_buf(),
            owner: meta.uid(),
            uid,
        });
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(InstanceError::Writable {
            home: root.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn regression_a_lock_left_to_a_dead_gateways_child_is_waited_for() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(&tmp.path().join("h"));
        home.ensure().unwrap();
        // Another open file description holds the lock; the recorded pid is dead.
        let path = home.instance_lock();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut held = Flock::lock(file, FlockArg::LockExclusiveNonblock).unwrap();
        write!(held, "999999999").unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let start = monotonic();
        let lock = acquire(&home).expect("the lock once the inheritor let go");
        assert!(start.elapsed() >= Duration::from_millis(250));
        releaser.join().unwrap();
        // A live recorded holder (us) is refused at once.
        let start = monotonic();
        let err = acquire(&home).unwrap_err().to_string();
        assert!(err.contains(&std::process::id().to_string()), "{err}");
        assert!(start.elapsed() < Duration::from_secs(1));
        drop(lock);
    }

    #[test]
    fn refuses_a_group_writable_home_and_a_second_instance() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(&tmp.path().join("h"));
        home.ensure().unwrap();
        assert!(check_private(&home).is_ok());
        let first = acquire(&home).unwrap();
        let err = acquire(&home).unwrap_err().to_string();
        assert!(err.contains(&std::process::id().to_string()), "{err}");
        drop(first);
        std::fs::set_permissions(home.root(), std::fs::Permissions::from_mode(0o775)).unwrap();
        let err = check_private(&home).unwrap_err().to_string();
        assert!(err.contains("chmod 700"), "{err}");
    }
}
