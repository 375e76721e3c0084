//! The five `org.freedesktop.systemd1.Manager` methods and the one signal we use.
//!
//! Hand-written on purpose: only what the dispatcher needs, with the exact D-Bus
//! signatures from org.freedesktop.systemd1(5)
//! <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html>.
//! Every method is `no_autostart`: without it, a bus with no manager answers through the
//! stock activation stub (`org.freedesktop.DBus.Error.Spawn.ChildExited`) instead of
//! `ServiceUnknown`/`NameHasNoOwner`, which hides the real cause.
//!
//! Nothing outside `src/systemd/` sees this type: the dispatcher talks to
//! [`UnitManager`](super::UnitManager).

use zbus::{ObjectPath, OwnedObjectPath, Variant};

/// One `(name, value)` property of a transient unit: D-Bus `(sv)`.
pub(crate) type Property<'a> = (&'a str, Variant<'a>);

/// One auxiliary unit of `StartTransientUnit`: D-Bus `(sa(sv))`. We never send any.
pub(crate) type AuxUnit<'a> = (&'a str, Vec<Property<'a>>);

/// `org.freedesktop.systemd1.Manager`, the subset hermes-cron uses.
#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Manager",
    default_service = "org.freedesktop.systemd1",
    default_path = "/org/freedesktop/systemd1"
)]
pub(crate) trait Manager {
    /// `StartTransientUnit(in s name, in s mode, in a(sv) properties, in a(sa(sv)) aux,
    /// out o job)`: creates and starts a transient unit, returns the queued job.
    /// See org.freedesktop.systemd1(5), "Methods" and "Properties" of scope units:
    /// <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html#Methods>
    #[zbus(no_autostart)]
    fn start_transient_unit(
        &self,
        name: &str,
        mode: &str,
        properties: &[Property<'_>],
        aux: &[AuxUnit<'_>],
    ) -> zbus::Result<OwnedObjectPath>;

    /// `GetUnit(in s name, out o unit)`: the object path of a loaded unit, or
    /// `org.freedesktop.systemd1.NoSuchUnit`.
    /// <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html#Methods>
    #[zbus(no_autostart)]
    fn get_unit(&self, name: &str) -> zbus::Result<OwnedObjectPath>;

    /// `GetUnitProcesses(in s name, out a(sus) processes)`: (cgroup, pid, command line) of
    /// every process in the unit's cgroup.
    /// <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html#Methods>
    #[zbus(no_autostart)]
    fn get_unit_processes(&self, name: &str) -> zbus::Result<Vec<(String, u32, String)>>;

    /// `StopUnit(in s name, in s mode, out o job)`: queues a stop job.
    /// <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html#Methods>
    #[zbus(no_autostart)]
    fn stop_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    /// `UnrefUnit(in s name)`: drops the reference `AddRef` gave this connection, so a
    /// finished unit can be garbage collected (`org.freedesktop.systemd1.NotReferenced` when
    /// this connection holds none).
    /// <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html#Methods>
    #[zbus(no_autostart)]
    fn unref_unit(&self, name: &str) -> zbus::Result<()>;

    /// `JobRemoved(u id, o job, s unit, s result)`: a job finished. The requester of a job
    /// receives it without calling `Subscribe()`.
    /// <https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html#Signals>
    #[zbus(signal)]
    fn job_removed(
        &self,
        id: u32,
        job: ObjectPath<'_>,
        unit: &str,
        result: &str,
    ) -> zbus::Result<()>;
}
