//! The execution ledger: one row per occurrence, every state change a
//! compare-and-set on the expected prior state and owner.

mod model;
mod read;
mod spec;
mod write;

pub use model::{DispatchMode, ExecState, Execution, Source};
pub use read::{
    ActiveRun, DueRetry, RunFilter, active_runs, active_runs_for_job, due_retries, get_execution,
    list_executions, next_retry_at,
};
pub use spec::RunSpec;
pub use write::{
    Adoption, LedgerError, NewRow, Outcome, adopt, finish, heartbeat, insert_row, record_dispatch,
    resolve,
};
