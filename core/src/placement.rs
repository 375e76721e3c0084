//! The pure dispatch decision: scoped when the scope was made; otherwise
//! degraded, unless a restart-safe scope is required, then refused.
//!
//! The edge (the main crate's `dispatch`) tries the scope and turns what
//! went wrong into a [`Cause`]; [`place`] only weighs it against the
//! [`Requirement`].

use crate::run::DispatchMode;

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

/// Why no scope could be made, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    pub code: CauseCode,
    /// What is wrong, in a sentence, without the fix.
    pub problem: String,
    /// What the operator can do about it, when anything.
    pub fix: Option<String>,
}

impl Cause {
    /// The problem followed by its fix: what a refusal or the degraded
    /// warning says.
    pub fn explained(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{}; fix: {fix}", self.problem),
            None => self.problem.clone(),
        }
    }
}

/// Who demands a restart-safe scope for this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// Degrading is allowed.
    None,
    /// `cron.require_restart_safe_scope: true`.
    Config,
    /// The job was added with `--require-scope`.
    Job,
    /// `spawn --require-scope` (kanban workers): always fail closed.
    Spawn,
}

impl Requirement {
    fn describe(self) -> &'static str {
        match self {
            Requirement::None => "",
            Requirement::Config => "cron.require_restart_safe_scope is true",
            Requirement::Job => "the job was added with --require-scope",
            Requirement::Spawn => "spawn --require-scope always fails closed",
        }
    }
}

/// Where a run goes; `S` is what the scope attempt made (a unit name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement<S = ()> {
    /// Into the scope that was made.
    Scoped(S),
    /// Detached, without a scope (not restart-safe).
    Degraded(Cause),
    /// Nowhere: a scope was required.
    Refused { cause: Cause, message: String },
}

impl<S> Placement<S> {
    /// The mode the run is started in (None for a refusal).
    pub fn mode(&self) -> Option<DispatchMode> {
        match self {
            Placement::Scoped(_) => Some(DispatchMode::Scoped),
            Placement::Degraded(_) => Some(DispatchMode::Degraded),
            Placement::Refused { .. } => None,
        }
    }
}

/// Place a run from its scope attempt (`Ok` = created) and the requirement.
pub fn place<S>(scope: Result<S, Cause>, required: Requirement) -> Placement<S> {
    match (scope, required) {
        (Ok(made), _) => Placement::Scoped(made),
        (Err(cause), Requirement::None) => Placement::Degraded(cause),
        (Err(cause), req) => Placement::Refused {
            message: format!(
                "refused: a restart-safe scope is required ({}) but none could be made: {}",
                req.describe(),
                cause.explained()
            ),
            cause,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cause() -> Cause {
        Cause {
            code: CauseCode::NoAddress,
            problem: "no bus".into(),
            fix: Some("run `loginctl enable-linger ann`".into()),
        }
    }

    #[test]
    fn degrades_only_when_allowed() {
        assert_eq!(place(Ok("u"), Requirement::Spawn), Placement::Scoped("u"));
        assert_eq!(
            place::<()>(Err(cause()), Requirement::None),
            Placement::Degraded(cause())
        );
        for req in [Requirement::Config, Requirement::Job, Requirement::Spawn] {
            match place::<()>(Err(cause()), req) {
                Placement::Refused { message, .. } => {
                    assert!(message.contains("loginctl enable-linger"), "{message}");
                    assert!(message.contains("no bus; fix: "), "{message}");
                    assert_eq!(message.matches("enable-linger").count(), 1, "{message}");
                }
                v => panic!("{v:?}"),
            }
        }
    }
}
