//! The gateway's unit files, as shipped in `units/` (built into the binary),
//! rendered to name the `hermes-cron` binary actually installed, and written
//! where systemd reads them (`hermes-cron units install`).

use crate::fsutil;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Which units: the user unit and its `OnFailure=` hook, or the system
/// template run as a named user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitSet {
    /// `hermes-cron-gateway.service` and `hermes-cron-gateway-failed@.service`
    /// for `systemctl --user`.
    User,
    /// `hermes-cron-gateway@.service` for the system manager.
    System,
}

/// A unit file as shipped: its name, its text, and the binary path in it
/// that installing replaces.
struct Shipped {
    name: &'static str,
    text: &'static str,
    binary: &'static str,
}

const USER_BINARY: &str = "%h/.cargo/bin/hermes-cron";
const SYSTEM_BINARY: &str = "/usr/local/bin/hermes-cron";

const USER: &[Shipped] = &[
    Shipped {
        name: "hermes-cron-gateway.service",
        text: include_str!("../../units/hermes-cron-gateway.service"),
        binary: USER_BINARY,
    },
    Shipped {
        name: "hermes-cron-gateway-failed@.service",
        text: include_str!("../../units/hermes-cron-gateway-failed@.service"),
        binary: USER_BINARY,
    },
];

const SYSTEM: &[Shipped] = &[Shipped {
    name: "hermes-cron-gateway@.service",
    text: include_str!("../../units/hermes-cron-gateway@.service"),
    binary: SYSTEM_BINARY,
}];

/// One unit file, ready to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitFile {
    /// The file's name, e.g. `hermes-cron-gateway.service`.
    pub name: &'static str,
    /// Its text, naming the binary it was rendered for.
    pub text: String,
}

/// The binary's path cannot be written into a unit as it is.
#[derive(Debug, thiserror::Error)]
#[error(
    "{}: {why}; install hermes-cron at a path made of letters, digits and `/._+@-` (for example /usr/local/bin), or copy the units from units/ and set ExecStart= yourself",
    path.display()
)]
pub struct UnitPathError {
    path: PathBuf,
    why: &'static str,
}

/// The unit files of `set`, their `ExecStart=` naming `binary` (absolute).
/// Paths systemd or `sh -c` would read otherwise (spaces, `%`, `$`,
/// quotes) are refused rather than escaped twice.
pub fn render(set: UnitSet, binary: &Path, version: &str) -> Result<Vec<UnitFile>, UnitPathError> {
    let refuse = |why| UnitPathError {
        path: binary.to_path_buf(),
        why,
    };
    if !binary.is_absolute() {
        return Err(refuse("not an absolute path"));
    }
    let Some(path) = binary.to_str() else {
        return Err(refuse("not UTF-8"));
    };
    if !path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._+@-".contains(c))
    {
        return Err(refuse(
            "has characters a unit file or its shell line would read as syntax",
        ));
    }
    let shipped = match set {
        UnitSet::User => USER,
        UnitSet::System => SYSTEM,
    };
    Ok(shipped
        .iter()
        .map(|s| UnitFile {
            name: s.name,
            text: format!(
                "# Written by `hermes-cron units install` (hermes-cron {version}) for {path}.\n{}",
                s.text.replace(s.binary, path)
            ),
        })
        .collect())
}

/// Where systemd reads `set`'s units: `$XDG_CONFIG_HOME/systemd/user` (else
/// `~/.config/systemd/user`), or `/etc/systemd/system`. `config_home` and
/// `home` are the caller's `XDG_CONFIG_HOME` and `HOME`.
pub fn default_dir(set: UnitSet, config_home: Option<&Path>, home: &Path) -> PathBuf {
    match set {
        UnitSet::User => config_home
            .filter(|d| d.is_absolute())
            .map_or_else(|| home.join(".config"), Path::to_path_buf)
            .join("systemd/user"),
        UnitSet::System => PathBuf::from("/etc/systemd/system"),
    }
}

/// A unit file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct UnitWriteError {
    path: PathBuf,
    #[source]
    source: std::io::Error,
}

/// Write `files` into `dir` (made if missing), each atomically and readable
/// by all as unit files are; returns their paths and whether each changed.
pub fn write(dir: &Path, files: &[UnitFile]) -> Result<Vec<(PathBuf, bool)>, UnitWriteError> {
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| UnitWriteError { path, source }
    };
    std::fs::create_dir_all(dir).map_err(failed(dir))?;
    files
        .iter()
        .map(|f| {
            let path = dir.join(f.name);
            let changed = std::fs::read(&path).ok().as_deref() != Some(f.text.as_bytes());
            if changed {
                fsutil::write_atomic(&path, f.text.as_bytes()).map_err(|e| UnitWriteError {
                    path: e.path,
                    source: e.source,
                })?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
                    .map_err(failed(&path))?;
            }
            Ok((path, changed))
        })
        .collect()
}

#[cfg(test)]
#[path = "unit_files_tests.rs"]
mod tests;
