//! Why a transient scope could not be had, in words an operator can act on.
//!
//! [`BusCause`] is the one error type of the systemd edge. Each variant has a stable
//! snake_case [`code`](BusCause::code) (stored on execution rows and printed by `status`;
//! never renamed) and a `Display` that says what is wrong and, where the operator can do
//! something, how to fix it. Fields are owned strings so a cause can be cloned into the
//! ledger, compared in tests and logged once per process.

use hermes_cron_core::placement::CauseCode;
use std::path::PathBuf;

/// What to do when the user manager cannot be reached.
pub(crate) const FIX_TEXT: &str = "run `loginctl enable-linger <user>` so the user manager and its \
    session bus stay up; when hermes-cron runs from a system-level unit, also set \
    XDG_RUNTIME_DIR=/run/user/<uid> and DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/<uid>/bus \
    in that unit";

/// [`FIX_TEXT`] on a host not booted with systemd (a container, most often),
/// where there is no `loginctl` to ask and no system manager to start a
/// user manager: what works there instead.
pub(crate) const NOT_BOOTED_FIX_TEXT: &str = "this host was not booted with systemd (a container?), \
    so `loginctl enable-linger` cannot help: start a user manager for <user> yourself (packages \
    systemd and dbus-user-session, a writable cgroup hierarchy, then \
    `XDG_RUNTIME_DIR=/run/user/<uid> /lib/systemd/systemd --user &` with that directory <user>'s \
    and mode 0700) and start hermes-cron with XDG_RUNTIME_DIR=/run/user/<uid> and \
    DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/<uid>/bus; or run it on a host booted with \
    systemd. Until then runs are degraded: a gateway restart ends them";

/// The cause of a failed systemd/D-Bus operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BusCause {
    /// Neither `DBUS_SESSION_BUS_ADDRESS` nor `XDG_RUNTIME_DIR` is set.
    #[error(
        "no session bus address: DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset; fix: {FIX_TEXT}"
    )]
    NoAddress,

    /// The bus socket (or the runtime directory holding it) does not exist.
    #[error("session bus socket {} does not exist (no user manager running?); fix: {FIX_TEXT}", path.display())]
    SocketMissing {
        /// The socket that was expected.
        path: PathBuf,
    },

    /// The socket exists but nobody accepts connections on it (a stale socket).
    #[error(
        "session bus at {address} refused the connection (stale socket, bus not running); fix: {FIX_TEXT}"
    )]
    ConnectionRefused {
        /// The bus address that was tried.
        address: String,
    },

    /// The runtime directory or bus socket belongs to another user: using it would put our
    /// jobs under someone else's manager, so it is never used.
    #[error("{} belongs to uid {owner}, not to the current uid {uid}; fix: {FIX_TEXT}", path.display())]
    WrongOwner {
        /// The directory or socket with the wrong owner.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// The current uid.
        uid: u32,
    },

    /// The bus answers but no `org.freedesktop.systemd1` is on it.
    #[error(
        "no systemd user manager (org.freedesktop.systemd1) on the session bus at {address}; fix: {FIX_TEXT}"
    )]
    NoSystemd {
        /// The bus address that was used.
        address: String,
    },

    /// The manager (or the bus) answered a call with a D-Bus error.
    #[error("systemd refused the call: {error_name}: {message}")]
    CallRefused {
        /// The D-Bus error name, e.g. `org.freedesktop.systemd1.UnitExists`.
        error_name: String,
        /// The human-readable message that came with it.
        message: String,
    },

    /// The job systemd queued for the unit finished with a result other than `done`.
    #[error("systemd job for {unit} finished with result `{result}`, not `done`")]
    JobFailed {
        /// The unit the job was for.
        unit: String,
        /// The job result: `failed`, `canceled`, `timeout`, `dependency`, `skipped`...
        result: String,
    },

    /// Something did not happen in time.
    #[error("timed out {what}")]
    Timeout {
        /// What we were waiting for, as a fragment: "waiting for the JobRemoved of ...".
        what: String,
    },

    /// The bus connection dropped in the middle of an operation.
    #[error("session bus connection lost: {detail}")]
    Disconnected {
        /// What zbus reported.
        detail: String,
    },

    /// Any other I/O or protocol failure.
    #[error("session bus i/o failure: {detail}")]
    Io {
        /// What zbus reported.
        detail: String,
    },
}

impl BusCause {
    /// The stable code of this cause, for ledger rows and `--json` output.
    pub fn code(&self) -> CauseCode {
        match self {
            BusCause::NoAddress => CauseCode::NoAddress,
            BusCause::SocketMissing { .. } => CauseCode::SocketMissing,
            BusCause::ConnectionRefused { .. } => CauseCode::ConnectionRefused,
            BusCause::WrongOwner { .. } => CauseCode::WrongOwner,
            BusCause::NoSystemd { .. } => CauseCode::NoSystemd,
            BusCause::CallRefused { .. } => CauseCode::CallRefused,
            BusCause::JobFailed { .. } => CauseCode::JobFailed,
            BusCause::Timeout { .. } => CauseCode::Timeout,
            BusCause::Disconnected { .. } => CauseCode::Disconnected,
            BusCause::Io { .. } => CauseCode::Io,
        }
    }

    /// True when no user manager can be reached at all (as opposed to a manager that is
    /// there but refused or failed this one request): the causes that mean "degrade".
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            BusCause::NoAddress
                | BusCause::SocketMissing { .. }
                | BusCause::ConnectionRefused { .. }
                | BusCause::WrongOwner { .. }
                | BusCause::NoSystemd { .. }
        )
    }

    /// What is wrong, without the fix: the `Display` text up to `; fix:`.
    pub fn problem(&self) -> String {
        let text = self.to_string();
        match text.split_once("; fix: ") {
            Some((problem, _)) => problem.to_string(),
            None => text,
        }
    }

    /// The fix an operator can apply (placeholders `<user>`, `<uid>` not
    /// filled in), for the causes whose message carries one.
    pub fn fix(&self) -> Option<&'static str> {
        self.is_unavailable().then_some(FIX_TEXT)
    }

    /// The D-Bus error name when the manager refused the call.
    pub fn error_name(&self) -> Option<&str> {
        match self {
            BusCause::CallRefused { error_name, .. } => Some(error_name),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<BusCause> {
        vec![
            BusCause::NoAddress,
            BusCause::SocketMissing {
                path: "/run/user/1000/bus".into(),
            },
            BusCause::ConnectionRefused {
                address: "unix:path=/tmp/x".into(),
            },
            BusCause::WrongOwner {
                path: "/run/user/1000".into(),
                owner: 65534,
                uid: 1000,
            },
            BusCause::NoSystemd {
                address: "unix:path=/tmp/x".into(),
            },
            BusCause::CallRefused {
                error_name: "org.freedesktop.systemd1.UnitExists".into(),
                message: "Unit x.scope already exists.".into(),
            },
            BusCause::JobFailed {
                unit: "x.scope".into(),
                result: "failed".into(),
            },
            BusCause::Timeout {
                what: "waiting for the job".into(),
            },
            BusCause::Disconnected {
                detail: "broken pipe".into(),
            },
            BusCause::Io {
                detail: "handshake".into(),
            },
        ]
    }

    #[test]
    fn codes_are_distinct_snake_case() {
        let codes: Vec<_> = all().iter().map(|c| c.code().as_str()).collect();
        let mut unique = codes.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), codes.len(), "{codes:?}");
        for code in codes {
            assert!(code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
    }

    #[test]
    fn unavailable_causes_name_the_fix() {
        for cause in all().into_iter().filter(BusCause::is_unavailable) {
            let text = cause.to_string();
            assert!(text.contains("loginctl enable-linger"), "{text}");
            assert!(text.contains("DBUS_SESSION_BUS_ADDRESS"), "{text}");
            assert!(text.contains("XDG_RUNTIME_DIR"), "{text}");
        }
    }

    #[test]
    fn problem_and_fix_make_up_the_message() {
        for cause in all() {
            let text = cause.to_string();
            match cause.fix() {
                Some(fix) => assert_eq!(text, format!("{}; fix: {fix}", cause.problem())),
                None => assert_eq!(text, cause.problem()),
            }
        }
    }

    #[test]
    fn display_names_what_is_wrong() {
        let text = all()[3].to_string();
        assert!(
            text.contains("/run/user/1000") && text.contains("65534"),
            "{text}"
        );
        let text = all()[5].to_string();
        assert!(
            text.contains("org.freedesktop.systemd1.UnitExists"),
            "{text}"
        );
        assert_eq!(
            all()[5].error_name(),
            Some("org.freedesktop.systemd1.UnitExists")
        );
    }
}
