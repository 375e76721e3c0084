//! `hermes-cron hermes install|uninstall`: switching a Hermes home's cron to
//! hermes-cron and back. Install writes the plugin (files and `plugin.json`)
//! and sets `cron.provider: hermes-cron`; uninstall unsets it (when it is
//! still ours), removes the plugin and the managed jobs (their ledger rows
//! stay). Both edit `config.yaml` losslessly and poke a running gateway.

use super::activation::configured_provider;
use super::plugin::{self, NAME, PluginSettings};
use crate::db::Db;
use crate::home::Home;
use crate::home::POKE_FILE;
use crate::store;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The key Hermes reads its provider from.
const PROVIDER_KEY: &str = "cron.provider";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(
        "cannot find Hermes's Python: {0}; give it with --python PATH (the interpreter of the \
         venv hermes-agent is installed in, e.g. ~/.hermes/hermes-agent/venv/bin/python)"
    )]
    NoPython(String),
    #[error("{} cannot import Hermes's cron modules ({detail}); give Hermes's own interpreter with --python", python.display())]
    NotHermes { python: PathBuf, detail: String },
    #[error("cannot find this binary's own path")]
    SelfPath(#[source] std::io::Error),
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot remove the plugin in {}", dir.display())]
    Remove {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("cannot remove the managed jobs")]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
}

/// What install or uninstall did, for the user.
#[derive(Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
}

/// The interpreter a `hermes` launcher script names in its `#!` line.
fn shebang_python(launcher: &Path) -> Option<PathBuf> {
    let text = std::fs::read(launcher).ok()?;
    let first = text.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?.strip_prefix("#!")?.trim();
    let python = PathBuf::from(line.split_whitespace().next()?);
    python.is_absolute().then_some(python)
}

/// `--python`, or the interpreter of the `hermes` on PATH.
fn find_python(given: Option<&Path>) -> Result<PathBuf, InstallError> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let launcher = which::which("hermes")
        .map_err(|_| InstallError::NoPython("there is no `hermes` on PATH".into()))?;
    shebang_python(&launcher).ok_or_else(|| {
        InstallError::NoPython(format!("{} names no interpreter", launcher.display()))
    })
}

/// Check that `python` is Hermes's: it imports Hermes's cron modules.
fn check_python(python: &Path, home: &Home) -> Result<(), InstallError> {
    let out = Command::new(python)
        .args([
            "-c",
            "import cron.scheduler_provider, cron.jobs, cron.scheduler",
        ])
        .env("HERMES_HOME", home.root())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| InstallError::NotHermes {
            python: python.to_path_buf(),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(InstallError::NotHermes {
        python: python.to_path_buf(),
        detail: err.lines().last().unwrap_or("it failed").trim().to_string(),
    })
}

/// Make a running gateway look at Hermes's jobs now.
fn poke(home: &Home) {
    // Replaced, not touched: the rename is the event the gateway watches for.
    let _ = crate::fsutil::write_atomic(&home.cron_dir().join(POKE_FILE), b"");
}

/// Install the plugin into `home` and make hermes-cron its cron provider.
pub fn install(home: &Home, python: Option<&Path>) -> Result<Report, InstallError> {
    let python = find_python(python)?;
    check_python(&python, home)?;
    let binary = std::env::current_exe().map_err(InstallError::SelfPath)?;
    let root = home
        .root()
        .canonicalize()
        .unwrap_or_else(|_| home.root().to_path_buf());
    let settings = PluginSettings {
        binary,
        home: root,
        python,
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    plugin::write_plugin(home, &settings).map_err(|e| InstallError::Write {
        path: e.path,
        source: e.source,
    })?;
    let mut report = Report::default();
    report.lines.push(format!(
        "installed the Hermes provider plugin in {} (Hermes's Python: {})",
        plugin::plugin_dir(home).display(),
        settings.python.display()
    ));
    let changed = crate::config::set_hermes_key(&home.config_file(), PROVIDER_KEY, NAME)?;
    report.lines.push(if changed {
        format!(
            "set {PROVIDER_KEY}: {NAME} in {}",
            home.config_file().display()
        )
    } else {
        format!("{PROVIDER_KEY} was already {NAME}")
    });
    report.lines.push(
        "restart the Hermes gateway (`hermes gateway restart`) so that its built-in ticker stops; \
         hermes-cron's gateway fires Hermes's jobs once it has (see `hermes-cron doctor`)"
            .into(),
    );
    poke(home);
    Ok(report)
}

/// Undo [`install`]: Hermes's built-in ticker fires its jobs again.
pub fn uninstall(home: &Home) -> Result<Report, InstallError> {
    let mut report = Report::default();
    match configured_provider(home).as_deref() {
        Some(NAME) => {
            crate::config::unset_hermes_key(&home.config_file(), PROVIDER_KEY)?;
            report.lines.push(format!(
                "removed {PROVIDER_KEY}: {NAME} from {}",
                home.config_file().display()
            ));
        }
        Some(other) => report.lines.push(format!(
            "{PROVIDER_KEY} is {other:?}, not {NAME}: left as it is"
        )),
        None => {}
    }
    let dir = plugin::plugin_dir(home);
    if plugin::remove_plugin(home).map_err(|source| InstallError::Remove {
        dir: dir.clone(),
        source,
    })? {
        report
            .lines
            .push(format!("removed the plugin from {}", dir.display()));
    }
    if crate::db::Location::of_home(home)?.may_exist() {
        let db = Db::open_home(home)?;
        let managed = store::managed_jobs(db.conn())?;
        for job in &managed {
            store::delete_job(db.conn(), &job.id)?;
        }
        if !managed.is_empty() {
            report.lines.push(format!(
                "removed {} managed jobs (their runs stay in the ledger)",
                managed.len()
            ));
        }
    }
    report.lines.push(
        "restart the Hermes gateway (`hermes gateway restart`) so that its built-in ticker fires \
         Hermes's jobs again"
            .into(),
    );
    poke(home);
    Ok(report)
}
