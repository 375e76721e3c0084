//! The pure dispatch decision: scoped when the scope was made; otherwise
//! degraded, unless a restart-safe scope is required, then refused.
//!
//! The edge (the main crate's `dispatch`) tries the scope and turns what
//! went wrong into a [`Cause`]; [`place`] only weighs it against the
//! [`Requirement`].

pub use crate::run::CauseCode;
use crate::run::DispatchMode;

/// Why no scope could be made, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Which cause, as a row stores it (`dispatch_cause`).
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
    Refused {
        /// Why no scope could be made.
        cause: Cause,
        /// The refusal, as recorded: the requirement, the cause and its fix.
        message: String,
    },
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
