//! The gateway daemon: the long-running process that claims due occurrences,
//! launches them, and watches them.
//!
//! Its files, and what each owns, are listed in ARCHITECTURE.md ("Module
//! map", `daemon/`).

mod claims;
mod cluster;
mod context;
mod event_loop;
mod fatal;
mod feed;
mod gateway;
mod http;
mod launches;
mod monitor;
mod provider_sync;
mod runs;
mod staging;
pub(crate) mod state;
mod supervision;
mod upkeep;

pub use gateway::run;
