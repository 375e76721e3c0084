//! hermes-cron as the Hermes Agent's cron provider, the IO: the plugin's
//! files and where they go ([`plugin`]), whether this home's Hermes jobs are
//! hermes-cron's to fire ([`activation`]), Hermes's limits on a fire
//! ([`limits`]), the sync that keeps one
//! managed job per Hermes job ([`sync`]), and the runs Hermes made by itself
//! that the sync records ([`outside`]). The rules are the core's
//! `provider`; `hermes-cron hermes install|uninstall` is in the CLI.

pub mod activation;
pub mod install;
pub mod limits;
pub mod outside;
pub mod plugin;
pub mod sync;

pub use activation::{Activation, activation, configured_provider, is_hermes_home};
pub use plugin::{NAME, PluginSettings};
pub use sync::{SyncError, SyncReport, jobs_file_stamp, sync};
