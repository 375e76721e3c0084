//! The dispatcher: turns a claimed row into a running worker, scoped when
//! it can, degraded when allowed, refused otherwise. One run, top to bottom
//! ([`Launcher::dispatch`]):
//!
//! 1. stop the runs it replaces (overlap `replace`, `replace.rs`);
//! 2. spawn its worker once, held at its gate (`held.rs`);
//! 3. try the scope: `StartTransientUnit` with the held pid, done when the
//!    start job's result is `done`;
//! 4. place the run (pure: `hermes_cron_core::placement`): scoped, degraded
//!    (one warning per process) or refused;
//! 5. release the worker with its placement (the go line), or give it up
//!    (close its gate: it exits untouched) and record the refusal.
//!
//! When the scope's start job ran but did not end `done`, or timed out, the
//! held pid may have been moved into it (late); that worker is given up and
//! a fresh one is started degraded, so a degraded run is never inside a
//! scope we do not know of. When the call never reached a manager, or the
//! manager refused it, the held worker itself is released degraded.
//!
//! A manager found unavailable (no bus, no systemd on it) is remembered for
//! [`UNAVAILABLE_RETRY`] so a burst of dispatches does not retry the bus for
//! each one.
//!
//! Test knob: `HERMES_CRON_DBUS_TIMEOUT_MS` ([`DBUS_TIMEOUT_ENV`]) bounds both
//! the D-Bus method calls and the whole scope start (default 5 s and 15 s, see
//! [`ZbusTimeouts`]), so tests of a wedged manager finish quickly. Production
//! leaves it unset; values outside 1..=600000 are ignored.

use super::fix::{cause, cause_of};
use super::held::{Attach, HeldWorker, WorkerCall};
use super::replace;
use super::worker_bin::{WorkerNotFound, locate_worker};
use crate::clock::monotonic;
use crate::config::Config;
use crate::db::Db;
use crate::home::Home;
use crate::ledger::{self, DispatchMode};
use crate::schedule::Timestamp;
use crate::systemd::{
    BusCause, BusEnv, ScopeSpec, UnitManager, ZbusTimeouts, ZbusUnitManager, scope_unit_name,
};
use crate::tick::ClaimedRun;
use crate::worker::Go;
use hermes_cron_core::placement::{Cause, CauseCode, Placement, Requirement, place};
use std::convert::Infallible;
use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Test knob: both D-Bus timeouts of [`Launcher::from_env`], in milliseconds.
pub(crate) const DBUS_TIMEOUT_ENV: &str = "HERMES_CRON_DBUS_TIMEOUT_MS";

/// The D-Bus timeouts: the test knob when set and sane, else the defaults.
fn zbus_timeouts() -> ZbusTimeouts {
    std::env::var(DBUS_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| (1..=600_000).contains(ms))
        .map(|ms| ZbusTimeouts {
            method: Duration::from_millis(ms),
            job: Duration::from_millis(ms),
        })
        .unwrap_or_default()
}

/// The user manager on this process's session bus, with the configured timeouts.
pub fn session_manager() -> Arc<dyn UnitManager> {
    Arc::new(ZbusUnitManager::new(
        BusEnv::from_process(),
        zbus_timeouts(),
    ))
}

/// How long an unavailable manager is believed unavailable.
pub(crate) const UNAVAILABLE_RETRY: Duration = Duration::from_secs(30);
/// Headroom of `RuntimeMaxUSec` over the job's timeout and kill grace.
const RUNTIME_HEADROOM: Duration = Duration::from_secs(30);

static DEGRADED_WARNED: AtomicBool = AtomicBool::new(false);

/// What happened to one claimed run.
#[derive(Debug)]
pub enum Dispatched {
    Started {
        mode: DispatchMode,
        cause: Option<Cause>,
        unit: Option<String>,
        child: Child,
    },
    /// Not started; the row is `refused`.
    Refused { cause: Cause, message: String },
    /// The worker for `mode` could not be spawned; the row is `failed`.
    NotSpawned { mode: DispatchMode, message: String },
}

/// A dispatch that could not record its outcome: the ledger failed.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error("failed to record a dispatch")]
    Ledger(#[from] ledger::LedgerError),
}

/// Why no scope: the cause, and whether the held worker may be inside a
/// scope anyway (a start that timed out can still succeed late).
pub(super) struct NoScope {
    pub cause: Cause,
    pub maybe_moved: bool,
}

/// Turns claimed rows into running workers.
pub struct Launcher {
    home: Home,
    worker: PathBuf,
    require_by_config: bool,
    manager: Option<Arc<dyn UnitManager>>,
    unavailable: Mutex<Option<(std::time::Instant, Cause)>>,
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
    /// A launcher using the session bus found in this process's environment.
    pub fn from_env(home: &Home, config: &Config) -> Result<Launcher, WorkerNotFound> {
        Launcher::with_manager(home, config, Some(session_manager()))
    }

    /// A launcher with an explicit manager (None: never scoped).
    pub fn with_manager(
        home: &Home,
        config: &Config,
        manager: Option<Arc<dyn UnitManager>>,
    ) -> Result<Launcher, WorkerNotFound> {
        Ok(Launcher {
            home: home.clone(),
            worker: locate_worker()?,
            require_by_config: config.cron.require_restart_safe_scope,
            manager,
            unavailable: Mutex::new(None),
        })
    }

    pub fn manager(&self) -> Option<&Arc<dyn UnitManager>> {
        self.manager.as_ref()
    }

    /// Dispatch one claimed run. `asked` is the caller's own requirement
    /// (`spawn --require-scope`); `attach` picks foreground runs.
    pub async fn dispatch(
        &self,
        db: &Db,
        run: &ClaimedRun,
        asked: Requirement,
        attach: Attach,
        now: Timestamp,
    ) -> Result<Dispatched, DispatchError> {
        if !run.replace.is_empty() {
            replace::stop_previous(db.location(), self.manager(), &run.replace).await;
        }
        let prepared = self.prepare(run, asked, attach).await;
        self.record(db, run, prepared, now)
    }

    /// The part of a dispatch that touches no ledger (the gateway runs it in
    /// flight): spawn, scope, placement, and the go line or the gate closed.
    /// Overlap `replace` is the caller's, before; a refusal or a worker that
    /// could not be spawned is recorded by [`Launcher::record`], after.
    pub async fn prepare(
        &self,
        run: &ClaimedRun,
        asked: Requirement,
        attach: Attach,
    ) -> Dispatched {
        if attach == Attach::Foreground {
            return self.start_plain(run, DispatchMode::InProcess, None, attach);
        }
        let required = self.requirement(run, asked);
        let held = match self.spawn_held(run, Attach::Detached) {
            Ok(held) => held,
            Err(e) => {
                let failure = cause(
                    CauseCode::SpawnFailed,
                    format!("cannot spawn the worker: {e}"),
                );
                return match place::<Infallible>(Err(failure), required) {
                    Placement::Refused { cause, message } => Dispatched::Refused { cause, message },
                    _ => self.not_spawned(DispatchMode::Degraded, &e),
                };
            }
        };
        let (scope, maybe_moved) = match self.try_scope(&held, run).await {
            Ok(unit) => (Ok(unit), false),
            Err(no) => (Err(no.cause), no.maybe_moved),
        };
        match place(scope, required) {
            Placement::Scoped(unit) => {
                crate::crash::point("after_scope_created");
                let go = Go::scoped(unit);
                match held.release(&go) {
                    Ok(child) => {
                        crate::crash::point("after_go");
                        started(go, None, child)
                    }
                    // The worker died at its gate: as if no scope were possible.
                    Err(e) => {
                        let failure = cause(
                            CauseCode::ReleaseFailed,
                            format!("cannot release the worker: {e}"),
                        );
                        self.without_scope(run, failure, required)
                    }
                }
            }
            Placement::Degraded(cause) if maybe_moved => {
                held.abandon();
                self.degraded(run, None, cause)
            }
            Placement::Degraded(cause) => self.degraded(run, Some(held), cause),
            Placement::Refused { cause, message } => {
                held.abandon();
                Dispatched::Refused { cause, message }
            }
        }
    }

    /// Record what [`Launcher::prepare`] came to: a refusal or a worker that
    /// could not be started is a terminal row; a started one records itself.
    pub fn record(
        &self,
        db: &Db,
        run: &ClaimedRun,
        d: Dispatched,
        now: Timestamp,
    ) -> Result<Dispatched, DispatchError> {
        match &d {
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
        Ok(d)
    }

    /// Place and start a run for which no scope can be had.
    fn without_scope(&self, run: &ClaimedRun, failure: Cause, required: Requirement) -> Dispatched {
        match place::<Infallible>(Err(failure), required) {
            Placement::Scoped(never) => match never {},
            Placement::Degraded(cause) => self.degraded(run, None, cause),
            Placement::Refused { cause, message } => Dispatched::Refused { cause, message },
        }
    }

    /// Start the run degraded: release `held`, or a fresh worker.
    fn degraded(&self, run: &ClaimedRun, held: Option<HeldWorker>, cause: Cause) -> Dispatched {
        warn_degraded_once(&cause);
        let mode = DispatchMode::Degraded;
        match held {
            Some(held) => self.release_plain(held, mode, Some(cause)),
            None => self.start_plain(run, mode, Some(cause), Attach::Detached),
        }
    }

    pub(super) fn requirement(&self, run: &ClaimedRun, asked: Requirement) -> Requirement {
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

    pub(super) fn spawn_held(
        &self,
        run: &ClaimedRun,
        attach: Attach,
    ) -> std::io::Result<HeldWorker> {
        let call = WorkerCall {
            home: self.home.root(),
            execution: run.id.as_str(),
        };
        let held = HeldWorker::spawn(&self.worker, &call, attach)?;
        crate::crash::point("after_worker_spawn");
        Ok(held)
    }

    /// Create the scope around the held worker; its unit name when made.
    pub(super) async fn try_scope(
        &self,
        held: &HeldWorker,
        run: &ClaimedRun,
    ) -> Result<String, NoScope> {
        let not_moved = |cause| NoScope {
            cause,
            maybe_moved: false,
        };
        if let Some(cause) = self.known_unavailable() {
            return Err(not_moved(cause));
        }
        let Some(manager) = &self.manager else {
            return Err(not_moved(cause(
                CauseCode::Disabled,
                "scopes are disabled for this launcher",
            )));
        };
        let unit = scope_unit_name(&run.job_name, run.id.as_str());
        let timeout = Duration::from_secs(run.spec.timeout_s);
        let spec = ScopeSpec {
            name: unit.clone(),
            description: format!("hermes-cron job {} ({})", run.job_name, run.id),
            pids: vec![held.pid()],
            runtime_max: (run.spec.timeout_s > 0)
                .then(|| timeout + crate::process::kill_grace() + RUNTIME_HEADROOM),
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
                Err(NoScope {
                    cause,
                    maybe_moved: !untouched,
                })
            }
        }
    }

    /// Release a held worker without a scope.
    fn release_plain(
        &self,
        held: HeldWorker,
        mode: DispatchMode,
        cause: Option<Cause>,
    ) -> Dispatched {
        let go = Go {
            mode,
            unit: None,
            cause: cause.as_ref().map(|c| c.code),
        };
        match held.release(&go) {
            Ok(child) => {
                crate::crash::point("after_go");
                started(go, cause, child)
            }
            Err(e) => self.not_spawned(mode, &e),
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
        match self.spawn_held(run, attach) {
            Ok(held) => self.release_plain(held, mode, cause),
            Err(e) => self.not_spawned(mode, &e),
        }
    }

    pub(super) fn not_spawned(&self, mode: DispatchMode, e: &std::io::Error) -> Dispatched {
        Dispatched::NotSpawned {
            mode,
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

fn started(go: Go, cause: Option<Cause>, child: Child) -> Dispatched {
    Dispatched::Started {
        mode: go.mode,
        cause,
        unit: go.unit,
        child,
    }
}

/// The one degraded warning of this process.
pub(super) fn warn_degraded_once(cause: &Cause) {
    if !DEGRADED_WARNED.swap(true, Ordering::SeqCst) {
        tracing::warn!(
            cause = %cause.code,
            "running jobs degraded (not restart-safe: a gateway restart kills them): {}",
            cause.explained()
        );
    }
}
