//! Reading the small files hermes-cron is pointed at (its config, a token
//! file, a job's env files, Hermes's `jobs.json` and `.env`): each is read
//! only when it is a regular file, opened without blocking (a FIFO put where
//! a file was expected would hang the gateway at start, deaf to SIGTERM),
//! and at most a bound it cannot exceed by much (`/dev/zero` as a token file
//! drove the gateway to 3 GB in seconds). Anything else is an error naming
//! the file and what it is.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most `config.yaml` may hold (Hermes's whole configuration).
pub(crate) const CONFIG_MAX: u64 = 16 << 20;
/// The most a token file may hold.
pub(crate) const TOKEN_MAX: u64 = 64 << 10;
/// The most an env file (a job's, Hermes's `.env`) may hold.
pub(crate) const ENV_MAX: u64 = 4 << 20;
/// The most Hermes's `jobs.json` may hold (a hundred thousand jobs).
pub(crate) const JOBS_MAX: u64 = 256 << 20;
/// A run's usage report (`HERMES_CRON_USAGE_FILE`).
pub(crate) const USAGE_MAX: u64 = 64 << 10;

/// What kind of file `path`'s type is, in words.
fn kind(ty: std::fs::FileType) -> &'static str {
    if ty.is_fifo() {
        "a FIFO"
    } else if ty.is_char_device() {
        "a character device"
    } else if ty.is_block_device() {
        "a block device"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The bytes of `path`, a regular file of at most `max` bytes. The error
/// says what is wrong (`NotFound` when there is no such file, so callers
/// can tell "absent" from "unusable").
pub(crate) fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    // O_NONBLOCK: opening a FIFO with no writer returns at once.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a file",
                path.display(),
                kind(meta.file_type())
            ),
        ));
    }
    if meta.len() > max {
        return Err(too_big(path, max));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    let read = bounded(file, max).read_to_end(&mut bytes)?;
    if read as u64 > max {
        return Err(too_big(path, max));
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
pub(crate) fn read_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read(path, max)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not UTF-8 text", path.display()),
        )
    })
}

/// One byte more than `max`, to see a file that grew past it.
fn bounded(file: File, max: u64) -> io::Take<File> {
    file.take(max + 1)
}

fn too_big(path: &Path, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} is larger than the {} KiB such a file may hold",
            path.display(),
            max >> 10
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_device_and_a_huge_file_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read(&fifo, TOKEN_MAX).unwrap_err();
        assert!(e.to_string().contains("is a FIFO, not a file"), "{e}");
        let e = read(Path::new("/dev/zero"), TOKEN_MAX).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        let e = read(&big, 1024).unwrap_err();
        assert!(e.to_string().contains("larger than the 1 KiB"), "{e}");
        assert_eq!(read(&big, 2048).unwrap().len(), 2048);
        let missing = read(&dir.path().join("none"), 1).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let e = read_text(&big, 2048).map(|t| t.len()).unwrap();
        assert_eq!(e, 2048);
    }
}
