//! One gateway per home, and a home fit to run from.
//!
//! ## Locking
//! `state/gateway.lock` is `flock`ed exclusively for the gateway's whole life
//! (released by the kernel when it exits, however it exits); a second gateway
//! on the same home refuses to start and names the first one's pid.

use crate::home::Home;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;

/// The held instance lock.
#[derive(Debug)]
pub struct InstanceLock {
    _lock: Flock<File>,
}

/// Take the instance lock, or say who holds it.
pub fn acquire(home: &Home) -> Result<InstanceLock, String> {
    let path = home.state_dir().join("gateway.lock");
    let file = crate::fsutil::open_lock_file(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(mut lock) => {
            let _ = lock.set_len(0);
            let _ = lock.rewind();
            let _ = write!(lock, "{}", std::process::id());
            Ok(InstanceLock { _lock: lock })
        }
        Err((mut file, nix::errno::Errno::EWOULDBLOCK)) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            Err(format!(
                "another gateway (pid {}) is already running on {}; stop it first or use another --home",
                pid.trim(),
                home.root().display()
            ))
        }
        Err((_, e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

/// Refuse a home owned by another user or writable by group or others.
pub fn check_private(home: &Home) -> Result<(), String> {
    let root = home.root();
    let Ok(meta) = std::fs::metadata(root) else {
        return Ok(());
    };
    let uid = nix::unistd::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "refusing home {}: it is owned by uid {}, not by you (uid {uid}); run the gateway as its owner, or fix it with `chown -R {uid} {}`",
            root.display(),
            meta.uid(),
            root.display()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "refusing home {}: mode {mode:04o} lets group or others write to it; fix it with `chmod 700 {}`",
            root.display(),
            root.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn refuses_a_group_writable_home_and_a_second_instance() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(&tmp.path().join("h"));
        home.ensure().unwrap();
        assert!(check_private(&home).is_ok());
        let first = acquire(&home).unwrap();
        let err = acquire(&home).unwrap_err();
        assert!(err.contains(&std::process::id().to_string()), "{err}");
        drop(first);
        std::fs::set_permissions(home.root(), std::fs::Permissions::from_mode(0o775)).unwrap();
        let err = check_private(&home).unwrap_err();
        assert!(err.contains("chmod 700"), "{err}");
    }
}
