//! One problem `doctor` found, and its fix: what every check returns.

use crate::job::Job;

/// One problem and its fix.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Stable code, e.g. `gateway_not_running`.
    pub code: &'static str,
    pub job_id: Option<String>,
    pub job_name: Option<String>,
    pub problem: String,
    pub fix: String,
}

pub(crate) fn finding(
    code: &'static str,
    job: Option<&Job>,
    problem: String,
    fix: impl Into<String>,
) -> Finding {
    Finding {
        code,
        job_id: job.map(|j| j.id.to_string()),
        job_name: job.map(|j| j.name.clone()),
        problem,
        fix: fix.into(),
    }
}
