//! The worker: runs one occurrence and writes its outcome itself, so the
//! outcome survives the gateway. The `hermes-cron-worker` binary is a thin
//! wrapper around [`run`].

mod capture;
mod detach;
mod environment;
mod go;
mod patience;
mod run;
mod staged;
mod supervise;

pub use detach::detach;
pub use go::{Go, Heard, RELEASE};

pub use run::{WorkerArgs, run};
