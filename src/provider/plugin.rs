//! The Hermes provider plugin as files: the Python package shipped in
//! `integrations/hermes/hermes_cron_provider/` (built into the binary), where
//! it goes in a Hermes home (`plugins/hermes-cron/`), and `plugin.json`,
//! which says where this binary and Hermes's interpreter are and which home
//! the plugin serves.

use crate::fsutil::{self, WriteError};
use crate::home::Home;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The provider's name: `cron.provider` and the plugin's directory.
pub const NAME: &str = "hermes-cron";

/// The plugin's files, as shipped in this repository.
const FILES: &[(&str, &str)] = &[
    (
        "__init__.py",
        include_str!("../../integrations/hermes/hermes_cron_provider/__init__.py"),
    ),
    (
        "fire.py",
        include_str!("../../integrations/hermes/hermes_cron_provider/fire.py"),
    ),
];

/// `plugin.yaml`, the manifest Hermes's `hermes plugins list` reads.
/// `kind: exclusive` (one provider of a category, chosen by
/// `cron.provider`): Hermes's general plugin loader leaves it to the cron
/// provider discovery, which is what loads it.
fn manifest(version: &str) -> String {
    format!(
        "# Written by `hermes-cron hermes install`; rewritten on every install.\n\
         name: {NAME}\n\
         version: \"{version}\"\n\
         description: \"Cron provider: fires this home's cron jobs, each in its own systemd scope, recorded in hermes-cron's ledger. In use while cron.provider is hermes-cron (this list's enabled column does not apply).\"\n\
         kind: exclusive\n"
    )
}

const MANIFEST: &str = "plugin.yaml";

/// `plugin.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginSettings {
    /// This binary, which the plugin checks is there.
    pub binary: PathBuf,
    /// The Hermes home the plugin serves.
    pub home: PathBuf,
    /// Hermes's interpreter, which runs `fire.py`.
    pub python: PathBuf,
    /// The hermes-cron version that installed it.
    pub version: String,
    /// `cron.provider` before the install (another provider, `chronos`),
    /// which uninstall puts back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_provider: Option<String>,
    /// The install made `config.yaml`: uninstall removes it when nothing
    /// else is left in it.
    #[serde(default)]
    pub created_config: bool,
}

/// `plugins/hermes-cron/` in `home`.
pub fn plugin_dir(home: &Home) -> PathBuf {
    home.root().join("plugins").join(NAME)
}

/// The fire entry point in an installed plugin.
pub fn fire_script(home: &Home) -> PathBuf {
    plugin_dir(home).join("fire.py")
}

fn settings_file(home: &Home) -> PathBuf {
    plugin_dir(home).join("plugin.json")
}

/// `plugin.json` cannot be read: its path, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct Unreadable {
    path: PathBuf,
    why: String,
}

/// What `plugin.json` says, or why it cannot be read.
pub fn read_settings(home: &Home) -> Result<PluginSettings, Unreadable> {
    let path = settings_file(home);
    let unreadable = |why: String| Unreadable {
        path: path.clone(),
        why,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| unreadable(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))
}

/// Write the plugin's files and `plugin.json` into `home` (replacing an
/// earlier version's), each atomically.
pub(crate) fn write_plugin(home: &Home, settings: &PluginSettings) -> Result<(), WriteError> {
    let dir = plugin_dir(home);
    std::fs::create_dir_all(&dir).map_err(|source| WriteError {
        path: dir.clone(),
        source,
    })?;
    for (name, text) in FILES {
        fsutil::write_atomic(&dir.join(name), text.as_bytes())?;
    }
    fsutil::write_atomic(&dir.join(MANIFEST), manifest(&settings.version).as_bytes())?;
    let json = serde_json::to_string_pretty(settings).unwrap_or_default();
    fsutil::write_atomic(&settings_file(home), json.as_bytes())
}

/// Remove the plugin's directory (and only what this module puts there,
/// plus Python's byte-code cache). Returns whether anything was there.
pub(crate) fn remove_plugin(home: &Home) -> std::io::Result<bool> {
    let dir = plugin_dir(home);
    if !dir.exists() {
        return Ok(false);
    }
    let ours = FILES
        .iter()
        .map(|(n, _)| *n)
        .chain(["plugin.json", MANIFEST])
        .collect::<Vec<_>>();
    for name in &ours {
        match std::fs::remove_file(dir.join(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let cache = dir.join("__pycache__");
    if cache.is_dir() {
        std::fs::remove_dir_all(&cache)?;
    }
    // A directory with someone else's files in it stays.
    let _ = std::fs::remove_dir(&dir);
    Ok(true)
}

/// Why the plugin installed in `home` (as `settings` say) is not the one
/// hermes-cron `version` (this binary) would install, or None: installed by
/// another version (the binary was upgraded, the home's plugin was not),
/// or its files changed since.
pub fn drift(home: &Home, settings: &PluginSettings, version: &str) -> Option<String> {
    if settings.version != version {
        return Some(format!(
            "the plugin in {} was installed by hermes-cron {}, and this is hermes-cron {version}",
            plugin_dir(home).display(),
            settings.version
        ));
    }
    let dir = plugin_dir(home);
    let wanted = manifest(version);
    FILES
        .iter()
        .copied()
        .chain([(MANIFEST, wanted.as_str())])
        .find(|(name, text)| std::fs::read(dir.join(name)).ok().as_deref() != Some(text.as_bytes()))
        .map(|(name, _)| {
            format!(
                "{} is not the file hermes-cron {version} installs (changed or removed since)",
                dir.join(name).display()
            )
        })
}

/// Whether `a` and `b` are the same directory.
pub(crate) fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
