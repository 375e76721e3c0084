//! Retention: keep the newest `cron.ledger_retention` terminal rows and the
//! newest `cron.output_retention` output files per job. Active rows
//! (`claimed`, `running`) and their output are never touched. Run by the
//! gateway at most hourly and by `hermes-cron prune`.

use crate::config::CronConfig;
use crate::db::Db;
use crate::home::Home;
use crate::ledger;
use std::collections::HashSet;

/// What a prune removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PruneReport {
    pub rows_deleted: u64,
    pub outputs_deleted: u64,
    pub bytes_freed: u64,
}

/// Failed to prune.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error("failed to prune the ledger")]
    Sql(#[from] crate::db::SqlError),
    #[error("failed to list {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Prune the ledger and the output files.
pub fn prune(db: &mut Db, home: &Home, cfg: &CronConfig) -> Result<PruneReport, PruneError> {
    let mut report = PruneReport {
        rows_deleted: ledger::prune_rows(db, cfg.ledger_retention)?,
        ..PruneReport::default()
    };
    let active: HashSet<String> = ledger::active_runs(db.conn())?
        .into_iter()
        .map(|e| e.id.to_string())
        .collect();
    let root = home.output_root();
    let dirs = match std::fs::read_dir(&root) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(source) => {
            return Err(PruneError::Io {
                path: root.display().to_string(),
                source,
            });
        }
    };
    for dir in dirs.flatten().filter(|d| d.path().is_dir()) {
        let mut files: Vec<_> = std::fs::read_dir(dir.path())
            .map_err(|source| PruneError::Io {
                path: dir.path().display().to_string(),
                source,
            })?
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().ends_with(".log"))
            .collect();
        // Execution ids are UUIDv7: their names sort by time, newest last.
        files.sort_by_key(|f| std::cmp::Reverse(f.file_name()));
        for f in files.into_iter().skip(cfg.output_retention as usize) {
            let name = f
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".log")
                .to_string();
            if active.contains(&name) {
                continue;
            }
            let size = f.metadata().map(|m| m.len()).unwrap_or(0);
            if std::fs::remove_file(f.path()).is_ok() {
                report.outputs_deleted += 1;
                report.bytes_freed += size;
            }
        }
    }
    Ok(report)
}
