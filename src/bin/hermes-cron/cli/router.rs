//! Runs one parsed command line.

use super::args::{Cli, Command};
use super::context::Ctx;
use super::fail::usage;
use super::{
    alerts_cmd, config_cmd, docs_cmd, hermes_cmd, import_cmd, jobs_cmd, next_cmd, ops_cmd, run_cmd,
    runs_cmd, tick_cmd, units_cmd, wait_cmd,
};
use hermes_cron::home::Home;
use hermes_cron::knobs::Knobs;
use hermes_cron::schedule::ZoneTable;

/// Run `cli`, reading zone names in `zones` (the process's table), with the
/// test knobs `knobs`; returns the exit code (errors carry theirs, see
/// `exit_code_for`).
pub(crate) fn run(cli: Cli, zones: ZoneTable, knobs: Knobs) -> anyhow::Result<i32> {
    let json = cli.json;
    if json && let Some(why) = without_json(&cli.command) {
        return Err(usage(format!("--json: {why}")));
    }
    // What needs no home: the docs of the command line, and the units.
    match cli.command {
        Command::Completions { shell } => return docs_cmd::completions(shell),
        Command::Manpages { dir } => return docs_cmd::manpages(&dir, json),
        Command::Units { action } => return units_cmd::units(action, json),
        _ => {}
    }
    let home = Home::resolve(cli.home.as_deref())?;
    let mut ctx = Ctx::new(home, zones, knobs)?;
    let cron_dir = ctx.home.cron_dir();
    let done = match cli.command {
        Command::Add(a) => jobs_cmd::add(&mut ctx, a, json),
        Command::List { all } => jobs_cmd::list(&mut ctx, all, json),
        Command::Show { job } => jobs_cmd::show(&mut ctx, &job, json),
        Command::Edit(a) => jobs_cmd::edit(&mut ctx, a, json),
        Command::Pause { job, reason } => jobs_cmd::pause(&mut ctx, &job, reason, json),
        Command::Resume { job } => jobs_cmd::resume(&mut ctx, &job, json),
        Command::Rm { job } => jobs_cmd::rm(&mut ctx, &job, json),
        Command::Next(a) => next_cmd::next(&mut ctx, a, json),
        Command::Run {
            job,
            wait,
            foreground,
        } => run_cmd::run(&mut ctx, &job, wait, foreground, json),
        Command::Tick => tick_cmd::tick(&mut ctx, json),
        Command::Gateway => Ok(hermes_cron::daemon::run(ctx.home, ctx.zones, ctx.knobs)),
        Command::Runs(a) => runs_cmd::runs(&mut ctx, a, json),
        Command::Logs {
            execution,
            run,
            follow,
        } => runs_cmd::logs(&mut ctx, &execution, run.map(|n| n as usize), follow),
        Command::Spawn(a) => run_cmd::spawn(&mut ctx, a, json),
        Command::Stop { execution } => wait_cmd::stop(&mut ctx, &execution, json),
        Command::Wait { execution } => wait_cmd::wait(&mut ctx, &execution, json),
        Command::Status => ops_cmd::status(&mut ctx, json),
        Command::Doctor => ops_cmd::doctor(&mut ctx, json),
        Command::Metrics => ops_cmd::metrics(&mut ctx),
        Command::Prune => ops_cmd::prune(&mut ctx, json),
        Command::Import { file, dry_run } => import_cmd::import(&mut ctx, &file, dry_run, json),
        Command::Config { action } => config_cmd::config(&mut ctx, action, json),
        Command::Hermes { action } => hermes_cmd::hermes(&mut ctx, action, json),
        Command::GatewayFailed { unit } => {
            alerts_cmd::gateway_failed(&mut ctx, unit.as_deref(), json)
        }
        Command::Alerts { job, limit } => alerts_cmd::alerts(&mut ctx, job.as_deref(), limit, json),
        Command::Completions { .. } | Command::Manpages { .. } | Command::Units { .. } => {
            unreachable!("run before the home is resolved")
        }
    };
    done.map_err(|e| name_a_damaged_ledger(e, &cron_dir))
}

/// A failure because the SQLite ledger in `cron_dir` is damaged (found
/// past its opening, reading a page) says so, with the fix, whichever
/// command met it.
fn name_a_damaged_ledger(e: anyhow::Error, cron_dir: &std::path::Path) -> anyhow::Error {
    let damaged = e.chain().any(|c| {
        c.downcast_ref::<hermes_cron::db::SqlError>()
            .is_some_and(hermes_cron::db::SqlError::is_damaged)
    });
    match hermes_cron::db::explain(e.as_ref(), cron_dir).filter(|_| damaged) {
        Some(why) => e.context(why),
        None => e,
    }
}

/// Why `command` has no `--json` form: its output is a format of its own.
fn without_json(command: &Command) -> Option<&'static str> {
    match command {
        Command::Gateway => Some("`gateway` is the daemon; it writes log records, not JSON"),
        Command::Metrics => {
            Some("`metrics` prints the Prometheus text format; read it with a Prometheus parser")
        }
        Command::Completions { .. } => Some("`completions` prints a shell script"),
        Command::Logs { .. } => Some(
            "`logs` prints a run's captured output as the command wrote it; `runs --json` gives the run's row and its `output_path`",
        ),
        _ => None,
    }
}
