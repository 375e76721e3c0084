//! Crash at every step (issue 8, item 1). For each named crash point
//! (`src/crash.rs`) a real gateway runs on a home with two `every 1s` jobs
//! whose command appends its execution id to a file; the point's hook makes
//! the gateway (or each of its workers) SIGKILL itself there; a gateway
//! without the hook is then started on the same home, runs until new slots
//! succeed, and is stopped with SIGTERM. After the workers finish, the
//! ledger invariants of [`crate::support::invariants`] must hold: every slot is one
//! terminal row, no gap in the slot sequence, no side effect twice, no row
//! left active, `PRAGMA integrity_check` ok.
//!
//! Each point runs scoped (the real systemd user manager at
//! `XDG_RUNTIME_DIR`/`DBUS_SESSION_BUS_ADDRESS`, default `/run/user/$UID`)
//! and, where the dispatch path differs, degraded (no bus); and on each path
//! a run takes: claimed and dispatched at its instant ([`Path::Instant`],
//! staging off: what catch-up, retries and manual runs always do), or
//! claimed ahead, staged and released at its instant ([`Path::Staged`]).

use crate::support::gateway::count;
use crate::support::invariants::{self, Row};
use crate::support::scene::{Scene, TWO_JOBS};
use crate::support::{Bus, SETTLE_TIMEOUT, wait_for};
use hermes_cron::crash::CRASH_ENV;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A monitor period short enough for the regression tests (default 5 s).
const QUICK_MONITOR: (&str, &str) = ("HERMES_CRON_HEARTBEAT_PERIOD_MS", "300");

/// Which way the runs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Staging off: claimed and dispatched at the instant.
    Instant,
    /// Staging on (the default): claimed ahead, staged, released.
    Staged,
}

/// Where the crash happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    /// The gateway itself dies at the point.
    Gateway,
    /// Each worker dies at the point; the gateway lives on.
    Worker,
    /// The startup sweep of a second gateway dies while resolving the rows
    /// a first gateway (killed after its claim) left behind.
    Sweep,
}

fn who(point: &str) -> Who {
    if point.starts_with("worker_") {
        Who::Worker
    } else if point.starts_with("sweep_") {
        Who::Sweep
    } else {
        Who::Gateway
    }
}

/// The whole scenario for `point` in `mode` on `path`; returns the scene, checked.
fn crash_at(point: &str, bus: Bus, path: Path) -> Scene {
    let scene = Scene::new(bus.clone(), TWO_JOBS);
    let scene = match path {
        Path::Instant => scene.without_staging(),
        Path::Staged => scene,
    };
    let home = &scene.home;
    let hook = [(CRASH_ENV, point)];
    match who(point) {
        Who::Gateway => {
            let mut gw = home.gateway(&hook);
            gw.wait_killed(point, SETTLE_TIMEOUT);
        }
        Who::Sweep => {
            let first_point = match path {
                Path::Instant => "after_claim_commit",
                Path::Staged => "after_stage_claim",
            };
            let mut first = home.gateway(&[(CRASH_ENV, first_point)]);
            first.wait_killed(first_point, SETTLE_TIMEOUT);
            let mut second = home.gateway(&hook);
            second.wait_killed(point, SETTLE_TIMEOUT);
        }
        Who::Worker => {
            let mut gw = home.gateway(&hook);
            let needle = format!("crash point {point} reached");
            wait_for(
                &format!("two workers to die at {point}"),
                SETTLE_TIMEOUT,
                || (count(&home.worker_log(), &needle) >= 2).then_some(()),
            );
            if point != "worker_after_finish" {
                // The gateway itself must notice its workers died and record
                // them; a row left active blocks the job (overlap skip)
                // until the next restart.
                let mut last = Vec::new();
                let resolved = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    wait_for(
                        "the gateway to resolve its dead workers' rows",
                        SETTLE_TIMEOUT,
                        || {
                            last = scene.rows();
                            // `unknown` (the job may have run), or `failed`
                            // for a worker that never adopted its row.
                            let resolved = last
                                .iter()
                                .filter(|r| r.state == "unknown" || r.state == "failed")
                                .count();
                            (resolved >= 2).then_some(())
                        },
                    )
                }));
                if resolved.is_err() {
                    let rows: Vec<String> = last.iter().map(|r| r.to_string()).collect();
                    panic!(
                        "workers died at {point} but the live gateway left their rows active:\n{}\n{}",
                        rows.join("\n"),
                        gw.log()
                    );
                }
            }
            gw.stop();
        }
    }
    scene.restart_and_run();
    let tally = scene.check();
    eprintln!("{point} ({}): {tally}", bus.name());
    let rows = scene.rows();
    if bus == Bus::Real {
        assert!(
            rows.iter()
                .any(|r| r.dispatch_mode.as_deref() == Some("scoped")),
            "no run was scoped: the user manager did not take the scopes"
        );
    }
    scene
}

fn reasons(scene: &Scene) -> Vec<String> {
    scene
        .rows()
        .iter()
        .filter(|r| r.state == "unknown")
        .map(|r| r.reason_code.clone().unwrap_or_default())
        .collect()
}

/// The claimed rows of a gateway killed before their commands started are
/// taken over by the next gateway and run (their slots are within their
/// misfire grace), never doubled (the invariants), none `unknown`.
fn claims_retaken(scene: &Scene) {
    assert!(
        scene.restart_log().contains("taken over"),
        "the crash left no claimed row behind to retake:\n{}",
        scene.restart_log()
    );
    assert!(
        !reasons(scene).iter().any(|r| r == "claimer_died"),
        "{:?}",
        reasons(scene)
    );
}

#[test]
fn claim_before_commit_scoped() {
    let scene = crash_at("claim_before_commit", Bus::Real, Path::Instant);
    // The transaction rolled back: nothing was half-claimed, nothing to resolve.
    assert!(reasons(&scene).is_empty(), "{:?}", reasons(&scene));
}

#[test]
fn after_claim_commit_scoped() {
    claims_retaken(&crash_at("after_claim_commit", Bus::Real, Path::Instant));
}

#[test]
fn after_worker_spawn_scoped() {
    claims_retaken(&crash_at("after_worker_spawn", Bus::Real, Path::Instant));
}

#[test]
fn after_worker_spawn_degraded() {
    claims_retaken(&crash_at("after_worker_spawn", Bus::None, Path::Instant));
}

#[test]
fn after_scope_created_scoped() {
    claims_retaken(&crash_at("after_scope_created", Bus::Real, Path::Instant));
}

/// A released worker outlives its gateway: it adopts and finishes its run,
/// so no row it adopted is `unknown`. The other job's row, claimed while the
/// released run's dispatch was in flight (dispatches overlap in the event
/// loop) and never released, never started: the next gateway takes it over
/// and runs it. So nothing is `unknown`.
fn released_worker_finished(scene: &Scene) {
    let rows = scene.rows();
    let unknown: Vec<String> = rows
        .iter()
        .filter(|r| r.state == "unknown")
        .map(|r| r.to_string())
        .collect();
    assert!(unknown.is_empty(), "{unknown:#?}");
}

#[test]
fn after_go_scoped() {
    released_worker_finished(&crash_at("after_go", Bus::Real, Path::Instant));
}

#[test]
fn after_go_degraded() {
    released_worker_finished(&crash_at("after_go", Bus::None, Path::Instant));
}

#[test]
fn worker_before_adopt_scoped() {
    crash_at("worker_before_adopt", Bus::Real, Path::Instant);
}

#[test]
fn worker_before_adopt_degraded() {
    crash_at("worker_before_adopt", Bus::None, Path::Instant);
}

#[test]
fn worker_after_adopt_scoped() {
    crash_at("worker_after_adopt", Bus::Real, Path::Instant);
}

#[test]
fn worker_after_adopt_degraded() {
    crash_at("worker_after_adopt", Bus::None, Path::Instant);
}

#[test]
fn worker_before_finish_scoped() {
    ran_but_unrecorded(&crash_at("worker_before_finish", Bus::Real, Path::Instant));
}

#[test]
fn worker_before_finish_degraded() {
    ran_but_unrecorded(&crash_at("worker_before_finish", Bus::None, Path::Instant));
}

#[test]
fn worker_after_finish_scoped() {
    released_worker_finished(&crash_at("worker_after_finish", Bus::Real, Path::Instant));
}

#[test]
fn sweep_before_resolve_scoped() {
    claims_retaken(&crash_at("sweep_before_resolve", Bus::Real, Path::Instant));
}

// Staged: the same home with staging on (the default).

/// A gateway that dies before any worker held a run leaves claims made
/// ahead that no worker ever held: the next gateway takes them back and
/// stages the slots again. Nothing is `unknown`, nothing is lost.
fn taken_back(scene: &Scene) {
    assert!(reasons(scene).is_empty(), "{:?}", reasons(scene));
    let said = format!("{}{}", scene.home.logs(), scene.home.worker_log());
    assert!(
        said.contains("withdrawn"),
        "no claim made ahead was taken back:\n{said}"
    );
}

#[test]
fn after_stage_claim_staged_scoped() {
    taken_back(&crash_at("after_stage_claim", Bus::Real, Path::Staged));
}

#[test]
fn after_worker_spawn_staged_scoped() {
    taken_back(&crash_at("after_worker_spawn", Bus::Real, Path::Staged));
}

#[test]
fn after_worker_spawn_staged_degraded() {
    taken_back(&crash_at("after_worker_spawn", Bus::None, Path::Staged));
}

#[test]
fn after_scope_created_staged_scoped() {
    taken_back(&crash_at("after_scope_created", Bus::Real, Path::Staged));
}

/// A gateway that dies with workers staged: they see their gate close,
/// withdraw their rows and exit without running; the next gateway stages
/// the slots again.
#[test]
fn after_stage_line_staged_scoped() {
    let scene = crash_at("after_stage_line", Bus::Real, Path::Staged);
    taken_back(&scene);
    assert!(
        scene.home.worker_log().contains("not released"),
        "no staged worker withdrew its row itself:\n{}",
        scene.home.worker_log()
    );
}

#[test]
fn after_stage_line_staged_degraded() {
    taken_back(&crash_at("after_stage_line", Bus::None, Path::Staged));
}

/// Released workers outlive their gateway and record their runs.
#[test]
fn after_release_staged_scoped() {
    released_worker_finished(&crash_at("after_release", Bus::Real, Path::Staged));
}

#[test]
fn after_release_staged_degraded() {
    released_worker_finished(&crash_at("after_release", Bus::None, Path::Staged));
}

/// A worker that dies before its release never started the command: its
/// live gateway records it `failed` (`worker_exited`), retried per policy.
fn failed_before_release(scene: &Scene) {
    let rows = scene.rows();
    let exited: Vec<&Row> = rows
        .iter()
        .filter(|r| r.reason_code.as_deref() == Some("worker_exited"))
        .collect();
    assert!(exited.len() >= 2, "{:?}", reasons(scene));
    let text = std::fs::read_to_string(&scene.side_effects).unwrap_or_default();
    for r in exited {
        assert_eq!(count(&text, &r.id), 0, "{r} never started its command");
    }
}

#[test]
fn worker_before_stage_staged_scoped() {
    failed_before_release(&crash_at("worker_before_stage", Bus::Real, Path::Staged));
}

#[test]
fn worker_after_stage_staged_scoped() {
    failed_before_release(&crash_at("worker_after_stage", Bus::Real, Path::Staged));
}

#[test]
fn worker_after_stage_staged_degraded() {
    failed_before_release(&crash_at("worker_after_stage", Bus::None, Path::Staged));
}

/// A worker that dies right after forking its command, before recording
/// the start: its command may run, so its row is `unknown` and never retried.
#[test]
fn worker_after_fork_staged_scoped() {
    ran_or_may_have(&crash_at("worker_after_fork", Bus::Real, Path::Staged));
}

#[test]
fn worker_after_fork_staged_degraded() {
    ran_or_may_have(&crash_at("worker_after_fork", Bus::None, Path::Staged));
}

#[test]
fn worker_after_start_staged_scoped() {
    ran_or_may_have(&crash_at("worker_after_start", Bus::Real, Path::Staged));
}

#[test]
fn sweep_before_resolve_staged_scoped() {
    taken_back(&crash_at("sweep_before_resolve", Bus::Real, Path::Staged));
}

/// Staged workers whose gateway died die themselves on their way to
/// withdrawing: nobody can tell whether they were released, so their rows
/// are `unknown` (`worker_died`), never retried, and no command ran.
#[test]
fn worker_before_withdraw_staged_scoped() {
    let scene = Scene::new(Bus::Real, TWO_JOBS);
    let home = &scene.home;
    let mut gw = home.gateway(&[(CRASH_ENV, "after_stage_line,worker_before_withdraw")]);
    gw.wait_killed("after_stage_line", SETTLE_TIMEOUT);
    wait_for(
        "a staged worker to die on its way to withdrawing",
        SETTLE_TIMEOUT,
        || {
            (count(
                &home.worker_log(),
                "crash point worker_before_withdraw reached",
            ) >= 1)
                .then_some(())
        },
    );
    scene.restart_and_run();
    scene.check();
    let text = std::fs::read_to_string(&scene.side_effects).unwrap_or_default();
    let rows = scene.rows();
    let unknown: Vec<&Row> = rows.iter().filter(|r| r.state == "unknown").collect();
    assert!(!unknown.is_empty(), "{:?}", reasons(&scene));
    for r in unknown {
        assert_eq!(r.reason_code.as_deref(), Some("worker_died"), "{r}");
        assert_eq!(count(&text, &r.id), 0, "{r} was never released");
    }
}

/// Rows of workers that died after their command started (or may have):
/// `unknown` (`worker_died`), each side effect at most once (checked).
fn ran_or_may_have(scene: &Scene) {
    let rows = scene.rows();
    let unknown: Vec<&Row> = rows.iter().filter(|r| r.state == "unknown").collect();
    assert!(unknown.len() >= 2, "{:?}", reasons(scene));
    for r in unknown {
        assert_eq!(r.reason_code.as_deref(), Some("worker_died"), "{r}");
    }
}

/// A worker that died at `worker_before_finish` had run its job: its row is
/// `unknown` and its side effect is there, once.
fn ran_but_unrecorded(scene: &Scene) {
    let text = std::fs::read_to_string(&scene.side_effects).unwrap_or_default();
    let rows = scene.rows();
    let unknown: Vec<&Row> = rows.iter().filter(|r| r.state == "unknown").collect();
    assert!(!unknown.is_empty(), "no worker died before finishing");
    for r in unknown {
        assert_eq!(r.reason_code.as_deref(), Some("worker_died"), "{r}");
        assert_eq!(count(&text, &r.id), 1, "the job of {r} ran once");
    }
}

#[test]
fn regression_a_killed_run_command_does_not_wedge_its_job_under_a_live_gateway() {
    // `run` killed right after its claim leaves a `claimed` row owned by a
    // dead process. The gateway only swept at startup, so the row stayed
    // active and overlap `skip` skipped every later slot until a restart.
    let scene = Scene::new(Bus::None, &TWO_JOBS[..1]);
    let home = &scene.home;
    let mut gw = home.gateway(&[QUICK_MONITOR]);
    gw.wait_ready();
    scene.wait_successes(1);
    let out = home
        .cmd(&["run", "a"])
        .env(CRASH_ENV, "after_claim_commit")
        .run();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(libc::SIGKILL),
        "{out}"
    );
    let manual = wait_for("the manual row", SETTLE_TIMEOUT, || {
        scene.rows().into_iter().find(|r| r.source == "manual")
    });
    // Its command never started; a manual run is not started again.
    wait_for(
        "the live gateway to resolve the dead run's row",
        SETTLE_TIMEOUT,
        || {
            scene
                .rows()
                .into_iter()
                .find(|r| r.id == manual.id && r.state == "missed")
        },
    );
    scene.wait_successes(2);
    gw.stop();
    let rows_after: Vec<Row> = scene.rows();
    let row = rows_after.iter().find(|r| r.id == manual.id).unwrap();
    assert_eq!(row.reason_code.as_deref(), Some("claimer_died"), "{row}");
    scene.check();
}

#[test]
fn regression_a_claimed_row_left_to_a_live_worker_is_resolved_when_that_worker_dies() {
    // The startup sweep leaves a `claimed` row alone while a process carries
    // its `--execution` (a released worker about to adopt it). If that
    // process then died without adopting, nobody looked at the row again.
    let scene = Scene::new(Bus::None, TWO_JOBS).without_staging();
    let home = &scene.home;
    let mut first = home.gateway(&[(CRASH_ENV, "after_claim_commit")]);
    first.wait_killed("after_claim_commit", SETTLE_TIMEOUT);
    let stale = invariants::active(&home.db_file());
    assert!(!stale.is_empty(), "the crash left no claimed row");
    // Stand-ins for released workers that will die before adopting.
    let mut holders: Vec<_> = stale
        .iter()
        .map(|r| {
            Command::new("sh")
                .args(["-c", "sleep 1.5", "hold", "--execution", &r.id])
                .stdin(Stdio::null())
                .spawn()
                .expect("spawn sh")
        })
        .collect();
    let mut second = home.gateway(&[QUICK_MONITOR]);
    second.wait_ready();
    assert!(
        second.log().contains("left alone"),
        "the sweep should leave the rows to their live holders\n{}",
        second.log()
    );
    for h in &mut holders {
        h.wait().expect("wait holder");
    }
    // Their commands never started: the gateway takes the claims over and
    // runs them (within their misfire grace), each once (`check`).
    for r in &stale {
        wait_for(
            &format!("the gateway to retake and run {r} after its holder died"),
            Duration::from_secs(20),
            || {
                scene
                    .rows()
                    .into_iter()
                    .find(|x| x.id == r.id && x.state == "succeeded")
            },
        );
    }
    scene.wait_successes(2);
    second.stop();
    scene.check();
}
