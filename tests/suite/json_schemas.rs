//! The JSON Schemas of `docs/schemas/` (draft 2020-12, one per kind of
//! `--json` document, linked from docs/json.md) hold for what the real binary
//! prints: every test below makes its documents for real, on a temp home, and
//! has Python's `jsonschema` validate each against its schema (and check the
//! schemas themselves). A list's command (`list`, `runs`, `next`, `alerts`)
//! prints an array: each item is checked against the item's schema.
//!
//! Without `jsonschema` the tests fail, naming the fix; they never skip.
//! [`COVERAGE`] says which schemas each test exercises: a test checks it
//! made documents for exactly those, and
//! `every_schema_is_valid_exercised_linked_and_open` that no schema file is
//! left without a document (nor a link from docs/json.md), and that the
//! validation does reject a broken document.

use crate::support::TestHome;
use crate::support::cli::{Cmd, Out};
use crate::support::hook_server::{HookServer, free_port};
use crate::support::ledger::{fresh_schema, on_postgres, pg_server};
use crate::support::waiting::PATIENCE;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the schemas are.
const SCHEMAS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schemas");

/// The page that documents the documents, and links each schema.
const JSON_MD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json.md");

/// What every schema's `$id` starts with (its file name follows).
const ID_BASE: &str = "https://github.com/hermes-cron/hermes-cron/docs/schemas/";

/// The draft every schema is written in.
const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// How to get the validator (`tests/run-all.sh` does this).
const INSTALL: &str = "python3 -m pip install --break-system-packages jsonschema==4.26.0";

/// A Hermes `cron/jobs.json` with a malformed record, a taken name and
/// missing scripts: every kind of entry `import --json` has.
const HERMES_JOBS_BAD: &str =
    include_str!("../../core/src/import/fixtures/hermes-0.19.0-jobs-bad.json");

/// Which schemas (file names less `.schema.json`) each test validates
/// documents against.
const COVERAGE: &[(&str, &[&str])] = &[
    (
        "the_job_config_and_file_documents_match_their_schemas",
        &[
            "job",
            "next",
            "config-get",
            "config-unset",
            "config-show",
            "import",
            "units-install",
            "manpages",
            "prune",
            "status",
            "doctor",
            "error",
        ],
    ),
    (
        "the_run_documents_match_their_schemas",
        &[
            "run-started",
            "run-ended",
            "run-skipped",
            "spawn",
            "run",
            "tick",
            "error",
        ],
    ),
    (
        "the_alert_and_hermes_documents_match_their_schemas",
        &["gateway-failed", "alert", "done"],
    ),
    (
        "the_cluster_documents_match_their_schemas",
        &["status", "doctor", "cluster"],
    ),
];

/// Validates every document (`DIR/*.json`: `{"schema", "what", "document"}`)
/// against `SCHEMAS/<schema>.schema.json`, after checking every schema of
/// SCHEMAS; `$ref`s between schemas resolve by their `$id`. Prints each
/// problem on a line and exits 1, or prints how many were valid.
const VALIDATE_PY: &str = r#"
import json, pathlib, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match
from referencing import Registry, Resource

schemas_dir, docs_dir = (pathlib.Path(a) for a in sys.argv[1:3])
schemas, problems = {}, []
for path in sorted(schemas_dir.glob("*.schema.json")):
    schema = json.loads(path.read_text())
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        problems.append(f"{path.name} is not a valid draft 2020-12 schema: at {where}: {e.message}")
        continue
    schemas[path.name[: -len(".schema.json")]] = schema
registry = Registry().with_resources(
    (s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s
)
count = 0
for path in sorted(docs_dir.glob("*.json")):
    record = json.loads(path.read_text())
    name, what = record["schema"], record["what"]
    if name not in schemas:
        problems.append(f"{what}: no valid schema {name}.schema.json")
        continue
    validator = Draft202012Validator(schemas[name], registry=registry)
    for error in sorted(validator.iter_errors(record["document"]), key=lambda e: str(list(e.absolute_path))):
        where = "/".join(str(p) for p in error.absolute_path) or "(the document)"
        detail = error.message
        if error.context:
            detail += f" (best match: {best_match(error.context).message})"
        value = json.dumps(error.instance)
        if len(value) > 300:
            value = value[:300] + "..."
        problems.append(f"{what}: not valid against {name}.schema.json at {where}: {detail}; the value: {value}")
    count += 1
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"{count} document(s) valid against {len(schemas)} schema(s)")
"#;

/// `python3` with `jsonschema`, or a failure naming the fix (never a skip).
fn require_jsonschema() {
    let out = Command::new("python3")
        .args(["-c", "import jsonschema, referencing"])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): these tests validate the --json documents with Python's jsonschema; install python3, then `{INSTALL}` (tests/run-all.sh does both)")
        });
    assert!(
        out.status.success(),
        "python3 cannot import jsonschema ({}): these tests validate the --json documents against docs/schemas/ with it; install it with `{INSTALL}` (tests/run-all.sh does)",
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("it failed")
    );
}

/// Run [`VALIDATE_PY`] on the records in `dir`: whether all were valid, and
/// what it printed.
fn validate_dir(dir: &Path) -> (bool, String) {
    require_jsonschema();
    let out = Command::new("python3")
        .arg("-c")
        .arg(VALIDATE_PY)
        .arg(SCHEMAS_DIR)
        .arg(dir)
        .output()
        .expect("run python3");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Write one record for [`VALIDATE_PY`] into `dir`, as its `n`th.
fn write_record(dir: &Path, n: usize, schema: &str, what: &str, document: &Value) {
    let record = json!({ "schema": schema, "what": what, "document": document });
    std::fs::write(
        dir.join(format!("{n:04}.json")),
        serde_json::to_vec(&record).expect("a record is JSON"),
    )
    .expect("write a record");
}

/// The documents one test made, each with the schema it must match.
struct Documents {
    test: &'static str,
    dir: tempfile::TempDir,
    /// The schema of each document, in order.
    made: Vec<String>,
}

impl Documents {
    /// The documents of the test `test` (named in [`COVERAGE`]).
    fn new(test: &'static str) -> Documents {
        assert!(
            COVERAGE.iter().any(|(t, _)| *t == test),
            "{test} is not in COVERAGE"
        );
        require_jsonschema();
        Documents {
            test,
            dir: tempfile::Builder::new()
                .prefix("hermes-cron-json-")
                .tempdir()
                .expect("temp dir"),
            made: Vec::new(),
        }
    }

    /// `document`, made by `what`, must match `schema`.
    fn add(&mut self, schema: &str, what: &str, document: &Value) {
        write_record(self.dir.path(), self.made.len(), schema, what, document);
        self.made.push(schema.to_string());
    }

    /// Each item of the array `document` must match `schema`; there must be one.
    #[track_caller]
    fn add_each(&mut self, schema: &str, what: &str, document: &Value) {
        let items = document
            .as_array()
            .unwrap_or_else(|| panic!("{what} printed no array: {document:#}"));
        assert!(!items.is_empty(), "{what} printed an empty array");
        for (i, item) in items.iter().enumerate() {
            self.add(schema, &format!("{what} [{i}]"), item);
        }
    }

    /// Run `cmd` (described as `what`); it must exit with one of `codes`
    /// and print one document, which must match `schema`. Returns it.
    #[track_caller]
    fn cmd(&mut self, schema: &str, what: &str, cmd: Cmd, codes: &[i32]) -> Value {
        let out = cmd.run();
        self.out(schema, what, &out, codes)
    }

    /// `hermes-cron --home HOME args...` as [`Documents::cmd`].
    #[track_caller]
    fn run(&mut self, schema: &str, h: &TestHome, args: &[&str], codes: &[i32]) -> Value {
        let what = args.join(" ");
        self.cmd(schema, &what, h.cmd(args), codes)
    }

    /// What `out` printed, as [`Documents::cmd`].
    #[track_caller]
    fn out(&mut self, schema: &str, what: &str, out: &Out, codes: &[i32]) -> Value {
        assert!(
            codes.contains(&out.code()),
            "{what}: expected exit {codes:?}\n{out}"
        );
        let document = out.json();
        self.add(schema, what, &document);
        document
    }

    /// Validate them all; fails naming each document that does not match,
    /// and when the schemas they matched are not the test's in [`COVERAGE`].
    #[track_caller]
    fn check(self) {
        let (valid, text) = validate_dir(self.dir.path());
        assert!(
            valid,
            "{}: documents the binary printed do not match docs/schemas/:\n{text}",
            self.test
        );
        let made: BTreeSet<&str> = self.made.iter().map(String::as_str).collect();
        let declared: BTreeSet<&str> = COVERAGE
            .iter()
            .find(|(t, _)| *t == self.test)
            .map(|(_, s)| s.iter().copied().collect())
            .unwrap_or_default();
        assert_eq!(
            made, declared,
            "{}: the schemas it made documents for are not the ones COVERAGE names",
            self.test
        );
    }
}

/// `document[key]` as a string.
#[track_caller]
fn text<'a>(document: &'a Value, key: &str) -> &'a str {
    document[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key:?} in {document:#}"))
}

/// The values of `key` of the items of the array `document`.
fn values_of(document: &Value, key: &str) -> BTreeSet<String> {
    document
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| match &item[key] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn the_job_config_and_file_documents_match_their_schemas() {
    let mut d = Documents::new("the_job_config_and_file_documents_match_their_schemas");
    let h = TestHome::new();
    // A mistyped key, which `config show` names with what it may mean.
    h.write_config("cron:\n  max_paralel_jobs: 3\n");
    // A home with no ledger yet: no gateway, no jobs.
    d.run("status", &h, &["status", "--json"], &[1]);
    d.run("doctor", &h, &["doctor", "--json"], &[1]);

    // Jobs: every flag set once, and every default.
    let full = [
        "add",
        "--json",
        "--name",
        "brief",
        "--schedule",
        "daily at 8am",
        "--tz",
        "Europe/Berlin",
        "--env",
        "LANG=C",
        "--env",
        "API_TOKEN=s3cret",
        "--env-file",
        "/etc/hostname",
        "--pass-env",
        "HOME",
        "--workdir",
        "/tmp",
        "--timeout",
        "10m",
        "--idle-timeout",
        "2m",
        "--overlap",
        "replace",
        "--catch-up",
        "all",
        "--retries",
        "2",
        "--retry-backoff",
        "1m",
        "--memory-max",
        "512M",
        "--cpu-weight",
        "200",
        "--tasks-max",
        "64",
        "--alert-on",
        "failed,timed_out",
        "--alert-after",
        "2",
        "--on-alert",
        "logger brief failed",
        "--alert-webhook",
        "https://hooks.example.com/secret/path",
        "--alert-ping",
        "https://hc.example.com/abc",
        "--on",
        "gpu",
        "--",
        "echo",
        "hi",
    ];
    let brief = d.run("job", &h, &full, &[0]);
    assert_eq!(brief["env"]["API_TOKEN"], "<redacted>", "{brief:#}");
    d.run(
        "job",
        &h,
        &[
            "add",
            "--json",
            "--name",
            "plain",
            "--schedule",
            "every 30s",
            "--shell",
            "--",
            "echo plain",
        ],
        &[0],
    );
    // A job that ran: `list` and `show` carry its last outcome.
    h.add("once", "in 1h", &[], &["true"]);
    h.run(&["run", "once", "--wait"]).ok();
    let listed = h.run(&["list", "--all", "--json"]).ok().json();
    assert_eq!(
        values_of(&listed, "last_outcome"),
        ["null", "succeeded"].map(String::from).into(),
        "{listed:#}"
    );
    d.add_each("job", "list --all --json", &listed);
    d.run("job", &h, &["show", "once", "--json"], &[0]);
    d.run(
        "job",
        &h,
        &["edit", "brief", "--schedule", "daily at 9am", "--json"],
        &[0],
    );
    let paused = d.run(
        "job",
        &h,
        &["pause", "brief", "--reason", "holiday", "--json"],
        &[0],
    );
    assert_eq!(paused["pause_reason"], "holiday", "{paused:#}");
    d.run("job", &h, &["resume", "brief", "--json"], &[0]);
    d.run("job", &h, &["rm", "plain", "--json"], &[0]);

    // Fires: exact, moved by a DST gap, both passes of a repeated hour.
    let next = h.run(&["next", "brief", "--count", "3", "--json"]).ok();
    d.add_each("next", "next brief --count 3 --json", &next.json());
    // A daily fire in the gap of 29 March; every half hour through the
    // hour 25 October repeats.
    let dst_cases = [
        ("30 2 * * *", "2026-03-28T00:00:00Z", "moved_by_gap"),
        ("*/30 * * * *", "2026-10-25T00:10:00Z", "repeated_hour"),
    ];
    for (schedule, from, note) in dst_cases {
        let args = [
            "next",
            "--schedule",
            schedule,
            "--tz",
            "Europe/Berlin",
            "--from",
            from,
            "--count",
            "4",
            "--json",
        ];
        let fires = h.run(&args).ok().json();
        d.add_each("next", &args.join(" "), &fires);
        assert!(
            values_of(&fires, "dst").contains(note),
            "no {note} in {fires:#}"
        );
        if note == "repeated_hour" {
            assert_eq!(
                values_of(&fires, "pass"),
                ["1", "2", "null"].map(String::from).into(),
                "{fires:#}"
            );
        }
    }

    // Config: set, get (a secret masked), show, unset of a key and of a mistyped one.
    d.run(
        "config-get",
        &h,
        &["config", "set", "cron.max_parallel_jobs", "4", "--json"],
        &[0],
    );
    d.run(
        "config-get",
        &h,
        &[
            "config",
            "set",
            "cron.alert_webhook",
            "https://hooks.example.com/secret",
            "--json",
        ],
        &[0],
    );
    d.run(
        "config-get",
        &h,
        &["config", "get", "cron.alert_webhook", "--json"],
        &[0],
    );
    let shown = d.run("config-show", &h, &["config", "show", "--json"], &[0]);
    assert_eq!(
        shown["unknown"][0]["key"], "cron.max_paralel_jobs",
        "{shown:#}"
    );
    let unset = d.run(
        "config-unset",
        &h,
        &["config", "unset", "cron.max_parallel_jobs", "--json"],
        &[0],
    );
    assert_eq!(unset["default"], true, "{unset:#}");
    let unset = d.run(
        "config-unset",
        &h,
        &["config", "unset", "cron.max_paralel_jobs", "--json"],
        &[0],
    );
    assert_eq!(unset["value"], Value::Null, "{unset:#}");

    // Import: a crontab (one line not importable), and a Hermes jobs.json
    // with every kind of entry; each as a dry run, then for real.
    let crontab = h.scratch().join("crontab");
    std::fs::write(
        &crontab,
        "# m h dom mon dow command\nMAILTO=\"\"\n30 2 * * * /usr/bin/true --backup\n*/15 * * * * echo tick\n0 5 * * * mail -s hi root%body\n@reboot /usr/bin/true\n",
    )
    .unwrap();
    let hermes_cron_dir = h.scratch().join("hermes/cron");
    std::fs::create_dir_all(&hermes_cron_dir).unwrap();
    let jobs_json = hermes_cron_dir.join("jobs.json");
    std::fs::write(&jobs_json, HERMES_JOBS_BAD).unwrap();
    for file in [&crontab, &jobs_json] {
        let file = file.to_str().unwrap();
        let dry = d.run("import", &h, &["import", file, "--dry-run", "--json"], &[0]);
        assert!(
            !dry["not_imported"].as_array().unwrap().is_empty(),
            "{dry:#}"
        );
        d.run("import", &h, &["import", file, "--json"], &[0]);
    }

    // The units, the man pages, a prune.
    let units = h.scratch().join("units");
    let system = h.scratch().join("system");
    let man = h.scratch().join("man");
    let user_units = [
        "units",
        "install",
        "--dir",
        units.to_str().unwrap(),
        "--json",
    ];
    d.run("units-install", &h, &user_units, &[0]);
    // Again: every file is already so.
    let again = d.run("units-install", &h, &user_units, &[0]);
    assert_eq!(
        values_of(&again["files"], "changed"),
        ["false".to_string()].into()
    );
    d.run(
        "units-install",
        &h,
        &[
            "units",
            "install",
            "--system",
            "--dir",
            system.to_str().unwrap(),
            "--binary",
            "/usr/bin/hermes-cron",
            "--json",
        ],
        &[0],
    );
    d.run(
        "manpages",
        &h,
        &["manpages", man.to_str().unwrap(), "--json"],
        &[0],
    );
    d.run("prune", &h, &["prune", "--json"], &[0]);

    // Errors: bad input of each kind, a mistyped command line, a command
    // with no JSON form, a failure.
    let errors: &[(&[&str], i32)] = &[
        (
            &[
                "add",
                "--json",
                "--name",
                "brief",
                "--schedule",
                "daily",
                "--",
                "true",
            ],
            2,
        ),
        (
            &[
                "add",
                "--json",
                "--name",
                "x",
                "--schedule",
                "daily at 25pm",
                "--",
                "true",
            ],
            2,
        ),
        (&["show", "nope", "--json"], 2),
        (
            &["config", "set", "cron.max_parallel_jobs", "-3", "--json"],
            2,
        ),
        (&["add", "--json", "--schedul", "x", "--", "true"], 2),
        (&["metrics", "--json"], 2),
        (&["completions", "bash", "--json"], 2),
        (&["wait", "0000-not-a-run", "--json"], 2),
        (&["import", "/nonexistent/crontab", "--json"], 1),
    ];
    for (args, code) in errors {
        let e = d.run("error", &h, args, &[*code]);
        assert_eq!(e["exit_code"], *code, "{e:#}");
    }

    // A home with jobs and runs.
    d.run("status", &h, &["status", "--json"], &[1]);
    d.run("doctor", &h, &["doctor", "--json"], &[1]);
    d.check();
}

#[test]
fn the_run_documents_match_their_schemas() {
    let mut d = Documents::new("the_run_documents_match_their_schemas");
    let h = TestHome::new();
    h.add("quick", "daily at 8am", &[], &["sh", "-c", "echo hi"]);
    h.add("fails", "daily at 8am", &[], &["sh", "-c", "exit 3"]);
    h.add("busy", "daily at 8am", &[], &["sleep", "60"]);
    h.add("strict", "daily at 8am", &["--require-scope"], &["true"]);

    let started = d.run("run-started", &h, &["run", "quick", "--json"], &[0]);
    d.run(
        "run-ended",
        &h,
        &["wait", text(&started, "execution"), "--json"],
        &[0],
    );
    let failed = d.run("run-ended", &h, &["run", "fails", "--wait", "--json"], &[1]);
    assert_eq!(failed["exit_code"], 3, "{failed:#}");
    // A run while the previous one is going is skipped (overlap skip);
    // stopping that one ends it.
    let busy = d.run("run-started", &h, &["run", "busy", "--json"], &[0]);
    let skipped = d.run("run-skipped", &h, &["run", "busy", "--json"], &[1]);
    assert_eq!(skipped["state"], "skipped", "{skipped:#}");
    let stopped = d.run(
        "run-ended",
        &h,
        &["stop", text(&busy, "execution"), "--json"],
        &[0],
    );
    assert_eq!(stopped["state"], "cancelled", "{stopped:#}");
    // This home has no bus: a required scope is refused.
    let refused = d.run("error", &h, &["run", "strict", "--json"], &[69]);
    assert_eq!(refused["error"], "refused", "{refused:#}");

    let spawned = d.run(
        "spawn",
        &h,
        &["spawn", "--name", "k", "--json", "--", "sleep", "0.1"],
        &[0],
    );
    d.run(
        "run-ended",
        &h,
        &["wait", text(&spawned, "execution"), "--json"],
        &[0],
    );
    let not_started = d.run(
        "error",
        &h,
        &[
            "spawn",
            "--name",
            "bad",
            "--json",
            "--",
            "/nonexistent/program",
        ],
        &[1],
    );
    assert_eq!(not_started["error"], "not_started", "{not_started:#}");
    let refused = d.run(
        "error",
        &h,
        &[
            "spawn",
            "--name",
            "k2",
            "--require-scope",
            "--json",
            "--",
            "true",
        ],
        &[69],
    );
    assert_eq!(refused["error"], "refused", "{refused:#}");
    let rows = h.run(&["runs", "--json", "--limit", "1000"]).ok().json();
    d.add_each("run", "runs --json", &rows);

    // Ticks on a home of their own, the clock frozen: claimed, missed,
    // skipped, and (where the tick lock is a file) contended.
    let t = TestHome::new();
    const T0: &str = "2026-01-01T00:00:00Z";
    t.add_at(T0, "every5", "*/5 * * * *", &[], &["true"]);
    t.add_at(T0, "busy", "*/5 * * * *", &[], &["sleep", "60"]);
    t.add_at(
        "2025-12-31T20:00:00Z",
        "hourly",
        "0 * * * *",
        &["--catch-up", "skip"],
        &["true"],
    );
    let tick = |d: &mut Documents, at: &str| {
        let cmd = t.cmd(&["tick", "--json"]).now(at);
        d.cmd("tick", &format!("tick --json at {at}"), cmd, &[0])
    };
    let first = tick(&mut d, "2026-01-01T00:05:00Z");
    assert_eq!(first["claimed"].as_array().unwrap().len(), 2, "{first:#}");
    assert!(!first["missed"].as_array().unwrap().is_empty(), "{first:#}");
    let running = t.wait_state(Some("busy"), "running");
    let second = tick(&mut d, "2026-01-01T00:10:00Z");
    assert_eq!(second["skipped"][0]["job_name"], "busy", "{second:#}");
    if !on_postgres() {
        let lock_file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(t.cron_dir().join(".hermes-cron.tick.lock"))
            .unwrap();
        let held = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| e)
            .unwrap();
        let contended = tick(&mut d, "2026-01-01T00:10:30Z");
        assert_eq!(contended, json!({"contended": true}));
        drop(held);
    }
    d.run(
        "run-ended",
        &t,
        &["stop", text(&running, "id"), "--json"],
        &[0],
    );
    let rows = t.run(&["runs", "--json", "--limit", "1000"]).ok().json();
    d.add_each("run", "runs --json (ticks)", &rows);
    d.check();
}

#[test]
fn the_alert_and_hermes_documents_match_their_schemas() {
    let mut d = Documents::new("the_alert_and_hermes_documents_match_their_schemas");
    let h = TestHome::new();
    let hook = HookServer::start();
    h.config_set("cron.alert_webhook", &hook.url("/gw"));
    h.config_set("cron.alert_command", "cat >/dev/null");
    let args = [
        "gateway-failed",
        "--unit",
        "hermes-cron-gateway.service",
        "--json",
    ];
    let sent = d.run("gateway-failed", &h, &args, &[0]);
    assert_eq!((&sent["queued"], &sent["http_ok"]), (&json!(2), &json!(1)));
    // A webhook nobody answers: its delivery waits for another attempt.
    let gone = format!("http://127.0.0.1:{}/gone", free_port());
    h.config_set("cron.alert_webhook", &gone);
    h.run(&["config", "unset", "cron.alert_command"]).ok();
    let failed = d.run("gateway-failed", &h, &args, &[0]);
    assert_eq!(failed["http_failed"], 1, "{failed:#}");
    // The command's delivery ends once its run has.
    let alerts = h.wait_until("the command alert delivered", PATIENCE, || {
        let alerts = h.run(&["alerts", "--json"]).ok().json();
        let command_done = alerts
            .as_array()?
            .iter()
            .any(|a| a["destination"] == "command" && a["state"] == "delivered");
        command_done.then_some(alerts)
    });
    assert_eq!(
        values_of(&alerts, "state"),
        ["delivered", "pending"].map(String::from).into(),
        "{alerts:#}"
    );
    d.add_each("alert", "alerts --json", &alerts);

    // The real Hermes Agent's interpreter (the venv tests/run-all.sh makes).
    let python = crate::support::hermes::venv().join("bin/python");
    let python = python.to_str().unwrap();
    d.run(
        "done",
        &h,
        &["hermes", "install", "--python", python, "--json"],
        &[0],
    );
    d.run("done", &h, &["hermes", "uninstall", "--json"], &[0]);
    d.check();
}

#[test]
fn the_cluster_documents_match_their_schemas() {
    let mut d = Documents::new("the_cluster_documents_match_their_schemas");
    let h = TestHome::new()
        .on_database(&fresh_schema(&pg_server()))
        .with_env("HERMES_CRON_HOST", "box-1")
        .with_env("HERMES_CRON_HOST_LABELS", "gpu,big");
    h.add("brief", "daily at 8am", &[], &["true"]);
    let status = |d: &mut Documents, when: &str, codes: &[i32]| {
        let what = format!("status --json ({when})");
        let s = d.cmd("status", &what, h.cmd(&["status", "--json"]), codes);
        d.add("cluster", &format!("{what}: cluster"), &s["cluster"]);
        s
    };
    // No gateway has run here yet.
    let before = status(&mut d, "no gateway yet", &[1]);
    assert_eq!(before["cluster"]["gateway_view"], Value::Null, "{before:#}");

    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    h.wait_until("status healthy, box-1 live", PATIENCE, || {
        let s = h.run(&["status", "--json"]).json();
        (s["healthy"] == true && s["cluster"]["hosts"][0]["lease"] == "live").then_some(())
    });
    let live = status(&mut d, "a gateway running", &[0]);
    assert_eq!(live["cluster"]["hosts"][0]["host"], "box-1", "{live:#}");
    let doctor = d.run("doctor", &h, &["doctor", "--json"], &[0, 1]);
    d.add("cluster", "doctor --json: cluster", &doctor["cluster"]);
    gw.stop();
    let after = status(&mut d, "the gateway stopped", &[1]);
    assert_eq!(
        after["cluster"]["hosts"][0]["lease"], "stopped",
        "{after:#}"
    );
    d.check();
}

/// Every `object` subschema that lists its properties in `schema` (at
/// `path`) lets fields be added: `"additionalProperties": true`.
fn closed_objects(schema: &Value, path: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            let object = map.get("type").is_some_and(|t| {
                t == "object" || t.as_array().is_some_and(|a| a.contains(&json!("object")))
            });
            if object
                && map.contains_key("properties")
                && map.get("additionalProperties") != Some(&Value::Bool(true))
            {
                out.push(path.to_string());
            }
            for (k, v) in map {
                closed_objects(v, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                closed_objects(v, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The schema files of docs/schemas/.
fn schema_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(SCHEMAS_DIR)
        .unwrap_or_else(|e| panic!("{SCHEMAS_DIR}: {e}"))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_schema_is_valid_exercised_linked_and_open() {
    let files = schema_files();
    let names: BTreeSet<String> = files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_str().unwrap();
            name.strip_suffix(".schema.json")
                .unwrap_or_else(|| panic!("{name}: docs/schemas/ holds only *.schema.json files"))
                .to_string()
        })
        .collect();
    let covered: BTreeSet<String> = COVERAGE
        .iter()
        .flat_map(|(_, s)| s.iter().map(|s| s.to_string()))
        .collect();
    let orphans: Vec<_> = names.difference(&covered).collect();
    assert!(
        orphans.is_empty(),
        "schemas no test validates a real document against (add documents to a test and its COVERAGE entry): {orphans:?}"
    );
    let missing: Vec<_> = covered.difference(&names).collect();
    assert!(
        missing.is_empty(),
        "COVERAGE names schemas docs/schemas/ lacks: {missing:?}"
    );

    let doc = std::fs::read_to_string(JSON_MD).unwrap();
    for file in &files {
        let file_name = file.file_name().unwrap().to_str().unwrap();
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap())
            .unwrap_or_else(|e| panic!("{file_name} is not JSON: {e}"));
        assert_eq!(schema["$schema"], DRAFT, "{file_name}");
        assert_eq!(
            schema["$id"],
            format!("{ID_BASE}{file_name}"),
            "{file_name}"
        );
        for key in ["title", "description"] {
            assert!(
                schema[key].as_str().is_some_and(|s| !s.is_empty()),
                "{file_name} has no {key}"
            );
        }
        let mut closed = Vec::new();
        closed_objects(&schema, "", &mut closed);
        assert!(
            closed.is_empty(),
            "{file_name}: objects that do not allow added fields (docs/json.md: fields may be added), set \"additionalProperties\": true at {closed:?}"
        );
        assert!(
            doc.contains(&format!("(schemas/{file_name})")),
            "docs/json.md does not link schemas/{file_name}"
        );
    }

    // The schemas are valid, and the validation rejects what breaks one:
    // a real document, a field removed, a field of the wrong type.
    let h = TestHome::new();
    let good = h
        .run(&["config", "get", "cron.max_parallel_jobs", "--json"])
        .ok()
        .json();
    let dir = tempfile::tempdir().unwrap();
    let mut added = good.clone();
    added["a_field_of_a_later_version"] = json!(1);
    write_record(dir.path(), 0, "config-get", "config get --json", &good);
    write_record(dir.path(), 1, "config-get", "with a field added", &added);
    let (valid, text) = validate_dir(dir.path());
    assert!(valid, "{text}");

    let dir = tempfile::tempdir().unwrap();
    let mut removed = good.clone();
    removed.as_object_mut().unwrap().remove("value");
    let mut retyped = good;
    retyped["value"] = json!(4);
    write_record(dir.path(), 0, "config-get", "without value", &removed);
    write_record(dir.path(), 1, "config-get", "value a number", &retyped);
    let (valid, text) = validate_dir(dir.path());
    assert!(!valid, "broken documents passed: {text}");
    for needle in [
        "without value: not valid against config-get.schema.json",
        "'value' is a required property",
        "value a number: not valid against config-get.schema.json at value",
    ] {
        assert!(text.contains(needle), "no {needle:?} in:\n{text}");
    }
}
