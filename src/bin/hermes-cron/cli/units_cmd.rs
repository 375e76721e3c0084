//! `units install`: the gateway's systemd units written where systemd
//! reads them, naming this very binary (see the library's
//! `systemd::unit_files`).

use super::args::UnitsAction;
use super::fail::usage;
use hermes_cron::systemd::unit_files::{self, UnitSet};
use std::path::PathBuf;

pub(super) fn units(action: UnitsAction, json: bool) -> anyhow::Result<i32> {
    let UnitsAction::Install {
        user: _,
        system,
        dir,
        binary,
    } = action;
    let set = if system {
        UnitSet::System
    } else {
        UnitSet::User
    };
    // A packager names where the binary will be; only this one can be checked.
    let packaged = binary.is_some();
    let binary = match binary {
        Some(path) => path,
        None => std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| anyhow::anyhow!("cannot tell where this hermes-cron binary is: {e}"))?,
    };
    let worker = binary.with_file_name("hermes-cron-worker");
    let files = unit_files::render(set, &binary, env!("CARGO_PKG_VERSION"))?;
    let dir = match dir {
        Some(dir) => dir,
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from).ok_or_else(|| {
                usage("units install: HOME is not set; give the directory with --dir")
            })?;
            let config_home = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
            unit_files::default_dir(set, config_home.as_deref(), &home)
        }
    };
    let written = unit_files::write(&dir, &files)?;
    if !packaged && !worker.is_file() {
        tracing::warn!(
            "{} is missing: the gateway looks for the worker next to itself (else on PATH, or HERMES_CRON_WORKER); install both binaries together",
            worker.display()
        );
    }
    let (ctl, unit) = match set {
        UnitSet::User => (
            "systemctl --user",
            "hermes-cron-gateway.service".to_string(),
        ),
        UnitSet::System => ("systemctl", "hermes-cron-gateway@USER.service".to_string()),
    };
    let next = [
        format!("{ctl} daemon-reload"),
        format!("{ctl} enable --now {unit}"),
    ];
    if json {
        let files: Vec<_> = written
            .iter()
            .map(|(p, changed)| serde_json::json!({ "path": p, "changed": changed }))
            .collect();
        println!(
            "{}",
            serde_json::json!({ "binary": binary, "files": files, "next": next })
        );
    } else {
        for (path, changed) in &written {
            let what = if *changed { "wrote" } else { "unchanged" };
            println!("{what} {}", path.display());
        }
        println!("ExecStart= runs {}; next:", binary.display());
        for line in next {
            println!("  {line}");
        }
    }
    Ok(hermes_cron::exit::OK)
}
