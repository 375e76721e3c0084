//! The two ledger writes a worker cannot do without, the adopting
//! compare-and-set and the terminal row, are retried while the ledger cannot
//! be written (a full disk, a lock held past the busy timeout), with a
//! backoff, for up to [`LEDGER_PATIENCE`]; so are opening the ledger and
//! reading the row before them (a PostgreSQL server out of connections
//! refuses the connection: the run waits for one, it is not lost). Giving up at once left a
//! `claimed` row nobody would run, or a `running` row whose real outcome was
//! lost, for a condition that usually passes in seconds.
//!
//! A PostgreSQL ledger out of reach (a partition, the server down) is
//! waited for without a limit: the job has run, and its outcome is written
//! when the database returns (the connection reconnects by itself).
//!
//! A full disk is also met by making room: [`cut_output`] shortens the run's
//! own output file, since the outcome matters more than the last MiB of
//! output, and says so in the file and the row.

use crate::clock::monotonic;
use crate::db::DbError;
use crate::ledger::LedgerError;
use crate::text::Chain;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// How long a worker keeps retrying a ledger write before giving up.
pub(crate) const LEDGER_PATIENCE: Duration = Duration::from_secs(60);
/// What [`cut_output`] frees at most.
pub(crate) const ROOM_FOR_THE_LEDGER: u64 = 1024 * 1024;

const FIRST_PAUSE: Duration = Duration::from_millis(50);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);
/// Between attempts while the database is out of reach.
const UNREACHABLE_PAUSE: Duration = Duration::from_secs(2);

/// How a failure of the ledger may pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Passing {
    /// The database is out of reach: waited for without a limit.
    Unreachable,
    /// It may pass by itself: retried for up to [`LEDGER_PATIENCE`].
    Soon,
    /// It will not (a schema too new, a bad connection string): given up at once.
    Never,
}

/// A ledger failure a worker may wait out.
pub(super) trait Patient: std::error::Error + 'static {
    fn passing(&self) -> Passing;
}

impl Patient for LedgerError {
    fn passing(&self) -> Passing {
        if self.is_unreachable() {
            Passing::Unreachable
        } else {
            Passing::Soon
        }
    }
}

impl Patient for DbError {
    fn passing(&self) -> Passing {
        match self.sql() {
            Some(e) if e.is_unreachable() => Passing::Unreachable,
            Some(_) => Passing::Soon,
            None => Passing::Never,
        }
    }
}

/// Run `op` until it succeeds or [`LEDGER_PATIENCE`] has passed; `op` gets
/// the attempt number (1, 2, ...). The first failure is reported once
/// through `say`.
pub(super) fn retry<T, E: Patient>(
    what: &str,
    mut say: impl FnMut(String),
    mut op: impl FnMut(u32) -> Result<T, E>,
) -> Result<T, E> {
    let start = monotonic();
    let mut pause = FIRST_PAUSE;
    let mut attempt = 1;
    loop {
        match op(attempt) {
            Ok(v) => {
                if attempt > 1 {
                    say(format!("{what}: done after {attempt} attempts"));
                }
                return Ok(v);
            }
            Err(e) if e.passing() == Passing::Never => return Err(e),
            Err(e) if e.passing() == Passing::Unreachable => {
                if attempt == 1 {
                    say(format!(
                        "cannot {what} yet ({}); retrying until the database answers again",
                        Chain(&e)
                    ));
                }
                pause = pause.max(UNREACHABLE_PAUSE);
            }
            Err(e) if start.elapsed() >= LEDGER_PATIENCE => return Err(e),
            Err(e) => {
                if attempt == 1 {
                    say(format!(
                        "cannot {what} yet ({}); retrying for up to {}s",
                        Chain(&e),
                        LEDGER_PATIENCE.as_secs()
                    ));
                }
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(LONGEST_PAUSE.max(pause));
        attempt += 1;
    }
}

/// Shorten the output file at `path` by up to [`ROOM_FOR_THE_LEDGER`] and
/// append a mark saying why. Returns the job output bytes kept, or None when
/// there was nothing to cut.
pub(crate) fn cut_output(path: &Path) -> Option<u64> {
    let len = std::fs::metadata(path).ok()?.len();
    if len == 0 {
        return None;
    }
    let keep = len.saturating_sub(ROOM_FOR_THE_LEDGER);
    let mut file = OpenOptions::new().append(true).open(path).ok()?;
    file.set_len(keep).ok()?;
    let mark = format!(
        "\n[hermes-cron: output cut to {keep} bytes: the disk was full and the run's outcome had to be recorded]\n"
    );
    let _ = file
        .write_all(mark.as_bytes())
        .and_then(|()| file.sync_data());
    Some(keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_a_mib_and_marks_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.log");
        std::fs::write(&path, vec![b'x'; 1536 * 1024]).unwrap();
        assert_eq!(cut_output(&path), Some(512 * 1024));
        let text = std::fs::read(&path).unwrap();
        assert!(text.starts_with(&vec![b'x'; 512 * 1024]));
        assert!(String::from_utf8_lossy(&text[512 * 1024..]).contains("the disk was full"));
        std::fs::write(&path, b"").unwrap();
        assert_eq!(cut_output(&path), None);
    }

    #[test]
    fn retries_until_success() {
        let mut said = Vec::new();
        let got = retry(
            "write",
            |m| said.push(m),
            |attempt| {
                if attempt < 3 {
                    Err(LedgerError::Sql {
                        id: "x".into(),
                        source: crate::db::SqlError::sqlite_failure(rusqlite::ffi::SQLITE_FULL),
                    })
                } else {
                    Ok(attempt)
                }
            },
        );
        assert_eq!(got.unwrap(), 3);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains("database or disk is full"), "{said:?}");
    }
}
