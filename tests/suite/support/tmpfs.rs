//! A small tmpfs for full-disk tests (root only: `mount -t tmpfs`), with a
//! guard that unmounts it when dropped, even when the test failed: processes
//! still using it (workers, jobs, a gateway) are SIGKILLed first, and a busy
//! mount is detached lazily as a last resort.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A mounted tmpfs, unmounted on drop.
pub(crate) struct Tmpfs {
    // Declared first: dropped (removed) after `Drop::drop` has unmounted.
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl Tmpfs {
    /// Mount a tmpfs of `size` (`4m`, `512k`) with mode 0700. Panics with
    /// the cause when this process may not mount (tests run as root in CI).
    pub(crate) fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::Builder::new()
            .prefix("hermes-cron-disk-")
            .tempdir()
            .expect("temp dir");
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).expect("mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size},mode=0700"))
            .arg("tmpfs")
            .arg(&mount)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "cannot mount a {size} tmpfs at {} (the full-disk tests need root): {}",
            mount.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { _dir: dir, mount }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.mount
    }

    /// Fill it: write `path` (on it) until the disk refuses; returns the bytes written.
    pub(crate) fn fill(&self, path: &Path) -> u64 {
        let mut f = std::fs::File::create(path).expect("filler file");
        let mut written = 0u64;
        for chunk in [64 * 1024, 4096, 512, 1] {
            let buf = vec![0u8; chunk];
            loop {
                match f.write(&buf) {
                    Ok(0) => break,
                    Ok(n) => written += n as u64,
                    Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                    Err(e) => panic!("filling {}: {e}", path.display()),
                }
            }
        }
        written
    }

    /// Free bytes, as `statvfs` says.
    pub(crate) fn free(&self) -> u64 {
        let st = nix::sys::statvfs::statvfs(&self.mount).expect("statvfs");
        st.blocks_available() as u64 * st.fragment_size() as u64
    }

    /// Pids of processes with their cwd, an open file or their command line under the mount.
    fn users(&self) -> Vec<i32> {
        let me = std::process::id() as i32;
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let under = |p: PathBuf| p.starts_with(&self.mount);
            let cwd = std::fs::read_link(entry.path().join("cwd")).is_ok_and(under);
            let fds = std::fs::read_dir(entry.path().join("fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(under))
            });
            let cmdline = std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c).contains(&*self.mount.to_string_lossy())
            });
            if cwd || fds || cmdline {
                out.push(pid);
            }
        }
        out
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        for attempt in 0..50 {
            for pid in self.users() {
                // SAFETY: kill(2) on a process found using our test mount.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            let ok = Command::new("umount")
                .arg(&self.mount)
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            if attempt == 49 {
                eprintln!(
                    "{} still busy; detaching it lazily (umount -l)",
                    self.mount.display()
                );
                let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
