//! The real systemd user manager the scope tests run against.
//!
//! Found through the environment (`DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`), else at
//! `/run/user/$UID/bus`. When none answers, the tests fail with instructions: a missing
//! manager must never turn into a silent pass. `tests/support/user-manager.sh start`
//! boots one (CI does).

use hermes_cron::systemd::{BusEnv, ZbusTimeouts, ZbusUnitManager};
use std::path::PathBuf;
use std::process::{Command, Output};

/// The bus environment of the real user manager.
pub(crate) fn bus_env() -> BusEnv {
    let mut env = BusEnv::from_process();
    let unset = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    if unset(&env.session_bus_address) && env.runtime_dir.is_none() {
        env.runtime_dir = Some(PathBuf::from(format!("/run/user/{}", env.uid)));
    }
    env
}

/// The runtime dir and bus address to hand to `systemctl --user` and friends.
pub(crate) fn command_env(env: &BusEnv) -> Vec<(&'static str, String)> {
    let runtime_dir = env
        .runtime_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/run/user/{}", env.uid)));
    let address = env
        .session_bus_address
        .clone()
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| format!("unix:path={}/bus", runtime_dir.display()));
    vec![
        ("XDG_RUNTIME_DIR", runtime_dir.display().to_string()),
        ("DBUS_SESSION_BUS_ADDRESS", address),
    ]
}

/// A manager connected to the real user manager, after checking that it answers.
/// Panics with the cause and the way to boot one when it does not.
pub(crate) async fn connect() -> ZbusUnitManager {
    let env = bus_env();
    let manager = ZbusUnitManager::new(env.clone(), ZbusTimeouts::default());
    if let Err(cause) = manager.probe().await {
        panic!(
            "no systemd user manager reachable (env {env:?}): {cause} [{}]\n\
             These tests need a real `systemd --user`. As root on a machine without a login \
             session, boot one with:\n    eval \"$(tests/support/user-manager.sh start)\"\n\
             and run the tests with the printed XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS.",
            cause.code()
        );
    }
    manager
}

/// Runs `systemctl --user ARGS` against the manager of `env`.
pub(crate) fn systemctl(env: &BusEnv, args: &[&str]) -> Output {
    Command::new("systemctl")
        .arg("--user")
        .args(args)
        .envs(command_env(env))
        .output()
        .expect("systemctl")
}

/// `systemctl --user show -p P1 -p P2 UNIT` as (name, value) pairs.
pub(crate) fn show(env: &BusEnv, unit: &str, props: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["show"];
    for p in props {
        args.push("-p");
        args.push(p);
    }
    args.push("--");
    args.push(unit);
    let out = systemctl(env, &args);
    assert!(
        out.status.success(),
        "systemctl show failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}
