//! `hermes-cron gateway-failed`: what the user unit's `OnFailure=` hook runs
//! (`units/hermes-cron-gateway-failed@.service`) when the gateway has failed
//! for good. The gateway cannot tell anyone then, so this command writes a
//! `gateway_failed` alert to the outbox for the config's command and
//! webhook and delivers what is owed itself, once, like the gateway would
//! (waiting up to [`WAIT`] for HTTP answers). Whatever is not delivered
//! stays owed, and the next gateway retries it.

use super::command::Launch;
use super::driver::AlertDriver;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::Db;
use crate::dispatch::{Attach, Launcher, Requirement};
use crate::home::Home;
use crate::ledger;
use crate::process::OwnerRole;
use hermes_cron_core::alert::{AlertEvent, AlertKind};
use std::time::Duration;

/// How long to wait for HTTP answers.
const WAIT: Duration = Duration::from_secs(15);

/// What happened: deliveries written, and how many of those owed (this
/// alert's and any earlier ones) were begun here.
#[derive(Clone, Debug, Default)]
pub struct GatewayFailedReport {
    pub queued: usize,
    pub begun: usize,
    pub http_ok: usize,
    pub http_failed: usize,
}

/// Write the alert (`detail` says why, e.g. systemd's `MONITOR_*`) and
/// deliver what is owed.
pub async fn gateway_failed(
    home: &Home,
    config: &Config,
    launcher: &Launcher,
    db: &Db,
    host: &str,
    detail: &str,
    clock: &dyn Clock,
) -> Result<GatewayFailedReport, ledger::LedgerError> {
    let now = clock.now();
    let mut event = AlertEvent::new(
        AlertKind::GatewayFailed,
        now,
        (None, "gateway"),
        0,
        None,
        None,
    );
    if !detail.is_empty() {
        event.summary = format!("{}: {detail}", event.summary);
    }
    let one =
        |v: &Option<String>| -> Vec<String> { v.iter().map(|v| v.trim().to_string()).collect() };
    let queued = ledger::record_gateway_failed(
        db.conn(),
        &event,
        &one(&config.cron.alert_command),
        &one(&config.cron.alert_webhook),
    )?;
    let mut driver = AlertDriver::new(now);
    let launch = Launch {
        db,
        home,
        config,
        owner: crate::process::owner(OwnerRole::Cli),
        host,
    };
    let commands = driver.pump(&launch, now);
    let mut report = GatewayFailedReport {
        queued,
        begun: commands.len() + driver.http_in_flight(),
        ..GatewayFailedReport::default()
    };
    // The command alerts' workers record themselves; not waited for.
    for run in commands {
        launcher
            .dispatch(db, &run, Requirement::None, Attach::Detached, clock.now())
            .await
            .map_err(|crate::dispatch::DispatchError::Ledger(e)| e)?;
    }
    let deadline = crate::clock::loop_now() + WAIT;
    while driver.http_in_flight() > 0 {
        match tokio::time::timeout_at(deadline, driver.outcome()).await {
            Ok(Some(o)) => {
                if o.ok {
                    report.http_ok += 1;
                } else {
                    report.http_failed += 1;
                }
                driver.record(db, o, clock.now());
            }
            Ok(None) | Err(_) => break,
        }
    }
    Ok(report)
}
