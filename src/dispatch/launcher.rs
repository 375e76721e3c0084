//! The launcher: the path of one run, written once. [`Launcher::launch`] is
//! one future per run, read top to bottom:
//!
//! 1. stop the runs it replaces (overlap `replace`, `stop.rs`);
//! 2. spawn its worker once, held at its gate (`held.rs`);
//! 3. try the scope: `StartTransientUnit` with the held pid, done when the
//!    start job's result is `done`;
//! 4. place the run (pure: `hermes_cron_core::placement`): scoped, degraded
//!    (one warning per process) or refused;
//! 5. start it now (the go line), or stage it (the stage line: the worker
//!    holds its row) and wait at the gate (`gate.rs`) for its instant, then
//!    stop what the release says it replaces and write the release byte;
//! 6. return what it came to ([`Launched`]), which [`Launcher::record`]
//!    writes to the ledger (a refusal, a worker that could not be spawned, a
//!    run that could not be staged) in one place.
//!
//! The gateway drives it for scheduled runs (staged or not), taken-over
//! claims and command alerts, in flight inside its loop; `run`, `tick` and
//! `spawn` through [`Launcher::dispatch`] (launch now, then record).
//!
//! When the scope's start job ran but did not end `done`, or timed out, the
//! held pid may have been moved into it (late): that worker is given up and
//! a fresh one is started degraded, so a degraded run is never inside a
//! scope we do not know of. When the call never reached a manager, or the
//! manager refused it, the held worker itself is released degraded.
//!
//! Staging only prepares: a run that would be refused or whose worker cannot
//! be spawned or staged is [`Launched::NotStaged`], its claim is taken back
//! and the claim at its instant launches it now, which records what happens.
//!
//! A manager found unavailable (no bus, no systemd on it) is remembered for
//! [`UNAVAILABLE_RETRY`] so a burst of dispatches does not retry the bus for
//! each one.

use super::fix::{cause, cause_of};
use super::gate::Gated;
use super::held::{Attach, HeldWorker, WorkerCall};
use super::stop::stop_runs;
use crate::clock::monotonic;
use crate::db::Db;
use crate::home::Home;
use crate::ledger::ClaimedRun;
use crate::ledger::{self, DispatchMode, ExecState};
use crate::process::start_attrs;
use crate::systemd::{BusCause, ScopeSpec, UnitManager, scope_unit_name};
use crate::worker::Go;
use hermes_cron_core::health::StartAttrs;
use hermes_cron_core::placement::{Cause, CauseCode, Placement, Requirement, place};
use std::convert::Infallible;
use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long an unavailable manager is believed unavailable.
pub(crate) const UNAVAILABLE_RETRY: Duration = Duration::from_secs(30);
/// Headroom of `RuntimeMaxUSec` over the job's timeout and kill grace.
const RUNTIME_HEADROOM: Duration = Duration::from_secs(30);

static DEGRADED_WARNED: AtomicBool = AtomicBool::new(false);

/// When a launched run's command starts.
#[derive(Debug)]
pub enum Start {
    /// Now: the go line. `asked` is the caller's own requirement (`spawn
    /// --require-scope`); `attach` picks foreground runs.
    Now { asked: Requirement, attach: Attach },
    /// At its instant: staged, then released through the gate.
    Staged(Gated),
}

impl Start {
    /// A run started now, detached, with no requirement of the caller's.
    pub const NOW: Start = Start::Now {
        asked: Requirement::None,
        attach: Attach::Detached,
    };
}

/// What a run launched now came to.
#[derive(Debug)]
pub enum Dispatched {
    Started {
        mode: DispatchMode,
        cause: Option<Cause>,
        unit: Option<String>,
        child: Child,
    },
    /// Not started; recorded `refused`.
    Refused { cause: Cause, message: String },
    /// The worker for `mode` could not be spawned; recorded `failed`.
    NotSpawned { mode: DispatchMode, message: String },
}

/// What one launch came to.
#[derive(Debug)]
pub enum Launched {
    /// Started (now, or released at its instant), refused or not spawned.
    Dispatched(Dispatched),
    /// Could not be staged (why, in words): its claim is taken back.
    NotStaged(String),
    /// Staged and not released: the gate was dropped (the loop moved its
    /// row, or is stopping). Nothing to record.
    Withdrawn,
    /// Released, but its worker was gone: it died staged.
    Gone { pid: u32, error: String },
}

/// A dispatch that could not record its outcome: the ledger failed.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error("failed to record a dispatch")]
    Ledger(#[from] ledger::LedgerError),
}

/// Why a run has no placed worker: what it comes to instead.
enum NotPlaced {
    Refused { cause: Cause, message: String },
    NotSpawned { mode: DispatchMode, message: String },
}

impl From<NotPlaced> for Dispatched {
    fn from(n: NotPlaced) -> Dispatched {
        match n {
            NotPlaced::Refused { cause, message } => Dispatched::Refused { cause, message },
            NotPlaced::NotSpawned { mode, message } => Dispatched::NotSpawned { mode, message },
        }
    }
}

/// A held worker and where it was placed: ready for its go or stage line.
struct Placed {
    held: HeldWorker,
    go: Go,
    cause: Option<Cause>,
}

/// Turns claimed rows into running workers.
pub struct Launcher {
    home: Home,
    worker: PathBuf,
    require_by_config: bool,
    manager: Option<Arc<dyn UnitManager>>,
    /// The kill grace a scope's `RuntimeMaxUSec` leaves room for.
    grace: Duration,
    unavailable: Mutex<Option<(std::time::Instant, Cause)>>,
    /// What its runs' jobs start with (see `process::start_attrs`).
    job_start: StartAttrs,
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher")
            .field("home", &self.home)
            .field("worker", &self.worker)
            .finish()
    }
}

impl Launcher {
    /// A launcher of `worker` for `home` (manager None: never scoped);
    /// `require_scope` is `cron.require_restart_safe_scope`, `grace` the
    /// kill grace (for a scope's `RuntimeMaxUSec` and stopping a run). Its
    /// jobs start with this process's umask, nice value and limits.
    pub fn new(
        home: &Home,
        worker: PathBuf,
        require_scope: bool,
        manager: Option<Arc<dyn UnitManager>>,
        grace: Duration,
    ) -> Launcher {
        Launcher {
            home: home.clone(),
            worker,
            require_by_config: require_scope,
            manager,
            grace,
            unavailable: Mutex::new(None),
            job_start: start_attrs::of_this_process(),
        }
    }

    /// A launcher of the worker found for this install, on the session bus
    /// of this process's environment, as `config` requires (for `run` and
    /// `spawn`). Its jobs start as the home's live gateway says its own
    /// start (a scheduled run's umask, nice value and limits, not the
    /// caller's), else as this process.
    pub fn from_env(
        home: &Home,
        config: &crate::config::Config,
        knobs: &crate::knobs::Knobs,
    ) -> Result<Launcher, super::WorkerNotFound> {
        let mut launcher = Launcher::new(
            home,
            super::worker_bin::locate_worker()?,
            config.cron.require_restart_safe_scope,
            Some(crate::systemd::session_manager(knobs.dbus_timeout)),
            knobs.kill_grace,
        );
        if let Some(start) = crate::state_files::read_heartbeat(home)
            .filter(|beat| {
                crate::process::is_alive(&crate::process::ProcessIdentity {
                    pid: beat.pid,
                    start: beat.start_time,
                })
            })
            .and_then(|beat| beat.job_start)
        {
            launcher.job_start = start;
        }
        Ok(launcher)
    }

    /// What its runs' jobs start with.
    pub fn job_start(&self) -> &StartAttrs {
        &self.job_start
    }

    /// The kill grace its runs are stopped with.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    pub fn manager(&self) -> Option<&Arc<dyn UnitManager>> {
        self.manager.as_ref()
    }

    /// Launch `run` (module documentation); nothing is recorded here.
    pub async fn launch(&self, run: &ClaimedRun, start: Start) -> Launched {
        self.stop_replaced(run).await;
        match start {
            Start::Now { asked, attach } => {
                Launched::Dispatched(self.start_now(run, asked, attach).await)
            }
            Start::Staged(gate) => self.stage(run, gate).await,
        }
    }

    /// Launch `run` now and record what it came to (`run`, `tick`, `spawn`).
    pub async fn dispatch(
        &self,
        db: &Db,
        run: &ClaimedRun,
        asked: Requirement,
        attach: Attach,
        now: crate::schedule::Timestamp,
    ) -> Result<Dispatched, DispatchError> {
        self.stop_replaced(run).await;
        let dispatched = self.start_now(run, asked, attach).await;
        record_dispatched(db, run, &dispatched, now)?;
        Ok(dispatched)
    }

    /// Record what a launch came to (module documentation).
    pub fn record(
        db: &Db,
        run: &ClaimedRun,
        launched: &Launched,
        now: crate::schedule::Timestamp,
    ) -> Result<(), DispatchError> {
        match launched {
            Launched::Dispatched(d) => record_dispatched(db, run, d, now),
            Launched::NotStaged(_) => {
                let owner = run.owner.to_string();
                ledger::withdraw(db.conn(), &run.id, ExecState::Claimed, Some(&owner))?;
                Ok(())
            }
            Launched::Withdrawn | Launched::Gone { .. } => Ok(()),
        }
    }

    async fn stop_replaced(&self, run: &ClaimedRun) {
        if !run.replace.is_empty() {
            stop_runs(self.manager().map(|m| m.as_ref()), &run.replace, self.grace).await;
        }
    }

    /// Start `run` now: placed, then the go line.
    async fn start_now(&self, run: &ClaimedRun, asked: Requirement, attach: Attach) -> Dispatched {
        if attach == Attach::Foreground {
            return self.start_plain(run, DispatchMode::InProcess, None, attach);
        }
        let required = self.requirement(run, asked);
        let p = match self.placed(run, required, attach).await {
            Ok(p) => p,
            Err(not) => return not.into(),
        };
        let mode = p.go.mode;
        match p.held.release(&p.go) {
            Ok(child) => {
                crate::crash::point("after_go");
                started(p.go, p.cause, child)
            }
            // The worker died at its gate: as if no scope were possible.
            Err(e) if mode == DispatchMode::Scoped => {
                let failure = cause(
                    CauseCode::ReleaseFailed,
                    format!("cannot release the worker: {e}"),
                );
                self.without_scope(run, failure, required, attach)
            }
            Err(e) => self.not_spawned(mode, &e),
        }
    }

    /// Stage `run`: placed, then the stage line; at the gate until its
    /// instant, then the release byte.
    async fn stage(&self, run: &ClaimedRun, gate: Gated) -> Launched {
        let required = self.requirement(run, Requirement::None);
        let mut p = match self.placed(run, required, Attach::Detached).await {
            Ok(p) => p,
            Err(NotPlaced::Refused { message, .. }) => {
                return Launched::NotStaged(format!("would be refused: {message}"));
            }
            Err(NotPlaced::NotSpawned { message, .. }) => return Launched::NotStaged(message),
        };
        if let Err(e) = p.held.stage(&p.go) {
            p.held.abandon();
            return Launched::NotStaged(format!("cannot write the stage line: {e}"));
        }
        crate::crash::point("after_stage_line");
        let pid = p.held.pid();
        gate.holds(pid);
        let Some(release) = gate.wait().await else {
            p.held.abandon();
            return Launched::Withdrawn;
        };
        if !release.replace.is_empty() {
            stop_runs(
                self.manager().map(|m| m.as_ref()),
                &release.replace,
                self.grace,
            )
            .await;
        }
        match p.held.release_staged() {
            Ok(child) => {
                crate::crash::point("after_release");
                Launched::Dispatched(started(p.go, p.cause, child))
            }
            Err(e) => Launched::Gone {
                pid,
                error: e.to_string(),
            },
        }
    }

    /// Spawn the held worker, try its scope and place the run: the worker
    /// with its placement, or what the run came to instead (refused, not
    /// spawned).
    async fn placed(
        &self,
        run: &ClaimedRun,
        required: Requirement,
        attach: Attach,
    ) -> Result<Placed, NotPlaced> {
        let held = match self.spawn_held(run, attach) {
            Ok(held) => held,
            Err(e) => {
                let failure = cause(
                    CauseCode::SpawnFailed,
                    format!("cannot spawn the worker: {e}"),
                );
                return Err(match place::<Infallible>(Err(failure), required) {
                    Placement::Refused { cause, message } => NotPlaced::Refused { cause, message },
                    _ => self.not_placed(&e),
                });
            }
        };
        let (scope, maybe_moved) = match self.try_scope(&held, run).await {
            Ok(unit) => (Ok(unit), false),
            Err((cause, maybe_moved)) => (Err(cause), maybe_moved),
        };
        match place(scope, required) {
            Placement::Scoped(unit) => {
                crate::crash::point("after_scope_created");
                Ok(Placed {
                    held,
                    go: Go::scoped(unit),
                    cause: None,
                })
            }
            Placement::Degraded(cause) => {
                let held = if maybe_moved {
                    // The scope's start may have moved it late: a fresh one.
                    held.abandon();
                    self.spawn_held(run, attach)
                        .map_err(|e| self.not_placed(&e))?
                } else {
                    held
                };
                warn_degraded_once(&cause);
                Ok(Placed {
                    held,
                    go: Go::degraded(cause.code),
                    cause: Some(cause),
                })
            }
            Placement::Refused { cause, message } => {
                held.abandon();
                Err(NotPlaced::Refused { cause, message })
            }
        }
    }

    /// Place and start a run for which no scope can be had.
    fn without_scope(
        &self,
        run: &ClaimedRun,
        failure: Cause,
        required: Requirement,
        attach: Attach,
    ) -> Dispatched {
        match place::<Infallible>(Err(failure), required) {
            Placement::Scoped(never) => match never {},
            Placement::Degraded(cause) => {
                warn_degraded_once(&cause);
                self.start_plain(run, DispatchMode::Degraded, Some(cause), attach)
            }
            Placement::Refused { cause, message } => Dispatched::Refused { cause, message },
        }
    }

    fn requirement(&self, run: &ClaimedRun, asked: Requirement) -> Requirement {
        if asked != Requirement::None {
            asked
        } else if run.spec.require_scope {
            Requirement::Job
        } else if self.require_by_config {
            Requirement::Config
        } else {
            Requirement::None
        }
    }

    fn spawn_held(&self, run: &ClaimedRun, attach: Attach) -> std::io::Result<HeldWorker> {
        let call = WorkerCall {
            home: self.home.root(),
            execution: run.id.as_str(),
            start: &self.job_start,
        };
        let held = HeldWorker::spawn(&self.worker, &call, attach)?;
        crate::crash::point("after_worker_spawn");
        Ok(held)
    }

    /// Create the scope around the held worker; its unit name when made,
    /// else why not and whether the worker may have been moved anyway (a
    /// start that timed out can still succeed late).
    async fn try_scope(
        &self,
        held: &HeldWorker,
        run: &ClaimedRun,
    ) -> Result<String, (Cause, bool)> {
        if let Some(cause) = self.known_unavailable() {
            return Err((cause, false));
        }
        let Some(manager) = &self.manager else {
            let off = cause(CauseCode::Disabled, "scopes are disabled for this launcher");
            return Err((off, false));
        };
        let unit = scope_unit_name(&run.job_name, run.id.as_str());
        let timeout = Duration::from_secs(run.spec.timeout_s);
        let spec = ScopeSpec {
            name: unit.clone(),
            description: format!("hermes-cron job {} ({})", run.job_name, run.id),
            pids: vec![held.pid()],
            runtime_max: (run.spec.timeout_s > 0).then(|| timeout + self.grace + RUNTIME_HEADROOM),
            memory_max: run.spec.resources.memory_max,
            cpu_weight: run.spec.resources.cpu_weight,
            tasks_max: run.spec.resources.tasks_max,
        };
        match manager.start_scope(&spec).await {
            Ok(()) => Ok(unit),
            Err(bus) => {
                let cause = cause_of(&bus);
                // A wedged manager (timeout) is as good as absent for a
                // while: do not spend a full timeout on every dispatch.
                if bus.is_unavailable() || matches!(bus, BusCause::Timeout { .. }) {
                    self.remember_unavailable(&cause);
                }
                // Only a call that never reached systemd, or that it
                // refused, surely left the held worker where it was.
                let untouched = bus.is_unavailable() || matches!(bus, BusCause::CallRefused { .. });
                Err((cause, !untouched))
            }
        }
    }

    /// Spawn and release a worker without a scope (foreground, or degraded
    /// after a scope attempt that may have moved the first one).
    fn start_plain(
        &self,
        run: &ClaimedRun,
        mode: DispatchMode,
        cause: Option<Cause>,
        attach: Attach,
    ) -> Dispatched {
        let go = Go {
            mode,
            unit: None,
            cause: cause.as_ref().map(|c| c.code),
        };
        let released = self
            .spawn_held(run, attach)
            .and_then(|held| held.release(&go));
        match released {
            Ok(child) => {
                crate::crash::point("after_go");
                started(go, cause, child)
            }
            Err(e) => self.not_spawned(mode, &e),
        }
    }

    fn not_spawned(&self, mode: DispatchMode, e: &std::io::Error) -> Dispatched {
        Dispatched::NotSpawned {
            mode,
            message: format!("cannot start the worker {}: {e}", self.worker.display()),
        }
    }

    /// No worker could be spawned for a placement (a held worker is
    /// released degraded when it is not scoped).
    fn not_placed(&self, e: &std::io::Error) -> NotPlaced {
        NotPlaced::NotSpawned {
            mode: DispatchMode::Degraded,
            message: format!("cannot start the worker {}: {e}", self.worker.display()),
        }
    }

    fn known_unavailable(&self) -> Option<Cause> {
        let guard = self.unavailable.lock().ok()?;
        match &*guard {
            Some((at, cause)) if monotonic().saturating_duration_since(*at) < UNAVAILABLE_RETRY => {
                Some(cause.clone())
            }
            _ => None,
        }
    }

    fn remember_unavailable(&self, cause: &Cause) {
        if let Ok(mut guard) = self.unavailable.lock() {
            *guard = Some((monotonic(), cause.clone()));
        }
    }
}

/// Record what a run launched now came to: a refusal or a worker that
/// could not be spawned is a terminal row; a started run records itself.
fn record_dispatched(
    db: &Db,
    run: &ClaimedRun,
    d: &Dispatched,
    now: crate::schedule::Timestamp,
) -> Result<(), DispatchError> {
    match d {
        Dispatched::Started { .. } => {}
        Dispatched::Refused { cause, message } => {
            ledger::refuse(
                db.conn(),
                &run.id,
                &run.owner,
                cause.code,
                message.clone(),
                now,
            )?;
        }
        Dispatched::NotSpawned { mode, message } => {
            ledger::spawn_failed(db.conn(), &run.id, &run.owner, *mode, message.clone(), now)?;
        }
    }
    Ok(())
}

fn started(go: Go, cause: Option<Cause>, child: Child) -> Dispatched {
    Dispatched::Started {
        mode: go.mode,
        cause,
        unit: go.unit,
        child,
    }
}

/// The one degraded warning of this process.
fn warn_degraded_once(cause: &Cause) {
    if !DEGRADED_WARNED.swap(true, Ordering::SeqCst) {
        tracing::warn!(
            cause = %cause.code,
            "running jobs degraded (not restart-safe: a gateway restart kills them): {}",
            cause.explained()
        );
    }
}
