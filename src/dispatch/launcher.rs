//! The dispatcher: turns a claimed row into a running worker, scoped when
//! it can, degraded when allowed, refused otherwise.
//!
//! Scoped: spawn the worker held at its gate, `StartTransientUnit` with the
//! held pid, and only on job result `done` write the go byte. Any failure:
//! close the gate (the worker exits untouched), reap it, and decide again as
//! if no scope were possible. Degraded: the same worker, `setsid`, no cgroup,
//! with one warning per process. Refused: the row becomes `refused` with the
//! cause and the fix.
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
use super::worker_bin::{WorkerNotFound, locate_worker};
use crate::clock::monotonic;
use crate::config::Config;
use crate::db::{Db, DbWatcher};
use crate::home::Home;
use crate::ledger::{self, DispatchMode, ExecState, Execution};
use crate::process::{identity_of, signal_pid};
use crate::schedule::Instant;
use crate::systemd::{
    BusCause, BusEnv, ScopeSpec, UnitManager, ZbusTimeouts, ZbusUnitManager, scope_unit_name,
};
use crate::tick::ClaimedRun;
use hermes_cron_core::placement::{Cause, Placement, Requirement, place};
use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Test knob: both D-Bus timeouts of [`Launcher::from_env`], in milliseconds.
pub const DBUS_TIMEOUT_ENV: &str = "HERMES_CRON_DBUS_TIMEOUT_MS";

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
pub const UNAVAILABLE_RETRY: Duration = Duration::from_secs(30);
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
    /// The worker could not be spawned; the row is `failed`.
    NotSpawned { message: String },
}

/// Losing the ledger while dispatching is critical.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
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

    fn call<'a>(
        &'a self,
        run: &'a ClaimedRun,
        mode: DispatchMode,
        cause: Option<&'a str>,
        unit: Option<&'a str>,
    ) -> WorkerCall<'a> {
        WorkerCall {
            home: self.home.root(),
            execution: run.id.as_str(),
            mode,
            cause,
            unit,
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

    /// Try to start `run`'s worker in a scope. `Ok(child)` runs released in it.
    async fn try_scoped(&self, run: &ClaimedRun) -> Result<(Child, String), Cause> {
        if let Some(cause) = self.known_unavailable() {
            return Err(cause);
        }
        let Some(manager) = &self.manager else {
            return Err(cause("disabled", "scopes are disabled for this launcher"));
        };
        let unit = scope_unit_name(&run.job_name, run.id.as_str());
        let held = HeldWorker::spawn(
            &self.worker,
            &self.call(run, DispatchMode::Scoped, None, Some(&unit)),
            Attach::Detached,
        )
        .map_err(|e| cause("spawn_failed", format!("cannot spawn the worker: {e}")))?;
        crate::crash::point("after_worker_spawn");
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
            Ok(()) => {
                crate::crash::point("after_scope_created");
                match held.release() {
                    Ok(child) => {
                        crate::crash::point("after_go");
                        Ok((child, unit))
                    }
                    Err(e) => Err(cause(
                        "release_failed",
                        format!("cannot release the worker: {e}"),
                    )),
                }
            }
            Err(bus) => {
                held.abandon();
                let cause = cause_of(&bus);
                // A wedged manager (timeout) is as good as absent for a
                // while: do not spend a full timeout on every dispatch.
                if bus.is_unavailable() || matches!(bus, BusCause::Timeout { .. }) {
                    self.remember_unavailable(&cause);
                }
                Err(cause)
            }
        }
    }

    /// Dispatch one claimed run. `asked` is the caller's own requirement
    /// (`spawn --require-scope`); `attach` picks foreground runs.
    pub async fn dispatch(
        &self,
        db: &Db,
        run: &ClaimedRun,
        asked: Requirement,
        attach: Attach,
        now: Instant,
    ) -> Result<Dispatched, DispatchError> {
        if !run.replace.is_empty() {
            self.stop_replaced(db, &run.replace).await;
        }
        if attach == Attach::Foreground {
            return self.spawn_plain(
                db,
                run,
                DispatchMode::InProcess,
                None,
                Attach::Foreground,
                now,
            );
        }
        let required = self.requirement(run, asked);
        let attempt = self.try_scoped(run).await;
        let attempt = match attempt {
            Ok((child, unit)) => {
                return Ok(Dispatched::Started {
                    mode: DispatchMode::Scoped,
                    cause: None,
                    unit: Some(unit),
                    child,
                });
            }
            Err(cause) => Err(cause),
        };
        match place(attempt, required) {
            Placement::Scoped => unreachable!("a scoped verdict returns above"),
            Placement::Degraded(cause) => {
                warn_degraded_once(&cause);
                self.spawn_plain(
                    db,
                    run,
                    DispatchMode::Degraded,
                    Some(cause),
                    Attach::Detached,
                    now,
                )
            }
            Placement::Refused { cause, message } => {
                ledger::refuse(
                    db.conn(),
                    &run.id,
                    &run.owner,
                    &cause.code,
                    message.clone(),
                    now,
                )?;
                Ok(Dispatched::Refused { cause, message })
            }
        }
    }

    /// Overlap `replace`: stop the previous runs (their scope, or their
    /// worker, which passes SIGTERM to its job) and wait until their rows are
    /// terminal or their workers gone, at most the kill grace plus a margin.
    async fn stop_replaced(&self, db: &Db, old: &[Execution]) {
        for run in old {
            tracing::info!(execution = %run.id, job = %run.job_name, "overlap replace: stopping the previous run");
            let stopped = match (&run.unit, &self.manager) {
                (Some(unit), Some(m)) => m.stop_unit(unit).await.is_ok(),
                _ => false,
            };
            if !stopped && let Some(pid) = run.pid {
                let _ = signal_pid(pid, Signal::SIGTERM);
            }
        }
        // Woken by the rows' writes; looked at again on a period for a worker
        // that died without writing.
        let mut changes = db
            .path()
            .parent()
            .and_then(|dir| DbWatcher::new(dir).ok())
            .unwrap_or_else(DbWatcher::disabled);
        let deadline = monotonic() + crate::process::kill_grace() + Duration::from_secs(5);
        for run in old {
            while monotonic() < deadline {
                let row = ledger::get_execution(db.conn(), &run.id).ok().flatten();
                let done = row.is_none_or(|(r, _)| {
                    r.state.is_terminal()
                        || (r.state == ExecState::Running
                            && r.pid.is_some_and(|p| identity_of(p).is_none()))
                });
                if done {
                    break;
                }
                changes.next_look(Duration::from_millis(100)).await;
            }
        }
    }

    fn spawn_plain(
        &self,
        db: &Db,
        run: &ClaimedRun,
        mode: DispatchMode,
        cause: Option<Cause>,
        attach: Attach,
        now: Instant,
    ) -> Result<Dispatched, DispatchError> {
        let code = cause.as_ref().map(|c| c.code.as_str());
        let spawned = HeldWorker::spawn(&self.worker, &self.call(run, mode, code, None), attach)
            .and_then(|held| {
                crate::crash::point("after_worker_spawn");
                held.release()
            });
        match spawned {
            Ok(child) => {
                crate::crash::point("after_go");
                Ok(Dispatched::Started {
                    mode,
                    cause,
                    unit: None,
                    child,
                })
            }
            Err(e) => {
                let message = format!("cannot start the worker {}: {e}", self.worker.display());
                ledger::spawn_failed(db.conn(), &run.id, &run.owner, mode, message.clone(), now)?;
                Ok(Dispatched::NotSpawned { message })
            }
        }
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

/// Whether this process has warned about degraded dispatch.
pub fn degraded_warned() -> bool {
    DEGRADED_WARNED.load(Ordering::SeqCst)
}
