//! The execution ledger: one row per occurrence, every state change a
//! compare-and-set on the expected prior state and owner. The vocabulary
//! (states, sources, modes, the row, the run spec) is `hermes_cron_core::run`.

mod read;
mod write;

pub use hermes_cron_core::run::{DispatchMode, ExecState, Execution, RunSpec, Source};
pub use read::{
    ActiveRun, DueRetry, RunFilter, active_runs, active_runs_for_job, due_retries, get_execution,
    list_executions, next_retry_at,
};
pub use write::{
    Adoption, LedgerError, NewRow, Outcome, adopt, finish, heartbeat, insert_row, resolve,
};
