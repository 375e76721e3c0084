//! What a job inherits of its worker's descriptors: its stdio only. A
//! worker may itself have inherited descriptors its launcher left open (a
//! terminal's, a test harness's); they are marked close-on-exec in the
//! job's child before it execs, so the job starts with 0, 1 and 2.

/// Descriptors the fallback marks when `close_range` is unavailable.
const FALLBACK_LIMIT: i32 = 4096;

/// Mark every descriptor from 3 up close-on-exec. For `Command::pre_exec`
/// (after std set up the child's stdio): async-signal-safe, one
/// `close_range(CLOSE_RANGE_CLOEXEC)` call (Linux 5.11), else `fcntl` per
/// descriptor. std's own exec-error pipe is close-on-exec already.
pub(crate) fn only_stdio_on_exec() -> std::io::Result<()> {
    // SAFETY: close_range and fcntl take plain integers and touch no memory.
    unsafe {
        if libc::close_range(
            3,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
        ) == 0
        {
            return Ok(());
        }
        for fd in 3..FALLBACK_LIMIT {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    Ok(())
}
