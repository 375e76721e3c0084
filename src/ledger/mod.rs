//! The execution ledger: one row per occurrence, and the only code that
//! changes one. Each change is a named move (`insert.rs`: [`claim`];
//! `terminal.rs`: [`not_run`]; `moves.rs`: [`adopt`], [`heartbeat`], [`finish`], [`refuse`],
//! [`spawn_failed`], [`unadopted`], [`orphaned`], [`stalled`], [`abandoned`],
//! [`take_over`]; `staging.rs`, runs prepared ahead of their instant:
//! [`claim_ahead`], [`stage`], [`start`], [`overlapped`], [`withdraw`])
//! that fixes the states it starts from and compare-and-sets on the state and
//! owner the caller last saw. Every move into a terminal state passes
//! `terminal.rs`, which also queues owed retries (`retry.rs`) and is the one
//! point that observes rows becoming terminal. `retention.rs` deletes old
//! terminal rows. The vocabulary (states, moves, reasons, owners, the row) is
//! `hermes_cron_core::run`.

#[cfg(test)]
mod backend_tests;
mod error;
mod insert;
mod moves;
mod outbox;
mod outbox_read;
#[cfg(test)]
mod outbox_tests;
mod read;
mod retention;
mod retry;
mod staging;
mod terminal;

pub use error::LedgerError;
pub use hermes_cron_core::run::{
    ClaimedRun, DispatchMode, ExecState, Execution, Exit, Finished, Move, ReasonCode, RowOwner,
    RunEnd, RunSpec, Source,
};
pub use insert::{NewClaim, NewNotRun, NewRanOutside, Occurrence, Ran, claim};
pub use moves::{
    Taking, abandoned, adopt, finish, heartbeat, late_outcome, orphaned, refuse, stalled, take_over,
};
pub(crate) use moves::{never_started, spawn_failed, unadopted};
pub use outbox::{Delivery, record_gateway_failed, record_late};
pub(crate) use outbox::{
    Interrupted, begin_attempt, begin_command_attempt, due_deliveries, end_attempt,
    interrupted_attempts, next_delivery_at,
};
pub use outbox_read::{AttemptView, DeliveryView, list_deliveries};
pub use read::{
    MIN_ID_PART, RunFilter, active_runs, active_runs_on, executions_matching, get_execution,
    late_outcome_of, list_executions,
};
pub(crate) use read::{
    active_runs_claimed_on, active_runs_for_job, hermes_run_ids_since, latest_slot_from,
};
pub(crate) use retention::prune_rows;
pub use retry::take as take_retry;
pub(crate) use retry::{due_retries, next_retry_at};
pub use staging::{StagedClaim, claim_ahead, overlapped, stage, staged_claim, start, withdraw};
pub use terminal::{not_run, ran_outside};
