//! The dispatch path as it was before issue 16's shaves, rebuilt here so
//! the breakdown can time it side by side with the library's, in the same
//! run: a held worker started by `fork` (a `pre_exec` hook, as the launcher
//! had for `setsid`), a `JobRemoved` stream opened and closed for every scope
//! start (`GetNameOwner` + `AddMatch` before the call, `RemoveMatch` after),
//! and unit names that keep the execution id's dashes.

use futures_util::StreamExt;
use hermes_cron::systemd::{ScopeSpec, escape_unit_component};
use hermes_cron_core::scope::{PropValue, scope_properties};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use zbus::{OwnedObjectPath, Variant as Value};

/// `hermes-cron-<job>-<execution with dashes>.scope`, the format before.
pub(super) fn dashed_unit_name(job: &str, execution: &str) -> String {
    format!(
        "hermes-cron-{}-{execution}.scope",
        escape_unit_component(job)
    )
}

/// A held worker started by `fork`: the same program, pipe and stdio as
/// `HeldWorker::spawn`, with a hook in the child (`setsid`), which rules
/// `posix_spawn` out. Returns the child and the write end of its gate.
pub(super) fn fork_held(
    bin: &Path,
    home: &Path,
    execution: &str,
) -> std::io::Result<(Child, std::fs::File)> {
    let (read, write): (OwnedFd, OwnedFd) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let mut cmd = Command::new(bin);
    cmd.arg("--home")
        .arg(home)
        .arg("--execution")
        .arg(execution)
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
    Ok((cmd.spawn()?, std::fs::File::from(write)))
}

/// One scope start with its own `JobRemoved` stream, as before.
pub(super) async fn start_scope_own_stream(
    conn: &zbus::Connection,
    spec: &ScopeSpec,
) -> Result<(), String> {
    let proxy = zbus::Proxy::new(
        conn,
        "org.freedesktop.systemd1",
        "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager",
    )
    .await
    .map_err(|e| e.to_string())?;
    let mut jobs = proxy
        .receive_signal_with_args("JobRemoved", &[(2, spec.name.as_str())])
        .await
        .map_err(|e| e.to_string())?;
    let props: Vec<(&str, Value<'_>)> = scope_properties(spec)
        .into_iter()
        .map(|(name, v)| {
            let v = match v {
                PropValue::Pids(p) => Value::from(p),
                PropValue::Text(t) => Value::from(t),
                PropValue::Flag(f) => Value::from(f),
                PropValue::U64(n) => Value::from(n),
            };
            (name, v)
        })
        .collect();
    let aux: Vec<(&str, Vec<(&str, Value<'_>)>)> = Vec::new();
    let job: OwnedObjectPath = proxy
        .call(
            "StartTransientUnit",
            &(spec.name.as_str(), "fail", props, aux),
        )
        .await
        .map_err(|e| e.to_string())?;
    while let Some(msg) = jobs.next().await {
        let Ok((_, path, _, result)) = msg
            .body()
            .deserialize::<(u32, OwnedObjectPath, String, String)>()
        else {
            continue;
        };
        if path == job {
            return if result == "done" {
                Ok(())
            } else {
                Err(format!("job {result}"))
            };
        }
    }
    Err("the bus closed".into())
}
