//! Alerts through the real gateway and binaries: a command alert (run like
//! a job, in a scope) receives the event once per incident; `--alert-after
//! 3` alerts on the third failure only and `recovered` once after; a
//! webhook on 127.0.0.1 gets the POST, also when it was down at first and
//! the gateway restarted meanwhile; the dead-man ping stops while the
//! gateway is stopped (SIGSTOP) or its loop is wedged.

use crate::support::TestHome;
use crate::support::hook_server::{HookServer, free_port};
use crate::support::waiting::PATIENCE;
use nix::sys::signal::Signal;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The JSON lines a command alert appended to `file`.
fn events(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `alerts --json`, newest first.
fn deliveries(h: &TestHome) -> Vec<Value> {
    match h.run(&["alerts", "--json", "--limit", "1000"]).ok().json() {
        Value::Array(rows) => rows,
        other => panic!("alerts --json is not an array: {other}"),
    }
}

fn states<'a>(rows: &'a [Value], state: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["state"] == state).collect()
}

/// The rows of job `name` in `state`, oldest first.
fn rows_in(h: &TestHome, name: &str, state: &str) -> Vec<Value> {
    h.runs_of(name)
        .into_iter()
        .filter(|r| r["state"] == state)
        .collect()
}

/// Pause job `name` and wait until every row (alert runs too) is terminal.
fn pause_and_settle(h: &TestHome, name: &str) {
    h.run(&["pause", name]).ok();
    h.wait_until("every row to be terminal", Duration::from_secs(60), || {
        h.runs(None)
            .iter()
            .all(|r| r["terminal"] == true)
            .then_some(())
    });
}

/// A failing job's command alert gets the event as JSON on stdin, once for
/// the incident however many runs fail, with the `HERMES_CRON_ALERT_*`
/// variables; it runs like a job: a ledger row of its own, in a scope.
#[test]
fn a_failing_jobs_command_alert_receives_the_json_event_once() {
    let h = TestHome::scoped();
    h.require_scopes();
    let got = h.scratch().join("events.jsonl");
    let kinds = h.scratch().join("kinds");
    let on_alert = format!(
        "cat >> {}; echo \"$HERMES_CRON_ALERT_KIND $HERMES_CRON_ALERT_JOB\" >> {}",
        got.display(),
        kinds.display()
    );
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add(
        "boom",
        "every 1s",
        &["--shell", "--on-alert", &on_alert],
        &["exit 3"],
    );
    h.wait_until(
        "3 failed runs and the alert",
        Duration::from_secs(90),
        || {
            let failed = rows_in(&h, "boom", "failed").len();
            (failed >= 3 && !events(&got).is_empty()).then_some(())
        },
    );
    pause_and_settle(&h, "boom");
    gw.stop();

    let seen = events(&got);
    assert_eq!(seen.len(), 1, "one incident, one alert: {seen:#?}");
    let e = &seen[0];
    assert_eq!(e["kind"], "failed");
    assert_eq!(e["job_name"], "boom");
    assert_eq!(e["consecutive_failures"], 1);
    assert_eq!(e["run"]["state"], "failed");
    assert_eq!(e["run"]["exit_code"], 3);
    assert_eq!(
        e["run"]["execution_id"],
        rows_in(&h, "boom", "failed")[0]["id"]
    );
    assert_eq!(std::fs::read_to_string(&kinds).unwrap(), "failed boom\n");

    let all = deliveries(&h);
    assert_eq!(all.len(), 1, "{all:#?}");
    let d = &all[0];
    assert_eq!(d["state"], "delivered", "{d:#}");
    assert_eq!(d["destination"], "command");
    assert_eq!(d["attempts"].as_array().unwrap().len(), 1);
    let run_id = d["attempts"][0]["execution_id"]
        .as_str()
        .unwrap()
        .to_string();
    let run = h.row(&run_id).expect("the alert's run is a ledger row");
    assert_eq!(run["job_name"], "alert-boom");
    assert_eq!(run["state"], "succeeded");
    assert_eq!(run["dispatch_mode"], "scoped", "{run:#}");
}

/// `--alert-after 3`: two failures and a success alert nothing; the third
/// failure in a row alerts (once, however many follow); the first success
/// after it alerts `recovered`, once.
#[test]
fn alert_after_three_alerts_on_the_third_failure_only_and_recovered_once_after() {
    let h = TestHome::new();
    let got = h.scratch().join("events.jsonl");
    let ok = h.scratch().join("ok");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    let on_alert = format!("cat >> {}", got.display());
    h.add(
        "flaky",
        "every 1s",
        &["--shell", "--alert-after", "3", "--on-alert", &on_alert],
        &[&format!("test -e {}", ok.display())],
    );
    h.wait_until("5 failed runs", Duration::from_secs(90), || {
        let failed = rows_in(&h, "flaky", "failed").len();
        (failed >= 5).then_some(())
    });
    h.wait_until("the alert", PATIENCE, || {
        (!events(&got).is_empty()).then_some(())
    });
    std::fs::write(&ok, "").unwrap();
    h.wait_until(
        "3 successes and the recovery",
        Duration::from_secs(90),
        || {
            let ok_runs = rows_in(&h, "flaky", "succeeded").len();
            (ok_runs >= 3 && events(&got).len() >= 2).then_some(())
        },
    );
    pause_and_settle(&h, "flaky");
    gw.stop();

    let seen = events(&got);
    let kinds: Vec<&str> = seen.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["failed", "recovered"], "{seen:#?}");
    let failed = rows_in(&h, "flaky", "failed");
    assert!(failed.len() >= 5, "{}", failed.len());
    assert_eq!(seen[0]["consecutive_failures"], 3);
    assert_eq!(
        seen[0]["run"]["execution_id"], failed[2]["id"],
        "the alert is about the third failure"
    );
    assert_eq!(seen[1]["run"]["state"], "succeeded");
    assert_eq!(seen[1]["consecutive_failures"], failed.len());
    assert_eq!(
        seen[1]["run"]["execution_id"],
        rows_in(&h, "flaky", "succeeded")[0]["id"]
    );
}

/// A webhook gets the event as a JSON POST, once per incident.
#[test]
fn a_webhook_on_127_0_0_1_gets_the_post() {
    let h = TestHome::new();
    let hook = HookServer::start();
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add(
        "boom",
        "every 1s",
        &["--shell", "--alert-webhook", &hook.url("/hook")],
        &["exit 1"],
    );
    h.wait_until(
        "the POST and 3 failed runs",
        Duration::from_secs(90),
        || {
            let failed = rows_in(&h, "boom", "failed").len();
            (failed >= 3 && !hook.hits_on("/hook").is_empty()).then_some(())
        },
    );
    pause_and_settle(&h, "boom");
    gw.stop();
    let hits = hook.hits_on("/hook");
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0].method, "POST");
    assert_eq!(hits[0].content_type, "application/json");
    let e = hits[0].json();
    assert_eq!(
        (e["kind"].as_str(), e["job_name"].as_str()),
        (Some("failed"), Some("boom"))
    );
    let d = &deliveries(&h)[0];
    assert_eq!(d["state"], "delivered");
    assert_eq!(d["attempts"][0]["result"], "HTTP 200");
    // The URL is shown by its host only.
    assert_eq!(
        d["target"],
        format!("http://127.0.0.1:{}/<redacted>", hook.port)
    );
}

/// The config's webhook is down when the job fails: the attempt fails and
/// is recorded; the gateway stops; the webhook comes up; the next gateway
/// delivers the same alert, once.
#[test]
fn a_webhook_down_at_first_gets_the_alert_after_it_comes_up_across_a_gateway_restart() {
    let h = TestHome::new();
    let port = free_port();
    h.config_set(
        "cron.alert_webhook",
        &format!("http://127.0.0.1:{port}/late-hook"),
    );
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.add("once", "in 1s", &["--shell"], &["exit 1"]);
    let failed_attempt = h.wait_until("a failed delivery attempt", Duration::from_secs(60), || {
        deliveries(&h).into_iter().find(|d| {
            d["attempts"]
                .as_array()
                .is_some_and(|a| a.iter().any(|t| t["ok"] == false))
        })
    });
    assert_eq!(failed_attempt["kind"], "failed");
    assert_eq!(failed_attempt["state"], "pending", "{failed_attempt:#}");
    gw.stop();

    let hook = HookServer::on(port);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.wait_until("the POST", Duration::from_secs(90), || {
        (!hook.hits_on("/late-hook").is_empty()).then_some(())
    });
    h.wait_until("the delivery recorded", PATIENCE, || {
        states(&deliveries(&h), "delivered")
            .first()
            .map(|d| (*d).clone())
    });
    gw.stop();
    let hits = hook.hits_on("/late-hook");
    assert_eq!(hits.len(), 1, "{hits:#?}");
    let e = hits[0].json();
    assert_eq!(e["job_name"], "once");
    assert_eq!(e["run"]["state"], "failed");
    let all = deliveries(&h);
    assert_eq!(all.len(), 1, "{all:#?}");
    let attempts = all[0]["attempts"].as_array().unwrap();
    assert!(attempts.len() >= 2, "{attempts:#?}");
    assert_eq!(attempts[0]["ok"], false);
    assert!(
        attempts[0]["result"]
            .as_str()
            .is_some_and(|r| !r.is_empty())
    );
    assert_eq!(attempts.last().unwrap()["ok"], true);
}

fn pings(hook: &HookServer) -> usize {
    hook.hits_on("/ping").len()
}

/// Pings every second while the gateway runs; none while it is stopped
/// (SIGSTOP); they resume when it continues.
#[test]
fn the_dead_man_ping_stops_when_the_gateway_is_sigstopped() {
    let h = TestHome::new();
    let hook = HookServer::start();
    h.config_set("gateway.ping_url", &hook.url("/ping"));
    h.config_set("gateway.ping_interval_s", "1");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.wait_until("3 pings", PATIENCE, || (pings(&hook) >= 3).then_some(()));
    gw.signal(Signal::SIGSTOP);
    // A request already on its way may still land.
    std::thread::sleep(Duration::from_millis(1500));
    let stopped_at = pings(&hook);
    std::thread::sleep(Duration::from_secs(5));
    let after = pings(&hook);
    gw.signal(Signal::SIGCONT);
    assert_eq!(
        after, stopped_at,
        "pings went on while the gateway was stopped"
    );
    h.wait_until("pings to resume", PATIENCE, || {
        (pings(&hook) > after).then_some(())
    });
    gw.stop();
    assert!(hook.hits_on("/ping").iter().all(|p| p.method == "GET"));
}

/// A wedged event loop stops the pings even though the process and its
/// heartbeat thread live on.
#[test]
fn the_dead_man_ping_stops_when_the_event_loop_is_wedged() {
    let h = TestHome::new();
    let hook = HookServer::start();
    h.config_set("gateway.ping_url", &hook.url("/ping"));
    h.config_set("gateway.ping_interval_s", "1");
    h.config_set("gateway.loop_watchdog", "false");
    let mut gw = h.gateway(&[
        ("HERMES_CRON_HEARTBEAT_PERIOD_MS", "200"),
        ("HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS", "4000"),
    ]);
    gw.wait_ready();
    h.wait_until("2 pings", PATIENCE, || (pings(&hook) >= 2).then_some(()));
    gw.wait_log("blocking the event loop thread now", PATIENCE);
    gw.wait_log("dead-man pings paused", PATIENCE);
    let paused_at = pings(&hook);
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        pings(&hook),
        paused_at,
        "pings went on while the loop was wedged"
    );
    assert!(
        gw.exited().is_none(),
        "the gateway should still be running\n{}",
        gw.log()
    );
}

/// The user unit's `OnFailure=` hook (`hermes-cron gateway-failed`, with
/// the `MONITOR_*` variables systemd gives it) sends a `gateway_failed`
/// alert to the config's webhook itself: no gateway is running to do it.
#[test]
fn the_onfailure_hook_sends_gateway_failed_to_the_configs_webhook() {
    let h = TestHome::new();
    let hook = HookServer::start();
    h.config_set("cron.alert_webhook", &hook.url("/gw"));
    let out = h
        .cmd(&[
            "gateway-failed",
            "--unit",
            "hermes-cron-gateway.service",
            "--json",
        ])
        .env("MONITOR_SERVICE_RESULT", "exit-code")
        .env("MONITOR_EXIT_STATUS", "1")
        .run()
        .ok();
    let report = out.json();
    assert_eq!(
        (report["queued"].as_u64(), report["http_ok"].as_u64()),
        (Some(1), Some(1)),
        "{out}"
    );
    let hits = hook.hits_on("/gw");
    assert_eq!(hits.len(), 1, "{hits:#?}");
    let e = hits[0].json();
    assert_eq!(e["kind"], "gateway_failed");
    let summary = e["summary"].as_str().unwrap();
    assert!(
        summary.contains("hermes-cron-gateway.service") && summary.contains("result exit-code"),
        "{summary}"
    );
    assert_eq!(deliveries(&h)[0]["state"], "delivered");
}

/// A failed dead-man ping is logged without its URL's secrets (user,
/// password, the path's token, the query).
#[test]
fn a_failed_dead_man_ping_is_logged_without_its_secrets() {
    let h = TestHome::new();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://pinger:s3cret-pw@127.0.0.1:{port}/ping/TOKEN-0123456789?key=abcdef");
    h.config_set("gateway.ping_url", &url);
    h.config_set("gateway.ping_interval_s", "1");
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    gw.wait_log("dead-man ping to", PATIENCE);
    gw.stop();
    let log = gw.log();
    assert!(
        log.contains(&format!(
            "dead-man ping to http://127.0.0.1:{port}/<redacted> failed"
        )),
        "{log}"
    );
    for secret in ["s3cret-pw", "TOKEN-0123456789", "abcdef", "pinger"] {
        assert!(!log.contains(secret), "{secret} logged:\n{log}");
    }
}
