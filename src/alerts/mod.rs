//! Telling people: delivering the alerts the ledger's outbox holds
//! (`ledger/outbox.rs` writes them in the transaction of the move that
//! causes them), watching for `late` jobs, and the gateway's own dead-man
//! ping. `driver.rs`, the event loop's part, never waits on a delivery; the
//! dead-man ping thread is the gateway's (`daemon/supervision/deadman.rs`).

mod command;
mod driver;
mod gateway_failed;
pub(crate) mod http;
mod late;

pub(crate) use command::Launch;
pub(crate) use driver::AlertDriver;
pub use gateway_failed::{GatewayFailedReport, gateway_failed};
