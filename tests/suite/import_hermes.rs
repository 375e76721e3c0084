//! `import` of a Hermes `cron/jobs.json` through the real binary, in the home
//! it shares with Hermes: the files were written by the real Hermes Agent
//! 0.19.0 (`core/src/import/fixtures/make.sh`): ten jobs in the Hermes zone
//! Europe/Berlin, one an agent job, `backup` paused with a reason, `sync`
//! paused by `hermes cron pause`, two named `disk`, `gone` without its
//! script. The imported jobs keep their Hermes ids (`show <hermes-id>`) and
//! pauses; a malformed record is skipped alone; renames, the missing script
//! and the Hermes originals that keep firing are said.

use crate::support::TestHome;
use serde_json::Value;
use std::os::unix::fs::DirBuilderExt;

const REAL: &str = include_str!("../../core/src/import/fixtures/hermes-0.19.0-jobs.json");
const REAL_BAD: &str = include_str!("../../core/src/import/fixtures/hermes-0.19.0-jobs-bad.json");
const REAL_KEYED: &str =
    include_str!("../../core/src/import/fixtures/hermes-0.19.0-jobs-keyed.json");

/// Half an hour after the fixtures were made.
const NOW: &str = "2026-12-01T16:00:00Z";

/// A home holding Hermes's `cron/jobs.json` (`jobs`) and the scripts
/// `make.sh` made, all but `gone.sh`; config `timezone` is the Hermes zone.
fn shared_home(jobs: &str) -> TestHome {
    let h = TestHome::new().with_env("HERMES_CRON_NOW", NOW);
    h.write_config("timezone: Europe/Berlin\n");
    for dir in ["cron", "scripts"] {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(h.path().join(dir))
            .unwrap();
    }
    std::fs::write(h.cron_dir().join("jobs.json"), jobs).unwrap();
    for script in [
        "disk.sh",
        "report.py",
        "backup.sh",
        "sync.sh",
        "disk2.sh",
        "remind.sh",
        "clean.sh",
    ] {
        std::fs::write(h.path().join("scripts").join(script), "echo ok\n").unwrap();
    }
    h
}

fn jobs_json(h: &TestHome) -> String {
    h.cron_dir()
        .join("jobs.json")
        .to_string_lossy()
        .into_owned()
}

/// (code, origin's last word (the job id, or the file), message) of each note.
fn notes(v: &Value) -> Vec<(String, String, String)> {
    v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let origin = n["origin"].as_str().unwrap();
            (
                n["code"].as_str().unwrap().to_string(),
                origin.rsplit(' ').next().unwrap().to_string(),
                n["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_real_hermes_jobs_json_imports_with_its_ids_pauses_and_every_note() {
    let h = shared_home(REAL);
    let existing = h.add("report", "every 1h", &[], &["/bin/true"]);
    let file = jobs_json(&h);

    let dry = h.run(&["import", &file, "--dry-run", "--json"]).ok().json();
    assert_eq!(dry["imported"].as_array().unwrap().len(), 9, "{dry:#}");
    assert!(dry["imported"][0]["id"].is_null());
    let listed: Vec<Value> = h
        .run(&["list", "--all", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(listed.len(), 1, "a dry run changes nothing");

    let v = h.run(&["import", &file, "--json"]).ok().json();
    let imported: Vec<(&str, &str, &str, Option<&str>)> = v["imported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap(),
                j["hermes_id"].as_str().unwrap(),
                j["state"].as_str().unwrap(),
                j["pause_reason"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        imported,
        [
            ("disk", "cb937e0bc087", "active", None),
            ("report-df84e607c9b2", "df84e607c9b2", "active", None),
            (
                "backup",
                "8c458907ded8",
                "paused",
                Some("disk full until Friday")
            ),
            (
                "sync",
                "7bec3fb6cb9e",
                "paused",
                Some("paused in Hermes at 2026-12-01T16:22:40.841038+01:00")
            ),
            ("gone", "79192208b125", "active", None),
            ("disk-75147f6943af", "75147f6943af", "active", None),
            ("seconds", "9afd0c67db86", "active", None),
            ("remind", "83e1b84253f2", "active", None),
            ("clean", "50e4199e903e", "active", None),
        ],
        "{v:#}"
    );
    let skipped = &v["not_imported"];
    assert_eq!(skipped.as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(skipped[0]["code"], "agent_job");
    assert!(
        skipped[0]["origin"]
            .as_str()
            .unwrap()
            .ends_with("affe0c71f906")
    );

    let notes = notes(&v);
    let codes: Vec<(&str, &str)> = notes
        .iter()
        .map(|(c, o, _)| (c.as_str(), o.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("renamed", "df84e607c9b2"),
            ("runs_differently", "df84e607c9b2"),
            ("script_missing", "79192208b125"),
            ("renamed", "75147f6943af"),
            ("runs_differently", "50e4199e903e"),
            ("runs_twice", file.as_str()),
        ]
    );
    let home = h.path().display().to_string();
    assert_eq!(
        notes[0].2,
        format!(
            "name \"report\" is taken by an existing job ({existing}): imported as \"report-df84e607c9b2\""
        )
    );
    assert_eq!(
        notes[2].2,
        format!(
            "script \"gone.sh\" does not exist at {home}/scripts/gone.sh: the job fails until it is there"
        )
    );
    assert_eq!(
        notes[5].2,
        "Hermes keeps firing the originals: each of the 7 imported active job(s) runs twice until its original is paused in Hermes (`hermes cron pause <id>`: cb937e0bc087, df84e607c9b2, 79192208b125, 75147f6943af, 9afd0c67db86, 83e1b84253f2, 50e4199e903e) (to have hermes-cron fire Hermes's jobs without copying them, use `hermes-cron hermes install` instead of importing)"
    );
    assert_eq!(v["notes"][5]["warning"], true);

    // `show <hermes-id>`: the job, paused with Hermes's reason.
    let backup = h.run(&["show", "8c458907ded8", "--json"]).ok().json();
    assert_eq!(backup["name"], "backup");
    assert_eq!(backup["hermes_id"], "8c458907ded8");
    assert_eq!(backup["state"], "paused");
    assert_eq!(backup["pause_reason"], "disk full until Friday");
    assert_eq!(
        backup["command"],
        serde_json::json!(["bash", format!("{home}/scripts/backup.sh")])
    );
    // 02:00 in the Hermes zone, as Hermes computed it (next_run_at 02:00+01:00).
    assert_eq!(backup["next_run_at"], "2026-12-02T01:00:00.000Z");
    let seconds = h.run(&["show", "9afd0c67db86", "--json"]).ok().json();
    assert_eq!(seconds["next_run_at"], "2026-12-02T08:00:30.000Z");
    let text = h.run(&["show", "cb937e0bc087"]).ok().stdout;
    assert!(text.contains("hermes job    cb937e0bc087"), "{text}");

    // Again: every Hermes job is already here, so nothing, and no warning.
    let again = h.run(&["import", &file, "--json"]).ok().json();
    assert!(
        again["imported"].as_array().unwrap().is_empty(),
        "{again:#}"
    );
    assert!(again["notes"].as_array().unwrap().is_empty(), "{again:#}");
    let codes: Vec<&str> = again["not_imported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "already_imported").count(),
        9
    );
    let listed = h.run(&["list", "--all", "--json"]).ok().json();
    assert_eq!(listed.as_array().unwrap().len(), 10);
}

#[test]
fn a_malformed_record_is_skipped_alone_and_the_text_says_everything() {
    let h = shared_home(REAL_BAD);
    let out = h.run(&["import", &jobs_json(&h)]).ok().stdout;
    let has = |needle: &str| {
        assert!(
            out.lines()
                .any(|l| l.starts_with(needle) || l.contains(needle)),
            "no {needle:?} in:\n{out}"
        )
    };
    has(
        "job df84e607c9b2: malformed record: schedule.expr: invalid schedule \"30 25 * * 1-5\": hour \"25\" is out of range 0-23",
    );
    has("not imported: ");
    has("note: ");
    has("job 75147f6943af: name \"disk\" is taken by ");
    has("imported 8 job(s), 2 not importable (1 malformed)");
    let last: Vec<&str> = out.lines().rev().take(2).collect();
    assert!(
        last[0].starts_with("warning: ")
            && last[0].contains("cron/jobs.json: Hermes keeps firing the originals: each of the 6 imported active job(s) runs twice"),
        "{out}"
    );
    assert!(
        last[1].starts_with("warning: ") && last[1].contains("script \"gone.sh\" does not exist"),
        "{out}"
    );
    assert_eq!(
        h.run(&["list", "--all", "--json"])
            .ok()
            .json()
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert_eq!(
        h.run(&["show", "df84e607c9b2"]).code(),
        2,
        "the malformed job was not imported"
    );
}

#[test]
fn jobs_keyed_by_id_are_read_with_a_note() {
    let h = shared_home(REAL_KEYED);
    let v = h
        .run(&["import", &jobs_json(&h), "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(v["imported"].as_array().unwrap().len(), 9, "{v:#}");
    assert_eq!(v["notes"][0]["code"], "keyed_by_id");
    assert_eq!(
        v["notes"].as_array().unwrap().last().unwrap()["code"],
        "runs_twice"
    );
}

#[test]
fn a_file_that_is_no_jobs_json_is_refused_whole_before_the_home_is_touched() {
    let h = TestHome::new();
    for (name, text) in [
        ("a.json", "{\"jobs\": [{\"id\": \"x\",}]}"),
        ("b.json", "[1, 2, 3]"),
        ("c.json", "{\"version\": 1}"),
    ] {
        let file = h.scratch().join(name);
        std::fs::write(&file, text).unwrap();
        let out = h.run(&["import", file.to_str().unwrap()]).fails_with(2);
        assert!(out.stderr.contains(name), "{out}");
    }
    assert!(!h.db_file().exists(), "a refused file created the ledger");
}

#[test]
fn a_crontab_gets_no_word_about_hermes() {
    let h = TestHome::new().with_env("HERMES_CRON_NOW", NOW);
    let file = h.scratch().join("crontab");
    std::fs::write(&file, "# nightly\n0 3 * * * /bin/true\n").unwrap();
    let v = h
        .run(&["import", file.to_str().unwrap(), "--json"])
        .ok()
        .json();
    assert_eq!(v["imported"].as_array().unwrap().len(), 1);
    assert!(v["imported"][0]["hermes_id"].is_null());
    assert!(v["notes"].as_array().unwrap().is_empty(), "{v:#}");
}
