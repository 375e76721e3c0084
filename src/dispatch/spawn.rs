//! Spawning a long-running worker outside any schedule (kanban workers):
//! one `spawn` row, dispatched like any claimed run.

use super::{Attach, Cause, Dispatched, Launcher, Requirement};
use crate::clock::Clock;
use crate::config::{self, Config};
use crate::db::Db;
use crate::home::Home;
use crate::ids::ExecutionId;
use crate::job::Env;
use crate::ledger::ClaimedRun;
use crate::ledger::{self, DispatchMode, NewClaim, Occurrence, RunSpec};
use crate::process::OwnerRole;
use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;

/// What to spawn.
#[derive(Clone, Debug, Default)]
pub struct SpawnRequest {
    pub name: String,
    pub argv: Vec<String>,
    /// `--env K=V`.
    pub env: Env,
    /// `--env-file PATH`s, read by the worker.
    pub env_files: Vec<PathBuf>,
    /// `--pass-env NAME`s: variables of this process the worker passes on.
    pub pass_env: Vec<String>,
    pub workdir: Option<PathBuf>,
    /// None: no timeout (long-running workers).
    pub timeout: Option<Duration>,
    /// Fail closed when no restart-safe scope can be made, whatever the config.
    pub require_scope: bool,
    /// Append the command's output here instead of the home's `cron/output/`.
    pub log_file: Option<PathBuf>,
}

#[derive(Debug)]
pub struct Spawned {
    pub execution: ExecutionId,
    pub mode: DispatchMode,
    pub unit: Option<String>,
    pub cause: Option<Cause>,
    /// The command's pid, as its worker told it: the process a caller
    /// watches and signals (SIGTERM or SIGKILL of it ends the whole run).
    pub pid: u32,
    /// The worker process; waiting on it is the caller's choice.
    pub child: Child,
}

/// Spawning failed.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{message}")]
    Refused {
        execution: ExecutionId,
        cause: Cause,
        message: String,
    },
    #[error("{0}")]
    NotSpawned(String),
    /// The worker ran, but its command did not start; the row says why.
    #[error("{message}")]
    NotStarted {
        execution: ExecutionId,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
    #[error(transparent)]
    Dispatch(#[from] crate::dispatch::DispatchError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    #[error(transparent)]
    Home(#[from] crate::home::HomeError),
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error(transparent)]
    Worker(#[from] crate::dispatch::WorkerNotFound),
    #[error(transparent)]
    Clock(#[from] crate::clock::ClockError),
    #[error("failed to start a runtime for the dispatch")]
    Runtime(#[source] std::io::Error),
}

/// Record a `spawn` row on `host` and dispatch it through `launcher`.
pub async fn spawn_worker(
    home: &Home,
    config: &Config,
    launcher: &Launcher,
    db: &Db,
    host: &str,
    req: &SpawnRequest,
    clock: &dyn Clock,
) -> Result<Spawned, SpawnError> {
    if req.argv.is_empty() {
        return Err(SpawnError::Invalid(
            "COMMAND: give the command after `--`".into(),
        ));
    }
    crate::job::validate_name(&req.name).map_err(|e| SpawnError::Invalid(e.to_string()))?;
    let spec = RunSpec {
        argv: req.argv.clone(),
        env: req.env.clone(),
        env_files: req.env_files.clone(),
        pass_env: req.pass_env.clone(),
        config_env: config.cron.env.clone(),
        path: Some(config.cron.path.clone()),
        workdir: req.workdir.clone(),
        timeout_s: req.timeout.map_or(0, |d| d.as_secs().max(1)),
        output_max_bytes: config.cron.output_max_bytes,
        heartbeat_interval_s: config.cron.heartbeat_interval_s,
        require_scope: req.require_scope,
        output_append: req.log_file.is_some(),
        ..RunSpec::default()
    };
    let id = ExecutionId::generate();
    let owner = crate::process::owner(OwnerRole::Cli);
    let now = clock.now();
    ledger::claim(
        db.conn(),
        &NewClaim {
            occurrence: Occurrence::spawned(&id, &req.name, &spec, now, host),
            owner,
            output_path: Some(
                req.log_file
                    .clone()
                    .unwrap_or_else(|| home.output_file("spawn", id.as_str()))
                    .to_string_lossy()
                    .into_owned(),
            ),
        },
    )?;
    let run = ClaimedRun::spawned(id.clone(), req.name.clone(), spec, owner);
    let asked = if req.require_scope {
        Requirement::Spawn
    } else {
        Requirement::None
    };
    match launcher
        .dispatch(db, &run, asked, Attach::DetachedTellingPid, clock.now())
        .await?
    {
        Dispatched::Started {
            mode,
            cause,
            unit,
            mut child,
        } => match told_pid(&mut child).await {
            Some(pid) => Ok(Spawned {
                execution: id,
                mode,
                unit,
                cause,
                pid,
                child,
            }),
            None => Err(not_started(db, id, &mut child)),
        },
        Dispatched::Refused { cause, message } => Err(SpawnError::Refused {
            execution: id,
            cause,
            message,
        }),
        Dispatched::NotSpawned { message, .. } => Err(SpawnError::NotSpawned(message)),
    }
}

/// The pid of the command the worker started, told on its stdout; None
/// when the worker ended without starting it.
async fn told_pid(child: &mut Child) -> Option<u32> {
    use std::io::BufRead;
    let out = child.stdout.take()?;
    tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(out).read_line(&mut line).ok()?;
        line.trim().parse().ok()
    })
    .await
    .ok()
    .flatten()
}

/// Why the worker of `id` ended without starting its command: what its row
/// says, else where its own log is.
fn not_started(db: &Db, id: ExecutionId, child: &mut Child) -> SpawnError {
    let _ = child.wait();
    match ledger::get_execution(db.conn(), &id) {
        Ok(Some((row, _))) if row.state.is_terminal() => SpawnError::NotStarted {
            message: format!(
                "{id}: the command did not start: {}",
                row.reason.as_deref().unwrap_or("no reason recorded")
            ),
            execution: id,
        },
        _ => SpawnError::NotSpawned(format!(
            "{id}: the worker ended before it started the command; its log is logs/hermes-cron-worker.log in the home"
        )),
    }
}
