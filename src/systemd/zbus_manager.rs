//! [`ZbusUnitManager`]: the [`UnitManager`] that talks to the user manager over D-Bus.
//!
//! Invariants:
//! - The bus is located ([`locate_bus`]) and connected on first use, not at construction,
//!   so a manager that comes up later is found.
//! - Every method call carries a timeout (zbus has none by default): the connection's
//!   `method_timeout`, and connecting itself is bounded by the same duration.
//! - One connection is reused across calls. A connection found closed is replaced before
//!   use; a call that fails because the connection dropped is retried once on a fresh one
//!   when that is safe: always for `GetUnit`, `GetUnitProcesses`, `StopUnit` and `UnrefUnit`; for
//!   `start_scope` only if the drop is seen while subscribing to `JobRemoved`, i.e. before
//!   `StartTransientUnit` was sent (a resent start could report `UnitExists` for our own
//!   scope).
//! - `start_scope` registers for its unit's `JobRemoved` on the connection's one
//!   subscription (`job_watch.rs`, opened by the first start on a connection) before
//!   calling `StartTransientUnit`, matches the signal by the returned job path, and so also
//!   sees a signal that arrives before the method reply (it waits in the waiter's channel).
//!   The whole operation is bounded by [`ZbusTimeouts::job`].
//!
//! ## Locking
//! One async mutex guards the cached [`Session`]. It is held only to check the cached
//! connection or to build a new one (bounded by the method timeout), never during a unit
//! call: calls run on a clone of the session, so concurrent dispatches share one
//! connection and do not wait for each other.

use super::bus::{BusAddress, BusEnv, locate_bus};
use super::cause::BusCause;
use super::job_watch::{JobWaiter, JobWatch};
use super::manager::{UnitFuture, UnitManager, UnitProcess};
use super::map_error::{NO_SUCH_UNIT, NOT_REFERENCED, cause_from_zbus, error_name, is_disconnect};
use super::proxy::ManagerProxy;
use crate::clock::monotonic;
use hermes_cron_core::scope::ScopeSpec;
use hermes_cron_core::scope::{PropValue, scope_properties};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OnceCell};
use tokio::time::{Instant as TokioInstant, timeout, timeout_at};
use zbus::Variant;
use zbus::proxy::CacheProperties;
use zbus::{Connection, OwnedObjectPath};

/// How long [`ZbusUnitManager`] waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZbusTimeouts {
    /// Connecting (connect, auth, `Hello`) and each method call.
    pub method: Duration,
    /// The whole of `start_scope`: subscribing, the call and its `JobRemoved`.
    pub job: Duration,
}

impl Default for ZbusTimeouts {
    /// 5 s per call, 15 s for a scope to start: a healthy user manager answers in
    /// milliseconds, so either limit means something is wedged.
    fn default() -> Self {
        ZbusTimeouts {
            method: Duration::from_secs(5),
            job: Duration::from_secs(15),
        }
    }
}

/// The user manager on this process's session bus; `timeout` (the test knob
/// `HERMES_CRON_DBUS_TIMEOUT_MS`) is every timeout when given, so tests of a
/// wedged manager finish quickly, else the defaults.
pub fn session_manager(timeout: Option<Duration>) -> Arc<dyn super::UnitManager> {
    let timeouts = timeout.map_or_else(ZbusTimeouts::default, |t| ZbusTimeouts {
        method: t,
        job: t,
    });
    Arc::new(ZbusUnitManager::new(BusEnv::from_process(), timeouts))
}

/// A live connection, the manager proxy on it, and its one `JobRemoved`
/// subscription (opened by the first scope start).
#[derive(Clone)]
struct Session {
    generation: u64,
    address: Arc<BusAddress>,
    conn: Connection,
    proxy: ManagerProxy<'static>,
    jobs: Arc<OnceCell<Arc<JobWatch>>>,
}

/// The D-Bus implementation of [`UnitManager`]. Cheap to share: put it in an `Arc`.
pub struct ZbusUnitManager {
    env: BusEnv,
    timeouts: ZbusTimeouts,
    session: Mutex<(u64, Option<Session>)>,
}

impl std::fmt::Debug for ZbusUnitManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZbusUnitManager")
            .field("env", &self.env)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl ZbusUnitManager {
    /// A manager for the bus `env` leads to. Nothing is located or connected yet.
    pub fn new(env: BusEnv, timeouts: ZbusTimeouts) -> Self {
        ZbusUnitManager {
            env,
            timeouts,
            session: Mutex::new((0, None)),
        }
    }

    /// A manager for this process's environment, with default timeouts.
    pub fn from_process_env() -> Self {
        Self::new(BusEnv::from_process(), ZbusTimeouts::default())
    }

    /// The timeouts in force.
    pub fn timeouts(&self) -> ZbusTimeouts {
        self.timeouts
    }

    /// Checks that a systemd manager answers on the bus: one `GetUnit("init.scope")`,
    /// where any answer from the manager (including `NoSuchUnit`) counts as reachable.
    pub async fn probe(&self) -> Result<(), BusCause> {
        self.idempotent("probing the manager with GetUnit", |proxy| async move {
            match proxy.get_unit("init.scope").await {
                Ok(_) => Ok(()),
                Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_UNIT) => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// See [`UnitManager::start_scope`].
    pub async fn start_scope(&self, spec: &ScopeSpec) -> Result<(), BusCause> {
        let deadline = TokioInstant::from_std(monotonic() + self.timeouts.job);
        let (session, mut jobs) = timeout_at(deadline, self.job_waiter(&spec.name))
            .await
            .map_err(|_| BusCause::Timeout {
                what: format!("subscribing to JobRemoved for {}", spec.name),
            })??;

        let what = format!("calling StartTransientUnit for {}", spec.name);
        let props = variants(scope_properties(spec));
        let call = session
            .proxy
            .start_transient_unit(&spec.name, "fail", &props, &[]);
        let job = timeout_at(deadline, call)
            .await
            .map_err(|_| BusCause::Timeout { what: what.clone() })?
            .map_err(|e| cause_from_zbus(&e, &session.address, &what))?;

        let outcome = Self::await_job(&mut jobs, &job, deadline, spec, self.timeouts.job).await;
        if outcome.is_err() {
            // The unit exists (failed, or still starting): drop the AddRef reference so
            // systemd can collect it once inactive. Best effort; the cause is what matters.
            let _ = timeout(self.timeouts.method, session.proxy.unref_unit(&spec.name)).await;
        }
        outcome
    }

    /// Waits on `jobs` for the `JobRemoved` of `job`, until `deadline`.
    async fn await_job(
        jobs: &mut JobWaiter,
        job: &OwnedObjectPath,
        deadline: TokioInstant,
        spec: &ScopeSpec,
        limit: Duration,
    ) -> Result<(), BusCause> {
        let waiting = || {
            format!(
                "waiting {limit:?} for the JobRemoved of {} ({})",
                job.as_str(),
                spec.name
            )
        };
        loop {
            let signal = match timeout_at(deadline, jobs.next()).await {
                Err(_) => return Err(BusCause::Timeout { what: waiting() }),
                Ok(None) => {
                    return Err(BusCause::Disconnected {
                        detail: format!("the bus closed while {}", waiting()),
                    });
                }
                Ok(Some(signal)) => signal,
            };
            let (path, result) = signal;
            if path.as_str() != job.as_str() {
                continue;
            }
            return match result.as_str() {
                "done" => Ok(()),
                other => Err(BusCause::JobFailed {
                    unit: spec.name.clone(),
                    result: other.to_owned(),
                }),
            };
        }
    }

    /// See [`UnitManager::unit_processes`].
    pub async fn unit_processes(&self, name: &str) -> Result<Option<Vec<UnitProcess>>, BusCause> {
        let what = format!("calling GetUnitProcesses for {name}");
        self.idempotent(&what, |proxy| async move {
            match proxy.get_unit_processes(name).await {
                Ok(list) => Ok(Some(list)),
                Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_UNIT) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// See [`UnitManager::stop_unit`].
    pub async fn stop_unit(&self, name: &str) -> Result<(), BusCause> {
        let what = format!("calling StopUnit for {name}");
        self.idempotent(&what, |proxy| async move {
            match proxy.stop_unit(name, "replace").await {
                Ok(_job) => Ok(()),
                Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_UNIT) => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// See [`UnitManager::release_unit`].
    pub async fn release_unit(&self, name: &str) -> Result<(), BusCause> {
        let what = format!("calling UnrefUnit for {name}");
        self.idempotent(&what, |proxy| async move {
            match proxy.unref_unit(name).await {
                Ok(()) => Ok(()),
                Err(e)
                    if matches!(
                        error_name(&e).as_deref(),
                        Some(NO_SUCH_UNIT | NOT_REFERENCED)
                    ) =>
                {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// Runs `op` on the session's proxy; on a dropped connection, once more on a new one.
    async fn idempotent<T, F, Fut>(&self, what: &str, op: F) -> Result<T, BusCause>
    where
        F: Fn(ManagerProxy<'static>) -> Fut,
        Fut: Future<Output = zbus::Result<T>>,
    {
        let mut retried = false;
        loop {
            let session = self.session().await?;
            match op(session.proxy.clone()).await {
                Ok(value) => return Ok(value),
                Err(e) if is_disconnect(&e) && !retried => {
                    tracing::debug!(error = %e, "{what}: bus connection dropped, reconnecting once");
                    self.forget(session.generation).await;
                    retried = true;
                }
                Err(e) => return Err(cause_from_zbus(&e, &session.address, what)),
            }
        }
    }

    /// A session and a registration for the `JobRemoved` signals of `unit` on its
    /// connection's subscription (opened now if this is the connection's first start),
    /// reconnecting once if the cached connection turns out to be dead. No call that
    /// changes anything has been made yet.
    async fn job_waiter(&self, unit: &str) -> Result<(Session, JobWaiter), BusCause> {
        let mut retried = false;
        loop {
            let session = self.session().await?;
            let watch = session
                .jobs
                .get_or_try_init(|| JobWatch::start(&session.proxy))
                .await;
            match watch {
                Ok(watch) if !watch.is_closed() => {
                    let waiter = watch.register(unit);
                    return Ok((session, waiter));
                }
                Ok(_) if !retried => {
                    // The subscription ended with its connection: start over.
                    self.forget(session.generation).await;
                    retried = true;
                }
                Err(e) if is_disconnect(&e) && !retried => {
                    self.forget(session.generation).await;
                    retried = true;
                }
                Ok(_) => {
                    return Err(BusCause::Disconnected {
                        detail: format!(
                            "the bus connection closed while subscribing to JobRemoved for {unit}"
                        ),
                    });
                }
                Err(e) => {
                    let what = format!("subscribing to JobRemoved for {unit}");
                    return Err(cause_from_zbus(&e, &session.address, &what));
                }
            }
        }
    }

    /// The cached session, or a new one when there is none or it has closed.
    async fn session(&self) -> Result<Session, BusCause> {
        let mut slot = self.session.lock().await;
        if let Some(session) = &slot.1
            && !session.conn.is_closed()
        {
            return Ok(session.clone());
        }
        slot.1 = None;
        slot.0 += 1;
        let session = self.connect(slot.0).await?;
        slot.1 = Some(session.clone());
        Ok(session)
    }

    /// Drops the cached session if it is still the one of `generation`.
    async fn forget(&self, generation: u64) {
        let mut slot = self.session.lock().await;
        if slot.1.as_ref().is_some_and(|s| s.generation == generation) {
            slot.1 = None;
        }
    }

    async fn connect(&self, generation: u64) -> Result<Session, BusCause> {
        let address = Arc::new(locate_bus(&self.env)?);
        let what = format!("connecting to the session bus at {address}");
        let build = zbus::connection::Builder::address(address.as_str())
            .method_timeout(self.timeouts.method)
            .build();
        let conn = timeout(self.timeouts.method, build)
            .await
            .map_err(|_| BusCause::Timeout { what: what.clone() })?
            .map_err(|e| cause_from_zbus(&e, &address, &what))?;
        let proxy = ManagerProxy::builder(&conn)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| cause_from_zbus(&e, &address, &what))?;
        tracing::debug!(%address, generation, "connected to the session bus");
        Ok(Session {
            generation,
            address,
            conn,
            proxy,
            jobs: Arc::new(OnceCell::new()),
        })
    }
}

impl UnitManager for ZbusUnitManager {
    fn probe(&self) -> UnitFuture<'_, ()> {
        Box::pin(ZbusUnitManager::probe(self))
    }

    fn start_scope<'a>(&'a self, spec: &'a ScopeSpec) -> UnitFuture<'a, ()> {
        Box::pin(ZbusUnitManager::start_scope(self, spec))
    }

    fn unit_processes<'a>(&'a self, name: &'a str) -> UnitFuture<'a, Option<Vec<UnitProcess>>> {
        Box::pin(ZbusUnitManager::unit_processes(self, name))
    }

    fn stop_unit<'a>(&'a self, name: &'a str) -> UnitFuture<'a, ()> {
        Box::pin(ZbusUnitManager::stop_unit(self, name))
    }

    fn release_unit<'a>(&'a self, name: &'a str) -> UnitFuture<'a, ()> {
        Box::pin(ZbusUnitManager::release_unit(self, name))
    }
}

/// The properties as the D-Bus variants `StartTransientUnit` takes: `au`,
/// `s`, `b` and `t`.
fn variants(props: Vec<(&'static str, PropValue)>) -> Vec<(&'static str, Variant<'static>)> {
    props
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                PropValue::Pids(pids) => Variant::from(pids),
                PropValue::Text(text) => Variant::from(text),
                PropValue::Flag(flag) => Variant::from(flag),
                PropValue::U64(n) => Variant::from(n),
            };
            (name, value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_values_have_the_signatures_systemd_expects() {
        let spec = ScopeSpec {
            pids: vec![42, 43],
            runtime_max: Some(std::time::Duration::from_secs(1)),
            memory_max: Some(1),
            cpu_weight: Some(1),
            tasks_max: Some(1),
            ..ScopeSpec::default()
        };
        let signatures: Vec<(String, String)> = variants(scope_properties(&spec))
            .iter()
            .map(|(n, v)| (n.to_string(), v.value_signature().to_string()))
            .collect();
        let expected = [
            ("PIDs", "au"),
            ("CollectMode", "s"),
            ("AddRef", "b"),
            ("Description", "s"),
            ("RuntimeMaxUSec", "t"),
            ("MemoryMax", "t"),
            ("CPUWeight", "t"),
            ("TasksMax", "t"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        assert_eq!(signatures, expected);
    }
}
