//! `config.yaml` on disk. The parsing, validation, key table and editing
//! are `hermes_cron_core::config` (pure, documented there); `file.rs` reads
//! and writes the file.

mod file;

pub use file::{get, load, read, set, set_hermes_key, show, unset, unset_hermes_key};
pub use hermes_cron_core::config::{
    Config, ConfigError, ConfigWarning, CronConfig, Entry, GatewayConfig, KeyInfo, Loaded,
    SecretText, Secrets, Validated, entries, key_table, load_bytes, mistyped,
};
