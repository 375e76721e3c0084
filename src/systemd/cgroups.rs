//! Whether the user manager can enforce a scope's resource limits. systemd
//! accepts `MemoryMax=`, `CPUWeight=` and `TasksMax=` on any scope, but a
//! limit only takes effect where the matching cgroup controller (`memory`,
//! `cpu`, `pids`) is delegated to the user manager, which needs the unified
//! cgroup layout. In the hybrid layout (cgroup v2 mounted only for systemd's
//! own bookkeeping, the controllers on v1) nothing caps the job. Read from
//! sysfs, never assumed.

use hermes_cron_core::job::Resources;
use std::path::{Path, PathBuf};

/// The controllers the user manager of `uid` may use for its scopes, or why
/// it has none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delegation {
    /// The unified layout: these controllers are delegated.
    Controllers(Vec<String>),
    /// No controller can be delegated here; why.
    None(String),
}

const ROOT: &str = "/sys/fs/cgroup";

/// What `uid`'s user manager has, read from the cgroup filesystem at `root`.
pub(super) fn delegation_at(root: &Path, uid: u32) -> Delegation {
    let unified = if is_cgroup2(root) {
        root.to_path_buf()
    } else if is_cgroup2(&root.join("unified")) {
        return Delegation::None(
            "cgroups are in the hybrid layout: the resource controllers are on cgroup v1, which systemd does not delegate to user managers".into(),
        );
    } else {
        return Delegation::None(
            "cgroups are in the legacy (v1) layout, which systemd does not delegate to user managers".into(),
        );
    };
    let manager: PathBuf = unified.join(format!(
        "user.slice/user-{uid}.slice/user@{uid}.service/cgroup.controllers"
    ));
    match std::fs::read_to_string(&manager) {
        Ok(text) => Delegation::Controllers(text.split_whitespace().map(str::to_string).collect()),
        Err(e) => Delegation::None(format!(
            "cannot read {} ({e}): no user manager is running for uid {uid}, or it is elsewhere",
            manager.display()
        )),
    }
}

/// What this host's user manager has, for the current uid.
pub fn delegation() -> Delegation {
    delegation_at(Path::new(ROOT), nix::unistd::getuid().as_raw())
}

fn is_cgroup2(path: &Path) -> bool {
    nix::sys::statfs::statfs(path)
        .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC)
}

/// The flags among `r` that will not be enforced under `d`, each with why
/// (empty when every limit set takes effect).
pub fn unenforced(r: &Resources, d: &Delegation) -> Vec<String> {
    let wanted = [
        (
            "--memory-max",
            "MemoryMax=",
            "memory",
            r.memory_max.is_some(),
        ),
        ("--cpu-weight", "CPUWeight=", "cpu", r.cpu_weight.is_some()),
        ("--tasks-max", "TasksMax=", "pids", r.tasks_max.is_some()),
    ];
    wanted
        .iter()
        .filter(|(_, _, _, set)| *set)
        .filter_map(|(flag, property, controller, _)| {
            let why = match d {
                Delegation::Controllers(have) if have.iter().any(|c| c == controller) => {
                    return None;
                }
                Delegation::Controllers(have) => format!(
                    "the user manager has no `{controller}` controller delegated (it has: {})",
                    if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(" ")
                    }
                ),
                Delegation::None(why) => why.clone(),
            };
            Some(format!(
                "{flag} becomes {property} on the job's scope, but nothing will enforce it: {why}"
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_enforced_only_with_their_controller() {
        let r = Resources {
            memory_max: Some(64 << 20),
            cpu_weight: None,
            tasks_max: Some(10),
        };
        let some = Delegation::Controllers(vec!["cpu".into(), "pids".into()]);
        let got = unenforced(&r, &some);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("--memory-max") && got[0].contains("`memory`"),
            "{got:?}"
        );
        let all = Delegation::Controllers(vec!["memory".into(), "pids".into()]);
        assert!(unenforced(&r, &all).is_empty());
        let none = Delegation::None("hybrid".into());
        assert_eq!(unenforced(&r, &none).len(), 2);
        assert!(unenforced(&Resources::default(), &none).is_empty());
    }

    #[test]
    fn this_host_is_read_not_assumed() {
        // Whatever the host, the answer names a reason or lists controllers.
        match delegation() {
            Delegation::Controllers(_) => {}
            Delegation::None(why) => assert!(!why.is_empty()),
        }
    }
}
