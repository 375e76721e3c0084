//! hermes-cron's pure core.
//!
//! Everything here takes `now`, zones and data as arguments: no clock reads
//! (see `.clippy.toml`), no filesystem, no processes, no D-Bus, no SQL. The
//! crate's dependencies keep it that way (no tokio, zbus, rusqlite, nix or
//! libc); the main crate `hermes_cron` is the IO around it. See
//! ARCHITECTURE.md, "Crates".

pub mod alert;
pub mod cluster;
pub mod config;
pub mod exit;
pub mod health;
pub mod http;
pub mod ids;
pub mod import;
pub mod job;
pub mod page;
pub mod placement;
pub mod plan;
pub mod provider;
pub mod reconcile;
pub mod run;
pub mod schedule;
pub mod scope;
pub mod staging;
pub mod text;
pub mod text_enum;
