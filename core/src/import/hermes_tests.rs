//! Hermes `jobs.json` import through the public entry points. The samples
//! follow the job records Hermes' `cron/jobs.py` writes (`create_job`).

use super::*;
use crate::ids::JobId;
use crate::schedule::{Timestamp, Tz};
use serde_json::{Value, json};

/// Friday 2026-05-01 10:00 UTC (12:00 in Berlin).
fn now() -> Timestamp {
    at("2026-05-01T10:00:00Z")
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// A job record as Hermes writes it, with `extra` merged over it.
fn record(id: &str, extra: Value) -> Value {
    let mut job = json!({
        "id": id,
        "name": null,
        "prompt": null,
        "skills": [],
        "skill": null,
        "model": null,
        "provider": null,
        "base_url": null,
        "script": null,
        "no_agent": false,
        "context_from": null,
        "schedule": {"kind": "interval", "minutes": 60, "display": "every 60m"},
        "schedule_display": "every 60m",
        "repeat": {"times": null, "completed": 0},
        "enabled": true,
        "state": "scheduled",
        "paused_at": null,
        "paused_reason": null,
        "created_at": "2026-04-20T09:00:00.123456+02:00",
        "next_run_at": "2026-05-01T12:30:00+02:00",
        "last_run_at": null,
        "last_status": null,
        "last_error": null,
        "deliver": "local",
        "origin": null,
        "enabled_toolsets": null,
        "workdir": null
    });
    let (Value::Object(base), Value::Object(extra)) = (&mut job, extra) else {
        unreachable!()
    };
    base.extend(extra);
    job
}

fn store(jobs: Vec<Value>) -> String {
    serde_json::to_string_pretty(&json!({"jobs": jobs, "updated_at": "2026-05-01T09:58:00+00:00"}))
        .unwrap()
}

fn import(text: &str) -> ImportPlan {
    parse_hermes_jobs(text, now(), Tz::UTC).unwrap_or_else(|e| panic!("{e}"))
}

fn next_of(job: &ImportedJob) -> Option<Timestamp> {
    job.next.as_ref().map(|f| f.at)
}

fn sample() -> String {
    store(vec![
        record(
            "a1b2c3d4e5f6",
            json!({
                "name": "disk watchdog", "script": "disk-watch.sh", "no_agent": true,
                "schedule": {"kind": "interval", "minutes": 5, "display": "every 5m"},
                "deliver": "telegram"
            }),
        ),
        record(
            "b2c3d4e5f6a1",
            json!({
                "name": "Stripe revenue", "script": "revenue.py", "no_agent": true,
                "schedule": {"kind": "cron", "expr": "0 9 * * *", "display": "0 9 * * *"},
                "timezone": "Europe/Berlin"
            }),
        ),
        record(
            "c3d4e5f6a1b2",
            json!({
                "name": "remind me", "script": "remind.sh", "no_agent": true,
                "schedule": {"kind": "once", "run_at": "2026-05-02T10:00:00.123456+02:00",
                             "display": "once at 2026-05-02 10:00"},
                "repeat": {"times": 1, "completed": 0}
            }),
        ),
        record(
            "d4e5f6a1b2c3",
            json!({
                "name": "Morning briefing",
                "prompt": "Gather my mail and calendar and send me the 5 most important items",
                "schedule": {"kind": "cron", "expr": "0 8 * * *"}, "deliver": "origin"
            }),
        ),
        record(
            "e5f6a1b2c3d4",
            json!({
                "name": "repo watcher", "script": "repo-watch.sh", "no_agent": true,
                "enabled": false, "state": "paused", "paused_at": "2026-04-30T08:00:00+00:00"
            }),
        ),
    ])
}

#[test]
fn one_job_per_schedule_kind_with_its_next_fire() {
    let plan = import(&sample());
    let got: Vec<_> = plan
        .jobs
        .iter()
        .map(|j| {
            (
                j.name.as_str(),
                j.schedule.as_str(),
                j.tz.as_deref(),
                next_of(j),
                j.enabled,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            // Anchored at the import: the first fire is one period later.
            (
                "disk watchdog",
                "every 5m",
                None,
                Some(at("2026-05-01T10:05:00Z")),
                true
            ),
            // 09:00 in Berlin (UTC+2); it is 12:00 there, so tomorrow.
            (
                "Stripe revenue",
                "0 9 * * *",
                Some("Europe/Berlin"),
                Some(at("2026-05-02T07:00:00Z")),
                true
            ),
            // 10:00:00.123456+02:00, rounded up to the second.
            (
                "remind me",
                "2026-05-02T08:00:01Z",
                None,
                Some(at("2026-05-02T08:00:01Z")),
                true
            ),
            (
                "repo watcher",
                "every 60m",
                None,
                Some(at("2026-05-01T11:00:00Z")),
                false
            ),
        ]
    );
    let origins: Vec<_> = plan.jobs.iter().map(|j| j.origin.as_str()).collect();
    assert_eq!(
        origins,
        [
            "jobs.json job a1b2c3d4e5f6",
            "jobs.json job b2c3d4e5f6a1",
            "jobs.json job c3d4e5f6a1b2",
            "jobs.json job e5f6a1b2c3d4",
        ]
    );
    let watchdog = &plan.jobs[0];
    assert!(watchdog.shell && watchdog.env.0.is_empty() && watchdog.workdir.is_none());
    assert_eq!(
        watchdog.argv,
        ["cd \"${HERMES_HOME:-$HOME/.hermes}/scripts\" && exec bash 'disk-watch.sh'"]
    );
    assert_eq!(
        plan.jobs[1].argv,
        ["cd \"${HERMES_HOME:-$HOME/.hermes}/scripts\" && exec python3 'revenue.py'"]
    );

    // Every job is accepted by the job layer as `add` would build it.
    for job in &plan.jobs {
        let built = job
            .to_job_input()
            .build(JobId::generate(), now(), Tz::UTC)
            .unwrap_or_else(|e| panic!("{}: {e}", job.origin));
        assert_eq!(built.next_run_at, next_of(job), "{}", job.origin);
    }

    let notes: Vec<_> = plan
        .notes
        .iter()
        .map(|n| (n.origin.as_str(), n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                "jobs.json job a1b2c3d4e5f6",
                "deliver \"telegram\" was dropped: hermes-cron keeps output under cron/output/ and delivers it nowhere"
            ),
            (
                "jobs.json job b2c3d4e5f6a1",
                "revenue.py runs under python3 from PATH; Hermes ran it under its own Python"
            ),
        ]
    );
}

#[test]
fn prompt_jobs_are_skipped_with_the_reason() {
    let plan = import(&store(vec![
        record(
            "d4e5f6a1b2c3",
            json!({"prompt": "Summarize my inbox every morning and send me the highlights"}),
        ),
        record(
            "f6a1b2c3d4e5",
            json!({"prompt": "Report on this data", "script": "collect.py"}),
        ),
        record("a1a1a1a1a1a1", json!({"skills": ["daily-brief", "news"]})),
        record("b1b1b1b1b1b1", json!({"no_agent": true})),
        record("c1c1c1c1c1c1", json!({})),
    ]));
    assert!(plan.jobs.is_empty());
    let skipped: Vec<_> = plan
        .skipped
        .iter()
        .map(|s| (s.origin.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "jobs.json job d4e5f6a1b2c3",
                "agent-prompt job (prompt \"Summarize my inbox every morning and sen...\") is not importable: it runs in a Hermes agent, and hermes-cron runs commands, not agent prompts"
            ),
            (
                "jobs.json job f6a1b2c3d4e5",
                "agent-prompt job (prompt \"Report on this data\") is not importable: it runs in a Hermes agent; its script collect.py only feeds the prompt, and hermes-cron runs commands, not agent prompts"
            ),
            (
                "jobs.json job a1a1a1a1a1a1",
                "agent skill job (skills daily-brief, news) is not importable: it runs in a Hermes agent, and hermes-cron runs commands, not agent prompts"
            ),
            (
                "jobs.json job b1b1b1b1b1b1",
                "no_agent is set but there is no script: nothing to run"
            ),
            (
                "jobs.json job c1c1c1c1c1c1",
                "nothing to run: no script, prompt or skills"
            ),
        ]
    );
}

#[test]
fn disabled_and_paused_jobs_are_imported_disabled() {
    let plan = import(&store(vec![
        record("a1", json!({"script": "a.sh", "enabled": false})),
        record("a2", json!({"script": "b.sh", "state": "paused"})),
        record(
            "a3",
            json!({"script": "c.sh", "enabled": null, "state": null}),
        ),
    ]));
    let enabled: Vec<_> = plan.jobs.iter().map(|j| j.enabled).collect();
    assert_eq!(enabled, [false, false, true]);
}

#[test]
fn finished_jobs_are_skipped() {
    let once = |run_at: &str| json!({"kind": "once", "run_at": run_at});
    let plan = import(&store(vec![
        record("done1", json!({"script": "a.sh", "state": "completed"})),
        record(
            "done2",
            json!({"script": "a.sh", "repeat": {"times": 3, "completed": 3}}),
        ),
        record(
            "done3",
            json!({"script": "a.sh", "schedule": once("2026-05-03T09:00:00+00:00"),
                   "last_run_at": "2026-04-30T09:00:00+00:00"}),
        ),
        record(
            "past",
            json!({"script": "a.sh", "schedule": once("2026-04-30T09:00:00+00:00")}),
        ),
        record(
            "left",
            json!({"script": "a.sh", "repeat": {"times": 5, "completed": 2}}),
        ),
    ]));
    let skipped: Vec<_> = plan
        .skipped
        .iter()
        .map(|s| (s.origin.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "jobs.json job done1",
                "finished in Hermes (state \"completed\")"
            ),
            (
                "jobs.json job done2",
                "finished in Hermes: ran 3 of 3 times"
            ),
            (
                "jobs.json job done3",
                "one-shot already ran in Hermes at 2026-04-30T09:00:00+00:00"
            ),
            (
                "jobs.json job past",
                "one-shot at 2026-04-30 09:00:00 UTC is in the past"
            ),
        ]
    );
    assert_eq!(plan.jobs.len(), 1);
    assert_eq!(plan.notes.len(), 1);
    assert_eq!(
        plan.notes[0].message,
        "repeat limit of 5 runs (2 done) is not supported: imported without a limit"
    );
}

#[test]
fn bad_json_is_an_error_with_line_and_column() {
    let text = "{\n  \"jobs\": [\n    {\"id\": \"x\",}\n  ]\n}\n";
    let err = parse_hermes_jobs(text, now(), Tz::UTC).unwrap_err();
    let ImportError::Json {
        file,
        line,
        column,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((file.as_str(), *line, *column), ("jobs.json", 3, 16));
    assert_eq!(message, "trailing comma");
    assert_eq!(
        err.to_string(),
        "jobs.json line 3 column 16: invalid JSON: trailing comma"
    );
    // Detection picks JSON from the first character, so the error is the JSON one.
    let err = detect_and_parse("export.txt", text, now(), Tz::UTC).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("export.txt line 3 column 16: invalid JSON"),
        "{err}"
    );
    let err = detect_and_parse("jobs.json", "", now(), Tz::UTC).unwrap_err();
    assert!(matches!(err, ImportError::Json { line: 1, .. }), "{err:?}");
}

#[test]
fn schema_errors_name_the_job_field_and_token_and_import_nothing() {
    let good = record("good", json!({"script": "ok.sh"}));
    let cases = [
        (
            record(
                "j1",
                json!({"script": "a.sh", "schedule": {"kind": "rrule", "rule": "FREQ=DAILY"}}),
            ),
            "j1",
            "schedule.kind",
            "rrule",
        ),
        (
            record(
                "j2",
                json!({"script": "a.sh", "schedule": {"kind": "cron", "expr": "0 25 * * *"}}),
            ),
            "j2",
            "schedule.expr",
            "25",
        ),
        (
            record(
                "j3",
                json!({"script": "a.sh", "schedule": {"kind": "interval", "minutes": 0}}),
            ),
            "j3",
            "schedule.minutes",
            "0m",
        ),
        (
            record("j4", json!({"script": "a.sh", "timezone": "Mars/Olympus"})),
            "j4",
            "timezone",
            "Mars/Olympus",
        ),
        (
            record("j5", json!({"script": "a.sh", "workdir": "relative/dir"})),
            "j5",
            "workdir",
            "relative/dir",
        ),
        (
            record("j6", json!({"script": "a.sh", "schedule": null})),
            "j6",
            "schedule",
            "",
        ),
        (record("j7", json!({"script": 7})), "j7", "script", "7"),
        (json!("not a job"), "#2", "job", "\"not a job\""),
    ];
    for (bad, job, field, token) in cases {
        let text = store(vec![good.clone(), bad]);
        let err = parse_hermes_jobs(&text, now(), Tz::UTC).expect_err(job);
        let ImportError::Job {
            file,
            job: got_job,
            field: got_field,
            token: got_token,
            message,
        } = &err
        else {
            panic!("{job}: {err:?}")
        };
        assert_eq!(
            (
                file.as_str(),
                got_job.as_str(),
                got_field.as_str(),
                got_token.as_str()
            ),
            ("jobs.json", job, field, token),
            "{message}"
        );
        assert!(
            err.to_string()
                .starts_with(&format!("jobs.json job {job}: {field}: ")),
            "{err}"
        );
    }
}

#[test]
fn top_level_shapes() {
    let bare = serde_json::to_string(&json!([record("x1", json!({"script": "a.sh"}))])).unwrap();
    assert_eq!(import(&bare).jobs.len(), 1);
    assert_eq!(import("{\"jobs\": []}"), ImportPlan::default());
    for (text, expected) in [
        (
            "{\"version\": 1}",
            "jobs.json: no \"jobs\" array; expected a Hermes cron/jobs.json ({\"jobs\": [...]})",
        ),
        (
            "{\"jobs\": {}}",
            "jobs.json: \"jobs\" is an object, expected an array of jobs",
        ),
        (
            "42",
            "jobs.json: the top level is a number, expected {\"jobs\": [...]}",
        ),
    ] {
        let err = parse_hermes_jobs(text, now(), Tz::UTC).unwrap_err();
        assert!(matches!(err, ImportError::Shape { .. }), "{err:?}");
        assert_eq!(err.to_string(), expected);
    }
}

#[test]
fn store_path_gives_absolute_scripts_and_workdirs() {
    let file = "/home/ann/.hermes/cron/jobs.json";
    let text = store(vec![
        record("a1", json!({"name": "disk", "script": "watch/disk.sh"})),
        record(
            "a2",
            json!({"name": "rep", "script": "rep.py", "workdir": "/srv/reports"}),
        ),
    ]);
    let plan = detect_and_parse(file, &text, now(), Tz::UTC).unwrap();
    let disk = &plan.jobs[0];
    assert_eq!(
        disk.argv,
        ["bash", "/home/ann/.hermes/scripts/watch/disk.sh"]
    );
    assert!(!disk.shell);
    assert_eq!(
        disk.workdir.as_deref(),
        Some(std::path::Path::new("/home/ann/.hermes/scripts/watch"))
    );
    assert_eq!(disk.origin, "/home/ann/.hermes/cron/jobs.json job a1");
    let rep = &plan.jobs[1];
    assert_eq!(rep.argv, ["python3", "/home/ann/.hermes/scripts/rep.py"]);
    assert_eq!(
        rep.workdir.as_deref(),
        Some(std::path::Path::new("/srv/reports"))
    );
}

#[test]
fn croniter_seconds_and_naive_times_and_string_schedules() {
    let plan = import(&store(vec![
        // croniter: seconds are the 6th field.
        record(
            "s1",
            json!({"script": "a.sh", "schedule": {"kind": "cron", "expr": "0 9 * * * 30"}}),
        ),
        // Older Hermes: naive run_at, read in the job's zone.
        record(
            "s2",
            json!({"script": "a.sh", "timezone": "Asia/Tokyo",
                   "schedule": {"kind": "once", "run_at": "2026-05-02T09:00:00"}}),
        ),
        // A schedule left as the string Hermes' API accepts.
        record("s3", json!({"script": "a.sh", "schedule": "every 2h"})),
        record("s4", json!({"script": "a.sh", "schedule": "30 6 * * 1-5"})),
    ]));
    let got: Vec<_> = plan
        .jobs
        .iter()
        .map(|j| (j.schedule.as_str(), next_of(j)))
        .collect();
    assert_eq!(
        got,
        [
            ("30 0 9 * * *", Some(at("2026-05-02T09:00:30Z"))),
            ("2026-05-02T09:00:00", Some(at("2026-05-02T00:00:00Z"))),
            ("every 2h", Some(at("2026-05-01T12:00:00Z"))),
            ("30 6 * * 1-5", Some(at("2026-05-04T06:30:00Z"))),
        ]
    );
}

#[test]
fn names_fall_back_to_the_script_and_stay_unique() {
    let plan = import(&store(vec![
        record("n1", json!({"name": "backup", "script": "a.sh"})),
        record("n2", json!({"name": "backup", "script": "b.sh"})),
        record(
            "n3",
            json!({"name": "  ", "script": "tools/nightly-sync.py"}),
        ),
        record(
            "n4",
            json!({"name": "0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f", "script": "c.sh"}),
        ),
    ]));
    let names: Vec<_> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["backup", "backup-n2", "nightly-sync", "c"]);
}
