//! hermes-cron: a cron scheduler and worker launcher.
//!
//! See ARCHITECTURE.md for the module map and the path of one occurrence.

pub mod clock;
pub mod config;
pub mod exit;
pub mod home;
pub mod schedule;
pub mod systemd;
