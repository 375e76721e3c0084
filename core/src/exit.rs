//! Process exit codes shared by the CLI, the gateway and the worker.
//!
//! The CLI and gateway codes are documented in the README ("Exit codes").
//! The worker's own failure codes live in the 120s so they can never be
//! mistaken for a job's exit status (jobs commonly use 0-2, 64-78 and
//! 126-165).

/// Everything went as asked.
pub const OK: i32 = 0;
/// A job failed, a health check found problems, or a command could not finish.
pub const FAILURE: i32 = 1;
/// Bad input: the message names the field.
pub const USAGE: i32 = 2;
/// A restart-safe scope was required but could not be created (sysexits EX_UNAVAILABLE).
pub const SCOPE_UNAVAILABLE: i32 = 69;
/// The gateway asks its supervisor for a restart (sysexits EX_TEMPFAIL).
pub const RESTART: i32 = 75;

/// Worker: the ledger could not be opened or written.
pub const WORKER_LEDGER: i32 = 121;
/// Worker: the row was not ours to run (lost compare-and-set, unknown execution).
pub const WORKER_NOT_OURS: i32 = 122;
/// Worker: the job's program could not be started.
pub const WORKER_EXEC: i32 = 123;
/// Worker: bad arguments.
pub const WORKER_USAGE: i32 = 124;
