//! hermes-cron: a cron scheduler and worker launcher.
//!
//! See ARCHITECTURE.md for the module map and the path of one occurrence.

pub mod cli;
pub mod clock;
pub mod config;
pub mod crash;
pub mod daemon;
pub mod db;
pub mod dispatch;
pub mod exit;
pub mod fsutil;
pub mod home;
pub mod ids;
pub mod import;
pub mod job;
pub mod ledger;
pub mod logging;
pub mod ops;
pub mod process;
pub mod schedule;
pub mod spawn;
pub mod store;
pub mod sweep;
pub mod systemd;
pub mod text;
pub mod text_enum;
pub mod tick;
pub mod worker;
