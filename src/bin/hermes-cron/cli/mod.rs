//! The `hermes-cron` command line: argument types, the router, and one file
//! per command group. Only this layer (and `main.rs`) uses anyhow.

mod alerts_cmd;
mod args;
mod closed_stdout;
mod config_cmd;
mod context;
mod docs_cmd;
mod error_json;
mod execution_ref;
mod fail;
mod hermes_cmd;
mod import_cmd;
mod jobs_cmd;
mod next_cmd;
mod ops_cmd;
mod render;
mod router;
mod run_cmd;
mod runs_cmd;
mod tick_cmd;
mod units_cmd;
mod wait_cmd;

pub(crate) use args::{Cli, Command};
pub(crate) use closed_stdout::exit_quietly_on_a_closed_stdout;
pub(crate) use error_json::{json_asked, parse_error_json};
pub(crate) use fail::report;
pub(crate) use router::run;
