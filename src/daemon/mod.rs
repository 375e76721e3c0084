//! The gateway daemon: the long-running process that claims due occurrences,
//! dispatches them, and watches them.
//!
//! - `gateway.rs`: start-up order, serve, shut down.
//! - `event_loop.rs`: sleep until due, claim, dispatch, reap; `inflight.rs`
//!   the dispatches and stagings it has in flight; `ahead.rs` its staging
//!   steps (stage pass, release, a held worker's death); `staging.rs` the runs it
//!   prepares ahead of their instant and the lead time; `release.rs` their
//!   release at the instant; `runs.rs` the runs it watches; `monitor.rs` its periodic round (adopted runs, dead
//!   owners, stalls, the capability probe, sd_notify); `stall.rs` stopping a
//!   stalled worker; `upkeep.rs` the metrics file and retention;
//!   `provider_sync.rs` following Hermes's jobs when hermes-cron is its
//!   cron provider;
//!   `state.rs` what its threads share; `fatal.rs` what stops it.
//! - `http/`: the HTTP endpoint (`/metrics`, `/healthz`, the status page),
//!   on a thread and a runtime of its own.
//! - `supervision/`: the gateway watching itself: the loop watchdog and its
//!   forensic dump, the exit path, the stop signals, the heartbeat thread,
//!   the lifecycle record, the instance lock, and `sd_notify`.

mod ahead;
mod cluster;
mod event_loop;
mod fatal;
mod gateway;
mod http;
mod inflight;
mod monitor;
mod provider_sync;
mod release;
mod runs;
mod staging;
mod stall;
pub(crate) mod state;
mod supervision;
mod upkeep;

pub use gateway::run;
