//! The seam between the dispatcher and systemd: [`UnitManager`], and what it is asked for.
//!
//! The dispatcher holds an `Arc<dyn UnitManager>` (or any `M: UnitManager`): the trait is
//! dyn-compatible because its methods return boxed futures ([`UnitFuture`]). One allocation
//! per call is nothing next to a D-Bus round trip, and it lets tests hand the dispatcher a
//! fake without generics spreading through the daemon.
//!
//! [`scope_properties`] is the pure part: which properties a [`ScopeSpec`] becomes. It
//! never reads the clock or the bus, and sanitizes the description (systemd 252 writes it
//! raw into the transient unit file).

use super::cause::BusCause;
use super::escape::sanitize_description;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use zbus::Variant;

/// What a [`UnitManager`] method returns: a boxed, `Send` future of a [`BusCause`] result.
pub type UnitFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BusCause>> + Send + 'a>>;

/// One process of a unit, as `GetUnitProcesses` lists it: (cgroup path, pid, command line).
pub type UnitProcess = (String, u32, String);

/// A transient scope to create around already-running processes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScopeSpec {
    /// The unit name, from [`scope_unit_name`](super::scope_unit_name).
    pub name: String,
    /// Free text; sanitized before it is sent.
    pub description: String,
    /// Processes to move into the scope (the blocked worker).
    pub pids: Vec<u32>,
    /// `RuntimeMaxUSec`: systemd stops the scope after this long.
    pub runtime_max: Option<Duration>,
    /// `MemoryMax`, bytes.
    pub memory_max: Option<u64>,
    /// `CPUWeight`, 1..=10000.
    pub cpu_weight: Option<u64>,
    /// `TasksMax`.
    pub tasks_max: Option<u64>,
}

/// The systemd side of dispatch: create a scope, list its processes, stop it.
///
/// Implemented by [`ZbusUnitManager`](super::ZbusUnitManager) over D-Bus, and by fakes in
/// tests.
pub trait UnitManager: Send + Sync {
    /// Checks that a systemd manager answers on the bus (one cheap call).
    fn probe(&self) -> UnitFuture<'_, ()>;

    /// Creates the scope `spec.name` around `spec.pids` (mode `fail`) and waits for its
    /// start job: `Ok` only when the job's result is `done`, so the pids are in the scope's
    /// cgroup when this returns. On `Err` the pids may or may not have moved (a
    /// [`BusCause::Timeout`] can be followed by a late success): the caller gives the worker
    /// up (closes its go pipe) rather than running it unprotected. Our `AddRef` reference
    /// on a unit that failed or timed out is already released.
    fn start_scope<'a>(&'a self, spec: &'a ScopeSpec) -> UnitFuture<'a, ()>;

    /// The processes in unit `name`, or `None` when systemd has no such unit.
    fn unit_processes<'a>(&'a self, name: &'a str) -> UnitFuture<'a, Option<Vec<UnitProcess>>>;

    /// Queues a stop job for unit `name` (mode `replace`: SIGTERM, then SIGKILL after the
    /// unit's `TimeoutStopUSec`). Returns once the job is queued, not when it is done; a
    /// unit that does not exist is already stopped (`Ok`).
    fn stop_unit<'a>(&'a self, name: &'a str) -> UnitFuture<'a, ()>;

    /// Drops the reference `AddRef` gave us on unit `name`, so systemd can collect it once
    /// it is inactive. Call it after the scope's worker has been reaped: while our bus
    /// connection holds the reference, systemd 252 never garbage collects the unit, even
    /// with `CollectMode=inactive-or-failed`. A unit that is gone or not referenced is
    /// fine (`Ok`). The default does nothing, for fakes that hold no references.
    fn release_unit<'a>(&'a self, name: &'a str) -> UnitFuture<'a, ()> {
        let _ = name;
        Box::pin(async { Ok(()) })
    }
}

/// The `StartTransientUnit` properties for `spec`, in a fixed order.
///
/// Always: `PIDs` (au), `CollectMode` = `inactive-or-failed` (a failed scope is garbage
/// collected too), `AddRef` = true (the scope is pinned for our bus connection: it is not
/// collected, even once inactive, until [`UnitManager::release_unit`] or until the
/// connection closes), `Description` (sanitized). Then, when set: `RuntimeMaxUSec`, `MemoryMax`,
/// `CPUWeight`, `TasksMax` (all `t`).
pub fn scope_properties(spec: &ScopeSpec) -> Vec<(&'static str, Variant<'static>)> {
    let mut props: Vec<(&'static str, Variant<'static>)> = vec![
        ("PIDs", Variant::from(spec.pids.clone())),
        ("CollectMode", Variant::from("inactive-or-failed")),
        ("AddRef", Variant::from(true)),
        (
            "Description",
            Variant::from(sanitize_description(&spec.description)),
        ),
    ];
    if let Some(max) = spec.runtime_max {
        let usec = u64::try_from(max.as_micros()).unwrap_or(u64::MAX);
        props.push(("RuntimeMaxUSec", Variant::from(usec)));
    }
    if let Some(bytes) = spec.memory_max {
        props.push(("MemoryMax", Variant::from(bytes)));
    }
    if let Some(weight) = spec.cpu_weight {
        props.push(("CPUWeight", Variant::from(weight)));
    }
    if let Some(tasks) = spec.tasks_max {
        props.push(("TasksMax", Variant::from(tasks)));
    }
    props
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(props: &[(&str, Variant<'_>)]) -> Vec<String> {
        props.iter().map(|(n, _)| n.to_string()).collect()
    }

    fn get<'p>(props: &'p [(&str, Variant<'static>)], name: &str) -> &'p Variant<'static> {
        &props.iter().find(|(n, _)| *n == name).unwrap().1
    }

    #[test]
    fn minimal_spec_has_the_four_fixed_properties() {
        let spec = ScopeSpec {
            name: "x.scope".into(),
            description: "job x".into(),
            pids: vec![42, 43],
            ..ScopeSpec::default()
        };
        let props = scope_properties(&spec);
        assert_eq!(
            names(&props),
            ["PIDs", "CollectMode", "AddRef", "Description"]
        );
        assert_eq!(get(&props, "PIDs").value_signature().to_string(), "au");
        assert_eq!(get(&props, "PIDs"), &Variant::from(vec![42u32, 43]));
        assert_eq!(
            get(&props, "CollectMode"),
            &Variant::from("inactive-or-failed")
        );
        assert_eq!(get(&props, "AddRef"), &Variant::from(true));
        assert_eq!(get(&props, "Description"), &Variant::from("job x"));
    }

    #[test]
    fn resources_become_u64_properties() {
        let spec = ScopeSpec {
            runtime_max: Some(Duration::from_millis(3_600_500)),
            memory_max: Some(512 << 20),
            cpu_weight: Some(50),
            tasks_max: Some(64),
            ..ScopeSpec::default()
        };
        let props = scope_properties(&spec);
        assert_eq!(
            &names(&props)[4..],
            ["RuntimeMaxUSec", "MemoryMax", "CPUWeight", "TasksMax"]
        );
        for name in ["RuntimeMaxUSec", "MemoryMax", "CPUWeight", "TasksMax"] {
            assert_eq!(
                get(&props, name).value_signature().to_string(),
                "t",
                "{name}"
            );
        }
        assert_eq!(
            get(&props, "RuntimeMaxUSec"),
            &Variant::from(3_600_500_000u64)
        );
        assert_eq!(get(&props, "MemoryMax"), &Variant::from(512u64 << 20));
    }

    #[test]
    fn huge_runtime_saturates() {
        let spec = ScopeSpec {
            runtime_max: Some(Duration::MAX),
            ..ScopeSpec::default()
        };
        let props = scope_properties(&spec);
        assert_eq!(get(&props, "RuntimeMaxUSec"), &Variant::from(u64::MAX));
    }

    #[test]
    fn description_is_sanitized() {
        let spec = ScopeSpec {
            description: "x\n[Unit]\nWants=evil.service\\".into(),
            ..ScopeSpec::default()
        };
        let props = scope_properties(&spec);
        assert_eq!(
            get(&props, "Description"),
            &Variant::from("x [Unit] Wants=evil.service")
        );
    }

    #[test]
    fn trait_is_dyn_compatible() {
        fn takes(_: Option<std::sync::Arc<dyn UnitManager>>) {}
        takes(None);
    }
}
