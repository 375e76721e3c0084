//! What operators see (issue 6), through the real binaries: `doctor` exits 0
//! on a healthy home and 1 with a specific, fix-bearing line for each seeded
//! fault; `status` reports STALLED when the gateway's loop counter stops; a
//! 20-entry crontab imports to 20 jobs with the right fires; the metrics parse
//! as Prometheus text; retention keeps the newest rows and outputs.

use crate::support::cli::Running;
use crate::support::{PATIENCE, TestHome, wait_for};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

/// Starts a gateway on `h` and waits until its heartbeat file exists.
fn gateway(h: &TestHome) -> Running {
    let gw = h.start(&["gateway"]);
    let beat = h.path().join("state/hermes-cron.heartbeat");
    wait_for("the gateway heartbeat", PATIENCE, || {
        beat.exists().then_some(())
    });
    gw
}

fn doctor(h: &TestHome) -> (i32, Vec<Value>) {
    let out = h.run(&["doctor", "--json"]);
    let v: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {out:#?}"));
    (
        out.code(),
        v["findings"].as_array().cloned().unwrap_or_default(),
    )
}

fn codes(findings: &[Value]) -> Vec<String> {
    findings
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

/// The finding with `code`, asserting it carries a fix.
fn finding<'a>(findings: &'a [Value], code: &str) -> &'a Value {
    let f = findings
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} finding in {findings:#?}"));
    assert!(
        f["fix"].as_str().is_some_and(|s| s.len() > 10),
        "{code} has no fix: {f:#}"
    );
    f
}

#[test]
fn doctor_is_clean_on_a_healthy_home_and_names_each_seeded_fault() {
    let h = TestHome::scoped().with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "200");
    h.add("fine", "every 1h", &[], &["true"]);
    let _gw = gateway(&h);
    let (code, findings) = doctor(&h);
    assert_eq!(
        (code, findings.len()),
        (0, 0),
        "healthy home: {findings:#?}"
    );

    // A job whose program vanished, one whose workdir is gone.
    h.add("ghost", "every 1h", &["--no-check"], &["/nonexistent/prog"]);
    let wd = h.scratch().join("wd");
    std::fs::create_dir(&wd).unwrap();
    h.add(
        "lost-dir",
        "every 1h",
        &["--workdir", wd.to_str().unwrap()],
        &["true"],
    );
    std::fs::remove_dir(&wd).unwrap();
    // A last run that failed.
    h.add("broken", "every 1h", &[], &["false"]);
    assert_eq!(h.run(&["run", "broken", "--wait"]).code(), 1);
    // Loose permissions.
    std::fs::set_permissions(h.path(), std::fs::Permissions::from_mode(0o755)).unwrap();

    let (code, findings) = doctor(&h);
    assert_eq!(code, 1);
    assert!(finding(&findings, "program_missing")["job_name"] == "ghost");
    assert!(finding(&findings, "workdir_missing")["job_name"] == "lost-dir");
    assert!(finding(&findings, "last_run_failed")["job_name"] == "broken");
    assert!(
        finding(&findings, "home_permissions")["fix"]
            .as_str()
            .unwrap()
            .contains("chmod 700")
    );
    assert!(!codes(&findings).contains(&"gateway_not_running".to_string()));
}

#[test]
fn doctor_reports_gateway_scope_overdue_unknown_stuck_and_journal_faults() {
    let h = TestHome::new().with_env("HERMES_CRON_JOURNAL", "delete");
    let out = h.scratch().join("late.out");
    h.add(
        "late",
        "every 1m",
        &["--shell"],
        &[&format!("echo late >> {}", out.display())],
    );
    // A claimed row whose claimer died before dispatching it (stuck), then a
    // later tick resolves an earlier one as unknown.
    let crashed = h
        .cmd(&["tick"])
        .now("+90")
        .env("HERMES_CRON_CRASH_AT", "after_claim_commit")
        .run();
    assert_eq!(
        crashed.status.code(),
        None,
        "the tick should have been SIGKILLed: {crashed:#?}"
    );
    let out = h.cmd(&["doctor", "--json"]).now("+1200").run();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap().clone();
    assert_eq!(out.code(), 1);
    finding(&findings, "gateway_not_running");
    let scope = finding(&findings, "scope_unavailable");
    assert!(
        scope["fix"]
            .as_str()
            .unwrap()
            .contains(crate::support::host_fix_marker()),
        "{scope:#}"
    );
    finding(&findings, "stuck_claimed");
    assert!(finding(&findings, "job_overdue")["job_name"] == "late");
    assert!(
        finding(&findings, "database_not_wal")["problem"]
            .as_str()
            .unwrap()
            .contains("delete")
    );

    // The next tick retakes the stuck claim (it never started) and runs it.
    h.tick("+100");
    h.settle(Some("late"), 1);
    let (_, findings) = doctor(&h);
    assert!(!codes(&findings).contains(&"stuck_claimed".to_string()));
    // A run whose worker died before recording its outcome is unknown:
    // doctor reports it.
    let died = h
        .cmd(&["run", "late", "--wait"])
        .env("HERMES_CRON_CRASH_AT", "worker_before_finish")
        .run();
    assert_ne!(died.code(), 0, "{died}");
    h.settle(Some("late"), 2);
    let (_, findings) = doctor(&h);
    assert!(finding(&findings, "unknown_runs")["job_name"] == "late");
}

#[test]
fn doctor_reports_degraded_runs_of_a_job_that_now_requires_a_scope() {
    let h = TestHome::new();
    h.add("kanban", "every 1h", &[], &["true"]);
    h.run(&["run", "kanban", "--wait"]).ok();
    h.run(&["edit", "kanban", "--require-scope"]).ok();
    let (_, findings) = doctor(&h);
    assert!(finding(&findings, "degraded_while_required")["job_name"] == "kanban");
}

#[test]
fn doctor_changes_nothing() {
    let h = TestHome::new();
    h.add("a", "every 1m", &[], &["true"]);
    let db = h.path().join("cron/cron.db");
    let before = std::fs::read(&db).unwrap();
    h.cmd(&["doctor"]).now("+3600").run();
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "doctor wrote to the database"
    );
}

#[test]
fn status_is_healthy_while_the_loop_moves_and_stalled_when_it_stops() {
    let h = TestHome::scoped().with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "100");
    assert_eq!(h.run(&["status"]).code(), 1, "no gateway yet");
    h.run(&["config", "set", "gateway.loop_watchdog", "false"])
        .ok();
    let gw = h
        .cmd(&["gateway"])
        .env("HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS", "1500")
        .spawn();
    let healthy = wait_for("status to say running", PATIENCE, || {
        let out = h.run(&["status", "--json"]);
        let v: Value = serde_json::from_str(&out.stdout).ok()?;
        (v["gateway"] == "running" && out.status.code() == Some(0)).then_some(v)
    });
    assert_eq!(healthy["pid"], gw.pid());
    let stalled = wait_for("status to say STALLED", PATIENCE, || {
        let out = h.run(&["status"]);
        (out.status.code() == Some(1) && out.stdout.contains("STALLED")).then_some(out)
    });
    assert!(
        stalled.stdout.contains(&gw.pid().to_string()),
        "{stalled:#?}"
    );
    let v: Value = serde_json::from_str(&h.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(v["gateway"], "stalled");
    let (code, findings) = doctor(&h);
    assert_eq!(code, 1);
    finding(&findings, "gateway_stalled");
}

const CRONTAB: &str = "\
# m h dom mon dow command
SHELL=/bin/sh
PATH=/usr/local/bin:/usr/bin:/bin
MAILTO=\"\"

# nightly backup
0 2 * * * echo backup
# rotate logs
30 3 * * * echo rotate
@daily echo daily
@hourly echo hourly
@weekly echo weekly
@monthly echo monthly
@yearly echo yearly
*/15 * * * * echo quarter
0 9 * * 1-5 echo weekdays
0 12 * * 0 echo sunday-noon
REPO=/srv/repo
5 * * * * echo watch $REPO
0 0 1 * * echo first-of-month
0 18 * * fri echo friday
CRON_TZ=America/New_York
0 8 * * * echo ny-morning
30 17 * * mon-fri echo ny-evening
CRON_TZ=Asia/Tokyo
0 9 * * * echo tokyo
0 0 L * * echo last-day
0 6 * * 1#1 echo first-monday
0 */6 * * * echo every-six
@reboot echo boot
";

#[test]
fn a_twenty_entry_crontab_imports_twenty_jobs_with_matching_fires() {
    let h = TestHome::new().with_env("HERMES_CRON_NOW", "2026-06-01T00:00:00Z");
    h.run(&["config", "set", "timezone", "Europe/Berlin"]).ok();
    let file = h.scratch().join("crontab");
    std::fs::write(&file, CRONTAB).unwrap();
    h.run(&["import", file.to_str().unwrap(), "--dry-run", "--json"])
        .ok();
    assert!(!h.path().join("cron/cron.db").exists() || h.runs(None).is_empty());
    let out = h.run(&["import", file.to_str().unwrap(), "--json"]).ok();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["imported"].as_array().unwrap().len(), 20, "{v:#}");
    assert!(v["not_imported"].as_array().unwrap().is_empty(), "{v:#}");
    let list: Vec<Value> = serde_json::from_str(&h.run(&["list", "--json"]).stdout).unwrap();
    assert_eq!(list.len(), 20);
    let by_cmd = |needle: &str| -> Value {
        list.iter()
            .find(|j| {
                j["command"][0]
                    .as_str()
                    .is_some_and(|c| c.ends_with(needle))
            })
            .unwrap_or_else(|| panic!("no job running {needle:?}: {list:#?}"))
            .clone()
    };
    let next = |needle: &str| by_cmd(needle)["next_run_at"].as_str().unwrap().to_string();
    // 2026-06-01 is a Monday; Berlin is UTC+2, New York UTC-4, Tokyo UTC+9 in June.
    // 02:00 Berlin is exactly now: the next is tomorrow's.
    assert_eq!(next("echo backup"), "2026-06-02T00:00:00.000Z");
    assert_eq!(next("echo daily"), "2026-06-01T22:00:00.000Z");
    assert_eq!(next("echo quarter"), "2026-06-01T00:15:00.000Z");
    assert_eq!(next("echo weekdays"), "2026-06-01T07:00:00.000Z");
    assert_eq!(next("echo ny-morning"), "2026-06-01T12:00:00.000Z");
    assert_eq!(by_cmd("echo ny-morning")["zone"], "America/New_York");
    // 09:00 Tokyo is exactly now: the next is tomorrow's, at 00:00Z.
    assert_eq!(next("echo tokyo"), "2026-06-02T00:00:00.000Z");
    assert_eq!(
        next("echo last-day"),
        "2026-06-29T15:00:00.000Z",
        "00:00 Tokyo on 30 June"
    );
    // The first Monday of June (06:00 Tokyo = 21:00Z on 31 May) has passed: July 6.
    assert_eq!(next("echo first-monday"), "2026-07-05T21:00:00.000Z");
    assert!(
        by_cmd("echo boot")["next_run_at"].is_null(),
        "@reboot has no clock fire"
    );
    assert!(by_cmd("echo watch $REPO")["env"]["REPO"] == "/srv/repo");
    assert!(
        by_cmd("echo backup")["env"].get("REPO").is_none(),
        "env applies only below its line"
    );
}

#[test]
fn metrics_parse_as_prometheus_text() {
    let h = TestHome::new();
    h.add("ok", "every 1h", &[], &["true"]);
    h.add("bad", "every 1h", &[], &["false"]);
    h.run(&["run", "ok", "--wait"]).ok();
    h.run(&["run", "bad", "--wait"]);
    h.tick("+3601");
    wait_for("every row terminal", PATIENCE, || {
        h.runs(None)
            .iter()
            .all(|r| r["terminal"] == true)
            .then_some(())
    });
    let out = h.run(&["metrics"]).ok();
    let lines = out.stdout.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("metrics parse as Prometheus text");
    // The gateway writes the same text to state/hermes-cron.prom.
    let gw = h.start(&["gateway"]);
    let file = h.path().join("state/hermes-cron.prom");
    let text = wait_for("the gateway's metrics file", PATIENCE, || {
        std::fs::read_to_string(&file).ok()
    });
    let from_file = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("hermes-cron.prom parses");
    assert!(
        from_file
            .samples
            .iter()
            .any(|s| s.metric == "hermes_cron_jobs"),
        "{text}"
    );
    drop(gw);
    let value = |name: &str, label: Option<(&str, &str)>| sample(&scrape, name, label);
    assert_eq!(
        value("hermes_cron_runs", Some(("state", "failed"))),
        2.0,
        "{}",
        out.stdout
    );
    assert_eq!(value("hermes_cron_runs", Some(("mode", "degraded"))), 4.0);
    assert_eq!(
        value(
            "hermes_cron_dispatch_failures",
            Some(("cause", "no_address"))
        ),
        4.0
    );
    assert_eq!(value("hermes_cron_jobs", Some(("state", "active"))), 2.0);
    let hist = scrape
        .samples
        .iter()
        .find(|s| s.metric == "hermes_cron_start_lateness_seconds")
        .expect("histogram");
    match &hist.value {
        prometheus_parse::Value::Histogram(buckets) => {
            assert!(buckets.iter().any(|b| b.count == 2.0), "{buckets:?}")
        }
        other => panic!("lateness is not a histogram: {other:?}"),
    }
}

/// The sum of the samples of `name` (with `label`, when given).
fn sample(scrape: &prometheus_parse::Scrape, name: &str, label: Option<(&str, &str)>) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
        .map(|s| match s.value {
            prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

fn scrape(h: &TestHome) -> (prometheus_parse::Scrape, String) {
    let out = h.run(&["metrics"]).ok();
    let lines = out.stdout.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("metrics parse as Prometheus text");
    (scrape, out.stdout)
}

fn instant_s(row: &Value, key: &str) -> f64 {
    let at = chrono::DateTime::parse_from_rfc3339(row[key].as_str().unwrap()).unwrap();
    at.timestamp_millis() as f64 / 1000.0
}

/// Per-job series count every run a job had, through retention (issue 24):
/// 3 successes and 2 failures, 2 rows kept by prune, still 3 and 2; the
/// last start and last success are those of the pruned-and-kept history;
/// a job that never ran has 0 for both.
#[test]
fn per_job_metrics_count_every_run_through_prune() {
    let h = TestHome::new();
    h.run(&["config", "set", "cron.ledger_retention", "2"]).ok();
    let flag = h.scratch().join("fail");
    let script = format!("[ ! -e {} ]", flag.display());
    let brief = h.add("brief", "daily at 8am", &[], &["sh", "-c", &script]);
    let idle = h.add("idle", "daily at 9am", &[], &["true"]);
    for _ in 0..3 {
        h.run(&["run", "brief", "--wait"]).ok();
    }
    std::fs::write(&flag, "").unwrap();
    for _ in 0..2 {
        h.run(&["run", "brief", "--wait"]).fails_with(1);
    }
    let rows = h.runs(Some("brief"));
    let last_success = rows
        .iter()
        .find(|r| r["state"] == "succeeded")
        .map(|r| instant_s(r, "finished_at"))
        .unwrap();
    let last_start = instant_s(&rows[0], "started_at");
    let before = scrape(&h).0;
    let pruned = h.run(&["prune", "--json"]).ok().json();
    assert_eq!(pruned["rows_deleted"], 3, "{pruned:#}");
    assert_eq!(h.runs(Some("brief")).len(), 2, "retention kept two rows");

    let (after, text) = scrape(&h);
    for scrape in [&before, &after] {
        let runs = |state| {
            let by_state: Vec<_> = scrape
                .samples
                .iter()
                .filter(|s| s.metric == "hermes_cron_job_runs_total")
                .filter(|s| {
                    s.labels.get("job") == Some("brief") && s.labels.get("state") == Some(state)
                })
                .collect();
            assert_eq!(by_state.len(), 1, "one series for {state}: {text}");
            assert_eq!(by_state[0].labels.get("job_id"), Some(brief.as_str()));
            sample(scrape, "hermes_cron_job_runs_total", Some(("state", state)))
        };
        assert_eq!((runs("succeeded"), runs("failed")), (3.0, 2.0), "{text}");
        let of = |name, job: &str| sample(scrape, name, Some(("job_id", job)));
        assert_eq!(
            of("hermes_cron_job_last_success_timestamp_seconds", &brief),
            last_success,
            "{text}"
        );
        assert_eq!(
            of("hermes_cron_job_last_start_timestamp_seconds", &brief),
            last_start,
            "{text}"
        );
        assert_eq!(
            of("hermes_cron_job_last_success_timestamp_seconds", &idle),
            0.0,
            "{text}"
        );
        assert_eq!(
            of("hermes_cron_job_last_start_timestamp_seconds", &idle),
            0.0,
            "{text}"
        );
        assert!(
            of("hermes_cron_job_created_timestamp_seconds", &idle) > 0.0,
            "{text}"
        );
    }
    // The retained-rows gauge is what it says: the two rows kept.
    assert_eq!(sample(&after, "hermes_cron_runs", None), 2.0, "{text}");
    // A second prune adds nothing twice.
    h.run(&["prune"]).ok();
    assert_eq!(
        sample(
            &scrape(&h).0,
            "hermes_cron_job_runs_total",
            Some(("job_id", brief.as_str()))
        ),
        5.0
    );
}

/// The documented Prometheus rules (docs/metrics.md,
/// `docs/prometheus/hermes-cron.rules.yml`)
/// are valid (`promtool check rules`), fire as their tests say (`promtool
/// test rules tests/prometheus/rules_test.yml`), and every series they read
/// is one hermes-cron exposes, with the labels they match on.
#[test]
fn the_documented_prometheus_rules_hold_and_read_real_series() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = root.join("docs/prometheus/hermes-cron.rules.yml");
    let promtool = |args: &[&std::ffi::OsStr], dir: &std::path::Path| {
        let out = std::process::Command::new("promtool")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| {
                panic!("promtool is needed (apt-get install prometheus; tests/run-all.sh installs it): {e}")
            });
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    promtool(
        &["check".as_ref(), "rules".as_ref(), rules.as_os_str()],
        root,
    );
    promtool(
        &["test".as_ref(), "rules".as_ref(), "rules_test.yml".as_ref()],
        &root.join("tests/prometheus"),
    );
    let h = TestHome::new();
    h.add("brief", "daily at 8am", &[], &["false"]);
    h.run(&["run", "brief", "--wait"]).fails_with(1);
    let (scrape, text) = scrape(&h);
    let yaml = std::fs::read_to_string(&rules).unwrap();
    let used: std::collections::BTreeSet<&str> = yaml
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("hermes_cron_"))
        .collect();
    assert!(used.len() >= 3, "{used:?}");
    for name in used {
        let found = scrape.samples.iter().find(|s| s.metric == name);
        let found =
            found.unwrap_or_else(|| panic!("the rules read {name}, which is not exposed:\n{text}"));
        for key in ["job", "job_id"] {
            assert!(
                found.labels.get(key).is_some(),
                "{name} has no {key} label: {text}"
            );
        }
    }
}

#[test]
fn prune_keeps_the_newest_rows_and_outputs_and_never_active_ones() {
    let h = TestHome::new();
    h.run(&["config", "set", "cron.ledger_retention", "3"]).ok();
    h.run(&["config", "set", "cron.output_retention", "2"]).ok();
    h.add("chatty", "every 1h", &[], &["echo", "hi"]);
    for _ in 0..6 {
        h.run(&["run", "chatty", "--wait"]).ok();
    }
    let out = h.run(&["prune", "--json"]).ok();
    let r: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(r["rows_deleted"], 3, "{r:#}");
    let rows = h.runs(Some("chatty"));
    assert_eq!(rows.len(), 3);
    let job_dir = std::path::Path::new(rows[0]["output_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();
    let mut files: Vec<_> = std::fs::read_dir(&job_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    // The two kept outputs are the two newest runs'.
    for row in &rows[..2] {
        assert!(std::path::Path::new(row["output_path"].as_str().unwrap()).exists());
    }
}

#[test]
fn logs_prints_the_output_and_follow_waits_for_the_end() {
    let h = TestHome::new();
    let gate = h.scratch().join("gate");
    let script = format!(
        "echo one; while [ ! -e {g} ]; do sleep 0.05; done; echo two",
        g = gate.display()
    );
    h.add("chatty", "every 1h", &[], &["sh", "-c", &script]);
    let out = h.run(&["run", "chatty"]).ok();
    let id = crate::support::rows::execution_id_in(&out.stdout);
    let follow = h.start(&["logs", &id, "--follow"]);
    // The run is still going: `logs` (without --follow) shows what is there so far.
    let partial = wait_for("the first line", PATIENCE, || {
        let o = h.run(&["logs", &id]);
        o.stdout.contains("one").then_some(o.stdout)
    });
    assert!(!partial.contains("two"), "{partial}");
    std::fs::write(&gate, "").unwrap();
    let followed = follow.wait_within(PATIENCE);
    assert_eq!(followed.code(), 0, "{followed:#?}");
    assert_eq!(followed.stdout, "one\ntwo\n");
    assert_eq!(h.run(&["logs", "nope"]).code(), 2);
}

/// The model usage runs report (issue 26): on each row (`runs --json`
/// `usage`), and per job in `/metrics`, counted over every run through
/// retention. Any job may report it in `HERMES_CRON_USAGE_FILE`, as the
/// Hermes plugin does for an agent job; one that reports none has none.
#[test]
fn reported_usage_is_on_the_row_and_in_the_per_job_metrics_through_prune() {
    let h = TestHome::new();
    h.run(&["config", "set", "cron.ledger_retention", "1"]).ok();
    let report = r#"{"input_tokens": 100, "output_tokens": 20, "reasoning_tokens": 5, "api_calls": 2, "model": "m", "cost_usd": 0.25, "cost_source": "hermes_estimated", "extra": 1}"#;
    let agent = h.add(
        "agent",
        "daily at 8am",
        &["--shell"],
        &[&format!("echo '{report}' > \"$HERMES_CRON_USAGE_FILE\"")],
    );
    h.add("plain", "daily at 9am", &[], &["true"]);
    for _ in 0..3 {
        h.run(&["run", "agent", "--wait"]).ok();
    }
    h.run(&["run", "plain", "--wait"]).ok();
    let row = &h.runs(Some("agent"))[0];
    assert_eq!(
        row["usage"],
        serde_json::json!({"input_tokens": 100, "output_tokens": 20, "reasoning_tokens": 5,
                           "api_calls": 2, "model": "m", "cost_usd": 0.25,
                           "cost_source": "hermes_estimated"}),
        "{row:#}"
    );
    assert_eq!(h.runs(Some("plain"))[0]["usage"], Value::Null);
    // The table has usage columns when a listed run reported usage.
    let table = h.run(&["runs", "agent"]).ok().stdout;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header[header.len() - 2..], ["TOKENS", "COST"], "{table}");
    let first: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(first[first.len() - 2..], ["120", "$0.2500"], "{table}");
    let plain = h.run(&["runs", "plain"]).ok().stdout;
    assert!(!plain.contains("TOKENS"), "{plain}");
    let show = h.run(&["show", "agent"]).ok().stdout;
    assert!(
        show.lines()
            .any(|l| l == "last usage    120 tokens, $0.2500"),
        "{show}"
    );
    assert!(!h.run(&["show", "plain"]).ok().stdout.contains("usage"));
    assert!(
        !h.cron_dir().join("usage").read_dir().unwrap().any(|_| true),
        "the worker removes the reports it read"
    );
    let before = scrape(&h).0;
    let pruned = h.run(&["prune", "--json"]).ok().json();
    assert_eq!(pruned["rows_deleted"], 2, "{pruned:#}");
    let (after, text) = scrape(&h);
    for scrape in [&before, &after] {
        let tokens = |kind| {
            scrape
                .samples
                .iter()
                .filter(|s| s.metric == "hermes_cron_job_tokens_total")
                .filter(|s| s.labels.get("job_id") == Some(agent.as_str()))
                .filter(|s| s.labels.get("kind") == Some(kind))
                .map(|s| match s.value {
                    prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => v,
                    _ => f64::NAN,
                })
                .sum::<f64>()
        };
        assert_eq!(
            (tokens("input"), tokens("output"), tokens("reasoning")),
            (300.0, 60.0, 15.0),
            "{text}"
        );
        let cost = sample(
            scrape,
            "hermes_cron_job_cost_usd_total",
            Some(("job", "agent")),
        );
        assert!((cost - 0.75).abs() < 1e-9, "{cost}: {text}");
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("hermes_cron_job_tokens_total{job=\"plain\"")),
            "a job that reported nothing has no usage series: {text}"
        );
    }
}
