//! Which jobs get a lane and a row when there are more than a page holds:
//! every job when they fit; otherwise the jobs with a row in the window (or
//! an active one) first, since those are the ones something happened to,
//! then the others by name, up to [`MAX_JOBS`]. The main crate applies the
//! rule in its query (so many jobs are never all in memory); the chosen jobs
//! are shown [`by_name`].

use super::model::PageJob;
use std::cmp::Ordering;

/// At most this many jobs are shown; `hermes-cron list` has the rest.
pub const MAX_JOBS: usize = 300;

/// The order jobs are shown in: by name ignoring case, then by id.
pub fn by_name(a: &PageJob, b: &PageJob) -> Ordering {
    a.name
        .to_lowercase()
        .cmp(&b.name.to_lowercase())
        .then_with(|| a.id.cmp(&b.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::model::JobView;

    fn job(id: &str, name: &str) -> PageJob {
        PageJob {
            id: id.into(),
            name: name.into(),
            schedule: "every 1m".into(),
            tz: None,
            zone: crate::schedule::Tz::UTC,
            view: JobView::Active,
            managed: false,
            next_fire: None,
            recent: Vec::new(),
            failures: Default::default(),
        }
    }

    #[test]
    fn names_ignore_case_then_ids_break_ties() {
        let mut jobs = [job("2", "b"), job("3", "A"), job("1", "b"), job("4", "C")];
        jobs.sort_by(by_name);
        let order: Vec<_> = jobs
            .iter()
            .map(|j| (j.name.as_str(), j.id.as_str()))
            .collect();
        assert_eq!(order, [("A", "3"), ("b", "1"), ("b", "2"), ("C", "4")]);
    }
}
