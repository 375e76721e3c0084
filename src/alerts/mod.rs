//! Telling people: delivering the alerts the ledger's outbox holds
//! (`ledger/outbox.rs` writes them in the transaction of the move that
//! causes them), watching for `late` jobs, and the gateway's own dead-man
//! ping. `driver.rs` is the event loop's part (pick due deliveries, hand
//! them off, record results; never waits on a delivery); `http.rs` the one
//! thread that makes HTTP requests (webhooks, pings), `command.rs` a command
//! alert launched like a job (a `spawn` row, scoped when possible),
//! `late.rs` the lateness watch. (The gateway's dead-man ping thread is
//! the gateway's: `daemon/supervision/deadman.rs`.)

mod command;
mod driver;
mod gateway_failed;
pub(crate) mod http;
mod late;

pub(crate) use command::Launch;
pub(crate) use driver::AlertDriver;
pub use gateway_failed::{GatewayFailedReport, gateway_failed};
