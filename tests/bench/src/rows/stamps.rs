//! "The command's process started", for rows 3 and 4: the job each run
//! executes is `hermes-cron-bench-stamp` (`src/stamp.rs`), which appends its
//! CLOCK_REALTIME at the top of its `main` and the run's execution id to a
//! file. A run's start lateness is that instant minus the slot it was
//! scheduled for, read from its ledger row. It is the same instant the
//! systemd timer peer reports (the top of its service's `main`), and it does
//! not depend on when the worker writes its row.

use hermes_cron::db::Db;
use std::collections::HashMap;
use std::path::Path;

/// The job's argv: `hermes-cron-bench-stamp <file>`.
pub(super) fn stamp_argv(stamp: &Path, file: &Path) -> Vec<String> {
    vec![
        stamp.to_string_lossy().into_owned(),
        file.to_string_lossy().into_owned(),
    ]
}

/// Stamps by execution id, in milliseconds since the epoch (fractional).
pub(super) fn read_stamps(file: &Path) -> HashMap<String, f64> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (ns, id) = l.trim().split_once(' ')?;
            Some((id.to_string(), ns.parse::<u64>().ok()? as f64 / 1e6))
        })
        .collect()
}

/// One row of a window and, when its command started, how late (ms).
pub(super) struct Started {
    pub scheduled_ms: i64,
    pub claimed_ms: i64,
    pub late_ms: Option<f64>,
}

/// Every row scheduled in `[from, to)` and its command's start, if any.
pub(super) fn started_in(
    db: &Db,
    stamps: &Path,
    from: i64,
    to: i64,
) -> Result<Vec<Started>, String> {
    let by_id = read_stamps(stamps);
    let rows: Vec<(String, i64, i64)> = db
        .conn()
        .query_map(
            "SELECT id, scheduled_for, claimed_at FROM executions
             WHERE scheduled_for >= ?1 AND scheduled_for < ?2",
            hermes_cron::params![from, to],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|(id, scheduled_ms, claimed_ms)| Started {
            late_ms: by_id.get(&id).map(|at| at - scheduled_ms as f64),
            scheduled_ms,
            claimed_ms,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_without_an_id_are_ignored() {
        let dir = std::env::temp_dir().join(format!("stamps-{}", std::process::id()));
        std::fs::write(&dir, "1000000000 abc\n2000000000\n").unwrap();
        let s = read_stamps(&dir);
        let _ = std::fs::remove_file(&dir);
        assert_eq!(s.len(), 1);
        assert_eq!(s["abc"], 1000.0);
    }
}
