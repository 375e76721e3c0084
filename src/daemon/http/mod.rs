//! The gateway's HTTP endpoint (`gateway.http_listen`, off by default):
//! `/metrics` (the Prometheus text the metrics file holds, computed afresh),
//! `/healthz` (200 or 503 with the `status --json` body) and `/` (the
//! read-only status page, `hermes_cron_core::page`). GET and HEAD only.
//!
//! It never touches the event loop: it runs on a thread of its own with a
//! runtime of its own, reads the ledger on a connection of its own, and
//! shares nothing with the loop but the scope capability it last saw (one
//! short mutex). So a wedged client cannot slow a dispatch, and a wedged loop
//! still gets a 503 from `/healthz` (its loop counter stops moving).
//!
//! Files import one way, `server -> connection -> handlers -> page_reads`
//! (and `server -> {handlers, setup}`).

mod connection;
mod handlers;
mod page_reads;
mod server;
mod setup;

pub(crate) use handlers::Context;
pub(crate) use server::start;
pub(crate) use setup::Plan;
