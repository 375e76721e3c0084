//! Which `StartTransientUnit` properties a [`ScopeSpec`] becomes, as plain
//! values ([`PropValue`]); the D-Bus edge turns them into variants. Never
//! reads the clock or the bus, and sanitizes the description (systemd 252
//! writes it raw into the transient unit file).

use super::escape::sanitize_description;
use std::time::Duration;

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

/// A property value, with the D-Bus signature it is sent as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropValue {
    /// `au`
    Pids(Vec<u32>),
    /// `s`
    Text(String),
    /// `b`
    Flag(bool),
    /// `t`
    U64(u64),
}

/// The properties for `spec`, in a fixed order.
///
/// Always: `PIDs` (au), `CollectMode` = `inactive-or-failed` (a failed scope is garbage
/// collected too), `AddRef` = true (the scope is pinned for our bus connection: it is not
/// collected, even once inactive, until it is released or the connection closes),
/// `Description` (sanitized). Then, when set: `RuntimeMaxUSec`, `MemoryMax`,
/// `CPUWeight`, `TasksMax` (all `t`).
pub fn scope_properties(spec: &ScopeSpec) -> Vec<(&'static str, PropValue)> {
    let mut props = vec![
        ("PIDs", PropValue::Pids(spec.pids.clone())),
        ("CollectMode", PropValue::Text("inactive-or-failed".into())),
        ("AddRef", PropValue::Flag(true)),
        (
            "Description",
            PropValue::Text(sanitize_description(&spec.description)),
        ),
    ];
    if let Some(max) = spec.runtime_max {
        let usec = u64::try_from(max.as_micros()).unwrap_or(u64::MAX);
        props.push(("RuntimeMaxUSec", PropValue::U64(usec)));
    }
    if let Some(bytes) = spec.memory_max {
        props.push(("MemoryMax", PropValue::U64(bytes)));
    }
    if let Some(weight) = spec.cpu_weight {
        props.push(("CPUWeight", PropValue::U64(weight)));
    }
    if let Some(tasks) = spec.tasks_max {
        props.push(("TasksMax", PropValue::U64(tasks)));
    }
    props
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(props: &[(&str, PropValue)]) -> Vec<String> {
        props.iter().map(|(n, _)| n.to_string()).collect()
    }

    fn get<'p>(props: &'p [(&str, PropValue)], name: &str) -> &'p PropValue {
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
        assert_eq!(get(&props, "PIDs"), &PropValue::Pids(vec![42, 43]));
        assert_eq!(
            get(&props, "CollectMode"),
            &PropValue::Text("inactive-or-failed".into())
        );
        assert_eq!(get(&props, "AddRef"), &PropValue::Flag(true));
        assert_eq!(get(&props, "Description"), &PropValue::Text("job x".into()));
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
        assert_eq!(
            get(&props, "RuntimeMaxUSec"),
            &PropValue::U64(3_600_500_000)
        );
        assert_eq!(get(&props, "MemoryMax"), &PropValue::U64(512 << 20));
        assert_eq!(get(&props, "CPUWeight"), &PropValue::U64(50));
        assert_eq!(get(&props, "TasksMax"), &PropValue::U64(64));
    }

    #[test]
    fn huge_runtime_saturates() {
        let spec = ScopeSpec {
            runtime_max: Some(Duration::MAX),
            ..ScopeSpec::default()
        };
        let props = scope_properties(&spec);
        assert_eq!(get(&props, "RuntimeMaxUSec"), &PropValue::U64(u64::MAX));
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
            &PropValue::Text("x [Unit] Wants=evil.service".into())
        );
    }
}
