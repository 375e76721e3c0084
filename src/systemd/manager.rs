//! The seam between the dispatcher and systemd: [`UnitManager`], and what it is asked for.
//!
//! The dispatcher holds an `Arc<dyn UnitManager>` (or any `M: UnitManager`): the trait is
//! dyn-compatible because its methods return boxed futures ([`UnitFuture`]). One allocation
//! per call is nothing next to a D-Bus round trip, and it lets tests hand the dispatcher a
//! fake without generics spreading through the daemon.
//!
//! What a [`ScopeSpec`] becomes is pure and lives in `hermes_cron_core::scope`.

use super::cause::BusCause;
use hermes_cron_core::scope::ScopeSpec;
use std::future::Future;
use std::pin::Pin;

/// What a [`UnitManager`] method returns: a boxed, `Send` future of a [`BusCause`] result.
pub type UnitFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BusCause>> + Send + 'a>>;

/// One process of a unit, as `GetUnitProcesses` lists it: (cgroup path, pid, command line).
pub type UnitProcess = (String, u32, String);

/// The systemd side of dispatch: create a scope, list its processes, stop it.
///
/// Implemented by [`ZbusUnitManager`](super::ZbusUnitManager) over D-Bus, and by fakes in
/// tests.
pub trait UnitManager: Send + Sync {
    /// Checks that a systemd manager answers on the bus (one cheap call).
    fn probe(&self) -> UnitFuture<'_, ()>;

    /// Creates the scope `spec.name` around `spec.pids` (mode `fail`) and waits for its
    /// start job: `Ok` only when the job's result is `done`, so the pids are in the scope's
    /// cgroup when this returns. On `Err` the pids may or may not have moved (a
    /// [`BusCause::Timeout`] can be followed by a late success): the caller gives the worker
    /// up (closes its go pipe) rather than running it unprotected. Our `AddRef` reference
    /// on a unit that failed or timed out is already released.
    fn start_scope<'a>(&'a self, spec: &'a ScopeSpec) -> UnitFuture<'a, ()>;

    /// The processes in unit `name`, or `None` when systemd has no such unit.
    fn unit_processes<'a>(&'a self, name: &'a str) -> UnitFuture<'a, Option<Vec<UnitProcess>>>;

    /// Queues a stop job for unit `name` (mode `replace`: SIGTERM, then SIGKILL after the
    /// unit's `TimeoutStopUSec`). Returns once the job is queued, not when it is done; a
    /// unit that does not exist is already stopped (`Ok`).
    fn stop_unit<'a>(&'a self, name: &'a str) -> UnitFuture<'a, ()>;

    /// Drops the reference `AddRef` gave us on unit `name`, so systemd can collect it once
    /// it is inactive. Call it after the scope's worker has been reaped: while our bus
    /// connection holds the reference, systemd 252 never garbage collects the unit, even
    /// with `CollectMode=inactive-or-failed`. A unit that is gone or not referenced is
    /// fine (`Ok`). The default does nothing, for fakes that hold no references.
    fn release_unit<'a>(&'a self, name: &'a str) -> UnitFuture<'a, ()> {
        let _ = name;
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trait_is_dyn_compatible() {
        fn takes(_: Option<std::sync::Arc<dyn UnitManager>>) {}
        takes(None);
    }
}
