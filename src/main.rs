//! `hermes-cron`: parse arguments, install logging, run, map errors to exit codes.

use clap::Parser;
use hermes_cron::cli::{self, Cli};
use hermes_cron::exit;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    hermes_cron::logging::init();
    let code = match cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("hermes-cron: {err:#}");
            cli::exit_code_for(&err)
        }
    };
    std::process::exit(code);
}
