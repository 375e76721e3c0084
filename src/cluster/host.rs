//! Which host this process is: `HERMES_CRON_HOST`, else the system's host
//! name; and its labels, `HERMES_CRON_HOST_LABELS` (comma-separated). Read
//! once, in each binary's `main`, and handed down as a value. Every row a process claims names its host; jobs pinned
//! with `--on` run only on the host of that name or a host with that label.

use crate::store::HostFilter;
use hermes_cron_core::cluster::{host_name_from_system, parse_labels, valid_name};

/// The host name override.
pub const HOST_ENV: &str = "HERMES_CRON_HOST";
/// This host's labels.
pub const LABELS_ENV: &str = "HERMES_CRON_HOST_LABELS";

/// This host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub labels: Vec<String>,
    /// What was wrong with the environment, said once by whoever shows it.
    pub warnings: Vec<String>,
}

impl Host {
    /// This host, as the environment names it.
    pub fn from_env() -> Host {
        let mut warnings = Vec::new();
        let name = match std::env::var(HOST_ENV) {
            Ok(v) if valid_name(v.trim()) => v.trim().to_string(),
            Ok(v) if !v.trim().is_empty() => {
                let fixed = host_name_from_system(&v);
                warnings.push(format!(
                    "{HOST_ENV}={v:?} is not a host name (1-64 of A-Z a-z 0-9 . : -); using {fixed:?}"
                ));
                fixed
            }
            _ => host_name_from_system(&system_host_name()),
        };
        let (labels, bad) = parse_labels(&std::env::var(LABELS_ENV).unwrap_or_default());
        if !bad.is_empty() {
            warnings.push(format!(
                "{LABELS_ENV}: ignoring {} (labels are 1-64 of A-Z a-z 0-9 . : -)",
                bad.join(", ")
            ));
        }
        Host {
            name,
            labels,
            warnings,
        }
    }

    /// Which pinned jobs this host may claim.
    pub fn filter(&self) -> HostFilter {
        HostFilter::new(&self.name, &self.labels)
    }

    /// Whether a job pinned to `run_on` may run here.
    pub fn runs(&self, run_on: Option<&str>) -> bool {
        run_on.is_none_or(|r| r == self.name || self.labels.iter().any(|l| l == r))
    }
}

fn system_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_match_the_name_or_a_label() {
        let h = Host {
            name: "a".into(),
            labels: vec!["gpu".into()],
            warnings: vec![],
        };
        assert!(h.runs(None));
        assert!(h.runs(Some("a")));
        assert!(h.runs(Some("gpu")));
        assert!(!h.runs(Some("b")));
        assert_eq!(h.filter().labels, ",gpu,");
    }
}
