//! `hermes-cron`: parse arguments, install logging, run, map errors to exit
//! codes. The command line itself (`cli/`: clap types, the router, one file
//! per command group) lives in this binary, not in the library; it is the
//! only code that uses anyhow.

mod cli;

use clap::Parser;
use cli::Cli;
use hermes_cron::exit;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && cli::json_asked() => {
            println!("{}", cli::parse_error_json(&e));
            std::process::exit(exit::USAGE);
        }
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
    let json = cli.json;
    if !matches!(cli.command, cli::Command::Gateway) {
        cli::exit_quietly_on_a_closed_stdout();
    }
    // Log records for the daemon (and its `OnFailure=` hook), lines for people.
    if matches!(
        cli.command,
        cli::Command::Gateway | cli::Command::GatewayFailed { .. }
    ) {
        hermes_cron::logging::init();
    } else {
        hermes_cron::logging::init_interactive();
    }
    // The process's one zone table, over the host's zoneinfo; handed down.
    let zones = hermes_cron::host_zone::table();
    let knobs = hermes_cron::knobs::Knobs::from_env();
    let code = match cli::run(cli, zones, knobs) {
        Ok(code) => code,
        Err(err) => cli::report(&err, json),
    };
    std::process::exit(code);
}
