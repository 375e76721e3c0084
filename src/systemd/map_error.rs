//! zbus errors turned into [`BusCause`]s.
//!
//! One table, in one place:
//!
//! | zbus error | BusCause |
//! |---|---|
//! | `Connection(NotFound)` | `SocketMissing { path }` |
//! | `Connection(ConnectionRefused)` | `ConnectionRefused { address }` |
//! | `Connection(PermissionDenied)` | `WrongOwner { path, owner }` (the first path we may stat) |
//! | `InputOutput(TimedOut)` (the connection's method timeout) | `Timeout { what }` |
//! | `InputOutput(BrokenPipe / ConnectionReset / ConnectionAborted / NotConnected / UnexpectedEof)` | `Disconnected` |
//! | `FDO(ServiceUnknown / NameHasNoOwner)` | `NoSystemd { address }` |
//! | `FDO(NoReply / Timeout / TimedOut)` | `Timeout { what }` |
//! | `FDO(Disconnected)` | `Disconnected` |
//! | `FDO(other)`, e.g. `UnixProcessIdUnknown`, `InvalidArgs`, `PropertyReadOnly` | `CallRefused { error_name, message }` |
//! | `MethodError(name, ..)`, e.g. `org.freedesktop.systemd1.UnitExists` | `CallRefused { error_name, message }` |
//! | anything else (handshake, protocol, address syntax) | `Io { detail }` |

use super::bus::{BusAddress, owner_of_obstacle};
use super::cause::BusCause;
use std::io;
use zbus::{DBusError, fdo};

/// The D-Bus error systemd answers for a unit it does not know.
pub(crate) const NO_SUCH_UNIT: &str = "org.freedesktop.systemd1.NoSuchUnit";

/// The D-Bus error systemd answers `UnrefUnit` with when this connection holds no reference.
pub(crate) const NOT_REFERENCED: &str = "org.freedesktop.systemd1.NotReferenced";

/// Maps `err`, met while `what` (a fragment such as "calling StartTransientUnit for x"),
/// talking to the bus at `address`.
pub(crate) fn cause_from_zbus(err: &zbus::Error, address: &BusAddress, what: &str) -> BusCause {
    match err {
        zbus::Error::Connection(io, _) => from_connect_io(io, address),
        zbus::Error::InputOutput(io) => from_io(io, address, what),
        zbus::Error::FDO(fdo) => from_fdo(fdo, address, what),
        zbus::Error::MethodError(name, message, _) => BusCause::CallRefused {
            error_name: name.to_string(),
            message: message.clone().unwrap_or_default(),
        },
        other => BusCause::Io {
            detail: format!("{what}: {other}"),
        },
    }
}

/// True when `err` says the connection itself is gone (so a fresh one may succeed).
pub(crate) fn is_disconnect(err: &zbus::Error) -> bool {
    match err {
        zbus::Error::InputOutput(io) => is_disconnect_kind(io.kind()),
        zbus::Error::FDO(fdo) => match fdo.as_ref() {
            fdo::Error::ZBus(inner) => is_disconnect(inner),
            fdo::Error::Disconnected(_) => true,
            _ => false,
        },
        _ => false,
    }
}

/// The D-Bus error name of `err`, when the peer answered with an error.
pub(crate) fn error_name(err: &zbus::Error) -> Option<String> {
    match err {
        zbus::Error::MethodError(name, _, _) => Some(name.to_string()),
        zbus::Error::FDO(fdo) if !matches!(fdo.as_ref(), fdo::Error::ZBus(_)) => {
            Some(fdo.name().to_string())
        }
        _ => None,
    }
}

fn is_disconnect_kind(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::UnexpectedEof
    )
}

fn from_connect_io(err: &io::Error, address: &BusAddress) -> BusCause {
    let path = || {
        address
            .socket()
            .map(ToOwned::to_owned)
            .unwrap_or_else(|| address.as_str().into())
    };
    match err.kind() {
        io::ErrorKind::NotFound => BusCause::SocketMissing { path: path() },
        io::ErrorKind::ConnectionRefused => BusCause::ConnectionRefused {
            address: address.to_string(),
        },
        io::ErrorKind::PermissionDenied => {
            let (path, owner) = owner_of_obstacle(&path());
            BusCause::WrongOwner {
                path,
                owner,
                uid: nix::unistd::getuid().as_raw(),
            }
        }
        _ => BusCause::Io {
            detail: format!("connecting to {address}: {err}"),
        },
    }
}

fn from_io(err: &io::Error, address: &BusAddress, what: &str) -> BusCause {
    match err.kind() {
        io::ErrorKind::TimedOut => BusCause::Timeout {
            what: format!("{what}: no reply within the method timeout"),
        },
        kind if is_disconnect_kind(kind) => BusCause::Disconnected {
            detail: format!("{what}: {err}"),
        },
        io::ErrorKind::NotFound
        | io::ErrorKind::ConnectionRefused
        | io::ErrorKind::PermissionDenied => from_connect_io(err, address),
        _ => BusCause::Io {
            detail: format!("{what}: {err}"),
        },
    }
}

fn from_fdo(err: &fdo::Error, address: &BusAddress, what: &str) -> BusCause {
    match err {
        fdo::Error::ZBus(inner) => cause_from_zbus(inner, address, what),
        fdo::Error::ServiceUnknown(_) | fdo::Error::NameHasNoOwner(_) => BusCause::NoSystemd {
            address: address.to_string(),
        },
        fdo::Error::NoReply(m) | fdo::Error::Timeout(m) | fdo::Error::TimedOut(m) => {
            BusCause::Timeout {
                what: format!("{what}: {m}"),
            }
        }
        fdo::Error::Disconnected(m) => BusCause::Disconnected {
            detail: format!("{what}: {m}"),
        },
        other => BusCause::CallRefused {
            error_name: other.name().to_string(),
            message: other.description().unwrap_or_default().to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systemd::bus::{BusEnv, locate_bus};
    use std::sync::Arc;

    fn address() -> BusAddress {
        locate_bus(&BusEnv::with_address("unix:abstract=/test", 0)).unwrap()
    }

    fn io_err(kind: io::ErrorKind) -> zbus::Error {
        zbus::Error::InputOutput(Arc::new(io::Error::from(kind)))
    }

    #[test]
    fn fdo_names_map_to_causes() {
        let a = address();
        let e = zbus::Error::FDO(Box::new(fdo::Error::ServiceUnknown("x".into())));
        assert_eq!(cause_from_zbus(&e, &a, "t").code().as_str(), "no_systemd");
        let e = zbus::Error::FDO(Box::new(fdo::Error::NameHasNoOwner("x".into())));
        assert_eq!(cause_from_zbus(&e, &a, "t").code().as_str(), "no_systemd");
        let e = zbus::Error::MethodError(
            "org.freedesktop.systemd1.UnitExists".try_into().unwrap(),
            Some("Unit x.scope already exists.".into()),
            zbus::Message::method_call("/", "X").build(&()).unwrap(),
        );
        assert_eq!(
            cause_from_zbus(&e, &a, "t"),
            BusCause::CallRefused {
                error_name: "org.freedesktop.systemd1.UnitExists".into(),
                message: "Unit x.scope already exists.".into()
            }
        );
        let e = zbus::Error::FDO(Box::new(fdo::Error::UnixProcessIdUnknown("gone".into())));
        assert_eq!(
            cause_from_zbus(&e, &a, "t"),
            BusCause::CallRefused {
                error_name: "org.freedesktop.DBus.Error.UnixProcessIdUnknown".into(),
                message: "gone".into()
            }
        );
        assert_eq!(
            error_name(&e).as_deref(),
            Some("org.freedesktop.DBus.Error.UnixProcessIdUnknown")
        );
    }

    #[test]
    fn io_kinds_map_to_causes() {
        let a = address();
        let cause = cause_from_zbus(&io_err(io::ErrorKind::TimedOut), &a, "calling X");
        assert!(matches!(&cause, BusCause::Timeout { what } if what.contains("calling X")));
        for kind in [io::ErrorKind::BrokenPipe, io::ErrorKind::ConnectionReset] {
            assert!(is_disconnect(&io_err(kind)));
            assert_eq!(
                cause_from_zbus(&io_err(kind), &a, "t").code().as_str(),
                "disconnected"
            );
        }
        assert!(!is_disconnect(&io_err(io::ErrorKind::TimedOut)));
        assert_eq!(
            cause_from_zbus(&io_err(io::ErrorKind::ConnectionRefused), &a, "t")
                .code()
                .as_str(),
            "connection_refused"
        );
        assert_eq!(
            cause_from_zbus(&zbus::Error::Handshake("no".into()), &a, "t")
                .code()
                .as_str(),
            "io"
        );
        let missing = zbus::Error::Connection(
            Arc::new(io::Error::from(io::ErrorKind::NotFound)),
            Box::new("unix:path=/nowhere/bus".parse().unwrap()),
        );
        assert_eq!(
            cause_from_zbus(&missing, &a, "t").code().as_str(),
            "socket_missing"
        );
        let denied = zbus::Error::Connection(
            Arc::new(io::Error::from(io::ErrorKind::PermissionDenied)),
            Box::new("unix:path=/nowhere/bus".parse().unwrap()),
        );
        assert_eq!(
            cause_from_zbus(&denied, &a, "t").code().as_str(),
            "wrong_owner"
        );
    }
}
