//! The loop's decisions, in process: a manual clock, a fake user manager
//! that records the scopes asked for, a temp home, and a stand-in worker
//! that holds at its gate and records nothing (so each row shows what the
//! gateway alone did). The loop's parts are woken as its `select!` would
//! wake them, at the instants the test sets.

use super::*;
use crate::clock::Clock;
use crate::config::Config;
use crate::home::Home;
use crate::ids::JobId;
use crate::job::Job;
use crate::ledger::ExecState;
use crate::process::OwnerRole;
use crate::schedule::{Schedule, Tz};
use crate::systemd::{ScopeSpec, UnitFuture, UnitManager, UnitProcess};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};

struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    fn set(&self, at: Timestamp) {
        *self.0.lock().unwrap() = at;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap()
    }
}

/// A user manager that makes every scope asked for, and remembers its name.
#[derive(Default)]
struct FakeManager {
    scopes: Mutex<Vec<String>>,
}

impl UnitManager for FakeManager {
    fn probe(&self) -> UnitFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
    fn start_scope<'a>(&'a self, spec: &'a ScopeSpec) -> UnitFuture<'a, ()> {
        self.scopes.lock().unwrap().push(spec.name.clone());
        Box::pin(async { Ok(()) })
    }
    fn unit_processes<'a>(&'a self, _: &'a str) -> UnitFuture<'a, Option<Vec<UnitProcess>>> {
        Box::pin(async { Ok(None) })
    }
    fn stop_unit<'a>(&'a self, _: &'a str) -> UnitFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
}

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

struct Scene {
    _dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    manager: Arc<FakeManager>,
    event_loop: EventLoop,
    job: JobId,
}

/// A home with one job `schedule` made at `t0`, and the loop of a gateway
/// started then with `config`.
fn scene(schedule: &str, t0: Timestamp, config: Config) -> Scene {
    scene_with(schedule, t0, config, |_| {})
}

/// [`scene`], the job changed by `tweak` first.
fn scene_with(
    schedule: &str,
    t0: Timestamp,
    config: Config,
    tweak: impl FnOnce(&mut Job),
) -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path());
    home.ensure().unwrap();
    // Holds at its gate until its pipe closes (after its go line, or when
    // its gate is dropped), then exits; writes nothing.
    let worker = dir.path().join("stand-in-worker");
    std::fs::write(&worker, "#!/bin/sh\nexec cat >/dev/null\n").unwrap();
    std::fs::set_permissions(&worker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = Db::open_home(&home).unwrap();
    let parsed = Schedule::parse(schedule, t0, Tz::UTC).unwrap();
    let mut job = Job::new(
        JobId::generate(),
        "brief".into(),
        schedule.into(),
        parsed,
        vec!["true".into()],
        t0,
    );
    job.next_run_at = job.schedule.next_after(t0, Tz::UTC, t0).map(|f| f.at);
    tweak(&mut job);
    store::insert_job(db.conn(), &job).unwrap();
    let clock = Arc::new(ManualClock(Mutex::new(t0)));
    let manager = Arc::new(FakeManager::default());
    let knobs = crate::knobs::Knobs::default();
    let launcher = Launcher::new(
        &home,
        worker,
        false,
        Some(manager.clone()),
        knobs.kill_grace,
    );
    let stager = Stager::new(&config.cron, config.cron.staging_max_workers as usize);
    let cx = Ctx {
        home,
        config,
        zone: Tz::UTC,
        zones: crate::schedule::ZoneTable::compiled_in_only().into(),
        clock: clock.clone(),
        owner: crate::process::owner(OwnerRole::Gateway),
        host: crate::cluster::Host::from_env(),
        launcher: Arc::new(launcher),
        shared: Arc::new(super::super::state::Shared::default()),
        knobs,
    };
    let parts = Parts {
        runs: Runs::default(),
        monitor: Monitor::new(
            Duration::from_secs(3600),
            super::super::supervision::notify::Notifier::from_env(),
        ),
        stager,
        alerts: AlertDriver::new(t0),
        feed: Feed::new(crate::db::DbWatcher::disabled(), None),
        cluster: None,
        launch_first: Vec::new(),
    };
    Scene {
        _dir: dir,
        clock,
        manager,
        event_loop: EventLoop::new(cx, db, parts),
        job: job.id,
    }
}

impl Scene {
    /// Move the clock to `now`, then wake whatever part is due by then and
    /// finish the launches that go as far as they can.
    async fn turn_at(&mut self, now: Timestamp) {
        self.clock.set(now);
        let l = &mut self.event_loop;
        l.launches.start(&l.cx.launcher, l.capacity_left());
        let mut wakes = l.wakes();
        // The clock was moved by hand: a part due by `now` is due now.
        let due_by = |at: Option<Instant>| {
            at.filter(|at| *at <= crate::clock::loop_now() + Duration::from_millis(1))
        };
        for w in [
            &mut wakes.release,
            &mut wakes.claim,
            &mut wakes.stage,
            &mut wakes.alerts,
            &mut wakes.recheck,
        ] {
            *w = due_by(*w);
        }
        wakes.monitor = None;
        l.wake(wakes);
        l.launches.start(&l.cx.launcher, l.capacity_left());
        // Let each launch in flight go as far as it can (its gate, or done).
        for _ in 0..200 {
            if l.launches.is_empty() {
                break;
            }
            match tokio::time::timeout(Duration::from_millis(20), l.launches.next()).await {
                Ok(Some((run, launched))) => l.launched(run, launched),
                Ok(None) => l.launches.start(&l.cx.launcher, l.capacity_left()),
                Err(_) => break,
            }
        }
    }

    /// When the stager means to claim the 08:00 run ahead.
    fn lead_begins(&self) -> Timestamp {
        let l = &self.event_loop;
        l.stager
            .next_pass(&l.db, &l.cx, self.clock.now())
            .expect("a stage pass ahead")
    }

    fn rows(&self) -> Vec<(ExecState, Option<Timestamp>)> {
        let filter = ledger::RunFilter {
            job: Some((Some(self.job.clone()), "brief".into())),
            state: None,
            since: None,
            limit: 10,
        };
        let mut rows = ledger::list_executions(self.event_loop.db.conn(), &filter).unwrap();
        rows.reverse();
        rows.into_iter()
            .map(|r| (r.state, r.scheduled_for))
            .collect()
    }
}

/// With staging on (the default), the run of 08:00 is claimed when its
/// lead begins, launched staged in a scope made ahead, and released at
/// 08:00 itself; the stage pass is the claim pass `status` shows.
#[tokio::test]
async fn a_run_is_claimed_ahead_staged_in_its_scope_and_released_at_its_instant() {
    let t0 = at("2026-06-01T07:59:00Z");
    let mut s = scene("daily at 8am", t0, Config::default());
    let eight = at("2026-06-01T08:00:00Z");
    s.turn_at(t0).await;
    assert!(s.rows().is_empty(), "nothing is claimed a minute ahead");
    let lead_begins = s.lead_begins();
    assert!(
        lead_begins > t0 && lead_begins <= at("2026-06-01T07:59:59Z"),
        "{lead_begins}: the default lead is 1 s at least, 60 s at most"
    );
    s.turn_at(lead_begins).await;
    assert_eq!(s.rows(), [(ExecState::Claimed, Some(eight))]);
    let tick = s.event_loop.cx.shared.tick();
    assert_eq!(tick.result, hermes_cron_core::health::TickResult::Ok);
    assert_eq!((tick.at, tick.claimed), (Some(lead_begins), 1));
    assert_eq!(s.manager.scopes.lock().unwrap().len(), 1, "scoped ahead");
    assert_eq!(s.event_loop.stager.count(), 1);
    assert_eq!(s.event_loop.runs.len(), 0, "not started before 08:00");
    s.turn_at(eight).await;
    assert_eq!(s.event_loop.stager.count(), 0);
    assert_eq!(s.event_loop.runs.len(), 1, "released at 08:00 and watched");
}

/// More runs due at one instant than launches may be busy at once: each is
/// staged ahead (a launch waiting at its gate makes room for the next),
/// and all are released at the instant.
#[tokio::test]
async fn a_burst_larger_than_the_launches_in_flight_is_all_staged_ahead() {
    let t0 = at("2026-06-01T07:59:00Z");
    let mut s = scene("daily at 8am", t0, Config::default());
    let n = crate::daemon::launches::CONCURRENCY + 8;
    let first = store::get_job(s.event_loop.db.conn(), &s.job)
        .unwrap()
        .unwrap();
    for i in 1..n {
        let mut job = first.clone();
        job.id = JobId::generate();
        job.name = format!("brief-{i}");
        store::insert_job(s.event_loop.db.conn(), &job).unwrap();
    }
    let lead_begins = s.lead_begins();
    s.turn_at(lead_begins).await;
    assert_eq!(
        s.manager.scopes.lock().unwrap().len(),
        n,
        "every one scoped ahead"
    );
    assert_eq!(s.event_loop.stager.count(), n, "every one staged");
    assert_eq!(s.event_loop.runs.len(), 0, "none started before 08:00");
    s.turn_at(at("2026-06-01T08:00:00Z")).await;
    assert_eq!(s.event_loop.stager.count(), 0);
    assert_eq!(s.event_loop.runs.len(), n, "all released at 08:00");
}

/// With staging off the same run is claimed at 08:00 and started then.
#[tokio::test]
async fn without_staging_the_run_is_claimed_and_started_at_its_instant() {
    let mut config = Config::default();
    config.cron.staging_max_workers = 0;
    let t0 = at("2026-06-01T07:59:58Z");
    let mut s = scene("daily at 8am", t0, config);
    s.turn_at(t0).await;
    assert!(s.rows().is_empty());
    let eight = at("2026-06-01T08:00:00Z");
    s.turn_at(eight).await;
    assert_eq!(s.rows(), [(ExecState::Claimed, Some(eight))]);
    assert_eq!(s.event_loop.cx.shared.tick().claimed, 1);
    assert_eq!(s.event_loop.runs.len(), 1);
}

/// A job paused while its run is staged: at the instant the run is taken
/// back (no row), the slot is the job's again, nothing starts.
#[tokio::test]
async fn a_run_whose_job_was_paused_while_staged_is_taken_back_at_its_instant() {
    let t0 = at("2026-06-01T07:59:00Z");
    let mut s = scene("daily at 8am", t0, Config::default());
    let lead_begins = s.lead_begins();
    s.turn_at(lead_begins).await;
    assert_eq!(s.rows().len(), 1);
    let conn = s.event_loop.db.conn();
    let mut job = store::resolve_job(conn, s.job.as_str()).unwrap();
    job.state = crate::job::JobState::Paused { reason: None };
    job.updated_at = lead_begins;
    store::update_job(conn, &job).unwrap();
    s.turn_at(at("2026-06-01T08:00:00Z")).await;
    assert!(s.rows().is_empty(), "{:?}", s.rows());
    assert_eq!(s.event_loop.runs.len(), 0);
    assert_eq!(s.event_loop.stager.count(), 0);
}

/// A run still going when its job is due again: overlap `skip` (the
/// default) records the slot skipped; nothing more starts.
#[tokio::test]
async fn a_slot_due_while_the_previous_run_goes_is_recorded_skipped() {
    let mut config = Config::default();
    config.cron.staging_max_workers = 0;
    let mut s = scene("every 1s", at("2026-06-01T08:00:00Z"), config);
    s.turn_at(at("2026-06-01T08:00:01Z")).await;
    assert_eq!(s.event_loop.runs.len(), 1);
    // Its worker records nothing (and is not reaped here): to the ledger
    // the run is still going.
    s.turn_at(at("2026-06-01T08:00:02Z")).await;
    assert_eq!(s.event_loop.runs.len(), 1);
    let states: Vec<_> = s.rows().into_iter().map(|(state, _)| state).collect();
    assert_eq!(states, [ExecState::Claimed, ExecState::Skipped]);
}

/// Runs due now wait for room under `cron.max_parallel_jobs`: claimed,
/// queued, launched when a run ends.
#[tokio::test]
async fn a_run_due_while_max_parallel_jobs_run_waits_for_room() {
    let mut config = Config::default();
    config.cron.staging_max_workers = 0;
    config.cron.max_parallel_jobs = Some(1);
    let mut s = scene_with("every 1s", at("2026-06-01T08:00:00Z"), config, |j| {
        j.overlap = crate::job::Overlap::Allow;
    });
    s.turn_at(at("2026-06-01T08:00:01Z")).await;
    s.turn_at(at("2026-06-01T08:00:02Z")).await;
    let states: Vec<_> = s.rows().into_iter().map(|(state, _)| state).collect();
    assert_eq!(states, [ExecState::Claimed, ExecState::Claimed]);
    assert_eq!(s.event_loop.runs.len(), 1, "the second waits for room");
    // The stand-in worker exits once its go line is read; reaped, its run
    // is settled (it never adopted its row: failed) and makes room.
    let deadline = crate::clock::monotonic() + Duration::from_secs(30);
    while s.event_loop.runs.len() == 1 && crate::clock::monotonic() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
        s.event_loop.reap();
    }
    assert_eq!(s.rows()[0].0, ExecState::Failed);
    s.turn_at(at("2026-06-01T08:00:02.500Z")).await;
    assert_eq!(s.event_loop.runs.len(), 1, "launched once there is room");
}
