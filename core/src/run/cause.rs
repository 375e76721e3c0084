//! Why a run is not in a scope, as the stable code its row stores.

/// Why no scope could be made, as a stable code: stored on the row
/// (`dispatch_cause`), printed by `status` and `--json`, never renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CauseCode {
    /// Neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR` is set.
    NoAddress,
    /// The bus socket does not exist.
    SocketMissing,
    /// Nobody accepts connections on the bus socket.
    ConnectionRefused,
    /// The runtime directory or socket belongs to another user.
    WrongOwner,
    /// No systemd manager on the bus.
    NoSystemd,
    /// The manager refused the call.
    CallRefused,
    /// The scope's start job did not end `done`.
    JobFailed,
    /// The manager did not answer in time.
    Timeout,
    /// The bus connection dropped.
    Disconnected,
    /// Another bus failure.
    Io,
    /// Scopes are disabled for this launcher.
    Disabled,
    /// The worker could not be spawned.
    SpawnFailed,
    /// The held worker could not be released.
    ReleaseFailed,
}

crate::text_enum_impls!(CauseCode, "cause", {
    NoAddress => "no_address", SocketMissing => "socket_missing",
    ConnectionRefused => "connection_refused", WrongOwner => "wrong_owner",
    NoSystemd => "no_systemd", CallRefused => "call_refused", JobFailed => "job_failed",
    Timeout => "timeout", Disconnected => "disconnected", Io => "io", Disabled => "disabled",
    SpawnFailed => "spawn_failed", ReleaseFailed => "release_failed",
});
crate::text_enum_serde!(CauseCode);
