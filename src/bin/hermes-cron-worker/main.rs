//! `hermes-cron-worker --home H --execution E`: runs one occurrence. Started
//! by the launcher holding a pipe on stdin; does nothing until the go line,
//! which also says how it was placed (scoped in a unit, or degraded and
//! why). `--mode`, `--cause` and `--unit` are for launchers that write a bare
//! go byte instead.

use clap::Parser;
use hermes_cron::exit;
use hermes_cron::ledger::DispatchMode;
use hermes_cron::worker::{WorkerArgs, run};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "hermes-cron-worker", version)]
struct Args {
    /// The hermes home.
    #[arg(long)]
    home: PathBuf,
    /// The execution (ledger row) to run.
    #[arg(long)]
    execution: String,
    /// How the launcher dispatched us, when its go line does not say:
    /// scoped, degraded or in_process.
    #[arg(long, default_value = "degraded")]
    mode: String,
    /// Why the mode is not scoped (a cause code).
    #[arg(long)]
    cause: Option<String>,
    /// The scope unit we were moved into.
    #[arg(long)]
    unit: Option<String>,
    /// Also copy the job's output to our stdout.
    #[arg(long)]
    tee: bool,
    /// Start a session of our own (`setsid`) and unblock every signal first:
    /// what a launcher that starts us with `posix_spawn` cannot do for us.
    #[arg(long)]
    detach: bool,
}

fn main() {
    // The umask, nice value and limits its launcher says the job starts
    // with: the gateway's, whoever launched it (and not the descriptor
    // limit the gateway raised for the gates it holds).
    hermes_cron::process::start_attrs::take_from_env();
    if std::env::args_os().any(|a| a == hermes_cron::worker::DETACH_ARG) {
        // Before anything else, so a signal meant for the held worker is
        // not left pending behind the mask it inherited.
        hermes_cron::worker::detach();
    }
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() {
                exit::WORKER_USAGE
            } else {
                exit::OK
            });
        }
    };
    hermes_cron::logging::init_worker();
    let Ok(mode) = args.mode.parse::<DispatchMode>() else {
        eprintln!(
            "hermes-cron-worker: --mode {:?} is not scoped, degraded or in_process",
            args.mode
        );
        std::process::exit(exit::WORKER_USAGE);
    };
    let cause = match args.cause.as_deref().map(str::parse).transpose() {
        Ok(cause) => cause,
        Err(e) => {
            eprintln!("hermes-cron-worker: --cause: {e}");
            std::process::exit(exit::WORKER_USAGE);
        }
    };
    std::process::exit(run(WorkerArgs {
        home: args.home,
        execution: args.execution,
        mode,
        cause,
        unit: args.unit,
        tee: args.tee,
        host: hermes_cron::cluster::Host::from_env().name,
        kill_grace: hermes_cron::knobs::Knobs::from_env().kill_grace,
    }));
}
