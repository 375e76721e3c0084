//! Scenes for the crash tests: a home with jobs on `every` schedules whose
//! command appends its execution id (`$HERMES_CRON_EXECUTION_ID`) to one
//! file, so a side effect that happened twice is visible, and the invariant
//! check of [`super::invariants`] over the result.

use super::home::{Bus, TestHome};
use super::invariants::{self, Periodic, Row, Tally};
use super::waiting::{SETTLE_TIMEOUT, wait_for};
use std::path::PathBuf;

/// One job of a scene: its name, period in seconds, and its shell command
/// around the append (`{append}` is replaced by it).
pub(crate) struct JobDef {
    pub name: &'static str,
    pub every_s: u32,
    pub command: &'static str,
    pub flags: &'static [&'static str],
}

/// `a`: appends at once; `b`: appends after 300 ms (so a kill may find it running).
pub(crate) const TWO_JOBS: &[JobDef] = &[
    JobDef {
        name: "a",
        every_s: 1,
        command: "{append}",
        flags: &[],
    },
    JobDef {
        name: "b",
        every_s: 1,
        command: "sleep 0.3; {append}",
        flags: &[],
    },
];

/// A home with its jobs.
pub(crate) struct Scene {
    pub home: TestHome,
    pub side_effects: PathBuf,
    pub jobs: Vec<Periodic>,
    /// The log of the gateway [`Scene::restart_and_run`] started.
    restart_log: std::cell::RefCell<String>,
}

impl Scene {
    /// A home whose commands use `bus`, with `jobs` added; a scene on the
    /// real user manager's bus first waits until it takes scopes.
    pub(crate) fn new(bus: Bus, jobs: &[JobDef]) -> Scene {
        let home = TestHome::new().with_bus(bus.clone());
        let side_effects = home.scratch().join("side-effects");
        let append = format!(
            "echo \"$HERMES_CRON_EXECUTION_ID\" >> {}",
            side_effects.display()
        );
        let mut added = Vec::new();
        for job in jobs {
            let command = job.command.replace("{append}", &append);
            let schedule = format!("every {}s", job.every_s);
            let mut flags: Vec<&str> = job.flags.to_vec();
            flags.push("--shell");
            let id = home.add(job.name, &schedule, &flags, &[&command]);
            added.push(Periodic {
                job_id: id,
                period_ms: i64::from(job.every_s) * 1000,
            });
        }
        if bus == Bus::Real {
            home.require_scopes();
        }
        Scene {
            home,
            side_effects,
            jobs: added,
            restart_log: Default::default(),
        }
    }

    /// Turn staging off for every later gateway of this scene: runs are then
    /// claimed and dispatched at their instant (the path catch-up, retries
    /// and manual runs always take).
    pub(crate) fn without_staging(self) -> Scene {
        self.home.write_config("cron:\n  staging_max_workers: 0\n");
        self
    }

    pub(crate) fn rows(&self) -> Vec<Row> {
        invariants::rows(&self.home.db_file())
    }

    pub(crate) fn count(&self, pred: impl Fn(&Row) -> bool) -> usize {
        self.rows().iter().filter(|r| pred(r)).count()
    }

    /// Wait until `n` more runs have succeeded than now.
    pub(crate) fn wait_successes(&self, n: usize) {
        let before = self.count(|r| r.state == "succeeded");
        wait_for(&format!("{n} more runs to succeed"), SETTLE_TIMEOUT, || {
            (self.count(|r| r.state == "succeeded") >= before + n).then_some(())
        });
    }

    /// A gateway without hooks: ready, at least two more runs succeed, and
    /// every row the earlier gateways left active is settled (a worker they
    /// released may outlive them and die at its own crash point later; only
    /// a live gateway records that), then SIGTERM.
    pub(crate) fn restart_and_run(&self) {
        let before = self.count(|r| r.state == "succeeded");
        let started = super::waiting::wall_clock().timestamp_millis();
        let mut gw = self.home.gateway(&[]);
        gw.wait_ready();
        wait_for(
            "two new runs to succeed after the restart",
            SETTLE_TIMEOUT,
            || (self.count(|r| r.state == "succeeded") >= before + 2).then_some(()),
        );
        wait_for(
            "the rows earlier gateways left active to be settled",
            SETTLE_TIMEOUT,
            || {
                invariants::active_claimed_before(&self.home.db_file(), started)
                    .is_empty()
                    .then_some(())
            },
        );
        gw.stop();
        *self.restart_log.borrow_mut() = gw.log();
    }

    /// The log of the gateway [`Scene::restart_and_run`] started.
    pub(crate) fn restart_log(&self) -> String {
        self.restart_log.borrow().clone()
    }

    /// Wait for the workers, then check every invariant.
    pub(crate) fn check(&self) -> Tally {
        invariants::wait_settled(&self.home.db_file(), SETTLE_TIMEOUT);
        invariants::check(&self.home.db_file(), &self.side_effects, &self.jobs)
    }
}
