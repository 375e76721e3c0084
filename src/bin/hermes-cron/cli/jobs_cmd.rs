//! `add`, `edit`, `list`, `show`, `pause`, `resume`, `rm`.

use super::args::{AddArgs, EditArgs, JobFlags};
use super::closed_stdout::or_quiet_exit;
use super::context::Ctx;
use super::fail::{failure, usage};
use super::render::{Table, cell, job_json, local};
use hermes_cron::db::Conn as Connection;
use hermes_cron::ids::JobId;
use hermes_cron::job::{Job, JobInput, JobState, redacted_env};
use hermes_cron::ledger::{self, Execution, RunFilter};
use hermes_cron::ops::Missing;
use hermes_cron::schedule::{self, Tz, ZoneTable};
use hermes_cron::store;

fn input_from_flags(f: &JobFlags) -> JobInput {
    JobInput {
        tz: f.tz.clone(),
        timeout: f.timeout.clone(),
        idle_timeout: f.idle_timeout.clone(),
        overlap: f.overlap.clone(),
        catch_up: f.catch_up.clone(),
        retries: f.retries,
        retry_backoff: f.retry_backoff.clone(),
        memory_max: f.memory_max.clone(),
        cpu_weight: f.cpu_weight,
        tasks_max: f.tasks_max,
        env: (!f.env.is_empty()).then(|| f.env.clone()),
        env_files: (!f.env_file.is_empty()).then(|| f.env_file.clone()),
        pass_env: (!f.pass_env.is_empty()).then(|| f.pass_env.clone()),
        workdir: f.workdir.clone(),
        cwd: std::env::current_dir().ok(),
        shell: f.shell.then_some(true),
        require_scope: f.require_scope.then_some(true),
        run_on: f.on.clone(),
        alert_on: f.alert_on.clone(),
        alert_after: f.alert_after,
        on_alert: f.on_alert.clone(),
        alert_webhook: f.alert_webhook.clone(),
        alert_ping: f.alert_ping.clone(),
        ..JobInput::default()
    }
}

/// Say which of the job's resource limits this host will not enforce.
pub(super) fn warn_unenforced(job: &Job) {
    for why in hermes_cron::systemd::unenforced(&job.resources, &hermes_cron::systemd::delegation())
    {
        tracing::warn!(job = %job.name, "{why}");
    }
}

/// Refuse a command whose program cannot be found (unless shell or
/// --no-check), looked up as its worker will (`ops::program_missing`).
fn check_program(job: &Job, cron_path: &str) -> anyhow::Result<()> {
    let Some(missing) = hermes_cron::ops::program_missing(job, cron_path) else {
        return Ok(());
    };
    let program = &job.argv[0];
    Err(usage(format!(
        "COMMAND: program {program:?} not found{}; give a full path, use --shell to run it through sh -c, or --no-check to skip this check",
        match missing {
            Missing::NotExecutable => " or not executable".to_string(),
            Missing::NotOnPath { path } => {
                format!(" on the job's PATH {path} (--env PATH=..., else config cron.path)")
            }
        }
    )))
}

fn zone_of(job: &Job, fallback: Tz, zones: &ZoneTable) -> Tz {
    zones.zone_or(job.tz.as_deref(), fallback)
}

fn last_run(conn: &Connection, job: &Job) -> anyhow::Result<Option<Execution>> {
    Ok(ledger::list_executions(
        conn,
        &RunFilter {
            job: Some((Some(job.id.clone()), job.name.clone())),
            limit: 1,
            ..RunFilter::default()
        },
    )?
    .pop())
}

pub(super) fn add(ctx: &mut Ctx, a: AddArgs, json: bool) -> anyhow::Result<i32> {
    let fallback = ctx.new_job_zone()?;
    let zone = fallback.zone();
    let mut input = input_from_flags(&a.flags);
    input.default_workdir = Some(hermes_cron::process::account().home.into());
    input.name = Some(a.name);
    input.schedule = Some(a.schedule);
    input.argv = Some(a.command);
    let job = input.build(JobId::generate(), ctx.now(), fallback, &ctx.zones)?;
    if !a.flags.no_check {
        check_program(&job, &ctx.config()?.cron.path)?;
    }
    let mut db = ctx.open_db()?;
    let tx = db.immediate()?;
    refuse_taken_name(&tx, &job)?;
    store::insert_job(&tx, &job)?;
    tx.commit()?;
    warn_unenforced(&job);
    ctx.warn_if_no_gateway(&db);
    print_job(ctx, &job, zone, json, || job.id.to_string())
}

/// A job a command made or changed: its JSON object, or the line `text`.
fn print_job(
    ctx: &Ctx,
    job: &Job,
    fallback: Tz,
    json: bool,
    text: impl FnOnce() -> String,
) -> anyhow::Result<i32> {
    if json {
        let object = job_json(job, zone_of(job, fallback, &ctx.zones), None);
        println!("{}", serde_json::to_string_pretty(&object)?);
    } else {
        println!("{}", text());
    }
    Ok(hermes_cron::exit::OK)
}

/// Names are how jobs are called (`show brief`, `run brief`): a second job
/// of the same name is refused, naming the first.
fn refuse_taken_name(conn: &hermes_cron::db::Conn, job: &Job) -> anyhow::Result<()> {
    match store::job_named(conn, &job.name, &job.id)? {
        Some(other) => Err(usage(format!(
            "--name: a job named {:?} exists already ({}, {:?}); choose another name, or change that job with `hermes-cron edit {}`",
            cell(&other.name, 64),
            other.id,
            other.schedule_text,
            other.id
        ))),
        None => Ok(()),
    }
}

/// A job the Hermes provider sync keeps is changed in Hermes, never here.
fn refuse_managed(job: &Job, hermes_command: &str) -> anyhow::Result<()> {
    match (&job.hermes_id, job.managed) {
        (Some(hid), true) => Err(usage(format!(
            "job {} ({}) is the Hermes job {hid}, which Hermes keeps; use `hermes cron {hermes_command} {hid}` \
             instead (hermes-cron follows within a second)",
            cell(&job.name, 64),
            job.id
        ))),
        _ => Ok(()),
    }
}

pub(super) fn edit(ctx: &mut Ctx, a: EditArgs, json: bool) -> anyhow::Result<i32> {
    let fallback = ctx.new_job_zone()?;
    let zone = fallback.zone();
    let mut db = ctx.open_db()?;
    let tx = db.immediate()?;
    let mut job = store::resolve_job(&tx, &a.job)?;
    refuse_managed(&job, "edit")?;
    let mut input = input_from_flags(&a.flags);
    input.name = a.name;
    input.schedule = a.schedule;
    if !a.command.is_empty() {
        input.argv = Some(a.command);
    }
    if a.no_shell {
        input.shell = Some(false);
    }
    if a.no_require_scope {
        input.require_scope = Some(false);
    }
    if a.clear_env {
        input.env = Some(Vec::new());
        input.env_files = Some(Vec::new());
        input.pass_env = Some(Vec::new());
    }
    let program_changed =
        input.argv.is_some() || input.shell == Some(false) || input.workdir.is_some();
    let renamed = input.name.is_some();
    input.apply_edit(&mut job, ctx.now(), fallback, &ctx.zones)?;
    if renamed {
        refuse_taken_name(&tx, &job)?;
    }
    if program_changed && !a.flags.no_check {
        check_program(&job, &ctx.config()?.cron.path)?;
    }
    if !store::update_job(&tx, &job)? {
        return Err(failure(format!("job {} was removed while editing", job.id)));
    }
    tx.commit()?;
    warn_unenforced(&job);
    print_job(ctx, &job, zone, json, || job.id.to_string())
}

pub(super) fn list(ctx: &mut Ctx, all: bool, json: bool) -> anyhow::Result<i32> {
    let zone = ctx.fallback_zone()?;
    let Some(db) = ctx.open_existing_db()? else {
        if json {
            println!("[]");
        } else {
            println!("no jobs; add one with `hermes-cron add --name N --schedule S -- CMD`");
        }
        return Ok(hermes_cron::exit::OK);
    };
    let jobs = store::list_jobs(db.conn(), all)?;
    ctx.warn_if_no_gateway(&db);
    if json {
        // One job's document at a time: a hundred thousand jobs must not
        // make a hundred thousand documents at once.
        use serde::ser::{SerializeSeq, Serializer};
        let mut out = serde_json::Serializer::pretty(std::io::stdout().lock());
        let mut seq = or_quiet_exit(out.serialize_seq(Some(jobs.len())))?;
        for job in &jobs {
            let last = last_run(db.conn(), job)?;
            let item = job_json(job, zone_of(job, zone, &ctx.zones), last.as_ref());
            or_quiet_exit(seq.serialize_element(&item))?;
        }
        or_quiet_exit(seq.end())?;
        println!();
        return Ok(hermes_cron::exit::OK);
    }
    let mut lasts = Vec::with_capacity(jobs.len());
    for job in &jobs {
        lasts.push(last_run(db.conn(), job)?);
    }
    let mut table = Table::new(&["ID", "NAME", "SCHEDULE", "NEXT RUN", "STATE", "LAST"]);
    for (job, last) in jobs.iter().zip(&lasts) {
        table.row(vec![
            job.id.to_string(),
            cell(&job.name, 32),
            cell(&job.schedule_text, 28),
            job.next_run_at
                .map_or("-".into(), |a| local(a, zone_of(job, zone, &ctx.zones))),
            job.state.as_str().into(),
            last.as_ref()
                .map_or("-".into(), |e| e.state.as_str().into()),
        ]);
    }
    print!("{}", table.render());
    Ok(hermes_cron::exit::OK)
}

pub(super) fn show(ctx: &mut Ctx, key: &str, json: bool) -> anyhow::Result<i32> {
    let zone = ctx.fallback_zone()?;
    let db = ctx.open_db()?;
    let job = store::resolve_job(db.conn(), key)?;
    let last = last_run(db.conn(), &job)?;
    let jz = zone_of(&job, zone, &ctx.zones);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&job_json(&job, jz, last.as_ref()))?
        );
        return Ok(hermes_cron::exit::OK);
    }
    let mut lines = vec![
        ("id", job.id.to_string()),
        ("name", cell(&job.name, 200)),
        (
            "schedule",
            if job.managed {
                format!(
                    "{}  (Hermes's; fires at the Hermes job's next run)",
                    job.schedule_text
                )
            } else {
                format!("{}  ({})", job.schedule_text, job.schedule.canonical())
            },
        ),
        ("zone", jz.name().to_string()),
        ("command", job.command_display()),
        (
            "state",
            match &job.state {
                JobState::Paused { reason: Some(r) } => format!("paused ({r})"),
                s => s.as_str().to_string(),
            },
        ),
        (
            "next run",
            job.next_run_at.map_or("-".into(), |a| {
                format!("{}  ({})", local(a, jz), super::render::utc(a))
            }),
        ),
        ("overlap", job.overlap.to_string()),
        (
            "catch-up",
            job.catch_up.map_or("default".into(), |c| c.to_string()),
        ),
        (
            "timeout",
            job.timeout.map_or("default".into(), |t| {
                if t.is_zero() {
                    "off".into()
                } else {
                    schedule::format_duration(t)
                }
            }),
        ),
        (
            "idle timeout",
            job.idle_timeout
                .map_or("none".into(), schedule::format_duration),
        ),
        (
            "retries",
            format!(
                "{} (backoff {})",
                job.retries,
                schedule::format_duration(job.retry_backoff)
            ),
        ),
        ("require scope", job.require_scope.to_string()),
        ("units", hermes_cron::systemd::scope_unit_glob(&job.name)),
        (
            "runs on",
            job.run_on.clone().unwrap_or_else(|| "any host".into()),
        ),
    ];
    if !job.alerts.is_empty() {
        lines.push(("alerts", super::render::alerts_line(&job.alerts)));
    }
    if let Some(dir) = &job.workdir {
        lines.push(("workdir", dir.display().to_string()));
    }
    for (k, v) in redacted_env(&job.env.0) {
        lines.push(("env", format!("{k}={v}")));
    }
    for f in &job.env_files {
        lines.push(("env file", f.display().to_string()));
    }
    if !job.pass_env.is_empty() {
        lines.push(("pass env", job.pass_env.join(" ")));
    }
    if let Some(id) = &job.hermes_id {
        let how = if job.managed {
            "kept by Hermes: change it with `hermes cron ...`"
        } else {
            "imported"
        };
        lines.push(("hermes job", format!("{id} ({how})")));
    }
    if let Some(l) = &last {
        lines.push(("last run", format!("{} {}", l.id, l.state)));
        if let Some(usage) = &l.usage {
            let (tokens, cost) = hermes_cron_core::run::usage::tokens_and_cost(usage);
            let cost = cost.map_or("no price known".to_string(), |c| format!("${c:.4}"));
            lines.push(("last usage", format!("{tokens} tokens, {cost}")));
        }
    }
    for (k, v) in lines {
        println!("{k:<14}{v}");
    }
    Ok(hermes_cron::exit::OK)
}

pub(super) fn pause(
    ctx: &mut Ctx,
    key: &str,
    reason: Option<String>,
    json: bool,
) -> anyhow::Result<i32> {
    let zone = ctx.fallback_zone()?;
    let db = ctx.open_db()?;
    let mut job = store::resolve_job(db.conn(), key)?;
    refuse_managed(&job, "pause")?;
    job.state = JobState::Paused { reason };
    job.updated_at = ctx.now();
    store::update_job(db.conn(), &job)?;
    print_job(ctx, &job, zone, json, || {
        format!("paused {} ({})", job.id, cell(&job.name, 64))
    })
}

pub(super) fn resume(ctx: &mut Ctx, key: &str, json: bool) -> anyhow::Result<i32> {
    let zone = ctx.fallback_zone()?;
    let db = ctx.open_db()?;
    let mut job = store::resolve_job(db.conn(), key)?;
    refuse_managed(&job, "resume")?;
    if job.state == JobState::Completed {
        return Err(usage(format!(
            "job {} is a completed one-shot; give it a new schedule with `edit --schedule`",
            job.id
        )));
    }
    let now = ctx.now();
    job.state = JobState::Active;
    job.anchor = now;
    job.next_run_at = job
        .schedule
        .next_after(now, zone_of(&job, zone, &ctx.zones), now)
        .map(|f| f.at);
    job.updated_at = now;
    store::update_job(db.conn(), &job)?;
    print_job(ctx, &job, zone, json, || {
        format!("resumed {} ({})", job.id, cell(&job.name, 64))
    })
}

pub(super) fn rm(ctx: &mut Ctx, key: &str, json: bool) -> anyhow::Result<i32> {
    let zone = ctx.fallback_zone()?;
    let db = ctx.open_db()?;
    let job = store::resolve_job(db.conn(), key)?;
    refuse_managed(&job, "remove")?;
    store::delete_job(db.conn(), &job.id)?;
    print_job(ctx, &job, zone, json, || {
        format!("removed {} ({})", job.id, cell(&job.name, 64))
    })
}
