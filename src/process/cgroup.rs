//! The processes of a transient scope, read from its cgroup: every line of
//! `/proc/self/cgroup` whose path ends in the unit's name names the scope's
//! cgroup in one hierarchy (the unified one, or systemd's own named
//! hierarchy on a hybrid host), and its `cgroup.procs` lists the scope's
//! processes, including those that left the job's session.

/// Where the hierarchies `/proc/self/cgroup` names are mounted: unified
/// (`/sys/fs/cgroup`), or on a hybrid host systemd's named hierarchy and the
/// unified one beside it.
const ROOTS: [&str; 3] = [
    "/sys/fs/cgroup",
    "/sys/fs/cgroup/systemd",
    "/sys/fs/cgroup/unified",
];

/// The pids in the cgroup of `unit`, which must be this process's own: None
/// when this process is not in a cgroup of that name, or it cannot be read.
pub(crate) fn own_unit_members(unit: &str) -> Option<Vec<u32>> {
    let table = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let suffix = format!("/{unit}");
    table
        .lines()
        .filter_map(|line| line.splitn(3, ':').nth(2))
        .filter(|path| path.ends_with(&suffix))
        .flat_map(|path| {
            ROOTS
                .iter()
                .map(move |root| format!("{root}{path}/cgroup.procs"))
        })
        .find_map(|procs| std::fs::read_to_string(procs).ok())
        .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_this_process_is_not_in_has_no_members() {
        assert_eq!(own_unit_members("hermes-cron-not-this-one.scope"), None);
    }
}
