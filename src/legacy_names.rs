//! Moving the files an earlier hermes-cron wrote under names the Hermes Agent
//! uses, or might: run by the gateway at start, under its instance lock,
//! before it writes any of its own.
//!
//! | earlier name | now | how |
//! |---|---|---|
//! | `state/lifecycle.jsonl` | `state/hermes-cron-lifecycle.jsonl` | renamed (appended to, when both exist): the history is kept |
//! | `state/metrics.prom` | `state/hermes-cron.prom` | renamed |
//! | `logs/worker.log` | `logs/hermes-cron-worker.log` | renamed (appended to, when both exist) |
//! | `state/gateway.heartbeat` | `state/hermes-cron.heartbeat` | removed, only when it is ours (our format); the Hermes chat gateway writes its own heartbeat there |
//! | `state/gateway.lock` | `state/hermes-cron.lock` | removed once no earlier gateway holds it (the caller checks) |
//!
//! `cron/.tick.lock` is left alone: it is the Hermes ticker's lock; ours is
//! `cron/.hermes-cron.tick.lock`. Every step is best effort: a file that
//! cannot be moved is reported, and the gateway runs on.

use crate::home::Home;
use hermes_cron_core::health::Heartbeat;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The instance lock an earlier gateway holds while it runs.
pub(crate) fn earlier_instance_lock(home: &Home) -> PathBuf {
    home.root().join("state").join("gateway.lock")
}

/// What was done, one line each, for the log.
pub(crate) fn migrate(home: &Home) -> Vec<String> {
    let state = home.root().join("state");
    let logs = home.root().join("logs");
    let mut done = Vec::new();
    let mut note = |r: std::io::Result<Option<String>>, what: &str| match r {
        Ok(Some(line)) => done.push(line),
        Ok(None) => {}
        Err(e) => done.push(format!("could not move {what}: {e}")),
    };
    note(
        move_or_append(&state.join("lifecycle.jsonl"), &home.lifecycle_file()),
        "state/lifecycle.jsonl",
    );
    note(
        move_or_append(&logs.join("worker.log"), &home.worker_log()),
        "logs/worker.log",
    );
    note(
        rename_unless_exists(&state.join("metrics.prom"), &home.metrics_file()),
        "state/metrics.prom",
    );
    note(
        remove_our_heartbeat(&state.join("gateway.heartbeat")),
        "state/gateway.heartbeat",
    );
    note(
        remove_if_exists(&earlier_instance_lock(home)),
        "state/gateway.lock",
    );
    done
}

fn moved(from: &Path, to: &Path) -> Option<String> {
    Some(format!("moved {} to {}", from.display(), to.display()))
}

/// Rename `from` to `to`; when `to` exists too, append `from` to it first
/// (both are logs) and remove `from`.
fn move_or_append(from: &Path, to: &Path) -> std::io::Result<Option<String>> {
    if !from.exists() {
        return Ok(None);
    }
    if !to.exists() {
        std::fs::rename(from, to)?;
        return Ok(moved(from, to));
    }
    let old = std::fs::read(from)?;
    let mut file = std::fs::OpenOptions::new().append(true).open(to)?;
    file.write_all(&old)?;
    file.sync_data()?;
    std::fs::remove_file(from)?;
    Ok(Some(format!(
        "appended {} to {}",
        from.display(),
        to.display()
    )))
}

fn rename_unless_exists(from: &Path, to: &Path) -> std::io::Result<Option<String>> {
    if !from.exists() {
        return Ok(None);
    }
    if to.exists() {
        std::fs::remove_file(from)?;
        return Ok(Some(format!("removed {}", from.display())));
    }
    std::fs::rename(from, to)?;
    Ok(moved(from, to))
}

/// Remove the heartbeat an earlier hermes-cron wrote, and only that: the
/// Hermes chat gateway's file has another shape.
fn remove_our_heartbeat(path: &Path) -> std::io::Result<Option<String>> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(None);
    };
    if serde_json::from_slice::<Heartbeat>(&bytes).is_err() {
        return Ok(None);
    }
    std::fs::remove_file(path)?;
    Ok(Some(format!(
        "removed {} (an earlier hermes-cron's heartbeat)",
        path.display()
    )))
}

fn remove_if_exists(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Some(format!("removed {}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_names_move_and_hermes_files_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path());
        home.ensure().unwrap();
        let state = tmp.path().join("state");
        std::fs::write(state.join("lifecycle.jsonl"), "{\"old\":1}\n").unwrap();
        std::fs::write(home.lifecycle_file(), "{\"new\":1}\n").unwrap();
        std::fs::write(state.join("metrics.prom"), "m 1\n").unwrap();
        // The Hermes chat gateway's heartbeat: not ours, left alone.
        let hermes = r#"{"pid": 1, "updated_at": "2026-12-01T00:00:00Z", "monotonic": 1.0, "start_time": 1.0}"#;
        std::fs::write(state.join("gateway.heartbeat"), hermes).unwrap();
        let done = migrate(&home);
        assert_eq!(done.len(), 2, "{done:?}");
        assert_eq!(
            std::fs::read_to_string(home.lifecycle_file()).unwrap(),
            "{\"new\":1}\n{\"old\":1}\n"
        );
        assert!(!state.join("lifecycle.jsonl").exists());
        assert_eq!(
            std::fs::read_to_string(home.metrics_file()).unwrap(),
            "m 1\n"
        );
        assert_eq!(
            std::fs::read_to_string(state.join("gateway.heartbeat")).unwrap(),
            hermes
        );
        assert!(migrate(&home).is_empty(), "idempotent");
    }
}
