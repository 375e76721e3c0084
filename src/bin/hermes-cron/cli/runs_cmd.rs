//! `runs` and `logs`.

use super::args::RunsArgs;
use super::context::{Ctx, JobZones};
use super::execution_ref;
use super::fail::{failure, usage};
use super::render::{Table, cell, execution_json, exit_cell, local, short_duration};
use hermes_cron::ids::ExecutionId;
use hermes_cron::ledger::{self, ExecState, Execution, RunFilter};
use hermes_cron::schedule::{self, Timestamp, Tz};
use hermes_cron::store::{self, JobLookupError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::time::Duration;

const MAX_LIMIT: usize = 100_000;

fn parse_since(text: &str, now: Timestamp) -> anyhow::Result<Timestamp> {
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(at.with_timezone(&chrono::Utc));
    }
    let ago = schedule::parse_duration(text).map_err(|_| {
        usage(format!(
            "--since: {text:?} is neither an RFC 3339 instant nor a duration such as 2h"
        ))
    })?;
    Ok(now - chrono::Duration::from_std(ago).unwrap_or_default())
}

fn when(at: Option<Timestamp>, zone: Tz) -> String {
    at.map_or("-".into(), |a| local(a, zone))
}

pub(super) fn runs(ctx: &mut Ctx, a: RunsArgs, json: bool) -> anyhow::Result<i32> {
    let Some(db) = ctx.open_existing_db()? else {
        println!("{}", if json { "[]" } else { "no runs yet" });
        return Ok(hermes_cron::exit::OK);
    };
    let job = match &a.job {
        None => None,
        Some(key) => match store::resolve_job(db.conn(), key) {
            Ok(job) => Some((Some(job.id), job.name)),
            Err(JobLookupError::NotFound(_)) => {
                // An execution id, whole or in part: that run alone.
                let id = match execution_ref::exact(db.conn(), key)? {
                    Some(id) => Some(id),
                    None => execution_ref::partial(db.conn(), key)?,
                };
                if let Some((row, _)) = match id {
                    Some(id) => ledger::get_execution(db.conn(), &id)?,
                    None => None,
                } {
                    let zones = ctx.job_zones(db.conn())?;
                    return print_runs(db.conn(), &[row], &zones, json);
                }
                // Spawned runs and removed jobs are found by name.
                Some((None, key.clone()))
            }
            Err(e) => return Err(e.into()),
        },
    };
    let state = a
        .state
        .as_deref()
        .map(|s| {
            s.parse::<ExecState>().map_err(|_| {
                let all: Vec<_> = ExecState::ALL.iter().map(|s| s.as_str()).collect();
                usage(format!("--state: {s:?} is not one of {}", all.join(", ")))
            })
        })
        .transpose()?;
    let since = a
        .since
        .as_deref()
        .map(|s| parse_since(s, ctx.now()))
        .transpose()?;
    let rows = ledger::list_executions(
        db.conn(),
        &RunFilter {
            job: job.clone(),
            state,
            since,
            limit: a.limit.clamp(1, MAX_LIMIT),
        },
    )?;
    // A key that names no job, no execution and no run is a typo; a job
    // with no runs yet is simply empty.
    if rows.is_empty()
        && let Some(key) = &a.job
        && job.as_ref().is_some_and(|(id, _)| id.is_none())
        && ledger::list_executions(
            db.conn(),
            &RunFilter {
                job: job.clone(),
                limit: 1,
                ..RunFilter::default()
            },
        )?
        .is_empty()
    {
        return Err(usage(format!(
            "no job, execution or runs named {key:?}; `hermes-cron list --all` shows the jobs, `hermes-cron runs` the runs"
        )));
    }
    let zones = ctx.job_zones(db.conn())?;
    print_runs(db.conn(), &rows, &zones, json)
}

/// The late outcome of a row a survivor recorded `host_lost`.
fn late(
    conn: &hermes_cron::db::Conn,
    r: &hermes_cron::ledger::Execution,
) -> anyhow::Result<Option<hermes_cron_core::cluster::LateOutcome>> {
    if r.reason_code != Some(hermes_cron::ledger::ReasonCode::HostLost) {
        return Ok(None);
    }
    Ok(hermes_cron::ledger::late_outcome_of(conn, &r.id)?)
}

/// The rows as a table, or as `--json`.
fn print_runs(
    conn: &hermes_cron::db::Conn,
    rows: &[hermes_cron::ledger::Execution],
    zones: &JobZones,
    json: bool,
) -> anyhow::Result<i32> {
    if json {
        let mut items = Vec::with_capacity(rows.len());
        for r in rows {
            let mut item = execution_json(r);
            item["late_outcome"] = serde_json::to_value(late(conn, r)?)?;
            items.push(item);
        }
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(hermes_cron::exit::OK);
    }
    if rows.is_empty() {
        println!("no runs");
        return Ok(hermes_cron::exit::OK);
    }
    // Model usage columns only when a listed run reported usage.
    let with_usage = rows.iter().any(|r| r.usage.is_some());
    let mut columns = vec![
        "ID",
        "JOB",
        "SCHEDULED",
        "STARTED",
        "DURATION",
        "STATE",
        "MODE",
        "EXIT",
        "HOST",
    ];
    if with_usage {
        columns.extend(["TOKENS", "COST"]);
    }
    let mut t = Table::new(&columns);
    for r in rows {
        let state = match late(conn, r)? {
            Some(l) => format!("{} (late: {})", r.state, l.state),
            None => r.state.to_string(),
        };
        let zone = zones.of(r.job_id.as_ref().map(|j| j.as_str()));
        let mut cells = vec![
            r.id.to_string(),
            cell(&r.job_name, 24),
            when(r.scheduled_for, zone),
            when(r.started_at, zone),
            r.duration_ms.map_or("-".into(), short_duration),
            state,
            r.dispatch_mode.map_or("-".into(), |m| m.to_string()),
            exit_cell(r),
            r.host.clone().unwrap_or_else(|| "-".into()),
        ];
        if with_usage {
            let (tokens, cost) = usage_cells(r.usage.as_ref());
            cells.extend([tokens, cost]);
        }
        t.row(cells);
    }
    print!("{}", t.render());
    Ok(hermes_cron::exit::OK)
}

/// A run's usage for the table: its tokens (input and output, cache reads
/// and writes included) and its cost (`?`: no price known; `-`: none).
fn usage_cells(usage: Option<&serde_json::Value>) -> (String, String) {
    let Some(u) = usage else {
        return ("-".into(), "-".into());
    };
    let (tokens, cost) = hermes_cron_core::run::usage::tokens_and_cost(u);
    let cost = match cost {
        Some(c) => format!("${c:.4}"),
        None if u.get("cost_source").and_then(serde_json::Value::as_str) == Some("none") => {
            "-".into()
        }
        None => "?".into(),
    };
    (tokens.to_string(), cost)
}

/// The run `logs KEY` prints: the execution KEY names (its whole id), else
/// the `nth` newest run of output of the job KEY names, else the execution a
/// part of whose id KEY is.
fn run_to_show(
    conn: &hermes_cron::db::Conn,
    key: &str,
    nth: Option<usize>,
) -> anyhow::Result<Execution> {
    let get = |id: &ExecutionId| -> anyhow::Result<Execution> {
        Ok(ledger::get_execution(conn, id)?
            .ok_or_else(|| execution_ref::not_found(id.as_str()))?
            .0)
    };
    let by_execution = |id: Option<ExecutionId>| -> anyhow::Result<Option<Execution>> {
        match id {
            Some(_) if nth.is_some() => Err(usage(format!(
                "--run: {key:?} is an execution; --run picks among a job's runs (`logs JOB --run 2`)"
            ))),
            Some(id) => Ok(Some(get(&id)?)),
            None => Ok(None),
        }
    };
    if let Some(row) = by_execution(execution_ref::exact(conn, key)?)? {
        return Ok(row);
    }
    match store::resolve_job(conn, key) {
        Ok(job) => {
            let nth = nth.unwrap_or(1);
            let ran: Vec<Execution> = ledger::list_executions(
                conn,
                &RunFilter {
                    job: Some((Some(job.id.clone()), job.name.clone())),
                    limit: MAX_LIMIT,
                    ..RunFilter::default()
                },
            )?
            .into_iter()
            .filter(|r| r.output_path.is_some())
            .collect();
            let count = ran.len();
            ran.into_iter().nth(nth.saturating_sub(1)).ok_or_else(|| {
                usage(format!(
                    "job {} has {count} run(s) with output{}; `hermes-cron runs {}` lists them all",
                    cell(&job.name, 64),
                    if count > 0 { format!(", not {nth}") } else { String::new() },
                    job.id
                ))
            })
        }
        Err(JobLookupError::NotFound(_)) => by_execution(execution_ref::partial(conn, key)?)?
            .ok_or_else(|| {
                usage(format!(
                    "no job or execution {key:?} (a job's id or name, an execution's id, or at least {} characters of its beginning or end); `hermes-cron runs` lists them",
                    ledger::MIN_ID_PART
                ))
            }),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn logs(
    ctx: &mut Ctx,
    key: &str,
    nth: Option<usize>,
    follow: bool,
) -> anyhow::Result<i32> {
    let db = ctx
        .open_existing_db()?
        .ok_or_else(|| failure(format!("no ledger in {}", ctx.home.root().display())))?;
    let row = run_to_show(db.conn(), key, nth)?;
    let id = row.id.clone();
    if row.id.as_str() != key.trim() {
        // Which run this is, off stdout (which is the run's output alone).
        eprintln!(
            "{} {} ({}, claimed {})",
            cell(&row.job_name, 64),
            row.id,
            row.state,
            local(
                row.claimed_at,
                ctx.job_zones(db.conn())?
                    .of(row.job_id.as_ref().map(|j| j.as_str()))
            )
        );
    }
    let Some(path) = row.output_path.clone() else {
        println!("{} {} has no output (it never ran)", row.id, row.state);
        return Ok(hermes_cron::exit::OK);
    };
    let mut out = std::io::stdout().lock();
    let mut offset = 0u64;
    loop {
        if let Ok(mut f) = std::fs::File::open(&path) {
            f.seek(SeekFrom::Start(offset))?;
            let mut buf = Vec::new();
            f.read_to_end(&mut buf)?;
            offset += buf.len() as u64;
            out.write_all(&buf)?;
            out.flush()?;
        } else if !follow {
            return Err(failure(format!("output file {path} is gone (pruned?)")));
        }
        if !follow {
            return Ok(hermes_cron::exit::OK);
        }
        let state = ledger::get_execution(db.conn(), &id)?.map(|(r, _)| r.state);
        if state.is_none_or(|s| s.is_terminal()) {
            follow_tail(&path, offset, &mut out)?;
            return Ok(hermes_cron::exit::OK);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Print whatever the worker wrote between our last read and its end.
fn follow_tail(path: &str, offset: u64, out: &mut impl Write) -> anyhow::Result<()> {
    if let Ok(mut f) = std::fs::File::open(path) {
        f.seek(SeekFrom::Start(offset))?;
        std::io::copy(&mut f, out)?;
    }
    Ok(())
}
