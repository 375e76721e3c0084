//! hermes-cron: a cron scheduler and worker launcher.
//!
//! The IO around the pure core (`hermes_cron_core`, re-exported here under
//! the same module names): the ledger and the job store (SQLite, or a
//! PostgreSQL database several hosts share), the
//! claim, the dispatcher and the systemd edge, the worker, the gateway.
//! See ARCHITECTURE.md for the module map and the path of one occurrence.

pub use hermes_cron_core::{alert, exit, ids, import, job, schedule, text, text_enum};

pub mod alerts;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod crash;
pub mod daemon;
pub mod db;
pub mod dispatch;
pub(crate) mod fsutil;
pub mod home;
pub mod host_zone;
pub mod knobs;
pub mod ledger;
mod legacy_names;
pub mod logging;
pub mod ops;
pub mod process;
pub mod provider;
pub mod reconcile;
pub(crate) mod small_file;
pub mod state_files;
pub mod store;
pub mod systemd;
pub mod tick;
pub mod worker;
