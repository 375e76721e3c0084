//! The worker: runs one occurrence and writes its outcome itself, so the
//! outcome survives the gateway. The `hermes-cron-worker` binary is a thin
//! wrapper around [`run`].

mod capture;
mod environment;
mod go;
mod patience;
mod run;
mod supervise;

pub use go::{Go, Heard};

pub use run::{WorkerArgs, run};
