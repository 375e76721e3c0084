//! `config.yaml`: the serde mirror, the validated working types, and
//! `get`/`set`/`unset`/`show`.
//!
//! Two stages (ripgrep's lowargs -> hiargs): `raw.rs` mirrors the file (any
//! YAML value per key; a dotted top-level key such as
//! `gateway.loop_watchdog_max_strikes: 5` beats the nested form), and
//! `validate.rs` turns it into a [`Config`] whose every value is in range,
//! replacing each bad value (out of range, NaN, infinite, wrong type, absurdly
//! large) by its default with exactly one [`ConfigWarning`] naming the key,
//! the value and the accepted range. Unknown keys get one warning each.
//!
//! Files: `keys.rs` the one table of keys, defaults, bounds and docs;
//! `model.rs` the public types; `raw.rs` the mirror; `validate.rs` the rules;
//! `suggest.rs` close-key suggestions; `load.rs` [`load_bytes`] and [`validated`];
//! `query.rs` [`get`] and [`show`]; `edit.rs` [`set`] and [`unset`] (the new
//! text; the main crate reads and writes the file); `yaml.rs` the only file
//! naming serde_yaml.
//!
//! A missing, empty or comment-only file is every default with no warning. A
//! file that is not a mapping (a list, a scalar), has malformed YAML or a key
//! twice is refused as [`ConfigError::Syntax`] (`file:line:column: message`),
//! or [`ConfigError::Invalid`] naming the file when serde_yaml gives no
//! location (several documents in one file).
//!
//! Representations: an unbounded `cron.max_parallel_jobs` reads back as
//! `unbounded` and an unset `timezone` as `system`; YAML `null` means the same
//! in the file and in `set`, and both words are accepted wherever a value is.
//! `set` writes the canonical form: `null` for those two, integers without
//! `.0`.
//!
//! **`set` and `unset` drop every comment in the file.** They parse it into a
//! serde_yaml value tree and write the tree back, and serde_yaml keeps no
//! comments, blank lines, anchors (aliases come back expanded) or quoting
//! style. Every key and value is kept, in order, unknown keys included; only
//! the formatting is rewritten. A `set` that is refused and an `unset` of a
//! key the file does not have leave the file byte-identical. `load`, `get`
//! and `show` never write.

mod edit;
mod keys;
mod load;
mod model;
mod query;
mod raw;
mod suggest;
mod validate;
mod yaml;

pub use edit::{set, unset};
pub use keys::key_table;
pub use load::{load_bytes, validated};
pub use model::{Config, ConfigError, ConfigWarning, CronConfig, GatewayConfig, KeyInfo, Loaded};
pub use query::{get, show};
pub use validate::Validated;
