//! Hermes `jobs.json` import through the public entry points. The samples
//! follow the job records Hermes' `cron/jobs.py` writes (`create_job`); the
//! files under `fixtures/` were written by the real Hermes Agent 0.19.0
//! (`fixtures/make.sh`).

use super::*;
use crate::ids::JobId;
use crate::schedule::{Timestamp, Tz, ZoneTable};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

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
    parse_hermes_jobs(text, now(), Tz::UTC, &ZoneTable::compiled_in_only())
        .unwrap_or_else(|e| panic!("{e}"))
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
            .build(
                JobId::generate(),
                now(),
                crate::job::FallbackZone::Configured(Tz::UTC),
                &ZoneTable::compiled_in_only(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", job.origin));
        assert_eq!(built.next_run_at, next_of(job), "{}", job.origin);
    }

    let notes: Vec<_> = plan
        .notes
        .iter()
        .map(|n| (n.origin.as_str(), n.code, n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                "jobs.json job a1b2c3d4e5f6",
                NoteCode::Dropped,
                "deliver \"telegram\" was dropped: hermes-cron keeps output under cron/output/ and delivers it nowhere"
            ),
            (
                "jobs.json job b2c3d4e5f6a1",
                NoteCode::RunsDifferently,
                "revenue.py runs under python3 from PATH; Hermes ran it under its own Python"
            ),
            (
                "jobs.json",
                NoteCode::RunsTwice,
                "Hermes keeps firing the originals: each of the 3 imported active job(s) runs twice until its original is paused in Hermes (`hermes cron pause <id>`: a1b2c3d4e5f6, b2c3d4e5f6a1, c3d4e5f6a1b2) (to have hermes-cron fire Hermes's jobs without copying them, use `hermes-cron hermes install` instead of importing)"
            ),
        ]
    );
    let ids: Vec<_> = plan.jobs.iter().map(|j| j.hermes_id.as_deref()).collect();
    assert_eq!(
        ids,
        [
            Some("a1b2c3d4e5f6"),
            Some("b2c3d4e5f6a1"),
            Some("c3d4e5f6a1b2"),
            Some("e5f6a1b2c3d4")
        ]
    );
    assert_eq!(
        plan.jobs[3].pause_reason.as_deref(),
        Some("paused in Hermes at 2026-04-30T08:00:00+00:00")
    );
    assert_eq!(plan.jobs[0].pause_reason, None);
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
    let codes: Vec<_> = plan.skipped.iter().map(|s| s.code).collect();
    use SkipCode::{AgentJob, NothingToRun};
    assert_eq!(
        codes,
        [AgentJob, AgentJob, AgentJob, NothingToRun, NothingToRun]
    );
    // Nothing was imported: Hermes firing its jobs is no news.
    assert!(plan.notes.is_empty(), "{:?}", plan.notes);
}

/// Hermes fires a job while `enabled` is true; `hermes cron pause` sets
/// `enabled: false, state: "paused"` with its `paused_reason` (null from the
/// CLI, the agent's text from the cronjob tool), and a provider's claim also
/// refuses `state: "paused"`. Either one imports the job paused.
#[test]
fn disabled_and_paused_jobs_are_imported_paused_with_the_reason() {
    let plan = import(&store(vec![
        record("a1", json!({"script": "a.sh", "enabled": false})),
        record("a2", json!({"script": "b.sh", "state": "paused"})),
        record(
            "a3",
            json!({"script": "c.sh", "enabled": null, "state": null}),
        ),
        record(
            "a4",
            json!({"script": "d.sh", "enabled": false, "state": "paused",
                   "paused_at": "2026-04-30T08:00:00+02:00", "paused_reason": "  disk full until Friday "}),
        ),
        record(
            "a5",
            json!({"script": "e.sh", "enabled": true, "state": "error",
                   "last_error": "Failed to compute next run"}),
        ),
        record(
            "a6",
            json!({"script": "f.sh", "enabled": false, "paused_reason": 7}),
        ),
    ]));
    let got: Vec<_> = plan
        .jobs
        .iter()
        .map(|j| (j.enabled, j.pause_reason.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (false, Some("disabled in Hermes (enabled: false)")),
            (false, Some("paused in Hermes")),
            (true, None),
            (false, Some("disk full until Friday")),
            // Hermes keeps firing a recurring job in state "error".
            (true, None),
            (false, Some("disabled in Hermes (enabled: false)")),
        ]
    );
    let warning = plan.notes.last().unwrap();
    assert_eq!(warning.code, NoteCode::RunsTwice);
    assert!(
        warning
            .message
            .contains("each of the 2 imported active job(s)")
            && warning.message.contains(": a3, a5)"),
        "{}",
        warning.message
    );
}

#[test]
fn when_every_imported_job_is_paused_the_warning_is_about_resuming() {
    let plan = import(&store(vec![record(
        "p1",
        json!({"script": "a.sh", "enabled": false, "state": "paused"}),
    )]));
    let notes: Vec<_> = plan
        .notes
        .iter()
        .map(|n| (n.origin.as_str(), n.code, n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [(
            "jobs.json",
            NoteCode::RunsTwice,
            "Hermes keeps its own copy of each imported job: they are paused here as they are there, and one resumed in both places runs twice; keep the original paused in Hermes (`hermes cron pause <id>`) (to have hermes-cron fire Hermes's jobs without copying them, use `hermes-cron hermes install` instead of importing)"
        )]
    );
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
    assert!(plan.skipped.iter().all(|s| s.code == SkipCode::Finished));
    assert_eq!(plan.jobs.len(), 1);
    assert_eq!(plan.notes.len(), 2);
    assert_eq!(
        plan.notes[0].message,
        "repeat limit of 5 runs (2 done) is not supported: imported without a limit"
    );
    assert_eq!(plan.notes[1].code, NoteCode::RunsTwice);
}

#[test]
fn bad_json_is_an_error_with_line_and_column() {
    let text = "{\n  \"jobs\": [\n    {\"id\": \"x\",}\n  ]\n}\n";
    let err = parse_hermes_jobs(text, now(), Tz::UTC, &ZoneTable::compiled_in_only()).unwrap_err();
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
    let err = detect_and_parse(
        "export.txt",
        text,
        now(),
        Tz::UTC,
        &ZoneTable::compiled_in_only(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("export.txt line 3 column 16: invalid JSON"),
        "{err}"
    );
    let err = detect_and_parse(
        "jobs.json",
        "",
        now(),
        Tz::UTC,
        &ZoneTable::compiled_in_only(),
    )
    .unwrap_err();
    assert!(matches!(err, ImportError::Json { line: 1, .. }), "{err:?}");
}

/// A record that does not fit the schema is skipped alone, naming the field;
/// the records around it are imported.
#[test]
fn malformed_records_are_skipped_alone_naming_the_field() {
    let good = record("good", json!({"script": "ok.sh"}));
    let cases = [
        (
            record(
                "j1",
                json!({"script": "a.sh", "schedule": {"kind": "rrule", "rule": "FREQ=DAILY"}}),
            ),
            "j1",
            "schedule.kind: unknown schedule kind \"rrule\"; expected cron, interval or once",
        ),
        (
            record(
                "j2",
                json!({"script": "a.sh", "schedule": {"kind": "cron", "expr": "0 25 * * *"}}),
            ),
            "j2",
            "schedule.expr: ",
        ),
        (
            record(
                "j3",
                json!({"script": "a.sh", "schedule": {"kind": "interval", "minutes": 0}}),
            ),
            "j3",
            "schedule.minutes: ",
        ),
        (
            record("j4", json!({"script": "a.sh", "timezone": "Mars/Olympus"})),
            "j4",
            "timezone: ",
        ),
        (
            record("j5", json!({"script": "a.sh", "workdir": "relative/dir"})),
            "j5",
            "workdir: \"relative/dir\" is not an absolute path",
        ),
        (
            record("j6", json!({"script": "a.sh", "schedule": null})),
            "j6",
            "schedule: missing; expected",
        ),
        (
            record("j7", json!({"script": 7})),
            "j7",
            "script: expected a string, found a number",
        ),
        (
            record("j8", json!({"script": "a.sh", "enabled": "yes"})),
            "j8",
            "enabled: expected true or false, found a string",
        ),
        (
            json!("not a job"),
            "#2",
            "job: expected a job object, found a string",
        ),
    ];
    for (bad, job, reason) in cases {
        let later = record("later", json!({"script": "later.sh"}));
        let text = store(vec![good.clone(), bad, later]);
        let plan = parse_hermes_jobs(&text, now(), Tz::UTC, &ZoneTable::compiled_in_only())
            .unwrap_or_else(|e| panic!("{job}: {e}"));
        let names: Vec<_> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["ok", "later"], "{job}");
        assert_eq!(plan.skipped.len(), 1, "{job}: {:?}", plan.skipped);
        let skipped = &plan.skipped[0];
        assert_eq!(skipped.origin, format!("jobs.json job {job}"));
        assert_eq!(skipped.code, SkipCode::Malformed);
        let expected = format!("malformed record: {reason}");
        assert!(
            skipped.reason.starts_with(&expected),
            "{job}: {:?} does not start with {expected:?}",
            skipped.reason
        );
    }
}

#[test]
fn top_level_shapes() {
    let bare = serde_json::to_string(&json!([record("x1", json!({"script": "a.sh"}))])).unwrap();
    assert_eq!(import(&bare).jobs.len(), 1);
    assert_eq!(import("{\"jobs\": []}"), ImportPlan::default());
    assert_eq!(import("{\"jobs\": {}}"), ImportPlan::default());
    for (text, expected) in [
        (
            "{\"version\": 1}",
            "jobs.json: no \"jobs\" array; expected a Hermes cron/jobs.json ({\"jobs\": [...]})",
        ),
        (
            "{\"jobs\": 3}",
            "jobs.json: \"jobs\" is a number, expected an array of jobs or an object keyed by job id",
        ),
        (
            "42",
            "jobs.json: the top level is a number, expected {\"jobs\": [...]}",
        ),
        // Not a jobs.json at all: nothing in it is a job.
        (
            "[1, \"two\", null]",
            "jobs.json: no entry of \"jobs\" is a job object (the first is a number); not a Hermes cron/jobs.json",
        ),
        (
            "{\"jobs\": {\"a\": 1}}",
            "jobs.json: no entry of \"jobs\" is a job object (the first is a number); not a Hermes cron/jobs.json",
        ),
        // One job where the jobs should be.
        (
            "{\"jobs\": {\"id\": \"abc\", \"script\": \"a.sh\", \"schedule\": {\"kind\": \"interval\", \"minutes\": 5}}}",
            "jobs.json: \"jobs\" is one job (it has \"id\"), expected an array of jobs or an object keyed by job id",
        ),
    ] {
        let err =
            parse_hermes_jobs(text, now(), Tz::UTC, &ZoneTable::compiled_in_only()).unwrap_err();
        assert!(matches!(err, ImportError::Shape { .. }), "{err:?}");
        assert_eq!(err.to_string(), expected);
    }
}

/// The id-keyed shape: the key is the id of a record that has none, and the
/// legacy `job_id` is an id too.
#[test]
fn jobs_keyed_by_id_are_read_in_id_order() {
    let text = json!({"jobs": {
        "bbbbbbbbbbbb": {"name": "b", "script": "b.sh", "schedule": {"kind": "interval", "minutes": 5}},
        "aaaaaaaaaaaa": {"id": "aaaaaaaaaaaa", "name": "a", "script": "a.sh",
                         "schedule": {"kind": "interval", "minutes": 5}},
        "cccccccccccc": "not a job",
        "dddddddddddd": {"job_id": "legacy000001", "script": "d.sh",
                         "schedule": {"kind": "interval", "minutes": 5}}
    }})
    .to_string();
    let plan = import(&text);
    let got: Vec<_> = plan
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.hermes_id.as_deref(), j.origin.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", Some("aaaaaaaaaaaa"), "jobs.json job aaaaaaaaaaaa"),
            ("b", Some("bbbbbbbbbbbb"), "jobs.json job bbbbbbbbbbbb"),
            ("d", Some("legacy000001"), "jobs.json job legacy000001"),
        ]
    );
    assert_eq!(plan.skipped.len(), 1);
    assert_eq!(plan.skipped[0].origin, "jobs.json job cccccccccccc");
    assert_eq!(plan.skipped[0].code, SkipCode::Malformed);
    assert_eq!(plan.notes[0].code, NoteCode::KeyedById);
    assert_eq!(plan.notes[0].origin, "jobs.json");
    assert!(
        plan.notes[0]
            .message
            .starts_with("\"jobs\" is an object keyed by job id; read as its 4 jobs, in id order"),
        "{}",
        plan.notes[0].message
    );
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
    let plan =
        detect_and_parse(file, &text, now(), Tz::UTC, &ZoneTable::compiled_in_only()).unwrap();
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
    let renames: Vec<_> = plan
        .notes
        .iter()
        .filter(|n| n.code == NoteCode::Renamed)
        .map(|n| (n.origin.as_str(), n.message.as_str()))
        .collect();
    assert_eq!(
        renames,
        [
            (
                "jobs.json job n2",
                "name \"backup\" is taken by jobs.json job n1: imported as \"backup-n2\""
            ),
            (
                "jobs.json job n4",
                "name \"0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f\" is not a valid job name (--name: \"0190d5e2-8a3b-7c4d-9e5f-0a1b2c3d4e5f\" looks like a job id; pick a name that is not a UUID): imported as \"c\""
            ),
        ]
    );
}

// ---------------------------------------------------------------------------
// Files written by the real Hermes Agent 0.19.0 (`fixtures/make.sh`): ten
// jobs made by `hermes cron create` in the Hermes zone Europe/Berlin, `sync`
// paused by `hermes cron pause` (no reason), `backup` by the cronjob tool
// with a reason. The scripts of all but `gone` existed.

const REAL: &str = include_str!("fixtures/hermes-0.19.0-jobs.json");
const REAL_KEYED: &str = include_str!("fixtures/hermes-0.19.0-jobs-keyed.json");
const REAL_BAD: &str = include_str!("fixtures/hermes-0.19.0-jobs-bad.json");
const HOME: &str = "/home/ann/.hermes";
const FILE: &str = "/home/ann/.hermes/cron/jobs.json";

/// 2026-12-01 16:00 UTC, half an hour after the fixtures were made.
fn real_now() -> Timestamp {
    at("2026-12-01T16:00:00Z")
}

/// The scripts `make.sh` created, under [`HOME`].
fn real_script_exists(path: &Path) -> bool {
    [
        "disk.sh",
        "report.py",
        "backup.sh",
        "sync.sh",
        "disk2.sh",
        "remind.sh",
        "clean.sh",
    ]
    .iter()
    .any(|s| path == Path::new(HOME).join("scripts").join(s))
}

fn real_import(text: &str, existing: &[ExistingJob]) -> ImportPlan {
    let is_file = real_script_exists;
    let zones = ZoneTable::compiled_in_only();
    let cx = ImportContext {
        existing,
        is_file: Some(&is_file),
        ..ImportContext::new(real_now(), Tz::Europe__Berlin, &zones)
    };
    import_file(FILE, text, &cx).unwrap_or_else(|e| panic!("{e}"))
}

/// (name, hermes id, schedule, enabled, pause reason) of each job.
type Row<'a> = (&'a str, &'a str, &'a str, bool, Option<&'a str>);

fn rows(plan: &ImportPlan) -> Vec<Row<'_>> {
    plan.jobs
        .iter()
        .map(|j| {
            (
                j.name.as_str(),
                j.hermes_id.as_deref().unwrap_or("-"),
                j.schedule.as_str(),
                j.enabled,
                j.pause_reason.as_deref(),
            )
        })
        .collect()
}

const REAL_ROWS: [Row<'static>; 9] = [
    ("disk", "cb937e0bc087", "every 60m", true, None),
    ("report", "df84e607c9b2", "30 6 * * 1-5", true, None),
    (
        "backup",
        "8c458907ded8",
        "0 2 * * *",
        false,
        Some("disk full until Friday"),
    ),
    (
        "sync",
        "7bec3fb6cb9e",
        "every 30m",
        false,
        Some("paused in Hermes at 2026-12-01T16:22:40.841038+01:00"),
    ),
    ("gone", "79192208b125", "every 1440m", true, None),
    (
        "disk-75147f6943af",
        "75147f6943af",
        "every 120m",
        true,
        None,
    ),
    // croniter's seconds-last 6th field, moved first.
    ("seconds", "9afd0c67db86", "30 0 9 * * *", true, None),
    // run_at 18:22:39.488400+01:00, rounded up to the second.
    ("remind", "83e1b84253f2", "2026-12-01T17:22:40Z", true, None),
    ("clean", "50e4199e903e", "every 1440m", true, None),
];

#[test]
fn a_real_hermes_file_imports_its_script_jobs_with_their_ids_and_pauses() {
    let plan = real_import(REAL, &[]);
    assert_eq!(rows(&plan), REAL_ROWS);
    // The next fires agree with the next_run_at Hermes wrote, where Hermes
    // does not count from the job's creation (intervals are anchored at the
    // import here).
    let next = |name: &str| {
        let job = plan.jobs.iter().find(|j| j.name == name).unwrap();
        job.next.as_ref().map(|f| f.at)
    };
    assert_eq!(next("report"), Some(at("2026-12-02T05:30:00Z")));
    assert_eq!(next("backup"), Some(at("2026-12-02T01:00:00Z")));
    assert_eq!(next("seconds"), Some(at("2026-12-02T08:00:30Z")));
    assert_eq!(next("remind"), Some(at("2026-12-01T17:22:40Z")));
    assert_eq!(next("disk"), Some(at("2026-12-01T17:00:00Z")));

    let disk = &plan.jobs[0];
    assert_eq!(disk.argv, ["bash", "/home/ann/.hermes/scripts/disk.sh"]);
    assert!(!disk.shell && disk.env.0.is_empty());
    assert_eq!(
        disk.workdir.as_deref(),
        Some(Path::new("/home/ann/.hermes/scripts"))
    );
    assert_eq!(
        disk.origin,
        "/home/ann/.hermes/cron/jobs.json job cb937e0bc087"
    );

    let skipped: Vec<_> = plan
        .skipped
        .iter()
        .map(|s| (s.origin.as_str(), s.code))
        .collect();
    assert_eq!(
        skipped,
        [(
            "/home/ann/.hermes/cron/jobs.json job affe0c71f906",
            SkipCode::AgentJob
        )]
    );

    let notes: Vec<_> = plan
        .notes
        .iter()
        .map(|n| {
            let id = n.origin.rsplit(' ').next().unwrap();
            (id, n.code, n.message.as_str())
        })
        .collect();
    assert_eq!(
        notes,
        [
            (
                "df84e607c9b2",
                NoteCode::RunsDifferently,
                "report.py runs under python3 from PATH; Hermes ran it under its own Python"
            ),
            (
                "79192208b125",
                NoteCode::ScriptMissing,
                "script \"gone.sh\" does not exist at /home/ann/.hermes/scripts/gone.sh: the job fails until it is there"
            ),
            (
                "75147f6943af",
                NoteCode::Renamed,
                "name \"disk\" is taken by /home/ann/.hermes/cron/jobs.json job cb937e0bc087: imported as \"disk-75147f6943af\""
            ),
            (
                "50e4199e903e",
                NoteCode::RunsDifferently,
                "workdir /tmp: hermes-cron runs the script there; Hermes 0.19.0 ran it in the script's own directory (it does not apply workdir to script jobs)"
            ),
            (
                "/home/ann/.hermes/cron/jobs.json",
                NoteCode::RunsTwice,
                "Hermes keeps firing the originals: each of the 7 imported active job(s) runs twice until its original is paused in Hermes (`hermes cron pause <id>`: cb937e0bc087, df84e607c9b2, 79192208b125, 75147f6943af, 9afd0c67db86, 83e1b84253f2, 50e4199e903e) (to have hermes-cron fire Hermes's jobs without copying them, use `hermes-cron hermes install` instead of importing)"
            ),
        ]
    );

    // Every job is accepted by the job layer as `add` would build it.
    for job in &plan.jobs {
        let built = job
            .to_job_input()
            .build(
                JobId::generate(),
                real_now(),
                crate::job::FallbackZone::Configured(Tz::Europe__Berlin),
                &ZoneTable::compiled_in_only(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", job.origin));
        assert_eq!(built.next_run_at, job.next.as_ref().map(|f| f.at));
    }
}

#[test]
fn the_same_jobs_keyed_by_id_import_the_same_in_id_order() {
    let list = real_import(REAL, &[]);
    let keyed = real_import(REAL_KEYED, &[]);
    let mut expected: Vec<_> = list.jobs.clone();
    expected.sort_by(|a, b| a.hermes_id.cmp(&b.hermes_id));
    // Names follow the order read: the second "disk" (75147f6943af) now
    // comes first and keeps the name.
    let strip = |jobs: &[ImportedJob]| -> Vec<_> {
        jobs.iter()
            .map(|j| {
                (
                    j.hermes_id.clone(),
                    j.schedule.clone(),
                    j.argv.clone(),
                    j.enabled,
                )
            })
            .collect()
    };
    assert_eq!(strip(&keyed.jobs), strip(&expected));
    let disks: Vec<_> = keyed
        .jobs
        .iter()
        .filter(|j| j.name.starts_with("disk"))
        .map(|j| (j.name.as_str(), j.hermes_id.as_deref().unwrap()))
        .collect();
    assert_eq!(
        disks,
        [
            ("disk", "75147f6943af"),
            ("disk-cb937e0bc087", "cb937e0bc087")
        ]
    );
    assert_eq!(keyed.notes[0].code, NoteCode::KeyedById);
    assert_eq!(keyed.skipped.len(), 1);
}

#[test]
fn a_hand_broken_record_of_a_real_file_is_skipped_and_the_rest_imported() {
    let plan = real_import(REAL_BAD, &[]);
    let expected: Vec<_> = REAL_ROWS
        .iter()
        .filter(|r| r.0 != "report")
        .copied()
        .collect();
    assert_eq!(rows(&plan), expected);
    let skipped: Vec<_> = plan
        .skipped
        .iter()
        .map(|s| (s.origin.rsplit(' ').next().unwrap(), s.code))
        .collect();
    assert_eq!(
        skipped,
        [
            ("df84e607c9b2", SkipCode::Malformed),
            ("affe0c71f906", SkipCode::AgentJob)
        ]
    );
    assert!(
        plan.skipped[0]
            .reason
            .starts_with("malformed record: schedule.expr: "),
        "{}",
        plan.skipped[0].reason
    );
    assert!(
        plan.skipped[0].reason.contains("25"),
        "{}",
        plan.skipped[0].reason
    );
}

#[test]
fn existing_jobs_take_their_names_and_their_hermes_jobs_are_not_imported_again() {
    let existing = [
        ExistingJob {
            id: "01a22a96-d658-7175-a525-7d6f0e34c20f".into(),
            name: "report".into(),
            hermes_id: None,
            managed: false,
        },
        ExistingJob {
            id: "01a22a96-d658-7175-a525-7d6f0e34c210".into(),
            name: "disk".into(),
            hermes_id: Some("cb937e0bc087".into()),
            managed: false,
        },
    ];
    let plan = real_import(REAL, &existing);
    let names: Vec<_> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "report-df84e607c9b2",
            "backup",
            "sync",
            "gone",
            "disk-75147f6943af",
            "seconds",
            "remind",
            "clean"
        ]
    );
    let already = &plan.skipped[0];
    assert_eq!(
        (
            already.origin.as_str(),
            already.code,
            already.reason.as_str()
        ),
        (
            "/home/ann/.hermes/cron/jobs.json job cb937e0bc087",
            SkipCode::AlreadyImported,
            "already imported as job \"disk\" (01a22a96-d658-7175-a525-7d6f0e34c210)"
        )
    );
    let renames: Vec<_> = plan
        .notes
        .iter()
        .filter(|n| n.code == NoteCode::Renamed)
        .map(|n| n.message.as_str())
        .collect();
    assert_eq!(
        renames,
        [
            "name \"report\" is taken by an existing job (01a22a96-d658-7175-a525-7d6f0e34c20f): imported as \"report-df84e607c9b2\"",
            "name \"disk\" is taken by an existing job (01a22a96-d658-7175-a525-7d6f0e34c210): imported as \"disk-75147f6943af\"",
        ]
    );

    // Everything imported already: nothing new, and no warning.
    let all: Vec<_> = real_import(REAL, &[])
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| ExistingJob {
            id: format!("id-{i}"),
            name: j.name.clone(),
            hermes_id: j.hermes_id.clone(),
            managed: false,
        })
        .collect();
    let again = real_import(REAL, &all);
    assert!(again.jobs.is_empty(), "{:?}", again.jobs);
    assert!(again.notes.is_empty(), "{:?}", again.notes);
    assert_eq!(
        again
            .skipped
            .iter()
            .filter(|s| s.code == SkipCode::AlreadyImported)
            .count(),
        9
    );
}

/// Where a missing script is looked for: the file's Hermes home, else the
/// home the jobs run with, `~/` in the user's home; not at all without a
/// probe.
#[test]
fn missing_scripts_are_noted_where_the_job_will_look() {
    let text = store(vec![
        record("m1", json!({"script": "gone.sh"})),
        record("m2", json!({"script": "/opt/tools/gone.py"})),
        record("m3", json!({"script": "~/bin/gone.sh"})),
        record("m4", json!({"script": "here.sh"})),
    ]);
    let seen = std::cell::RefCell::new(Vec::new());
    let is_file = |path: &Path| {
        seen.borrow_mut().push(path.to_path_buf());
        path.ends_with("here.sh")
    };
    let zones = ZoneTable::compiled_in_only();
    let cx = ImportContext {
        run_home: Some(Path::new("/srv/hermes")),
        user_home: Some(Path::new("/home/ann")),
        is_file: Some(&is_file),
        ..ImportContext::new(now(), Tz::UTC, &zones)
    };
    let plan = import_file("export.json", &text, &cx).unwrap();
    let missing: Vec<_> = plan
        .notes
        .iter()
        .filter(|n| n.code == NoteCode::ScriptMissing)
        .map(|n| (n.origin.as_str(), n.message.as_str()))
        .collect();
    assert_eq!(
        missing,
        [
            (
                "export.json job m1",
                "script \"gone.sh\" does not exist at /srv/hermes/scripts/gone.sh: the job fails until it is there"
            ),
            (
                "export.json job m2",
                "script \"/opt/tools/gone.py\" does not exist at /opt/tools/gone.py: the job fails until it is there"
            ),
            (
                "export.json job m3",
                "script \"~/bin/gone.sh\" does not exist at /home/ann/bin/gone.sh: the job fails until it is there"
            ),
        ]
    );
    assert_eq!(seen.borrow().len(), 4);
    assert_eq!(
        seen.borrow()[3],
        PathBuf::from("/srv/hermes/scripts/here.sh")
    );

    // The file's own home wins over the run home, also when the caller
    // knows the file's path only through `path`.
    let seen_before = seen.borrow().len();
    let cx = ImportContext {
        path: Some(Path::new("/home/bob/.hermes/cron/jobs.json")),
        ..cx
    };
    let plan = import_file("cron/jobs.json", &text, &cx).unwrap();
    assert_eq!(
        seen.borrow()[seen_before],
        PathBuf::from("/home/bob/.hermes/scripts/gone.sh")
    );
    assert_eq!(
        plan.jobs[0].argv,
        ["bash", "/home/bob/.hermes/scripts/gone.sh"]
    );

    // No probe, no notes.
    let plan = import(&text);
    assert!(plan.notes.iter().all(|n| n.code != NoteCode::ScriptMissing));
}

#[test]
fn two_records_with_one_id_are_both_imported_with_a_note() {
    let plan = import(&store(vec![
        record("dup000000001", json!({"name": "a", "script": "a.sh"})),
        record("dup000000001", json!({"name": "b", "script": "b.sh"})),
        record("sp", json!({"name": "  My   Job ", "script": "c.sh"})),
    ]));
    assert_eq!(plan.jobs.len(), 3);
    let notes: Vec<_> = plan
        .notes
        .iter()
        .filter(|n| n.code != NoteCode::RunsTwice)
        .map(|n| (n.code, n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                NoteCode::DuplicateHermesId,
                "Hermes id dup000000001 is also the id of the job imported as \"a\": `show dup000000001` names both, use the name or the hermes-cron id"
            ),
            (
                NoteCode::Renamed,
                "name \"My   Job\" imported as \"My Job\" (spaces collapsed)"
            ),
        ]
    );
}

#[test]
fn id_less_records_are_named_to_hermes_by_their_name() {
    let plan = import(
        &json!({"jobs": [
            {"name": "nightly", "script": "n.sh", "schedule": {"kind": "interval", "minutes": 5}},
            {"script": "m.sh", "schedule": {"kind": "interval", "minutes": 5}}
        ]})
        .to_string(),
    );
    let ids: Vec<_> = plan.jobs.iter().map(|j| j.hermes_id.as_deref()).collect();
    assert_eq!(ids, [None, None]);
    let origins: Vec<_> = plan.jobs.iter().map(|j| j.origin.as_str()).collect();
    assert_eq!(origins, ["jobs.json job #1", "jobs.json job #2"]);
    let warning = &plan.notes.last().unwrap().message;
    assert!(
        warning.contains(": \"nightly\", jobs.json job #2)"),
        "{warning}"
    );
}
