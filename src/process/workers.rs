//! Finding live `hermes-cron-worker` processes by the execution they were
//! started for (their `--execution` argument), from `/proc/*/cmdline`.
//!
//! A worker exists before it adopts its row: between the go byte and the
//! adopting compare-and-set the row is still `claimed` under its launcher,
//! which may already be dead. Sweeps ask here before calling such a row dead.

use super::identity::{identity_of, is_alive};
use hermes_cron_core::run::ProcessIdentity;
use std::collections::HashMap;

/// The execution id a worker command line names, if it names one. The
/// program name is not checked: a wrapper (`sh wrapper --execution E ...`)
/// that will exec the worker counts as the worker, and a UUIDv7 after
/// `--execution` is not something unrelated processes carry.
fn execution_of(cmdline: &[u8]) -> Option<String> {
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let i = args.iter().position(|a| *a == b"--execution")?;
    std::str::from_utf8(args.get(i + 1)?)
        .ok()
        .map(str::to_string)
}

/// Every live worker process, by execution id.
pub fn live_workers() -> HashMap<String, ProcessIdentity> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if let (Some(exec), Some(id)) = (execution_of(&cmdline), identity_of(pid))
            && is_alive(&id)
        {
            out.insert(exec, id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_execution_of_worker_command_lines_only() {
        let w = b"/usr/bin/hermes-cron-worker\0--home\0/h\0--execution\0abc\0--mode\0scoped\0";
        assert_eq!(execution_of(w), Some("abc".into()));
        assert_eq!(
            execution_of(b"/bin/sh\0wrap\0--execution\0abc\0"),
            Some("abc".into())
        );
        assert_eq!(execution_of(b"/bin/sh\0-c\0true\0"), None);
        assert_eq!(execution_of(b"hermes-cron-worker\0--home\0/h\0"), None);
    }
}
