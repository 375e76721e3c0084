//! `hermes-cron hermes install|uninstall`: switching a Hermes home's cron to
//! hermes-cron and back. Install writes the plugin (files and `plugin.json`)
//! and sets `cron.provider: hermes-cron`, keeping in `plugin.json` the
//! provider it replaced and whether it made `config.yaml`; uninstall puts
//! that provider back or unsets the key (when it is still ours), removes a
//! `config.yaml` it made that is empty again, the plugin and the managed
//! jobs (their ledger rows stay). Both edit `config.yaml` losslessly and
//! poke a running gateway.

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
    let config_existed = home.config_file().exists();
    let python = find_python(python)?;
    check_python(&python, home)?;
    let binary = std::env::current_exe().map_err(InstallError::SelfPath)?;
    // Installed before: what that install kept is kept.
    let earlier = plugin::read_settings(home).ok();
    let current = configured_provider(home);
    let previous_provider = match current.as_deref() {
        Some(NAME) => earlier.as_ref().and_then(|s| s.previous_provider.clone()),
        other => other.map(str::to_string),
    };
    let created_config = earlier.map_or(!config_existed, |s| s.created_config);
    let root = home
        .root()
        .canonicalize()
        .unwrap_or_else(|_| home.root().to_path_buf());
    let settings = PluginSettings {
        binary,
        home: root,
        python,
        version: env!("CARGO_PKG_VERSION").to_string(),
        previous_provider,
        created_config,
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
        let replaced = match current.as_deref() {
            Some(other) if other != NAME => {
                format!(" (it was {other:?}; `hermes-cron hermes uninstall` puts that back)")
            }
            _ => String::new(),
        };
        format!(
            "set {PROVIDER_KEY}: {NAME} in {}{replaced}",
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

/// Whether the YAML file at `path` holds nothing (no keys, only comments).
fn empty_yaml(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_yaml::from_str::<serde_yaml::Value>(&t).ok())
        .is_some_and(|v| match v {
            serde_yaml::Value::Null => true,
            serde_yaml::Value::Mapping(m) => m.is_empty(),
            _ => false,
        })
}

/// Undo [`install`]: Hermes's built-in ticker fires its jobs again.
pub fn uninstall(home: &Home) -> Result<Report, InstallError> {
    let mut report = Report::default();
    let settings = plugin::read_settings(home).ok();
    let config = home.config_file();
    match configured_provider(home).as_deref() {
        Some(NAME) => match settings
            .as_ref()
            .and_then(|s| s.previous_provider.as_deref())
        {
            Some(previous) => {
                crate::config::set_hermes_key(&config, PROVIDER_KEY, previous)?;
                report.lines.push(format!(
                    "put {PROVIDER_KEY} back to {previous:?} (as it was before the install) in {}",
                    config.display()
                ));
            }
            None => {
                crate::config::unset_hermes_key(&config, PROVIDER_KEY)?;
                report.lines.push(format!(
                    "removed {PROVIDER_KEY}: {NAME} from {}",
                    config.display()
                ));
                if settings.as_ref().is_some_and(|s| s.created_config) && empty_yaml(&config) {
                    std::fs::remove_file(&config).map_err(|source| InstallError::Write {
                        path: config.clone(),
                        source,
                    })?;
                    report.lines.push(format!(
                        "removed {}, which the install made and which is empty again",
                        config.display()
                    ));
                }
            }
        },
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
