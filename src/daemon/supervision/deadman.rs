//! The gateway's dead-man ping: a thread that, every
//! `gateway.ping_interval_s`, GETs `gateway.ping_url` and/or runs
//! `gateway.ping_command` while the gateway is healthy, so that a monitor
//! outside (Healthchecks, Uptime Kuma, a cron on another host) alerts when
//! the pings stop. Healthy means what `status` means by it: the event loop
//! made progress within three monitor periods and the last claim pass did
//! not fail. A wedged loop, a failing ledger or a stopped process (SIGSTOP
//! stops every thread) sends no ping.
//!
//! The command runs through `/bin/sh -c` with the gateway's environment, as
//! the gateway's direct child (not in a scope), for at most 30 s. The event
//! loop reaps every child with `waitpid(-1)`, so a command that loses its
//! exit status to it counts as ended.

use super::super::state::Shared;
use crate::alerts::http;
use crate::clock::monotonic;
use hermes_cron_core::config::GatewayConfig;
use hermes_cron_core::health::TickResult;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
const STEP: Duration = Duration::from_millis(100);

/// Start the ping thread when a ping URL or command is configured.
/// `monitor_period` is how often a healthy loop moves its counter.
pub(crate) fn spawn(
    config: &GatewayConfig,
    shared: Arc<Shared>,
    monitor_period: Duration,
    stop: Arc<AtomicBool>,
) -> std::io::Result<bool> {
    let url = config.ping_url.clone().unwrap_or_default();
    let command = config.ping_command.clone().unwrap_or_default();
    if url.is_empty() && command.is_empty() {
        return Ok(false);
    }
    let interval = Duration::from_secs(config.ping_interval_s.max(1));
    let stale_after = monitor_period * 3 + Duration::from_secs(1);
    std::thread::Builder::new()
        .name("deadman".into())
        .spawn(move || {
            let agent = (!url.is_empty()).then(http::agent);
            let mut last_counter = shared.counter();
            let mut moved_at = monotonic();
            let mut next = monotonic();
            let mut quiet = false;
            while !stop.load(Ordering::Relaxed) {
                let counter = shared.counter();
                if counter != last_counter {
                    last_counter = counter;
                    moved_at = monotonic();
                }
                if monotonic() < next {
                    std::thread::sleep(STEP);
                    continue;
                }
                next = monotonic() + interval;
                let failing = matches!(shared.tick().result, TickResult::Error(_));
                if (monotonic() - moved_at) > stale_after || failing {
                    if !quiet {
                        tracing::warn!("the gateway is not healthy: dead-man pings paused");
                        quiet = true;
                    }
                    continue;
                }
                if quiet {
                    tracing::info!("the gateway is healthy again: dead-man pings resumed");
                    quiet = false;
                }
                if let Some(agent) = &agent {
                    let (ok, result) = http::perform(agent, &url, None);
                    if !ok {
                        // The URL is a secret (its path token, a password).
                        let shown = hermes_cron_core::alert::redacted_url(&url);
                        let result = result.replace(&url, &shown);
                        tracing::warn!("dead-man ping to {shown} failed: {result}");
                    }
                }
                if !command.is_empty() {
                    run_command(&command);
                }
            }
        })?;
    Ok(true)
}

fn run_command(command: &str) {
    let child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("dead-man ping command could not start: {e}");
            return;
        }
    };
    let deadline = monotonic() + COMMAND_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if !status.success() => {
                tracing::warn!("dead-man ping command {status}");
                return;
            }
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if monotonic() >= deadline => {
                tracing::warn!("dead-man ping command still running after 30 s: killed");
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
