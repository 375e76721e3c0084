//! A command alert, launched like a job: a `spawn` row of its own (job
//! `alert-<job>`, so its output is in `logs` and its end in the ledger),
//! dispatched by the same launcher (scoped when possible, degraded or
//! refused as the config says), with the defined job environment plus the
//! `HERMES_CRON_ALERT_*` variables, and the event as JSON on its stdin. Its
//! attempt is recorded with the row's claim, and settled by the row's own
//! terminal move (`ledger/outbox.rs`).

use crate::config::Config;
use crate::db::Db;
use crate::dispatch::{Attach, Dispatched, Launcher, Requirement};
use crate::home::Home;
use crate::ids::ExecutionId;
use crate::job::Env;
use crate::ledger::{self, Delivery, NewClaim, Occurrence, RunSpec};
use crate::process::Owner;
use crate::schedule::Timestamp;
use crate::tick::ClaimedRun;
use hermes_cron_core::alert::AlertEvent;

/// How long a command alert may run.
const COMMAND_TIMEOUT_S: u64 = 120;

/// A command alert's worker, started.
pub(crate) struct Launched {
    pub id: ExecutionId,
    pub job_name: String,
    pub child: std::process::Child,
    pub unit: Option<String>,
    pub mode: ledger::DispatchMode,
}

/// Why a command alert did not start.
pub(crate) enum NotLaunched {
    /// Its attempt could not be written (nothing started; written again later).
    Ledger(String),
    /// The launcher refused it or could not spawn it; its row says so, and
    /// its attempt is settled with it.
    Launcher(String),
}

/// The shell line that runs `command` with the event on its stdin.
fn with_event_on_stdin(command: &str) -> String {
    format!("printf '%s\\n' \"$HERMES_CRON_ALERT_JSON\" | {{\n{command}\n}}")
}

/// The run spec of one command alert.
fn spec_of(d: &Delivery, config: &Config) -> RunSpec {
    let mut env: Vec<(String, String)> = serde_json::from_str::<AlertEvent>(&d.event)
        .map(|e| e.variables())
        .unwrap_or_default();
    env.push(("HERMES_CRON_ALERT_JSON".into(), d.event.clone()));
    RunSpec {
        argv: vec![with_event_on_stdin(&d.target)],
        shell: true,
        env: Env(env),
        timeout_s: COMMAND_TIMEOUT_S,
        output_max_bytes: config.cron.output_max_bytes,
        heartbeat_interval_s: config.cron.heartbeat_interval_s,
        ..RunSpec::default()
    }
}

/// Begin an attempt of command delivery `d` and dispatch its run. Ok(None):
/// another process began the attempt first.
pub(crate) async fn launch(
    db: &Db,
    launcher: &Launcher,
    home: &Home,
    config: &Config,
    owner: Owner,
    d: &Delivery,
    now: Timestamp,
) -> Result<Option<Launched>, NotLaunched> {
    let spec = spec_of(d, config);
    let id = ExecutionId::generate();
    let job_name = format!("alert-{}", d.job_name);
    let output = home.output_file("alert", id.as_str());
    let claim = NewClaim {
        occurrence: Occurrence::spawned(
            &id,
            &job_name,
            &spec,
            now,
            &crate::cluster::Host::this().name,
        ),
        owner,
        output_path: Some(output.to_string_lossy().into_owned()),
    };
    match ledger::begin_command_attempt(db.conn(), d, &claim) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(e) => return Err(NotLaunched::Ledger(crate::text::Chain(&e).to_string())),
    }
    let run = ClaimedRun::spawned(id.clone(), job_name.clone(), spec, owner);
    match launcher
        .dispatch(db, &run, Requirement::None, Attach::Detached, now)
        .await
    {
        Ok(Dispatched::Started {
            mode, unit, child, ..
        }) => Ok(Some(Launched {
            id,
            job_name,
            child,
            unit,
            mode,
        })),
        Ok(Dispatched::Refused { message, .. }) | Ok(Dispatched::NotSpawned { message, .. }) => {
            Err(NotLaunched::Launcher(message))
        }
        Err(e) => Err(NotLaunched::Launcher(crate::text::Chain(&e).to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_reaches_the_commands_stdin() {
        let line = with_event_on_stdin("cat > /tmp/x # a comment");
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(line.replace("/tmp/x", "/dev/stdout"))
            .env("HERMES_CRON_ALERT_JSON", "{\"kind\":\"failed\"}")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "{\"kind\":\"failed\"}\n"
        );
        assert!(out.status.success());
    }
}
