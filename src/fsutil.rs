//! Atomic file replacement, for `config.yaml`, the heartbeat and the metrics file.
//!
//! Invariants: readers see either the old file or the new one, never a
//! partial write: the text goes to a fresh temp file in the same directory
//! (created exclusively, mode 0600), is fsynced, then renamed over the target,
//! and the directory is fsynced. On failure the temp file is removed and the
//! old file is untouched. The result is always mode 0600; a missing parent
//! directory is created 0700. A symlinked config file is followed, so the
//! link's target is replaced and the link kept.
//!
//! ## Locking
//! None: two concurrent writers each produce a complete file and the last
//! rename wins (a lost update, never a torn file).

use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A failed atomic write: which path, and why.
#[derive(Debug, thiserror::Error)]
#[error("failed to write {}", path.display())]
pub(crate) struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

const FILE_MODE: u32 = 0o600;
const DIR_MODE: u32 = 0o700;

/// Replace `path` with `text`, atomically.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let target = resolve_symlink(path);
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(&dir)
            .map_err(|source| io_error(&dir, source))?;
    }
    let (temp_path, file) = create_temp(&dir, &target)?;
    let result = fill(file, bytes)
        .map_err(|source| io_error(&temp_path, source))
        .and_then(|()| fs::rename(&temp_path, &target).map_err(|s| io_error(&target, s)));
    if result.is_err() {
        let _ = fs::remove_file(&temp_path);
        return result;
    }
    // Make the rename durable; some filesystems cannot fsync a directory,
    // and the new file is complete either way.
    if let Ok(handle) = File::open(&dir) {
        let _ = handle.sync_all();
    }
    Ok(())
}

/// The file a write should replace: the target of a symlink when it resolves.
fn resolve_symlink(path: &Path) -> PathBuf {
    let is_link = fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    if is_link && let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    path.to_path_buf()
}

/// A new, exclusively created temp file next to `target`.
fn create_temp(dir: &Path, target: &Path) -> Result<(PathBuf, File), WriteError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mut attempt = 0;
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            // A leftover from a crashed process that had our pid: next name.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(source) => return Err(io_error(&temp, source)),
        }
    }
}

/// Write, force the mode past any umask, and flush to disk.
fn fill(mut file: File, bytes: &[u8]) -> io::Result<()> {
    file.set_permissions(Permissions::from_mode(FILE_MODE))?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn io_error(path: &Path, source: io::Error) -> WriteError {
    WriteError {
        path: path.to_path_buf(),
        source,
    }
}

/// Open (creating, 0600, close-on-exec) a file used only for `flock`.
pub(crate) fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_with_mode_0600_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        fs::write(&path, "old: 1\n").unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        write_atomic(&path, b"new: 2\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new: 2\n");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(entries(dir.path()), ["config.yaml"]);
    }

    #[test]
    fn creates_a_missing_parent_directory_0700() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let path = home.join("config.yaml");
        write_atomic(&path, b"a: 1\n").unwrap();
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn follows_a_symlink_and_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.yaml");
        let link = dir.path().join("config.yaml");
        fs::write(&real, "a: 1\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"a: 2\n").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "a: 2\n");
    }

    #[test]
    fn a_failed_rename_leaves_the_old_file_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory where the file should go: rename must fail.
        let path = dir.path().join("config.yaml");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("keep"), "x").unwrap();
        let err = write_atomic(&path, b"a: 1\n").unwrap_err();
        assert_eq!(err.path, path);
        assert_eq!(entries(dir.path()), ["config.yaml"]);
        assert_eq!(entries(&path), ["keep"]);
    }
}
