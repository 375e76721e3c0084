//! The vocabulary of one occurrence's run, shared by the ledger, the claim,
//! the dispatcher, the reconciler and the worker: states and the moves
//! between them, sources, dispatch modes, reason codes, owners, the row, the
//! run spec snapshot, and how a run ended.

mod cause;
mod claimed;
mod environment;
mod outcome;
mod owner;
mod reason;
mod signal;
mod snapshot;
mod state;
mod transition;
pub mod usage;

pub use cause::CauseCode;
pub use claimed::ClaimedRun;
pub use environment::{
    Account, BUS_VARIABLES, DEFAULT_LANG, DEFAULT_PATH, EnvFileError, Layers, compose, lookup_path,
    parse_env_file,
};
pub use outcome::{Ending, Exit, ExitMeanings, Finished, RunEnd, Stopped, judge};
pub use owner::{NotAnOwner, Owner, OwnerRole, ProcessIdentity, RowOwner};
pub use reason::ReasonCode;
pub use signal::signal_name;
pub use snapshot::RunSpec;
pub use state::{DispatchMode, ExecState, Execution, Source};
pub use transition::Move;
