//! The gateway's state files under the home's `state/`: the heartbeat,
//! rewritten atomically on a period, and the lifecycle record, one line per
//! start and exit. The gateway writes them (`daemon/`); `status`, `doctor`
//! and `metrics` read them (`ops/`). Their formats are
//! `hermes_cron_core::health`.

use crate::fsutil::{WriteError, write_atomic};
use crate::home::Home;
use hermes_cron_core::health::{Heartbeat, LifecycleLine};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

/// Read the heartbeat file of `home`; None when absent or unreadable.
pub fn read_heartbeat(home: &Home) -> Option<Heartbeat> {
    serde_json::from_slice(&std::fs::read(home.heartbeat_file()).ok()?).ok()
}

/// Replace the heartbeat file (atomically). A failed write (a full disk)
/// leaves the old file, whose age then tells the truth.
pub(crate) fn write_heartbeat(home: &Home, beat: &Heartbeat) -> Result<(), WriteError> {
    let json = serde_json::to_vec_pretty(beat).unwrap_or_default();
    write_atomic(&home.heartbeat_file(), &json)
}

/// Read the cluster file of `home` (a gateway on a shared ledger); None
/// when absent or unreadable.
pub fn read_cluster(home: &Home) -> Option<hermes_cron_core::cluster::ClusterFile> {
    serde_json::from_slice(&std::fs::read(home.cluster_file()).ok()?).ok()
}

/// Replace the cluster file (atomically).
pub(crate) fn write_cluster(
    home: &Home,
    file: &hermes_cron_core::cluster::ClusterFile,
) -> Result<(), WriteError> {
    let json = serde_json::to_vec_pretty(file).unwrap_or_default();
    write_atomic(&home.cluster_file(), &json)
}

/// Append one lifecycle line, synced (best effort: a full disk must not
/// stop an exit).
pub(crate) fn append_lifecycle(home: &Home, line: &LifecycleLine) {
    let Ok(mut text) = serde_json::to_string(line) else {
        return;
    };
    text.push('\n');
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(home.lifecycle_file());
    if let Ok(mut f) = file {
        let _ = f.write_all(text.as_bytes());
        let _ = f.sync_data();
    }
}
