//! Runs one parsed command line.

use super::args::{Cli, Command};
use super::context::Ctx;
use super::{
    alerts_cmd, config_cmd, hermes_cmd, import_cmd, jobs_cmd, next_cmd, ops_cmd, run_cmd, runs_cmd,
    tick_cmd, wait_cmd,
};
use hermes_cron::home::Home;
use hermes_cron::knobs::Knobs;
use hermes_cron::schedule::ZoneTable;

/// Run `cli`, reading zone names in `zones` (the process's table), with the
/// test knobs `knobs`; returns the exit code (errors carry theirs, see
/// `exit_code_for`).
pub(crate) fn run(cli: Cli, zones: ZoneTable, knobs: Knobs) -> anyhow::Result<i32> {
    let home = Home::resolve(cli.home.as_deref())?;
    let mut ctx = Ctx::new(home, zones, knobs)?;
    match cli.command {
        Command::Add(a) => jobs_cmd::add(&mut ctx, a),
        Command::List { all, json } => jobs_cmd::list(&mut ctx, all, json),
        Command::Show { job, json } => jobs_cmd::show(&mut ctx, &job, json),
        Command::Edit(a) => jobs_cmd::edit(&mut ctx, a),
        Command::Pause { job, reason } => jobs_cmd::pause(&mut ctx, &job, reason),
        Command::Resume { job } => jobs_cmd::resume(&mut ctx, &job),
        Command::Rm { job } => jobs_cmd::rm(&mut ctx, &job),
        Command::Next(a) => next_cmd::next(&mut ctx, a),
        Command::Run {
            job,
            wait,
            foreground,
        } => run_cmd::run(&mut ctx, &job, wait, foreground),
        Command::Tick { json } => tick_cmd::tick(&mut ctx, json),
        Command::Gateway => Ok(hermes_cron::daemon::run(ctx.home, ctx.zones, ctx.knobs)),
        Command::Runs(a) => runs_cmd::runs(&mut ctx, a),
        Command::Logs {
            execution,
            run,
            follow,
        } => runs_cmd::logs(&mut ctx, &execution, run.map(|n| n as usize), follow),
        Command::Spawn(a) => run_cmd::spawn(&mut ctx, a),
        Command::Stop { execution, json } => wait_cmd::stop(&mut ctx, &execution, json),
        Command::Wait { execution, json } => wait_cmd::wait(&mut ctx, &execution, json),
        Command::Status { json } => ops_cmd::status(&mut ctx, json),
        Command::Doctor { json } => ops_cmd::doctor(&mut ctx, json),
        Command::Metrics => ops_cmd::metrics(&mut ctx),
        Command::Prune { json } => ops_cmd::prune(&mut ctx, json),
        Command::Import {
            file,
            dry_run,
            json,
        } => import_cmd::import(&mut ctx, &file, dry_run, json),
        Command::Config { action } => config_cmd::config(&mut ctx, action),
        Command::Hermes { action } => hermes_cmd::hermes(&mut ctx, action),
        Command::GatewayFailed { unit, json } => {
            alerts_cmd::gateway_failed(&mut ctx, unit.as_deref(), json)
        }
        Command::Alerts { job, limit, json } => {
            alerts_cmd::alerts(&mut ctx, job.as_deref(), limit, json)
        }
    }
}
