//! The worker: runs one occurrence and writes its outcome itself, so the
//! outcome survives the gateway. The `hermes-cron-worker` binary is a thin
//! wrapper around [`run`].

mod args;
mod capture;
mod command;
mod detach;
mod environment;
mod go;
mod leftovers;
mod patience;
mod run;
mod staged;
mod supervise;

pub use detach::{DETACH_ARG, detach};
pub use go::{Go, Heard, RELEASE};

pub use args::WorkerArgs;
pub use run::run;
