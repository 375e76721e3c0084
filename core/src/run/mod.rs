//! The vocabulary of one occurrence's run, shared by the ledger, the claim,
//! the dispatcher and the worker: states, sources, dispatch modes, the row,
//! and the run spec snapshot.

mod spec;
mod state;

pub use spec::RunSpec;
pub use state::{DispatchMode, ExecState, Execution, Source};
