//! The gateway daemon: the long-running process that claims due occurrences,
//! launches them, and watches them.
//!
//! - `gateway.rs`: start-up as named steps, serve, shut down.
//! - `event_loop.rs`: the loop, a dispatcher over the parts below: each
//!   says when it next needs to wake and what it does then.
//! - `context.rs`: what every part works with (home, config, clock,
//!   launcher, the state the threads share).
//! - `claims.rs`: claim passes (now, and ahead for staging), and the tick
//!   summary each records; `staging.rs`: the runs staged ahead of their
//!   instant, their gates and their release; `launches.rs`: the runs queued
//!   and in flight; `runs.rs`: the runs it watches; `monitor.rs`: its
//!   periodic round (adopted runs, dead owners, stalls, the capability
//!   probe, sd_notify); `feed.rs`: changes made by other processes;
//!   `upkeep.rs`: the metrics file and retention; `provider_sync.rs`:
//!   following Hermes's jobs when hermes-cron is its cron provider;
//!   `cluster.rs`: the lease on a shared ledger.
//! - `state.rs`: what its threads share; `fatal.rs`: what stops it.
//! - `http/`: the HTTP endpoint (`/metrics`, `/healthz`, the status page),
//!   on a thread and a runtime of its own.
//! - `supervision/`: the gateway watching itself: the loop watchdog and its
//!   forensic dump, the exit path, the stop signals, the heartbeat thread,
//!   the lifecycle record, the instance lock, and `sd_notify`.

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
