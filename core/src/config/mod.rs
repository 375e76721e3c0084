//! `config.yaml`: the serde mirror, the validated working types, and
//! `get`/`set`/`unset`/`show`.
//!
//! The file is shared with the Python Hermes Agent, which reads it with PyYAML
//! (YAML 1.1) and owns hundreds of keys; hermes-cron owns the keys of its key
//! table only, reads them in the spellings Hermes's own `config set` writes,
//! and edits the file without disturbing anything else.
//!
//! Two stages (ripgrep's lowargs -> hiargs): `raw.rs` mirrors the file (any
//! YAML value per key; a dotted top-level key such as
//! `gateway.loop_watchdog_max_strikes: 5` beats the nested form), and
//! `validate.rs` turns it into a [`Config`] whose every value is in range,
//! replacing each bad value (out of range, NaN, infinite, wrong type, absurdly
//! large) by its default with exactly one [`ConfigWarning`] naming the key,
//! the value and the accepted range. An unknown key gets a warning only when
//! it is a near miss of one of ours (`suggest.rs`); the others are Hermes's or
//! the user's.
//!
//! Files, each using only those listed before it (no file uses one that
//! uses it back):
//! - `value.rs`: the one YAML value model, `Value`, and its
//!   serde visitor (the shape rules of the document and our sections);
//! - `model.rs`: the public types and the key table's vocabulary (a row,
//!   a validated setting, a rejection);
//! - `yaml11.rs` (value, model): how `set` writes a value so that a YAML 1.1
//!   reader (PyYAML, Hermes's) reads the intended type;
//! - `job_env.rs` (value, model): the rules of `cron.path` and `cron.env`;
//! - `keys.rs` (model, yaml11, job_env): the one table of keys, defaults,
//!   bounds and docs;
//! - `suggest.rs` (model, keys): near misses and suggestions;
//! - `raw.rs` (value, keys): the mirror;
//! - `yaml.rs` (value, model, keys): the only file naming serde_yaml;
//! - `validate.rs` (value, model, job_env, keys, suggest, raw): the rules;
//! - `load.rs` (model, raw, validate, yaml): [`load_bytes`] and [`validated`];
//! - `query.rs` (model, keys, suggest, validate): [`get`] and [`show`];
//! - `lossless.rs` (value, yaml11): the only file naming yaml-edit (the
//!   text edits);
//! - `edit.rs` (all but raw and query): [`set`] and [`unset`] (the new
//!   text; the main crate reads and writes the file), each edit checked
//!   against what the document means.
//!
//! A missing, empty or comment-only file is every default with no warning. A
//! file that is not a mapping (a list, a scalar), has malformed YAML or a key
//! twice (at the top level or in `cron`/`gateway`) is refused as
//! [`ConfigError::Syntax`] (`file:line:column: message`), or
//! [`ConfigError::Invalid`] naming the file when serde_yaml gives no location
//! (several documents in one file).
//!
//! Representations: an unbounded `cron.max_parallel_jobs` reads back as
//! `unbounded` and an unset `timezone` as `system`; YAML `null` means the same
//! in the file and in `set`, and both words are accepted wherever a value is.
//! `set` writes the canonical form: `null` for those two, integers without
//! `.0`, booleans as `true`/`false`, zone names in their proper case.
//! `cron.env`, a mapping, reads back as a one-line YAML flow mapping whose
//! secret-looking values show as `<redacted>`; it is set one variable at a
//! time (`set cron.env.NAME VALUE`, `get`/`unset` likewise), and `set
//! cron.env V` is refused with the YAML to write instead.
//!
//! **`set` and `unset` are lossless**: they change only the lines of the key
//! they edit; comments, blank lines, order, quoting, anchors, aliases, flow
//! and block style and every other key survive byte for byte, and each edit is
//! checked to mean exactly the one change before it is returned (`edit.rs`).
//! A `set` that is refused and an `unset` of a key the file does not have
//! leave the file byte-identical. `load`, `get` and `show` never write.

mod edit;
mod job_env;
mod keys;
mod load;
mod lossless;
mod model;
mod query;
mod raw;
mod suggest;
mod validate;
mod value;
mod yaml;
mod yaml11;

pub use edit::{set, set_hermes, unset, unset_hermes};
pub use keys::key_table;
pub use load::{load_bytes, validated};
pub use model::{
    Config, ConfigError, ConfigWarning, CronConfig, GATEWAY_CONNECTIONS, GatewayConfig, KeyInfo,
    Loaded, SHARED_LEDGER_PARALLEL, SecretText,
};
pub use query::{Entry, Secrets, entries, get, mistyped, show};
pub use validate::Validated;
