//! Finding the session bus of the current user's systemd manager.
//!
//! [`locate_bus`] is a function of [`BusEnv`] (the two environment values and the uid) and
//! of the filesystem, so tests can point it anywhere without touching the process
//! environment. Rules, in order:
//! 1. `DBUS_SESSION_BUS_ADDRESS`, when set and non-empty. For a `unix:path=` address the
//!    socket must exist and belong to the current uid; other transports are used as given.
//! 2. Else `unix:path=$XDG_RUNTIME_DIR/bus`, only when `XDG_RUNTIME_DIR` is absolute, the
//!    directory and the socket exist and both belong to the current uid.
//! 3. Else [`BusCause::NoAddress`].
//!
//! A socket owned by another user is never used, even by root: scopes created there would
//! belong to that user's manager.

use super::cause::BusCause;
use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The inputs of [`locate_bus`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusEnv {
    /// `DBUS_SESSION_BUS_ADDRESS`, if set.
    pub session_bus_address: Option<String>,
    /// `XDG_RUNTIME_DIR`, if set.
    pub runtime_dir: Option<PathBuf>,
    /// The current (real) uid.
    pub uid: u32,
}

impl BusEnv {
    /// The values of this process: its environment and its real uid.
    pub fn from_process() -> Self {
        BusEnv {
            session_bus_address: std::env::var("DBUS_SESSION_BUS_ADDRESS").ok(),
            runtime_dir: std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
            uid: nix::unistd::getuid().as_raw(),
        }
    }

    /// An environment where only `XDG_RUNTIME_DIR` is set (to `dir`).
    pub fn with_runtime_dir(dir: impl Into<PathBuf>, uid: u32) -> Self {
        BusEnv {
            session_bus_address: None,
            runtime_dir: Some(dir.into()),
            uid,
        }
    }

    /// An environment where only `DBUS_SESSION_BUS_ADDRESS` is set (to `address`).
    pub fn with_address(address: impl Into<String>, uid: u32) -> Self {
        BusEnv {
            session_bus_address: Some(address.into()),
            runtime_dir: None,
            uid,
        }
    }
}

/// Where the bus was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressSource {
    /// From `DBUS_SESSION_BUS_ADDRESS`.
    SessionBusAddress,
    /// Derived from `XDG_RUNTIME_DIR`.
    RuntimeDir,
}

/// A located, not yet connected, session bus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusAddress {
    address: String,
    socket: Option<PathBuf>,
    source: AddressSource,
}

impl BusAddress {
    /// The D-Bus address string, as zbus parses it.
    pub fn as_str(&self) -> &str {
        &self.address
    }

    /// The socket path, for `unix:path=` addresses.
    pub fn socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// Which environment value the address came from.
    pub fn source(&self) -> AddressSource {
        self.source
    }
}

impl fmt::Display for BusAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.address)
    }
}

/// Finds the session bus for `env`, or names why there is none.
pub fn locate_bus(env: &BusEnv) -> Result<BusAddress, BusCause> {
    if let Some(address) = env.session_bus_address.as_deref().map(str::trim)
        && !address.is_empty()
    {
        let socket = unix_path_of(address);
        if let Some(path) = &socket {
            check_owned(path, env.uid)?;
        }
        return Ok(BusAddress {
            address: address.to_owned(),
            socket,
            source: AddressSource::SessionBusAddress,
        });
    }

    let Some(dir) = env.runtime_dir.as_deref().filter(|d| d.is_absolute()) else {
        return Err(BusCause::NoAddress);
    };
    let socket = dir.join("bus");
    check_owned(dir, env.uid).map_err(|cause| match cause {
        // A missing runtime dir means a missing socket, which is the actionable fact.
        BusCause::SocketMissing { .. } => BusCause::SocketMissing {
            path: socket.clone(),
        },
        other => other,
    })?;
    check_owned(&socket, env.uid)?;
    Ok(BusAddress {
        address: format!("unix:path={}", escape_address_value(&socket)),
        socket: Some(socket),
        source: AddressSource::RuntimeDir,
    })
}

/// `path` exists and belongs to `uid` (symlinks followed, as `connect` would).
fn check_owned(path: &Path, uid: u32) -> Result<(), BusCause> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.uid() == uid => Ok(()),
        Ok(meta) => Err(BusCause::WrongOwner {
            path: path.to_owned(),
            owner: meta.uid(),
            uid,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let (path, owner) = owner_of_obstacle(path);
            Err(BusCause::WrongOwner { path, owner, uid })
        }
        Err(_) => Err(BusCause::SocketMissing {
            path: path.to_owned(),
        }),
    }
}

/// For a path we may not look at: the nearest ancestor we can stat, and its owner. `/` can
/// always be stat'ed, so this always names something.
pub(crate) fn owner_of_obstacle(path: &Path) -> (PathBuf, u32) {
    let mut blocked = path.to_owned();
    for ancestor in path.ancestors() {
        match std::fs::metadata(ancestor) {
            Ok(meta) if ancestor == path => return (path.to_owned(), meta.uid()),
            Ok(meta) => return (blocked, meta.uid()),
            Err(_) => blocked = ancestor.to_owned(),
        }
    }
    (path.to_owned(), 0)
}

/// The socket path of the first address in `address` when it is `unix:path=...`.
/// Values are %-unescaped as the D-Bus specification says.
pub(crate) fn unix_path_of(address: &str) -> Option<PathBuf> {
    let first = address.split(';').next()?;
    let params = first.strip_prefix("unix:")?;
    params
        .split(',')
        .find_map(|kv| kv.strip_prefix("path="))
        .map(|value| PathBuf::from(unescape_address_value(value)))
}

fn unescape_address_value(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = value.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes a path for a D-Bus address value: bytes outside the optionally-escaped set
/// `[-0-9A-Za-z_/.\*]` become `%HH`.
fn escape_address_value(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-_/.\\*".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "bus_tests.rs"]
mod tests;
