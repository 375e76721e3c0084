//! The reconciler: the one place that decides what happens to an active row
//! whose owner may be gone (a claimer killed before its worker adopted the
//! row, a worker that died without recording, a worker that ended before
//! adopting, a live worker gone silent, runs left running by a previous
//! gateway). `evidence.rs` gathers what is known (processes by pid and start
//! time, how a reaped worker ended); the judgement is pure
//! (`hermes_cron_core::reconcile`); `passes.rs` runs it over the rows each
//! caller looks at and applies it through the named ledger moves
//! (`unadopted`, `orphaned`, `stalled`); `announce.rs` says what each
//! verdict did, in the same words whoever ran the pass. `lost.rs` resolves the rows of
//! another host whose lease expired (`take_over`, `orphaned` with
//! `host_lost`); `retake.rs` takes over (or records `missed`) a claim of this
//! host whose command never started and that nobody will start.

mod announce;
mod evidence;
mod lost;
mod passes;
mod retake;

pub use announce::announce;
pub use hermes_cron_core::reconcile::{
    Evidence, Judgement, Liveness, Reaped, STALL_INTERVALS, ScopeSeen, Silence, is_stalled, judge,
};
pub use lost::{LostReport, lost_hosts};
pub use passes::{
    LEDGER_HELD, ReapedWorker, Resolved, Settled, Stalls, Swept, Tracking, Watch, reaped, stalled,
    sweep,
};
pub(crate) use passes::{startup_sweep, watched};
pub use retake::{Retaken, Retaker, retake};
