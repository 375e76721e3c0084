//! Which jobs get a lane and a row when there are more than a page holds:
//! every job when they fit; otherwise the jobs with a row in the window
//! first (those are the ones something happened to), then the others by
//! name, up to the cap. The chosen ones are shown in name order.

use super::model::{PageJob, PageRun};
use std::collections::HashSet;

/// At most this many jobs are shown; `hermes-cron list` has the rest.
pub const MAX_JOBS: usize = 300;

/// The jobs to show, in name order, from `jobs` (any order).
pub fn choose(mut jobs: Vec<PageJob>, runs: &[PageRun], cap: usize) -> Vec<PageJob> {
    let by_name = |a: &PageJob, b: &PageJob| {
        a.name
            .to_lowercase()
            .cmp(&b.name.to_lowercase())
            .then_with(|| a.id.cmp(&b.id))
    };
    if jobs.len() > cap {
        let busy: HashSet<&str> = runs.iter().filter_map(|r| r.job_id.as_deref()).collect();
        jobs.sort_by(|a, b| {
            let (a_busy, b_busy) = (busy.contains(a.id.as_str()), busy.contains(b.id.as_str()));
            b_busy.cmp(&a_busy).then_with(|| by_name(a, b))
        });
        jobs.truncate(cap);
    }
    jobs.sort_by(by_name);
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::model::JobView;
    use crate::run::ExecState;

    fn job(id: &str, name: &str) -> PageJob {
        PageJob {
            id: id.into(),
            name: name.into(),
            schedule: "every 1m".into(),
            tz: None,
            view: JobView::Active,
            managed: false,
            next_fire: None,
            last: None,
        }
    }

    fn run(job: &str) -> PageRun {
        PageRun {
            id: format!("run-{job}"),
            job_id: Some(job.into()),
            job_name: job.into(),
            orphan: false,
            state: ExecState::Succeeded,
            attempt: 1,
            scheduled_for: None,
            claimed_at: chrono::DateTime::UNIX_EPOCH,
            started_at: None,
            finished_at: None,
            mode: None,
            reason_code: None,
        }
    }

    #[test]
    fn all_fit_in_name_order() {
        let jobs = vec![job("1", "b"), job("2", "A"), job("3", "c")];
        let names: Vec<_> = choose(jobs, &[], 10).into_iter().map(|j| j.name).collect();
        assert_eq!(names, ["A", "b", "c"]);
    }

    #[test]
    fn over_the_cap_jobs_that_ran_come_first() {
        let jobs = vec![job("1", "a"), job("2", "b"), job("3", "c"), job("4", "d")];
        let runs = [run("4"), run("3")];
        let names: Vec<_> = choose(jobs, &runs, 3).into_iter().map(|j| j.name).collect();
        assert_eq!(names, ["a", "c", "d"]);
    }
}
