//! The pure dispatch decision: scoped when the scope was made; otherwise
//! degraded, unless a restart-safe scope is required, then refused.

use crate::ledger::DispatchMode;

/// Why no scope could be made, as stored on the row (`dispatch_cause`) and
/// shown to the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Stable snake_case code, e.g. `no_address`, `socket_missing`, `call_refused`.
    pub code: String,
    /// What is wrong, in a sentence.
    pub detail: String,
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

/// What to do with a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Scoped,
    Degraded(Cause),
    Refused { cause: Cause, message: String },
}

/// `text` with `<user>` and `<uid>` filled in for this process.
pub fn personalize(text: &str) -> String {
    let uid = nix::unistd::getuid();
    let user = std::env::var("USER")
        .ok()
        .or_else(|| {
            nix::unistd::User::from_uid(uid)
                .ok()
                .flatten()
                .map(|u| u.name)
        })
        .unwrap_or_else(|| "<user>".into());
    text.replace("<user>", &user)
        .replace("<uid>", &uid.to_string())
}

/// The fix for running without a user systemd manager.
pub fn fix_text() -> String {
    personalize(crate::systemd::FIX_TEXT)
}

/// `detail`, followed by the fix unless it already carries it. A fix already
/// in `detail` (a [`BusCause`](crate::systemd::BusCause) message embeds
/// [`FIX_TEXT`](crate::systemd::FIX_TEXT) with `<user>`/`<uid>` placeholders)
/// is personalized too.
pub fn with_fix(detail: &str) -> String {
    if detail.contains("enable-linger") {
        // The bus causes carry the fix text already, placeholders and all.
        personalize(detail)
    } else {
        format!("{detail}; fix: {}", fix_text())
    }
}

/// Decide from the scope attempt (`Ok` = created) and the requirement.
pub fn decide(scope: Result<(), Cause>, required: Requirement) -> Verdict {
    match (scope, required) {
        (Ok(()), _) => Verdict::Scoped,
        (Err(cause), Requirement::None) => Verdict::Degraded(cause),
        (Err(cause), req) => Verdict::Refused {
            message: format!(
                "refused: a restart-safe scope is required ({}) but none could be made: {}",
                req.describe(),
                with_fix(&cause.detail)
            ),
            cause,
        },
    }
}

/// The mode a verdict runs in (None for a refusal).
pub fn mode_of(v: &Verdict) -> Option<DispatchMode> {
    match v {
        Verdict::Scoped => Some(DispatchMode::Scoped),
        Verdict::Degraded(_) => Some(DispatchMode::Degraded),
        Verdict::Refused { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cause() -> Cause {
        Cause {
            code: "no_address".into(),
            detail: "no bus".into(),
        }
    }

    #[test]
    fn fix_in_a_bus_cause_is_personalized() {
        let detail = crate::systemd::BusCause::NoAddress.to_string();
        assert!(detail.contains("<user>"), "{detail}");
        let text = with_fix(&detail);
        assert!(text.contains("loginctl enable-linger"), "{text}");
        assert!(
            !text.contains("<user>") && !text.contains("<uid>"),
            "{text}"
        );
        assert_eq!(text.matches("enable-linger").count(), 1, "{text}");
    }

    #[test]
    fn degrades_only_when_allowed() {
        assert_eq!(decide(Ok(()), Requirement::Spawn), Verdict::Scoped);
        assert_eq!(
            decide(Err(cause()), Requirement::None),
            Verdict::Degraded(cause())
        );
        for req in [Requirement::Config, Requirement::Job, Requirement::Spawn] {
            match decide(Err(cause()), req) {
                Verdict::Refused { message, .. } => {
                    assert!(message.contains("loginctl enable-linger"), "{message}");
                    assert!(message.contains("no bus"), "{message}");
                }
                v => panic!("{v:?}"),
            }
        }
    }
}
