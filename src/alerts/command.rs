//! A command alert, launched like a job: a `spawn` row of its own (job
//! `alert-<job>`, so its output is in `logs` and its end in the ledger),
//! launched by the gateway like any run (scoped when possible, degraded or
//! refused as the config says), with the defined job environment plus the
//! `HERMES_CRON_ALERT_*` variables, and the event as JSON on its stdin. Its
//! attempt is recorded with the row's claim, and settled by the row's own
//! terminal move (`ledger/outbox.rs`).

use crate::config::Config;
use crate::db::Db;
use crate::home::Home;
use crate::ids::ExecutionId;
use crate::job::Env;
use crate::ledger::ClaimedRun;
use crate::ledger::{self, Delivery, LedgerError, NewClaim, Occurrence, RunSpec};
use crate::process::Owner;
use crate::schedule::Timestamp;
use hermes_cron_core::alert::AlertEvent;

/// How long a command alert may run.
const COMMAND_TIMEOUT_S: u64 = 120;

/// What beginning deliveries needs.
pub(crate) struct Launch<'a> {
    pub db: &'a Db,
    pub home: &'a Home,
    pub config: &'a Config,
    /// The claimer of command alerts' runs.
    pub owner: Owner,
    /// This host: attempts and command alerts' runs name it.
    pub host: &'a str,
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

/// Begin an attempt of command delivery `d`: its run's row is claimed with
/// the attempt, in one transaction; the run, for the caller to launch.
/// Ok(None): another process began the attempt first.
pub(crate) fn claim(
    l: &Launch<'_>,
    d: &Delivery,
    now: Timestamp,
) -> Result<Option<ClaimedRun>, LedgerError> {
    let spec = spec_of(d, l.config);
    let id = ExecutionId::generate();
    let job_name = format!("alert-{}", d.job_name);
    let output = l.home.output_file("alert", id.as_str());
    let claim = NewClaim {
        occurrence: Occurrence::spawned(&id, &job_name, &spec, now, l.host),
        owner: l.owner,
        output_path: Some(output.to_string_lossy().into_owned()),
    };
    if !ledger::begin_command_attempt(l.db.conn(), d, &claim)? {
        return Ok(None);
    }
    Ok(Some(ClaimedRun::spawned(id, job_name, spec, l.owner)))
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
