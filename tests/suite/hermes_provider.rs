//! hermes-cron as the Hermes Agent's cron provider, proven against the real
//! `hermes-agent` package (see `support::hermes`): jobs made with Hermes's
//! own CLI and Python code fire through hermes-cron's gateway, each in a
//! transient scope of the real `systemd --user`, once, recorded by Hermes
//! (`executions.db`, its output files) and by hermes-cron's ledger.

use crate::support::Bus;
use crate::support::fake_model::{FakeModel, MODEL};
use crate::support::hermes::HermesHome;
use crate::support::waiting::wall_clock;
use crate::support::{PATIENCE, SETTLE_TIMEOUT, wait_for};
use serde_json::Value;
use std::time::Duration;

const ANSWER: &str = "CANNED-ANSWER-42: five items for your morning.";

/// An instant `secs` from now, as Hermes reads a one-shot (ISO with an offset).
fn in_secs(secs: i64) -> (String, chrono::DateTime<chrono::Utc>) {
    use chrono::SubsecRound;
    let at = (wall_clock() + chrono::Duration::seconds(secs)).trunc_subsecs(0);
    (at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string(), at)
}

/// A scoped home with the provider installed and the gateway running.
fn provider_home() -> (HermesHome, crate::support::gateway::Gateway) {
    let h = HermesHome::scoped();
    h.home.require_scopes();
    h.install_provider();
    let mut gw = h.home.gateway(&[]);
    gw.wait_ready();
    (h, gw)
}

/// Wait until hermes-cron has a managed job for the Hermes job `id`; its JSON.
fn managed(h: &HermesHome, id: &str) -> Value {
    h.home.wait_until(
        &format!("a managed job for the Hermes job {id}"),
        PATIENCE,
        || {
            let out = h.home.run(&["show", id, "--json"]);
            (out.code() == 0).then(|| out.json())
        },
    )
}

/// The terminal rows of the job named `name` once there are `count`.
fn settled(h: &HermesHome, name: &str, count: usize) -> Vec<Value> {
    h.home.wait_until(
        &format!("{count} terminal rows of {name}"),
        SETTLE_TIMEOUT,
        || {
            let rows = h.home.runs_of(name);
            (rows.len() == count && rows.iter().all(|r| r["terminal"] == true)).then_some(rows)
        },
    )
}

/// Hermes's records of one job: `executions.db` rows, when all are terminal.
fn hermes_executions(h: &HermesHome, id: &str, count: usize) -> Vec<Value> {
    wait_for(
        &format!("{count} terminal Hermes executions of {id}"),
        PATIENCE,
        || {
            let rows = h.executions(id);
            let done = rows
                .iter()
                .all(|r| !matches!(r["status"].as_str(), Some("claimed" | "running")));
            (rows.len() == count && done).then_some(rows)
        },
    )
}

#[test]
fn a_hermes_script_job_fires_at_its_next_run_in_a_scope_once() {
    let (h, _gw) = provider_home();
    let (at_text, at) = in_secs(4);
    let id = h.script_job(
        "where",
        "echo fired-by-hermes-cron\ncat /proc/self/cgroup\n",
        "local",
        &at_text,
    );
    let job = managed(&h, &id);
    assert_eq!(job["managed"], true, "{job:#}");
    assert_eq!(job["hermes_id"], id.as_str());
    let rows = settled(&h, "where", 1);
    let row = &rows[0];
    assert_eq!(row["state"], "succeeded", "{row:#}\n{}", h.home.diag());
    assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    assert_eq!(
        row["usage"],
        Value::Null,
        "a script job has no usage, not zero"
    );
    assert_eq!(
        row["scheduled_for"]
            .as_str()
            .map(|s| s.parse::<chrono::DateTime<chrono::Utc>>().unwrap()),
        Some(at),
        "it fires at Hermes's next_run_at"
    );
    // The script ran inside the run's transient scope, under hermes-cron.
    let output = h.home.output_of(row);
    let unit = row["unit"].as_str().expect("a scoped row names its unit");
    assert!(output.contains("fired-by-hermes-cron"), "{output}");
    assert!(
        output.lines().any(|l| l.ends_with(&format!("/{unit}"))),
        "the script's cgroup is not {unit}:\n{output}"
    );
    // Hermes recorded it once, as fired by this provider, and saved its output once.
    let execs = hermes_executions(&h, &id, 1);
    assert_eq!(execs[0]["source"], "hermes-cron", "{execs:#?}");
    assert_eq!(execs[0]["status"], "completed", "{execs:#?}");
    let docs = h.outputs(&id);
    assert_eq!(docs.len(), 1, "{docs:#?}");
    assert!(docs[0].contains("fired-by-hermes-cron"));
    // A fired one-shot leaves Hermes's store, and hermes-cron follows; nothing fires again.
    h.home
        .wait_until("the managed job to follow Hermes", PATIENCE, || {
            (h.home.run(&["show", &id]).code() != 0).then_some(())
        });
    assert_eq!(h.home.runs_of("where").len(), 1);
    assert_eq!(h.executions(&id).len(), 1);
}

#[test]
fn an_agent_job_runs_hermes_agent_in_a_scope_and_its_answer_is_delivered() {
    let model = FakeModel::start(ANSWER);
    let (h, _gw) = provider_home();
    h.use_model(&model);
    let id = h.cron_create(&[
        "--name",
        "briefing",
        "--deliver",
        "local",
        "0 8 * * *",
        "Every day at 8am: the 5 items that matter today.",
    ]);
    let job = managed(&h, &id);
    assert_eq!(
        job["idle_timeout_s"], 720,
        "agent jobs: after Hermes's inactivity limit (600 s)"
    );
    // "Run now" as Hermes's dashboard and API do it: next_run_at = now.
    let out = h.python(&format!(
        "from cron.jobs import trigger_job\nassert trigger_job({id:?})"
    ));
    assert_eq!(out.code, 0, "{out:#?}");
    let rows = settled(&h, "briefing", 1);
    let row = &rows[0];
    assert_eq!(row["state"], "succeeded", "{row:#}\n{}", h.home.diag());
    assert_eq!(row["dispatch_mode"], "scoped");
    let output = h.home.output_of(row);
    assert!(
        output.contains(ANSWER),
        "the delivered text is in the run's output:\n{output}"
    );
    assert_eq!(model.answered(), 1);
    // The row has the usage Hermes recorded for the run (issue 26): the
    // fake model's usage block, as Hermes counts it; a custom endpoint has
    // no price, so no cost.
    let usage = &row["usage"];
    for (field, want) in [
        ("input_tokens", 1134),
        ("output_tokens", 56),
        ("cache_read_tokens", 100),
        ("cache_write_tokens", 0),
        ("reasoning_tokens", 7),
        ("api_calls", 1),
    ] {
        assert_eq!(usage[field], want, "{field}: {row:#}");
    }
    assert_eq!(usage["model"], MODEL, "{row:#}");
    assert_eq!(usage["cost_usd"], Value::Null, "{row:#}");
    assert_eq!(usage["cost_source"], "unknown", "{row:#}");
    let execs = hermes_executions(&h, &id, 1);
    assert_eq!(execs[0]["status"], "completed", "{execs:#?}");
    let docs = h.outputs(&id);
    assert!(docs.len() == 1 && docs[0].contains(ANSWER), "{docs:#?}");
    // The recurring job waits for its next 8 am, as Hermes says.
    let job = h.job(&id);
    assert_eq!(job["last_status"], "ok", "{job:#}");
    let next = job["next_run_at"].as_str().unwrap().to_string();
    h.home.wait_until(
        "the managed job to take Hermes's next run",
        PATIENCE,
        || {
            let ours = h.home.run(&["show", &id, "--json"]).json();
            let ours = ours["next_run_at"]
                .as_str()?
                .parse::<chrono::DateTime<chrono::Utc>>()
                .ok()?;
            (ours == next.parse::<chrono::DateTime<chrono::Utc>>().unwrap()).then_some(())
        },
    );
}

#[test]
fn a_gateway_restart_while_an_agent_job_runs_neither_stops_nor_repeats_it() {
    let model = FakeModel::start(ANSWER);
    model.set_delay(Duration::from_secs(8));
    let (h, mut gw) = provider_home();
    h.use_model(&model);
    let id = h.cron_create(&[
        "--name",
        "slow",
        "--deliver",
        "local",
        "every 1h",
        "Think slowly.",
    ]);
    managed(&h, &id);
    h.python(&format!(
        "from cron.jobs import trigger_job\nassert trigger_job({id:?})"
    ));
    wait_for("the agent to ask the model", SETTLE_TIMEOUT, || {
        (model.asked() == 1).then_some(())
    });
    gw.stop();
    let mut gw = h.home.gateway(&[]);
    gw.wait_ready();
    let rows = settled(&h, "slow", 1);
    assert_eq!(
        rows[0]["state"],
        "succeeded",
        "{:#}\n{}",
        rows[0],
        h.home.diag()
    );
    assert!(h.home.output_of(&rows[0]).contains(ANSWER));
    let execs = hermes_executions(&h, &id, 1);
    assert_eq!(execs[0]["status"], "completed", "{execs:#?}");
    assert_eq!(
        model.asked(),
        1,
        "the model was asked once: nothing fired twice"
    );
    gw.stop();
}

#[test]
fn hermes_cron_pause_stops_the_fire_and_resume_brings_it_back() {
    let (h, _gw) = provider_home();
    h.script("p.sh", "echo paused-job-ran\n");
    let (at_text, at) = in_secs(5);
    let id = h.cron_create(&["--name", "p", "--script", "p.sh", "--no-agent", &at_text]);
    managed(&h, &id);
    h.hermes(&["cron", "pause", &id]);
    h.home
        .wait_until("the managed job to be paused", PATIENCE, || {
            (h.home.run(&["show", &id, "--json"]).json()["state"] == "paused").then_some(())
        });
    // hermes-cron's own pause, edit and rm are refused: Hermes keeps the job.
    for (ours, theirs) in [
        (vec!["pause", id.as_str()], "pause"),
        (vec!["edit", id.as_str(), "--timeout", "5m"], "edit"),
        (vec!["rm", id.as_str()], "remove"),
    ] {
        let refused = h.home.run(&ours).fails_with(2);
        assert!(
            refused
                .stderr
                .contains(&format!("hermes cron {theirs} {id}")),
            "{refused}"
        );
    }
    // Fired by hand while Hermes has it paused, Hermes declines the fire:
    // recorded skipped (declined), and nothing ran.
    let ran = h.home.run(&["run", &id, "--wait"]);
    let declined = h.home.runs_of("p");
    assert_eq!(declined.len(), 1, "{ran}\n{}", h.home.diag());
    assert_eq!(declined[0]["state"], "skipped", "{:#}", declined[0]);
    assert_eq!(declined[0]["reason_code"], "declined", "{:#}", declined[0]);
    assert!(!h.home.output_of(&declined[0]).contains("paused-job-ran"));
    // Past its instant, nothing fired.
    while wall_clock() < at + chrono::Duration::seconds(3) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(h.home.runs_of("p").len(), 1, "{}", h.home.diag());
    assert!(h.executions(&id).is_empty());
    // Resumed within its grace, the one-shot is due again and fires, once.
    h.hermes(&["cron", "resume", &id]);
    let rows = settled(&h, "p", 2);
    assert_eq!(rows[1]["state"], "succeeded", "{:#}", rows[1]);
    assert_eq!(hermes_executions(&h, &id, 1)[0]["status"], "completed");
}

#[test]
fn twenty_hermes_jobs_due_in_the_same_minute_each_fire_once() {
    let (h, _gw) = provider_home();
    h.script("n.sh", "echo one\n");
    let (at_text, _) = in_secs(8);
    let ids = h.python_json(&format!(
        "from cron.jobs import create_job\n\
         out = [create_job(prompt=None, schedule={at_text:?}, name=f'same-{{i}}', script='n.sh',\n\
                           no_agent=True, deliver='local')['id'] for i in range(20)]"
    ));
    let ids: Vec<String> = ids
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for i in 0..20 {
        let rows = settled(&h, &format!("same-{i}"), 1);
        assert_eq!(rows[0]["state"], "succeeded", "{:#}", rows[0]);
    }
    for id in &ids {
        let execs = hermes_executions(&h, id, 1);
        assert_eq!(execs[0]["status"], "completed", "{id}: {execs:#?}");
    }
    let all = h.home.runs(None);
    assert_eq!(
        all.len(),
        20,
        "one row per job, nothing twice:\n{}",
        h.home.diag()
    );
}

#[test]
fn while_hermes_builtin_ticker_still_runs_hermes_cron_fires_nothing() {
    let h = HermesHome::scoped();
    h.home.require_scopes();
    h.install_provider();
    // A Hermes gateway started before the switch stamps this every minute.
    let stamp = |age_s: i64| {
        let epoch = (wall_clock() - chrono::Duration::seconds(age_s)).timestamp();
        std::fs::write(
            h.home.path().join("cron/ticker_heartbeat"),
            format!("{epoch}.5"),
        )
        .unwrap();
    };
    stamp(0);
    h.script("t.sh", "echo ran\n");
    let (at_text, at) = in_secs(2);
    let id = h.cron_create(&["--name", "t", "--script", "t.sh", "--no-agent", &at_text]);
    let mut gw = h.home.gateway(&[]);
    gw.wait_ready();
    let doctor = h.home.run(&["doctor", "--json"]).json();
    let codes: Vec<_> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].clone())
        .collect();
    assert!(
        codes.contains(&"hermes_provider_inactive".into()),
        "{doctor:#}"
    );
    assert_eq!(doctor["hermes_provider"]["active"], false, "{doctor:#}");
    while wall_clock() < at + chrono::Duration::seconds(3) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        h.home.run(&["show", &id]).code() != 0,
        "no managed job while Hermes's ticker runs"
    );
    assert!(h.home.runs(None).is_empty());
    // The Hermes gateway restarted with hermes-cron as its provider: the
    // ticker's heartbeat goes stale and hermes-cron takes over.
    stamp(3600);
    let rows = settled(&h, "t", 1);
    assert_eq!(rows[0]["state"], "succeeded", "{:#}", rows[0]);
    assert_eq!(hermes_executions(&h, &id, 1)[0]["source"], "hermes-cron");
    gw.stop();
}

#[test]
fn install_and_uninstall_switch_hermes_cron_provider_and_nothing_else() {
    let h = HermesHome::new();
    let before = h.raw_config();
    h.install_provider();
    let status = h.hermes(&["cron", "status"]);
    assert!(
        status.stdout.contains("hermes-cron"),
        "Hermes resolves hermes-cron: {status:#?}"
    );
    let after = h.raw_config();
    assert_eq!(after["cron"]["provider"], "hermes-cron", "{after:#}");
    let mut rest = after.clone();
    rest.as_object_mut().unwrap().remove("cron");
    assert_eq!(rest, before, "install changes only cron.provider");
    // Installing again changes nothing.
    let again = h
        .home
        .run(&[
            "hermes",
            "install",
            "--python",
            h.python_path().to_str().unwrap(),
        ])
        .ok();
    assert!(again.stdout.contains("already hermes-cron"), "{again}");
    let out = h.home.run(&["hermes", "uninstall"]).ok();
    assert!(out.stdout.contains("removed cron.provider"), "{out}");
    assert_eq!(h.raw_config(), before, "uninstall gives the config back");
    assert!(!h.home.path().join("plugins/hermes-cron").exists());
    let status = h.hermes(&["cron", "status"]);
    assert!(
        !status.stdout.contains("Cron provider: hermes-cron"),
        "{status:#?}"
    );
    // Not Hermes's interpreter: refused, naming the fix.
    let bad = h
        .home
        .run(&["hermes", "install", "--python", "/usr/bin/python3"]);
    assert_eq!(bad.code(), 1, "{bad}");
    assert!(bad.stderr.contains("--python"), "{bad}");
}

/// A recurring Hermes script job firing every `secs` seconds (croniter's
/// 6-field form, seconds last), its script `body`; its Hermes id.
fn every_secs(h: &HermesHome, name: &str, secs: u32, body: &str) -> String {
    h.script_job(name, body, "local", &format!("* * * * * */{secs}"))
}

fn instant(v: &Value) -> chrono::DateTime<chrono::Utc> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an instant: {v}"))
}

/// Hermes's `next_run_at` of job `id`.
fn hermes_next(h: &HermesHome, id: &str) -> chrono::DateTime<chrono::Utc> {
    let job = h.job(id);
    chrono::DateTime::parse_from_rfc3339(job["next_run_at"].as_str().unwrap_or_default())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|e| panic!("{e}: {job:#}"))
}

/// The first row of `name` once it is terminal.
fn first_settled(h: &HermesHome, name: &str) -> Value {
    h.home
        .wait_until(&format!("a terminal row of {name}"), SETTLE_TIMEOUT, || {
            let rows = h.home.runs_of(name);
            rows.first().filter(|r| r["terminal"] == true).cloned()
        })
}

/// The slot of `first` (the job `name`'s first row, in `state`) never
/// reached Hermes; the next slot, `period` later, fires and Hermes records
/// it. `before_next` runs between the two (puts right what stopped the
/// first); what it returns is kept to the end.
fn the_next_slot_fires<T>(
    h: &mut HermesHome,
    id: &str,
    name: &str,
    state: &str,
    period: i64,
    before_next: impl FnOnce(&mut HermesHome) -> T,
) {
    let first = first_settled(h, name);
    let _kept = before_next(h);
    assert_eq!(first["state"], state, "{first:#}\n{}", h.home.diag());
    let slot = instant(&first["scheduled_for"]);
    assert_eq!(hermes_next(h, id), slot, "Hermes never saw that slot");
    assert!(h.executions(id).is_empty());
    let rows = settled(h, name, 2);
    let next = slot + chrono::Duration::seconds(period);
    assert_eq!(
        rows[1]["state"],
        "succeeded",
        "{rows:#?}\n{}",
        h.home.diag()
    );
    assert_eq!(instant(&rows[1]["scheduled_for"]), next, "{rows:#?}");
    assert_eq!(hermes_executions(h, id, 1)[0]["status"], "completed");
    assert!(hermes_next(h, id) > next, "Hermes moved on");
}

#[test]
fn a_refused_slot_of_a_recurring_hermes_job_is_followed_by_the_next_slot_on_time() {
    let mut h = HermesHome::scoped();
    h.home.require_scopes();
    h.install_provider();
    h.home.config_set("cron.require_restart_safe_scope", "true");
    // No user manager: every run is refused, and Hermes never hears of it.
    h.home.set_bus(Bus::None);
    let mut gw = h.home.gateway(&[]);
    gw.wait_ready();
    let id = every_secs(&h, "tick", 20, "echo tick\n");
    // With the user manager back, the next slot of the schedule fires.
    the_next_slot_fires(&mut h, &id, "tick", "refused", 20, |h| {
        gw.stop();
        h.home.set_bus(Bus::Real);
        let mut gw = h.home.gateway(&[]);
        gw.wait_ready();
        gw
    });
}

#[test]
fn an_overlap_skipped_slot_of_a_recurring_hermes_job_is_followed_by_the_next_slot() {
    let (h, _gw) = provider_home();
    // The first run outlasts the next slot (15 s later); later runs are quick.
    let marker = h.home.scratch().join("slow-once");
    let body = format!(
        "if [ ! -e {m} ]; then touch {m}; sleep 20; fi\necho done\n",
        m = marker.display()
    );
    let id = every_secs(&h, "slow", 15, &body);
    let rows = settled(&h, "slow", 3);
    let states: Vec<_> = rows
        .iter()
        .map(|r| (r["state"].as_str(), r["reason_code"].as_str()))
        .collect();
    assert_eq!(
        states,
        [
            (Some("succeeded"), None),
            (Some("skipped"), Some("overlap")),
            (Some("succeeded"), None)
        ],
        "{rows:#?}\n{}",
        h.home.diag()
    );
    let slots: Vec<_> = rows.iter().map(|r| instant(&r["scheduled_for"])).collect();
    assert_eq!(
        slots[1] - slots[0],
        chrono::Duration::seconds(15),
        "{rows:#?}"
    );
    assert_eq!(
        slots[2] - slots[1],
        chrono::Duration::seconds(15),
        "{rows:#?}"
    );
    assert_eq!(hermes_executions(&h, &id, 2).len(), 2);
}

#[test]
fn a_fire_that_failed_before_hermes_claimed_it_is_followed_by_the_next_slot() {
    let (mut h, _gw) = provider_home();
    // The plugin's fire entry point fails at once, before Hermes's claim
    // (Hermes imports the plugin's modules too: only when run).
    let fire = h.home.path().join("plugins/hermes-cron/fire.py");
    let real = std::fs::read(&fire).expect("the installed plugin's fire.py");
    std::fs::write(
        &fire,
        "import sys\nif __name__ == '__main__':\n    sys.exit(3)\n",
    )
    .unwrap();
    let id = every_secs(&h, "flaky", 20, "echo fine\n");
    the_next_slot_fires(&mut h, &id, "flaky", "failed", 20, |_| {
        std::fs::write(&fire, real).unwrap();
    });
}

/// "Run now", as Hermes's dashboard and API do it: `next_run_at` = now.
fn trigger(h: &HermesHome, id: &str) {
    let out = h.python(&format!(
        "from cron.jobs import trigger_job\nassert trigger_job({id:?})"
    ));
    assert_eq!(out.code, 0, "{out:#?}");
}

/// An agent job `name`, every hour, its answer delivered to `local`; its id.
fn hourly_agent_job(h: &HermesHome, name: &str) -> String {
    h.cron_create(&[
        "--name",
        name,
        "--deliver",
        "local",
        "every 1h",
        "Say hello.",
    ])
}

/// The managed job of `id` once `field` of `show --json` is `want`.
fn backstop(h: &HermesHome, id: &str, field: &str, want: Value) -> Value {
    h.home
        .wait_until(&format!("{field} of {id} to be {want}"), PATIENCE, || {
            let job = managed(h, id);
            (job[field] == want).then_some(job)
        })
}

/// The `n`th row of `name` (0 first) once it is terminal, waiting `patience`.
fn nth_settled(h: &HermesHome, name: &str, n: usize, patience: Duration) -> Value {
    h.home
        .wait_until(&format!("row {n} of {name} terminal"), patience, || {
            let rows = h.home.runs_of(name);
            rows.get(n).filter(|r| r["terminal"] == true).cloned()
        })
}

/// Hermes recorded the job's one fire `failed` with an error saying `what`,
/// set `last_status: error`, and delivered its failure message to `local`.
fn hermes_recorded_the_failure(h: &HermesHome, id: &str, what: &str) {
    let execs = hermes_executions(h, id, 1);
    assert_eq!(execs[0]["status"], "failed", "{execs:#?}");
    let error = execs[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains(what), "{what}: {error}");
    assert_eq!(h.job(id)["last_status"], "error");
    let docs = h.outputs(id);
    assert!(
        docs.len() == 1 && docs[0].contains(what),
        "Hermes's failure message delivered to local: {docs:#?}"
    );
}

#[test]
fn a_model_that_never_answers_meets_hermes_own_timeout_and_the_fire_ends_with_it() {
    let model = FakeModel::start(ANSWER);
    model.set_delay(Duration::from_secs(3600));
    let (h, _gw) = provider_home();
    h.use_model(&model);
    std::fs::write(h.home.path().join(".env"), "HERMES_CRON_TIMEOUT=20\n").unwrap();
    let id = hourly_agent_job(&h, "hung");
    // The home's .env sets Hermes's limit; hermes-cron's comes after it.
    backstop(&h, &id, "idle_timeout_s", 140.into());
    trigger(&h, &id);
    // Longer than hermes-cron's 140 s backstop: a fire held by the thread
    // still waiting on the model would end `timed_out` by then.
    let first = nth_settled(&h, "hung", 0, Duration::from_secs(300));
    assert_eq!(first["state"], "failed", "{first:#}\n{}", h.home.diag());
    assert_eq!(first["exit_code"], 1, "{first:#}");
    hermes_recorded_the_failure(&h, &id, "limit 20s");
    // Nothing of the first fire is left: the next one is no overlap skip.
    model.set_delay(Duration::ZERO);
    trigger(&h, &id);
    let second = nth_settled(&h, "hung", 1, SETTLE_TIMEOUT);
    assert_eq!(
        second["state"],
        "succeeded",
        "{second:#}\n{}",
        h.home.diag()
    );
    assert_eq!(hermes_executions(&h, &id, 2)[0]["status"], "completed");
}

#[test]
fn hermes_limits_are_read_from_its_settings_as_they_change() {
    let (h, _gw) = provider_home();
    let agent = hourly_agent_job(&h, "brief");
    let script = h.script_job("report", "echo report\n", "local", "0 9 * * *");
    // Hermes's defaults: 600 s of inactivity, a script timeout of 3600 s.
    backstop(&h, &agent, "idle_timeout_s", 720.into());
    backstop(&h, &script, "timeout_s", 3660.into());
    // Raised while the gateway runs, as `hermes config set` does it.
    let out = h.hermes(&["config", "set", "cron.script_timeout_seconds", "200"]);
    assert_eq!(out.code, 0, "{out:#?}");
    backstop(&h, &script, "timeout_s", 260.into());
    let env = h.home.path().join(".env");
    std::fs::write(&env, "HERMES_CRON_TIMEOUT=900\n").unwrap();
    backstop(&h, &agent, "idle_timeout_s", 1020.into());
    std::fs::write(
        &env,
        "HERMES_CRON_SCRIPT_TIMEOUT=30\nHERMES_CRON_TIMEOUT=0\n",
    )
    .unwrap();
    backstop(&h, &script, "timeout_s", 90.into());
    // No limit in Hermes, none in hermes-cron.
    backstop(&h, &agent, "idle_timeout_s", Value::Null);
}

#[test]
fn a_fire_stopped_or_killed_by_hermes_cron_leaves_hermes_records_terminal() {
    let model = FakeModel::start(ANSWER);
    model.set_delay(Duration::from_secs(3600));
    let (h, _gw) = provider_home();
    h.use_model(&model);
    // No limit of Hermes's own: only hermes-cron ends these fires.
    std::fs::write(h.home.path().join(".env"), "HERMES_CRON_TIMEOUT=0\n").unwrap();
    let id = hourly_agent_job(&h, "hung");
    backstop(&h, &id, "idle_timeout_s", Value::Null);
    let asking = |n: usize| {
        wait_for("the agent to ask the model", SETTLE_TIMEOUT, || {
            (model.asked() == n).then_some(())
        })
    };
    // 1. `hermes-cron stop`: its SIGTERM fails the run inside Hermes.
    trigger(&h, &id);
    asking(1);
    let running = h.home.runs_of("hung")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = h.home.run(&["stop", &running]).ok();
    assert!(out.stdout.contains("cancelled"), "{out}");
    let first = nth_settled(&h, "hung", 0, SETTLE_TIMEOUT);
    assert_eq!(first["state"], "cancelled", "{first:#}");
    hermes_recorded_the_failure(&h, &id, "stopped by hermes-cron");
    // 2. Killed outright: no chance to record. The next fire runs Hermes's
    // own recovery first, and the killed execution ends `unknown`.
    trigger(&h, &id);
    asking(2);
    let killed = std::process::Command::new("pkill")
        .args(["-KILL", "-f", &format!("fire.py {id}")])
        .status()
        .unwrap();
    assert!(killed.success(), "a fire.py of {id} was running");
    nth_settled(&h, "hung", 1, SETTLE_TIMEOUT);
    model.set_delay(Duration::ZERO);
    trigger(&h, &id);
    let third = nth_settled(&h, "hung", 2, SETTLE_TIMEOUT);
    assert_eq!(third["state"], "succeeded", "{third:#}\n{}", h.home.diag());
    let statuses: Vec<_> = hermes_executions(&h, &id, 3)
        .iter()
        .map(|e| e["status"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(statuses, ["completed", "unknown", "failed"], "newest first");
}

/// The codes of `doctor --json`'s findings once `want` is among them.
fn doctor_finds(h: &HermesHome, want: &str) -> Vec<Value> {
    h.home
        .wait_until(&format!("doctor to report {want}"), PATIENCE, || {
            let found = h.home.run(&["doctor", "--json"]).json()["findings"].clone();
            let found = found.as_array().cloned().unwrap_or_default();
            found.iter().any(|f| f["code"] == want).then_some(found)
        })
}

#[test]
fn doctor_reports_what_goes_wrong_on_the_hermes_side() {
    let (h, _gw) = provider_home();
    let id = h.script_job("lonely", "echo lonely\n", "local", "every 1h");
    managed(&h, &id);
    // A job with no next run, and a record with no id, written by Hermes's
    // own store code.
    let out = h.python(
        "from cron.jobs import load_jobs, save_jobs\n\
         jobs = load_jobs()\n\
         for j in jobs: j['next_run_at'] = None\n\
         jobs.append({'name': 'orphan', 'prompt': 'x', 'schedule': {'kind': 'interval', 'minutes': 60}})\n\
         save_jobs(jobs)",
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let found = doctor_finds(&h, "hermes_job_no_next_run");
    let no_next = found
        .iter()
        .find(|f| f["code"] == "hermes_job_no_next_run")
        .unwrap();
    assert_eq!(no_next["job_name"], "lonely", "{found:#?}");
    assert!(
        no_next["fix"].as_str().unwrap().contains(&id),
        "{no_next:#}"
    );
    let report = h.home.run(&["status", "--json"]).json();
    assert_eq!(report["hermes_jobs_without_next_run"], 1, "{report:#}");
    let text = h.home.run(&["status"]);
    assert!(
        text.stdout
            .contains("1 active Hermes job(s) with no next run"),
        "{text:#?}"
    );
    let left_out = found
        .iter()
        .find(|f| f["code"] == "hermes_job_left_out")
        .unwrap_or_else(|| panic!("the id-less record: {found:#?}"));
    assert!(
        left_out["problem"].as_str().unwrap().contains("job #2"),
        "{left_out:#}"
    );
    // status says what the gateway saw, as it does for the job with no next run.
    let report = status_with(&h, |r| r["hermes"]["left_out"].is_array());
    assert!(
        report["hermes"]["left_out"][0]
            .as_str()
            .unwrap()
            .contains("job #2"),
        "{report:#}"
    );
    assert!(
        h.home
            .run(&["status"])
            .stdout
            .contains("1 record(s) of cron/jobs.json left out"),
        "{report:#}"
    );
    std::fs::write(h.home.path().join("cron/jobs.json"), "{\"jobs\": [").unwrap();
    let found = doctor_finds(&h, "hermes_jobs_unreadable");
    let unreadable = found
        .iter()
        .find(|f| f["code"] == "hermes_jobs_unreadable")
        .unwrap();
    assert!(
        unreadable["problem"]
            .as_str()
            .unwrap()
            .contains("jobs.json"),
        "{unreadable:#}"
    );
    let report = status_with(&h, |r| r["hermes"]["jobs_unreadable"].is_string());
    assert!(
        report["hermes"]["jobs_unreadable"]
            .as_str()
            .unwrap()
            .contains("jobs.json"),
        "{report:#}"
    );
    let text = h.home.run(&["status"]).stdout;
    assert!(text.contains("cron/jobs.json cannot be read"), "{text}");
}

/// `status --json` once `ready` holds of it (the heartbeat is rewritten every few seconds).
fn status_with(h: &HermesHome, ready: impl Fn(&Value) -> bool) -> Value {
    h.home.wait_until("status to say it", PATIENCE, || {
        let report = h.home.run(&["status", "--json"]).json();
        ready(&report).then_some(report)
    })
}

#[test]
fn install_over_another_provider_keeps_it_and_uninstall_puts_it_back() {
    let h = HermesHome::new();
    let out = h.hermes(&["config", "set", "cron.provider", "chronos"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let py = h.python_path();
    let out = h
        .home
        .run(&["hermes", "install", "--python", py.to_str().unwrap()])
        .ok();
    assert!(out.stdout.contains("it was \"chronos\""), "{out}");
    assert_eq!(h.raw_config()["cron"]["provider"], "hermes-cron");
    // Installing again keeps what the first install kept.
    h.install_provider();
    let out = h.home.run(&["hermes", "uninstall"]).ok();
    assert!(out.stdout.contains("back to \"chronos\""), "{out}");
    assert_eq!(h.raw_config()["cron"]["provider"], "chronos");
}

#[test]
fn uninstall_after_an_install_that_made_config_yaml_leaves_no_file() {
    let h = HermesHome::new();
    let config = h.home.path().join("config.yaml");
    std::fs::remove_file(&config).unwrap();
    h.install_provider();
    assert!(config.exists(), "install set cron.provider");
    h.home.run(&["hermes", "uninstall"]).ok();
    assert!(!config.exists(), "{:?}", std::fs::read_to_string(&config));
}

/// A fire whose job ran but whose answer Hermes could not deliver (a chat
/// platform that is not set up): recorded `failed` with its own reason,
/// Hermes's delivery error in the output, a `delivery_failed` alert, and a
/// `doctor` finding naming the job and the fix.
#[test]
fn a_hermes_job_whose_answer_was_not_delivered_is_recorded_alerted_and_reported() {
    let hook = crate::support::hook_server::HookServer::start();
    let h = HermesHome::scoped();
    h.home.require_scopes();
    h.install_provider();
    h.home
        .config_set("cron.alert_webhook", &hook.url("/undelivered"));
    let mut gw = h.home.gateway(&[]);
    gw.wait_ready();
    let id = h.script_job("report", "echo the report\n", "telegram:12345", "every 1h");
    managed(&h, &id);
    trigger(&h, &id);
    let rows = settled(&h, "report", 1);
    let row = &rows[0];
    assert_eq!(row["state"], "failed", "{row:#}\n{}", h.home.diag());
    assert_eq!(row["reason_code"], "delivery_failed", "{row:#}");
    let output = h.home.output_of(row);
    assert!(output.contains("the report"), "{output}");
    assert!(
        output.contains("Hermes could not deliver its answer") && output.contains("telegram"),
        "{output}"
    );
    // Hermes itself recorded the job's run completed, and the delivery error.
    let execs = hermes_executions(&h, &id, 1);
    assert_eq!(execs[0]["status"], "completed", "{execs:#?}");
    h.home
        .wait_until("the delivery_failed alert", PATIENCE, || {
            hook.hits_on("/undelivered").into_iter().next()
        })
        .json()
        .get("kind")
        .map(|k| assert_eq!(k, "delivery_failed"))
        .expect("an alert kind");
    let found = doctor_finds(&h, "delivery_failed");
    let finding = found
        .iter()
        .find(|f| f["code"] == "delivery_failed")
        .unwrap();
    assert_eq!(finding["job_name"], "report", "{found:#?}");
    assert!(
        finding["fix"]
            .as_str()
            .unwrap()
            .contains("hermes gateway setup"),
        "{finding:#}"
    );
    gw.stop();
}

/// hermes-cron's row of the one run of `name` Hermes made by itself.
fn ran_outside(h: &HermesHome, name: &str) -> Value {
    let rows = settled(h, name, 1);
    let row = rows[0].clone();
    assert_eq!(row["source"], "hermes", "{row:#}");
    assert_eq!(row["reason_code"], "ran_outside", "{row:#}");
    assert_eq!(row["scheduled_for"], Value::Null, "{row:#}");
    assert_eq!(row["dispatch_mode"], Value::Null, "{row:#}");
    row
}

#[test]
fn runs_hermes_makes_by_itself_are_recorded_once_as_run_outside_hermes_cron() {
    let h = HermesHome::scoped();
    h.home.require_scopes();
    // A run of a job Hermes made before hermes-cron took the home over is its history, not ours.
    let early = h.script_job("early", "echo early\n", "local", "0 3 * * *");
    assert_eq!(h.hermes(&["cron", "run", &early]).code, 0);
    assert_eq!(hermes_executions(&h, &early, 1)[0]["source"], "direct");
    let (h, mut gw) = {
        h.install_provider();
        let mut gw = h.home.gateway(&[]);
        gw.wait_ready();
        (h, gw)
    };
    let ok = h.script_job("by-hand", "echo by-hand\n", "local", "0 3 * * *");
    let bad = h.script_job(
        "by-hand-bad",
        "echo broken >&2\nexit 3\n",
        "local",
        "0 3 * * *",
    );
    managed(&h, &ok);
    managed(&h, &bad);
    // What `hermes cron run` does in Hermes 0.19.0: it runs the job in its own process.
    for id in [&ok, &bad] {
        let out = h.hermes(&["cron", "run", id]);
        assert_eq!(out.code, 0, "{out:#?}");
    }
    let execs = hermes_executions(&h, &ok, 1);
    assert_eq!(execs[0]["source"], "direct", "{execs:#?}");
    assert_eq!(execs[0]["status"], "completed", "{execs:#?}");
    let row = ran_outside(&h, "by-hand");
    assert_eq!(row["state"], "succeeded", "{row:#}");
    let reason = row["reason"].as_str().unwrap();
    assert!(reason.contains("`hermes cron run`"), "{reason}");
    assert!(
        reason.contains(execs[0]["id"].as_str().unwrap()),
        "{reason}"
    );
    let failed = hermes_executions(&h, &bad, 1);
    assert_eq!(failed[0]["status"], "failed", "{failed:#?}");
    let row = ran_outside(&h, "by-hand-bad");
    assert_eq!(row["state"], "failed", "{row:#}");
    let error = failed[0]["error"].as_str().unwrap_or_default().trim();
    assert!(
        !error.is_empty() && row["reason"].as_str().unwrap().contains(error),
        "{row:#}\n{failed:#?}"
    );
    // Once each, whatever syncs after: a poke, another gateway.
    gw.stop();
    let mut gw = h.home.gateway(&[]);
    gw.wait_ready();
    h.hermes(&["cron", "pause", &ok]);
    h.home
        .wait_until("the pause to reach hermes-cron", PATIENCE, || {
            let job = h.home.run(&["show", &ok, "--json"]).json();
            (job["state"] == "paused").then_some(())
        });
    assert_eq!(h.home.runs_of("by-hand").len(), 1);
    assert_eq!(h.home.runs_of("by-hand-bad").len(), 1);
    assert!(
        h.home.runs_of("early").is_empty(),
        "{:#?}",
        h.home.runs(None)
    );
    gw.stop();
    // Reading Hermes's ledger left nothing beside it (no -wal or -shm of ours).
    for leftover in ["executions.db-wal", "executions.db-shm"] {
        let path = h.home.path().join("cron").join(leftover);
        assert!(!path.exists(), "{} was left", path.display());
    }
}
