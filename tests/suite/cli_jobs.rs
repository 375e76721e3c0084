//! The job store through the real CLI (issue 2): add, list, show, edit,
//! pause, resume, rm, `next`, name resolution and the program check.

use crate::support::TestHome;
use crate::support::home::mode;
use serde_json::Value;

const T0: &str = "2026-06-01T10:00:00Z";

fn job_list(home: &TestHome, all: bool) -> Vec<Value> {
    let mut args = vec!["list", "--json"];
    if all {
        args.push("--all");
    }
    match home.run(&args).ok().json() {
        Value::Array(jobs) => jobs,
        other => panic!("list --json is not an array: {other}"),
    }
}

fn find<'a>(jobs: &'a [Value], name: &str) -> &'a Value {
    jobs.iter()
        .find(|j| j["name"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {jobs:?}"))
}

#[test]
fn add_prints_an_id_list_shows_next_run_and_next_shows_three_8am_fires() {
    let mut home = TestHome::new();
    // A zone with DST and a non-zero offset, so "08:00" means local time.
    home.set_env("TZ", "America/Toronto");
    let out = home
        .cmd(&[
            "add",
            "--name",
            "brief",
            "--schedule",
            "daily at 8am",
            "--",
            "echo",
            "hi",
        ])
        .now(T0)
        .run()
        .ok();
    let id = out.line().to_string();
    assert!(
        uuid_like(&id),
        "add prints the new id and nothing else: {out}"
    );

    let jobs = job_list(&home, false);
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let job = &jobs[0];
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["name"], "brief");
    assert_eq!(job["state"], "active");
    assert_eq!(job["zone"], "America/Toronto");
    assert_eq!(job["command"], serde_json::json!(["echo", "hi"]));
    // 2026-06-01 10:00Z is 06:00 EDT: the next 08:00 local is 12:00Z the same day.
    assert_eq!(job["next_run_at"], "2026-06-01T12:00:00.000Z", "{job}");

    // By name and by id alike.
    for key in ["brief", id.as_str()] {
        let out = home.cmd(&["next", key, "--count", "3"]).now(T0).run().ok();
        let fires: Vec<&str> = out.stdout.lines().filter(|l| l.contains("2026-")).collect();
        assert_eq!(fires.len(), 3, "{out}");
        for (fire, day) in fires.iter().zip(["06-01", "06-02", "06-03"]) {
            assert!(
                fire.contains(&format!("2026-{day} 08:00:00 EDT")),
                "each fire is 08:00 local: {fire}\n{out}"
            );
            assert!(
                fire.contains(&format!("2026-{day}T12:00:00Z")),
                "and shown in UTC: {fire}"
            );
        }
    }
}

#[test]
fn next_marks_the_berlin_spring_forward_fire_as_moved_by_the_gap() {
    let home = TestHome::new();
    let args = [
        "next",
        "--schedule",
        "30 2 * * *",
        "--tz",
        "Europe/Berlin",
        "--from",
        "2026-03-28T00:00:00Z",
        "--count",
        "3",
    ];
    let out = home.run(&args).ok();
    let fires: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("2026-03-"))
        .collect();
    assert_eq!(fires.len(), 3, "{out}");
    assert!(fires[0].contains("2026-03-28 02:30:00 CET"), "{out}");
    assert!(!fires[0].contains("moved"), "{out}");
    assert!(fires[1].contains("2026-03-29 03:00:00 CEST"), "{out}");
    assert!(fires[1].contains("2026-03-29T01:00:00Z"), "{out}");
    assert!(fires[1].contains("moved by DST gap"), "{out}");
    assert!(fires[2].contains("2026-03-30 02:30:00 CEST"), "{out}");
    assert!(!fires[2].contains("moved"), "{out}");
    // `next` never needs a home on disk.
    assert!(!home.path().exists());

    let mut json_args = args.to_vec();
    json_args.push("--json");
    let fires = home.run(&json_args).ok().json();
    let dst: Vec<&str> = fires
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["dst"].as_str().unwrap())
        .collect();
    assert_eq!(dst, ["exact", "moved_by_gap", "exact"], "{fires}");
    assert_eq!(fires[1]["at"], "2026-03-29T01:00:00.000Z");
    assert_eq!(fires[1]["local"], "2026-03-29T03:00:00+02:00");
    assert_eq!(fires[1]["wanted_local"], "2026-03-29T02:30:00");
}

/// The fires `next` prints: the lines that name a date.
fn fire_lines(out: &crate::support::cli::Out) -> Vec<String> {
    out.stdout
        .lines()
        .filter(|l| l.contains(" 20"))
        .map(str::to_string)
        .collect()
}

#[test]
fn next_marks_a_one_shot_inside_a_gap_as_moved_with_the_wall_time_asked_for() {
    let home = TestHome::new();
    // London springs forward 01:00 -> 02:00 on 2026-03-29.
    let args = [
        "next",
        "--schedule",
        "2026-03-29T01:30",
        "--tz",
        "europe/london",
        "--from",
        "2026-03-01T00:00:00Z",
    ];
    let out = home.run(&args).ok();
    assert!(
        out.stdout
            .starts_with("2026-03-29T01:30  (zone Europe/London)"),
        "{out}"
    );
    let fires = fire_lines(&out);
    assert_eq!(fires.len(), 1, "{out}");
    assert!(
        fires[0].contains("2026-03-29 02:00:00 BST  2026-03-29T01:00:00Z"),
        "{out}"
    );
    assert!(
        fires[0].contains("moved by DST gap: 2026-03-29 01:30:00 does not exist"),
        "{out}"
    );
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let fires = home.run(&json_args).ok().json();
    assert_eq!(fires[0]["dst"], "moved_by_gap", "{fires}");
    assert_eq!(fires[0]["wanted_local"], "2026-03-29T01:30:00", "{fires}");
    assert_eq!(fires[0]["at"], "2026-03-29T01:00:00.000Z", "{fires}");
    assert_eq!(fires[0]["zone"], "Europe/London", "{fires}");

    // A stored job keeps it: the stored form names the wall time asked for.
    let id = home.add_at(
        "2026-03-01T00:00:00Z",
        "gap",
        "2026-03-29T01:30",
        &["--tz", "europe/london"],
        &["true"],
    );
    let job = home.run(&["show", &id, "--json"]).ok().json();
    assert_eq!(job["tz"], "Europe/London", "{job}");
    assert_eq!(
        job["schedule_canonical"], "at 2026-03-29T01:00:00Z wanted 2026-03-29T01:30:00",
        "{job}"
    );
    let fires = home
        .cmd(&["next", &id, "--json"])
        .now("2026-03-01T00:00:00Z")
        .run()
        .ok()
        .json();
    assert_eq!(fires[0]["dst"], "moved_by_gap", "{fires}");
    assert_eq!(fires[0]["wanted_local"], "2026-03-29T01:30:00", "{fires}");
}

#[test]
fn next_from_a_wall_time_inside_a_gap_counts_from_the_end_of_the_gap() {
    let home = TestHome::new();
    let out = home
        .run(&[
            "next",
            "--schedule",
            "*/30 * * * *",
            "--tz",
            "Europe/Berlin",
            "--from",
            "2026-03-29T02:30",
            "--count",
            "2",
        ])
        .ok();
    let fires = fire_lines(&out);
    assert!(
        fires[0].contains("2026-03-29 03:30:00 CEST  2026-03-29T01:30:00Z"),
        "{out}"
    );
    assert!(fires[1].contains("2026-03-29 04:00:00 CEST"), "{out}");
    assert!(out.stderr.contains("--from 2026-03-29 02:30:00"), "{out}");
    assert!(
        out.stderr
            .contains("does not exist in Europe/Berlin (DST gap)"),
        "{out}"
    );
    // A date whose midnight is in a gap (Cairo, 2026-04-24) is accepted too.
    home.run(&[
        "next",
        "--schedule",
        "0 9 * * *",
        "--tz",
        "Africa/Cairo",
        "--from",
        "2026-04-24",
    ])
    .ok();
    // Text that is no time at all is still refused.
    let out = home
        .run(&["next", "--schedule", "0 9 * * *", "--from", "yesterday"])
        .fails_with(2);
    assert!(
        out.stderr.contains("\"yesterday\" is not an instant"),
        "{out}"
    );
}

#[test]
fn a_star_hour_skips_a_time_inside_a_gap_and_a_named_hour_range_moves_it() {
    let home = TestHome::new();
    let fires = |expr: &str| {
        let out = home
            .run(&[
                "next",
                "--schedule",
                expr,
                "--tz",
                "Europe/Berlin",
                "--from",
                "2026-03-29T00:00",
                "--count",
                "2",
            ])
            .ok();
        fire_lines(&out)
    };
    // 02:00 does not exist on 2026-03-29 in Berlin.
    let star = fires("0 */2 * * *");
    assert!(star[0].contains("2026-03-29 04:00:00 CEST"), "{star:?}");
    let named = fires("0 0-23/2 * * *");
    assert!(named[0].contains("2026-03-29 03:00:00 CEST"), "{named:?}");
    assert!(
        named[0].contains("moved by DST gap: 2026-03-29 02:00:00"),
        "{named:?}"
    );
    assert!(named[1].contains("2026-03-29 04:00:00 CEST"), "{named:?}");
    // Two fixed times inside one gap run once.
    let both = fires("0,30 2 * * *");
    assert!(both[0].contains("2026-03-29 03:00:00 CEST"), "{both:?}");
    assert!(both[1].contains("2026-03-30 02:00:00 CEST"), "{both:?}");
    // `0/2` in the hour field is refused, and the message tells the two apart.
    let out = home
        .run(&["next", "--schedule", "0 0/2 * * *"])
        .fails_with(2);
    assert!(out.stderr.contains("write 0-23/2 (named hours"), "{out}");
    assert!(
        out.stderr
            .contains("*/2 (a wildcard: an hour inside a DST gap is skipped)"),
        "{out}"
    );
}

#[test]
fn every_1d_is_86400_real_seconds_across_a_dst_change() {
    let home = TestHome::new();
    let out = home
        .run(&[
            "next",
            "--schedule",
            "every 1d",
            "--tz",
            "Europe/Berlin",
            "--from",
            "2026-03-28T09:00",
            "--count",
            "1",
        ])
        .ok();
    let fires = fire_lines(&out);
    assert!(
        fires[0].contains("2026-03-29 10:00:00 CEST  2026-03-29T08:00:00Z"),
        "{out}"
    );
}

/// A zoneinfo directory whose `Europe/Berlin` is Tokyo's (a copy of the
/// host's `Asia/Tokyo` when there is one, else a TZif written here).
fn berlin_is_tokyo(home: &TestHome) -> std::path::PathBuf {
    let dir = home.scratch().join("zoneinfo");
    std::fs::create_dir_all(dir.join("Europe")).unwrap();
    let tokyo = std::fs::read("/usr/share/zoneinfo/Asia/Tokyo")
        .unwrap_or_else(|_| hermes_cron::schedule::tzif_fixture::rule_only(32_400, "JST", "JST-9"));
    std::fs::write(dir.join("Europe/Berlin"), tokyo).unwrap();
    std::fs::write(
        dir.join("tzdata.zi"),
        "# version 2099z\nZ Europe/Berlin 9 - JST\n",
    )
    .unwrap();
    dir
}

#[test]
fn zones_come_from_tzdir_first_and_the_compiled_in_copy_second() {
    let home = TestHome::new();
    let tzdir = berlin_is_tokyo(&home);
    let next = |zone: &str, tzdir: &std::path::Path| {
        let out = home
            .cmd(&[
                "next",
                "--schedule",
                "0 9 * * *",
                "--tz",
                zone,
                "--from",
                "2026-06-30T12:00:00Z",
                "--count",
                "1",
            ])
            .env("TZDIR", tzdir)
            .run()
            .ok();
        fire_lines(&out).remove(0)
    };
    // The host's (fake) Berlin is used over the compiled-in one.
    let fire = next("Europe/Berlin", &tzdir);
    assert!(
        fire.contains("2026-07-01 09:00:00 JST  2026-07-01T00:00:00Z"),
        "{fire}"
    );
    assert!(next("europe/berlin", &tzdir).contains("JST"));
    // A zone the host lacks comes from the compiled-in copy.
    let fire = next("America/Toronto", &tzdir);
    assert!(fire.contains("2026-06-30 09:00:00 EDT"), "{fire}");
    // No database there at all: compiled in.
    let fire = next(
        "Europe/Berlin",
        std::path::Path::new("/nonexistent/zoneinfo"),
    );
    assert!(fire.contains("2026-07-01 09:00:00 CEST"), "{fire}");
}

#[test]
fn doctor_reports_host_rules_that_differ_from_the_compiled_in_copy() {
    let home = TestHome::new();
    let tzdir = berlin_is_tokyo(&home);
    home.add(
        "standup",
        "0 9 * * *",
        &["--tz", "Europe/Berlin"],
        &["true"],
    );
    home.add("utc-job", "0 9 * * *", &[], &["true"]);
    let out = home.cmd(&["doctor", "--json"]).env("TZDIR", &tzdir).run();
    let report = out.json();
    let rules = &report["zone_rules"];
    assert_eq!(rules["host_version"], "2099z", "{report:#}");
    assert_eq!(rules["host_version_from"], "tzdata.zi", "{report:#}");
    assert_eq!(
        rules["compiled_in_version"],
        hermes_cron::schedule::COMPILED_IN_TZDB_VERSION
    );
    let zones = rules["zones"].as_array().unwrap();
    let berlin = zones.iter().find(|z| z["name"] == "Europe/Berlin").unwrap();
    assert_eq!(berlin["rules"], "host", "{report:#}");
    assert_eq!(berlin["jobs"], serde_json::json!(["standup"]));
    let differ: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "zone_rules_differ")
        .collect();
    assert_eq!(differ.len(), 1, "{report:#}");
    let problem = differ[0]["problem"].as_str().unwrap();
    assert!(problem.contains("Europe/Berlin"), "{problem}");
    assert!(problem.contains("host UTC+09:00 (JST)"), "{problem}");
    assert!(problem.contains("Jobs in this zone: standup"), "{problem}");
    assert!(differ[0]["fix"].as_str().unwrap().contains("TZDIR"));
    // The text form says which rules are in use.
    let out = home.cmd(&["doctor"]).env("TZDIR", &tzdir).run();
    assert!(
        out.stdout.starts_with("zone rules: host tzdata 2099z ("),
        "{out}"
    );
    // Without the fake database there is no such finding.
    let report = home.run(&["doctor", "--json"]).json();
    assert!(
        !report["findings"].to_string().contains("zone_rules_differ"),
        "{report:#}"
    );
}

#[test]
fn posix_tz_strings_are_zones_and_bad_ones_are_refused_naming_the_fix() {
    let home = TestHome::new();
    let rule = "CET-1CEST,M3.5.0,M10.5.0/3";
    // As a job's zone: stored as written, and read back the same.
    let id = home.add_at(
        "2026-03-01T00:00:00Z",
        "p",
        "30 2 * * *",
        &["--tz", rule],
        &["true"],
    );
    let job = home.run(&["show", &id, "--json"]).ok().json();
    assert_eq!(job["tz"], rule, "{job}");
    let out = home
        .cmd(&[
            "next",
            &id,
            "--from",
            "2026-03-28T00:00:00Z",
            "--count",
            "2",
        ])
        .run()
        .ok();
    assert!(out.stdout.contains(&format!("(zone {rule})")), "{out}");
    let fires = fire_lines(&out);
    assert!(fires[1].contains("2026-03-29 03:00:00 CEST"), "{out}");
    assert!(fires[1].contains("moved by DST gap"), "{out}");
    // As the system zone, from TZ (with or without glibc's colon).
    for tz in [rule.to_string(), format!(":{rule}")] {
        let out = home
            .cmd(&[
                "next",
                "--schedule",
                "0 12 * * *",
                "--from",
                "2026-07-01T00:00:00Z",
                "--count",
                "1",
            ])
            .env("TZ", tz)
            .run()
            .ok();
        assert!(
            fire_lines(&out)[0].contains("12:00:00 CEST  2026-07-01T10:00:00Z"),
            "{out}"
        );
    }
    let out = home
        .cmd(&[
            "next",
            "--schedule",
            "0 12 * * *",
            "--from",
            "2026-07-01T00:00:00Z",
            "--count",
            "1",
        ])
        .env("TZ", ":Europe/Berlin")
        .run()
        .ok();
    assert!(out.stdout.contains("(zone Europe/Berlin)"), "{out}");
    // An incomplete rule is refused as --tz, naming the value and the fix.
    let out = home
        .run(&[
            "next",
            "--schedule",
            "0 9 * * *",
            "--tz",
            "CET-1CEST,M3.5.0",
        ])
        .fails_with(2);
    assert!(out.stderr.contains("\"CET-1CEST,M3.5.0\""), "{out}");
    assert!(out.stderr.contains("not a valid POSIX TZ string"), "{out}");
    assert!(out.stderr.contains("Europe/Berlin"), "{out}");
    // ... and as TZ it is not silently skipped: a warning names it.
    let out = home
        .cmd(&["next", "--schedule", "0 9 * * *", "--count", "1"])
        .env("TZ", "CET-1CEST,M3.5.0")
        .run()
        .ok();
    assert!(
        out.stderr
            .contains("TZ=\"CET-1CEST,M3.5.0\" is not a time zone"),
        "{out}"
    );
    // As one line for a person, not a timestamped log record (issue 24).
    assert!(
        out.stderr.starts_with("warning: TZ=") && out.stderr.lines().count() == 1,
        "{out}"
    );
}

#[test]
fn the_home_is_created_0700_on_first_use() {
    let home = TestHome::new();
    assert!(!home.path().exists());
    home.add_at(T0, "a", "every 5m", &[], &["true"]);
    assert_eq!(mode(home.path()), 0o700);
    assert_eq!(mode(&home.cron_dir()), 0o700);
    assert_eq!(mode(&home.db_file()), 0o600);
}

#[test]
fn list_is_an_aligned_table_and_all_adds_paused_and_completed_jobs() {
    let home = TestHome::new();
    home.add_at(
        T0,
        "active-job-with-a-long-name",
        "every 5m",
        &[],
        &["true"],
    );
    home.add_at(T0, "p", "0 9 * * *", &[], &["true"]);
    home.add_at(T0, "once", "in 30s", &[], &["true"]);
    home.run(&["pause", "p", "--reason", "on holiday"]).ok();
    // The one-shot fires and retires.
    home.tick("2026-06-01T10:00:30Z");
    home.settle(Some("once"), 1);

    let active = home.cmd(&["list"]).now(T0).run().ok();
    let lines: Vec<&str> = active.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "header + the one active job\n{active}");
    assert!(lines[1].contains("active-job-with-a-long-name"));

    let all = home.cmd(&["list", "--all"]).now(T0).run().ok();
    let lines: Vec<&str> = all.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{all}");
    let header = lines[0];
    for column in ["ID", "NAME", "SCHEDULE", "NEXT RUN", "STATE", "LAST"] {
        assert!(header.contains(column), "{header}");
    }
    // Aligned: each column starts at the same offset on every line.
    for column in ["NAME", "SCHEDULE", "NEXT RUN", "STATE"] {
        let at = header.find(column).unwrap();
        for line in &lines[1..] {
            let before = &line[..at];
            assert!(
                before.ends_with("  ") && !line[at..].starts_with(' '),
                "column {column} misaligned:\n{}",
                all.stdout
            );
        }
    }
    let row = |name: &str| *lines.iter().find(|l| l.contains(name)).unwrap();
    assert!(row(" p ").contains("paused"), "{all}");
    assert!(row("once").contains("completed"), "{all}");
    assert!(row("once").contains("succeeded"), "last outcome: {all}");

    let jobs = job_list(&home, true);
    assert_eq!(jobs.len(), 3);
    assert_eq!(find(&jobs, "p")["pause_reason"], "on holiday");
    assert_eq!(find(&jobs, "once")["state"], "completed");
    assert_eq!(find(&jobs, "once")["next_run_at"], Value::Null);
    assert_eq!(find(&jobs, "once")["last_outcome"], "succeeded");
    assert_eq!(job_list(&home, false).len(), 1);
}

#[test]
fn show_prints_the_job_and_its_json() {
    let home = TestHome::new();
    let id = home.add_at(
        T0,
        "backup",
        "every 2h",
        &[
            "--tz",
            "Europe/Berlin",
            "--overlap",
            "allow",
            "--catch-up",
            "all",
            "--retries",
            "2",
            "--retry-backoff",
            "45s",
            "--timeout",
            "30m",
            "--env",
            "API_TOKEN=hunter2",
        ],
        &["echo", "two words"],
    );
    let out = home.run(&["show", "backup"]).ok();
    for want in [
        id.as_str(),
        "every 2h",
        "Europe/Berlin",
        "allow",
        "all",
        "2 (backoff 45s)",
        "30m",
    ] {
        assert!(out.stdout.contains(want), "missing {want:?}\n{out}");
    }
    assert!(
        !out.stdout.contains("hunter2"),
        "env values are hidden\n{out}"
    );

    let job = home.run(&["show", &id, "--json"]).ok().json();
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["tz"], "Europe/Berlin");
    assert_eq!(job["overlap"], "allow");
    assert_eq!(job["catch_up"], "all");
    assert_eq!(job["retries"], 2);
    assert_eq!(job["retry_backoff_s"], 45);
    assert_eq!(job["timeout_s"], 1800);
    assert_eq!(job["command"], serde_json::json!(["echo", "two words"]));
    assert_ne!(job["env"]["API_TOKEN"], "hunter2");
    assert_eq!(job["next_run_at"], "2026-06-01T12:00:00.000Z");
}

#[test]
fn edit_changes_only_what_it_is_given() {
    let home = TestHome::new();
    let id = home.add_at(T0, "e", "every 5m", &["--retries", "1"], &["echo", "old"]);
    let out = home
        .cmd(&[
            "edit",
            "e",
            "--schedule",
            "every 1h",
            "--overlap",
            "replace",
            "--",
            "echo",
            "new",
        ])
        .now(T0)
        .run()
        .ok();
    assert_eq!(out.line(), id);
    let job = home.run(&["show", &id, "--json"]).ok().json();
    assert_eq!(job["schedule"], "every 1h");
    assert_eq!(job["overlap"], "replace");
    assert_eq!(job["command"], serde_json::json!(["echo", "new"]));
    assert_eq!(job["retries"], 1, "untouched flags keep their value");
    assert_eq!(job["next_run_at"], "2026-06-01T11:00:00.000Z");

    home.run(&["edit", "e", "--name", "renamed"]).ok();
    home.run(&["show", "renamed"]).ok();
    home.run(&["show", "e"]).fails_with(2);

    // A bad value is refused naming the flag, and nothing changes.
    let out = home
        .run(&["edit", &id, "--overlap", "sometimes"])
        .fails_with(2);
    assert!(out.stderr.contains("overlap"), "{out}");
    let out = home
        .run(&["edit", &id, "--schedule", "every blue moon"])
        .fails_with(2);
    assert!(out.stderr.contains("blue"), "names the bad token: {out}");
    assert_eq!(
        home.run(&["show", &id, "--json"]).ok().json()["overlap"],
        "replace"
    );
}

/// Regression: a schedule's error was both the message of `add`'s error
/// and its cause, so the chain printed it twice.
#[test]
fn a_schedule_error_is_printed_once() {
    let home = TestHome::new();
    for schedule in ["every blue moon", "daily at 25pm"] {
        let out = home
            .run(&["add", "--name", "x", "--schedule", schedule, "--", "true"])
            .fails_with(2);
        let quoted = format!("{schedule:?}");
        assert_eq!(out.stderr.matches(&quoted).count(), 1, "{out}");
        assert!(out.stderr.starts_with("hermes-cron: --schedule: "), "{out}");
    }
}

#[test]
fn pause_with_a_reason_then_resume_from_now() {
    let home = TestHome::new();
    let id = home.add_at(T0, "p", "every 10m", &[], &["true"]);
    let out = home.run(&["pause", "p", "--reason", "disk full"]).ok();
    assert!(out.stdout.contains(&id), "{out}");
    let job = home.run(&["show", "p", "--json"]).ok().json();
    assert_eq!(job["state"], "paused");
    assert_eq!(job["pause_reason"], "disk full");
    let text = home.run(&["show", "p"]).ok();
    assert!(text.stdout.contains("paused (disk full)"), "{text}");

    // A paused job is not claimed, however late it is.
    home.tick("2026-06-01T12:00:00Z");
    assert!(home.runs(None).is_empty());

    home.cmd(&["resume", "p"])
        .now("2026-06-01T13:00:00Z")
        .run()
        .ok();
    let job = home.run(&["show", "p", "--json"]).ok().json();
    assert_eq!(job["state"], "active");
    assert_eq!(job["pause_reason"], Value::Null);
    assert_eq!(
        job["next_run_at"], "2026-06-01T13:10:00.000Z",
        "resumed from now, not from the slots missed while paused"
    );
}

#[test]
fn rm_removes_the_job_but_keeps_its_ledger_rows() {
    let home = TestHome::new();
    let id = home.add_at(T0, "gone", "every 1m", &[], &["true"]);
    home.tick("2026-06-01T10:01:00Z");
    home.settle(None, 1);
    let out = home.run(&["rm", "gone"]).ok();
    assert!(out.stdout.contains(&id), "{out}");
    assert!(job_list(&home, true).is_empty());
    home.run(&["show", &id]).fails_with(2);
    home.run(&["rm", &id]).fails_with(2);
    // History stays, and is still found by the old name.
    let rows = home.runs(Some("gone"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["job_id"], id.as_str());
    // Nothing is claimed for it any more.
    home.tick("2026-06-01T10:05:00Z");
    assert_eq!(home.runs(None).len(), 1);
}

#[test]
fn an_ambiguous_name_exits_2_listing_the_candidates() {
    let home = TestHome::new();
    let a = home.add_at(T0, "twin", "every 5m", &[], &["true"]);
    let b = home.add_at(T0, "twin2", "every 10m", &[], &["true"]);
    // `add` refuses a name taken; a home of an earlier version (or Hermes,
    // whose job names need not be unique) may hold two.
    crate::support::ledger::execute(
        &home.db_file(),
        "UPDATE jobs SET name = 'twin' WHERE id = ?1",
        hermes_cron::params![b.as_str()],
    );
    for args in [
        vec!["show", "twin"],
        vec!["pause", "twin"],
        vec!["rm", "twin"],
        vec!["run", "twin"],
        vec!["next", "twin"],
    ] {
        let out = home.run(&args).fails_with(2);
        assert!(out.stderr.contains("twin"), "{args:?}: {out}");
        assert!(out.stderr.contains(&a), "{args:?} lists {a}: {out}");
        assert!(out.stderr.contains(&b), "{args:?} lists {b}: {out}");
    }
    // Nothing was changed by the refused commands; ids still work.
    assert_eq!(job_list(&home, false).len(), 2);
    assert!(home.runs(None).is_empty());
    home.run(&["rm", &a]).ok();
    home.run(&["show", "twin"]).ok();
}

#[test]
fn an_unknown_job_exits_2() {
    let home = TestHome::new();
    home.add_at(T0, "a", "every 5m", &[], &["true"]);
    let out = home.run(&["show", "nope"]).fails_with(2);
    assert!(out.stderr.contains("nope"), "{out}");
}

#[test]
fn an_unknown_program_is_refused_unless_shell_or_no_check() {
    let home = TestHome::new();
    let out = home
        .run(&[
            "add",
            "--name",
            "x",
            "--schedule",
            "every 5m",
            "--",
            "no-such-program-hermes",
        ])
        .fails_with(2);
    assert!(out.stderr.contains("no-such-program-hermes"), "{out}");
    assert!(
        out.stderr.contains("--shell") && out.stderr.contains("--no-check"),
        "{out}"
    );
    let out = home
        .run(&[
            "add",
            "--name",
            "x",
            "--schedule",
            "every 5m",
            "--",
            "/nonexistent/prog",
        ])
        .fails_with(2);
    assert!(out.stderr.contains("/nonexistent/prog"), "{out}");
    assert!(job_list(&home, true).is_empty(), "nothing was stored");

    home.add_at(
        T0,
        "s",
        "every 5m",
        &["--shell"],
        &["no-such-program-hermes"],
    );
    home.add_at(
        T0,
        "n",
        "every 5m",
        &["--no-check"],
        &["no-such-program-hermes"],
    );
    let jobs = job_list(&home, true);
    assert_eq!(jobs.len(), 2);
    assert_eq!(find(&jobs, "s")["shell"], true);
    assert_eq!(find(&jobs, "n")["shell"], false);

    // Edit checks a new command the same way.
    home.run(&["edit", "n", "--", "no-such-program-either"])
        .fails_with(2);
}

#[test]
fn bad_add_input_exits_2_naming_the_field() {
    let home = TestHome::new();
    for (args, field) in [
        (vec!["--schedule", "every 0s"], "0s"),
        (vec!["--schedule", "at teatime"], "teatime"),
        (
            vec!["--schedule", "every 5m", "--tz", "Mars/Olympus"],
            "Mars/Olympus",
        ),
        (
            vec!["--schedule", "every 5m", "--catch-up", "never"],
            "catch-up",
        ),
        (
            vec!["--schedule", "every 5m", "--env", "NOEQUALS"],
            "NOEQUALS",
        ),
    ] {
        let mut full = vec!["add", "--name", "bad"];
        full.extend(args.iter().copied());
        full.extend(["--", "true"]);
        let out = home.run(&full).fails_with(2);
        assert!(
            out.stderr.contains(field),
            "{args:?} should name {field:?}: {out}"
        );
    }
    assert!(job_list(&home, true).is_empty());
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// Eight `add`s racing on a home that does not exist yet: every one
/// succeeds. (Switching a new database to WAL takes an exclusive lock
/// without consulting SQLite's busy handler; before the open retried it, about
/// one fresh home in eight lost an `add` to an instant "database is locked".)
#[test]
fn concurrent_adds_on_a_fresh_home_all_succeed() {
    const RACERS: usize = 8;
    for trial in 0..40 {
        let home = TestHome::new();
        let racing: Vec<_> = (0..RACERS)
            .map(|i| {
                let name = format!("racer-{i}");
                home.cmd(&[
                    "add",
                    "--name",
                    &name,
                    "--schedule",
                    "every 1d",
                    "--",
                    "true",
                ])
                .spawn()
            })
            .collect();
        for r in racing {
            let out = r.wait();
            assert_eq!(
                out.status.code(),
                Some(0),
                "trial {trial}: an add failed\n{out}"
            );
        }
        assert_eq!(job_list(&home, true).len(), RACERS, "trial {trial}");
    }
}

#[test]
fn runs_of_an_execution_id_shows_that_run_and_an_unknown_key_is_refused() {
    let h = TestHome::new();
    h.add("one", "every 1h", &[], &["true"]);
    let out = h.run(&["run", "one", "--wait"]).ok();
    let id = crate::support::rows::execution_id_in(&out.stdout);
    let rows = h.run(&["runs", &id, "--json"]).ok().json();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows:#}");
    assert_eq!(rows[0]["id"], id.as_str(), "{rows:#}");
    let text = h.run(&["runs", &id]).ok();
    assert!(text.stdout.contains(&id), "{text}");
    let unknown = h.run(&["runs", "no-such-thing"]);
    assert_eq!(unknown.code(), 2, "{unknown}");
    assert!(unknown.stderr.contains("no-such-thing"), "{unknown}");
    // A job that has not run yet is no typo: its runs are simply none.
    h.add("fresh", "every 1h", &[], &["true"]);
    let none = h.run(&["runs", "fresh", "--json"]).ok().json();
    assert_eq!(none, serde_json::json!([]));
}

#[test]
fn a_job_is_found_by_its_name_in_any_case_when_unambiguous() {
    let h = TestHome::new();
    let id = h.add("Brief", "every 1h", &[], &["true"]);
    let shown = h.run(&["show", "brief", "--json"]).ok().json();
    assert_eq!(shown["id"], id.as_str(), "{shown:#}");
    // `add` refuses a name taken in another case; a home of an earlier
    // version may hold both.
    h.run(&[
        "add",
        "--name",
        "BRIEF",
        "--schedule",
        "every 2h",
        "--",
        "true",
    ])
    .fails_with(2);
    let other = h.add("other", "every 2h", &[], &["true"]);
    crate::support::ledger::execute(
        &h.db_file(),
        "UPDATE jobs SET name = 'BRIEF' WHERE id = ?1",
        hermes_cron::params![other.as_str()],
    );
    // An exact name still wins; two case-insensitive matches are refused.
    assert_eq!(
        h.run(&["show", "Brief", "--json"]).ok().json()["id"],
        id.as_str()
    );
    let both = h.run(&["show", "brief"]);
    assert_eq!(both.code(), 2, "{both}");
    assert!(both.stderr.contains("2 jobs"), "{both}");
}

#[test]
fn status_of_a_stopped_gateway_has_no_empty_fields() {
    let h = TestHome::new();
    h.add("one", "every 1h", &[], &["true"]);
    let mut gw = h.gateway(&[]);
    gw.wait_ready();
    gw.stop();
    let out = h.run(&["status"]);
    assert_eq!(out.code(), 1, "{out}");
    let text = &out.stdout;
    assert!(text.contains("not running (last seen"), "{text}");
    for empty in ["at -", "last saw: )", "  at ", "last saw: unknown"] {
        assert!(!text.contains(empty), "{empty:?} in:\n{text}");
    }
}

#[test]
fn limits_this_host_cannot_enforce_are_said_by_add_run_and_doctor() {
    let h = TestHome::new();
    let enforced = match hermes_cron::systemd::delegation() {
        hermes_cron::systemd::Delegation::Controllers(c) => c.iter().any(|c| c == "memory"),
        hermes_cron::systemd::Delegation::None(_) => false,
    };
    let added = h.run(&[
        "add",
        "--name",
        "capped",
        "--schedule",
        "every 1h",
        "--memory-max",
        "64M",
        "--",
        "true",
    ]);
    let added = added.ok();
    assert_eq!(added.stderr.contains("--memory-max"), !enforced, "{added}");
    let ran = h.run(&["run", "capped", "--wait"]).ok();
    assert_eq!(ran.stderr.contains("--memory-max"), !enforced, "{ran}");
    let doctor = h.run(&["doctor", "--json"]).json();
    let codes: Vec<&str> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(
        codes.contains(&"limit_not_enforced"),
        !enforced,
        "{doctor:#}"
    );
}

/// `list | head -1` and the like: a reader that closed its end before the
/// command wrote is no error. The pipe's read end is closed before the
/// command starts, so its every write meets EPIPE (issue 24, bug 3).
#[test]
fn a_closed_stdout_ends_list_next_and_list_json_quietly_with_exit_0() {
    let home = TestHome::new();
    home.add("brief", "every 5m", &[], &["/bin/true"]);
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["next", "brief", "--count", "50"],
    ] {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        drop(read);
        let out = home
            .cmd(args)
            .command()
            .stdout(std::process::Stdio::from(write))
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        // Its stderr says only that no gateway runs (`add` and `list` warn).
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.starts_with("warning: no gateway is running"))
            .collect();
        assert_eq!(
            (out.status.code(), said),
            (Some(0), Vec::<&str>::new()),
            "{args:?} with its stdout closed: {stderr}"
        );
    }
}

/// A job's zone is fixed when it is made (issue 24, bug 1): a daily 8am job
/// added from a Berlin shell (no `--tz`, no config `timezone`) keeps Berlin,
/// so a claim pass in UTC (as the gateway under its unit) fires it once a
/// day at 08:00 Berlin, not at 07:00Z and again at 08:00Z. A job that has
/// no zone of its own, read in one zone here and in another by the running
/// gateway, is a `doctor` finding.
#[test]
fn a_job_keeps_the_zone_it_was_added_in_and_doctor_names_a_gateway_reading_another() {
    let home = TestHome::new().with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "200");
    home.cmd(&[
        "add",
        "--name",
        "b",
        "--schedule",
        "daily at 8am",
        "--",
        "true",
    ])
    .env("TZ", "Europe/Berlin")
    .now(T0)
    .run()
    .ok();
    let job = home.run(&["show", "b", "--json"]).ok().json();
    assert_eq!(job["tz"], "Europe/Berlin", "{job}");
    let out = home.run(&["next", "b", "--count", "1", "--from", T0]).ok();
    assert!(
        fire_lines(&out)[0].contains("08:00:00 CEST  2026-06-02T06:00:00Z"),
        "read in UTC: {out}"
    );
    // The claim passes of the first day, in UTC: one run, at 06:00Z.
    for now in [
        "2026-06-02T06:00:01Z",
        "2026-06-02T07:00:01Z",
        "2026-06-02T08:00:01Z",
    ] {
        home.tick(now);
    }
    let slots: Vec<Value> = home
        .runs_of("b")
        .iter()
        .map(|r| r["scheduled_for"].clone())
        .collect();
    assert_eq!(slots, [Value::from("2026-06-02T06:00:00.000Z")]);

    // A job without a zone of its own: made while config `timezone` says
    // Berlin, which the gateway (started before, in UTC) does not read.
    let _gateway = home.gateway(&[]);
    let beat = home.path().join("state/hermes-cron.heartbeat");
    crate::support::wait_for("the gateway heartbeat", crate::support::PATIENCE, || {
        beat.exists().then_some(())
    });
    let doctor = |home: &TestHome| -> Vec<Value> {
        let out = home.run(&["doctor", "--json"]);
        let report: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(report["zone_rules"]["gateway_zone"], "UTC", "{report:#}");
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "zone_differs_from_gateway")
            .cloned()
            .collect()
    };
    home.write_config("timezone: Europe/Berlin\n");
    assert_eq!(doctor(&home), Vec::<Value>::new(), "b has its own zone");
    home.add("c", "daily at 9am", &[], &["true"]);
    assert_eq!(
        home.run(&["show", "c", "--json"]).ok().json()["tz"],
        Value::Null
    );
    let found = doctor(&home);
    assert_eq!(found.len(), 1, "{found:#?}");
    let problem = found[0]["problem"].as_str().unwrap();
    assert!(
        problem.contains("in UTC, this shell in Europe/Berlin") && problem.contains("(c)"),
        "{problem}"
    );
    assert!(
        found[0]["fix"]
            .as_str()
            .unwrap()
            .contains("--tz Europe/Berlin"),
        "{:#}",
        found[0]
    );
}

/// A second job of the same name is refused (issue 24, bug 4): before, `add`
/// took it and `show`, `run` and `runs` then failed on the name for both.
#[test]
fn a_name_already_taken_is_refused_by_add_and_edit_naming_the_job_that_has_it() {
    let home = TestHome::new();
    let first = home.add("brief", "daily at 8am", &[], &["true"]);
    // Not in another case either: `show Brief` would then name two jobs.
    let out = home
        .run(&[
            "add",
            "--name",
            "Brief",
            "--schedule",
            "every 5m",
            "--",
            "true",
        ])
        .fails_with(2);
    assert!(
        out.stderr.contains("a job named \"brief\" exists already")
            && out.stderr.contains(&first)
            && out.stderr.contains(&format!("hermes-cron edit {first}")),
        "{out}"
    );
    assert_eq!(job_list(&home, true).len(), 1);
    let other = home.add("other", "every 5m", &[], &["true"]);
    let out = home
        .run(&["edit", "other", "--name", "brief"])
        .fails_with(2);
    assert!(out.stderr.contains(&first), "{out}");
    assert_eq!(
        home.run(&["show", "other", "--json"]).ok().json()["id"],
        other.as_str()
    );
    // Its own name is no clash, and the name still calls the one job.
    home.run(&[
        "edit",
        "brief",
        "--name",
        "brief",
        "--schedule",
        "daily at 9am",
    ])
    .ok();
    assert_eq!(
        home.run(&["show", "brief", "--json"]).ok().json()["id"],
        first.as_str()
    );
}

/// A schedule error is printed once, as one line naming the flag (issue 24,
/// bug 6), by every command that reads a schedule.
#[test]
fn a_schedule_error_is_one_line_printed_once() {
    let home = TestHome::new();
    home.add("brief", "daily at 8am", &[], &["true"]);
    for args in [
        &[
            "add",
            "--name",
            "x",
            "--schedule",
            "daily at 25pm",
            "--",
            "true",
        ][..],
        &["edit", "brief", "--schedule", "daily at 25pm"],
        &["next", "--schedule", "daily at 25pm"],
    ] {
        let out = home.run(args).fails_with(2);
        assert_eq!(
            (
                out.stderr.lines().count(),
                out.stderr.matches("out of range").count()
            ),
            (1, 1),
            "{args:?}: {out}"
        );
        assert!(out.stderr.contains("\"daily at 25pm\""), "{args:?}: {out}");
    }
}

/// A job's working directory is defined (issue 24, bug 2): `-- ./standup.sh`
/// typed in a project directory is stored as that absolute path, the job
/// runs in its account's home (stored as its workdir, shown by `show`) from
/// wherever `run` is typed, and a job without a stored workdir (an earlier
/// version's) runs there too, not in its launcher's directory.
#[test]
fn a_relative_program_is_stored_absolute_and_the_job_runs_in_its_home_from_anywhere() {
    let home = TestHome::new();
    let account_home = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .dir;
    let project = home.scratch().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let script = project.join("standup.sh");
    std::fs::write(&script, "#!/bin/sh\npwd\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    home.cmd(&[
        "add",
        "--name",
        "standup",
        "--schedule",
        "every monday 9am",
        "--",
        "./standup.sh",
    ])
    .in_dir(&project)
    .run()
    .ok();
    let job = home.run(&["show", "standup", "--json"]).ok().json();
    assert_eq!(job["command"][0], script.to_str().unwrap(), "{job:#}");
    assert_eq!(job["workdir"], account_home.to_str().unwrap(), "{job:#}");
    let text = home.run(&["show", "standup"]).ok();
    assert!(
        text.stdout.lines().any(|l| {
            l.split_whitespace().collect::<Vec<_>>() == ["workdir", account_home.to_str().unwrap()]
        }),
        "{text}"
    );
    let elsewhere = home.scratch().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let ran_in = |home: &TestHome| {
        let out = home
            .cmd(&["run", "standup", "--wait"])
            .in_dir(&elsewhere)
            .run()
            .ok();
        let row = home
            .row(&crate::support::rows::execution_id_in(&out.stdout))
            .expect("its row");
        home.output_of(&row)
    };
    assert_eq!(ran_in(&home), format!("{}\n", account_home.display()));
    // `doctor` finds the program from anywhere (it reported program_missing).
    let doctor = home.cmd(&["doctor", "--json"]).in_dir(&elsewhere).run();
    assert!(!doctor.stdout.contains("program_missing"), "{doctor}");
    // A job stored without a workdir runs in the home too.
    crate::support::ledger::execute(
        &home.db_file(),
        "UPDATE jobs SET workdir = NULL",
        hermes_cron::params![],
    );
    assert_eq!(ran_in(&home), format!("{}\n", account_home.display()));
}

/// "What did brief print this morning?" in one command (issue 24): `logs
/// JOB` prints the job's newest run with output (`--run 2` the one before),
/// naming it on stderr; an execution is found by a beginning or end of its
/// id that only it has, by `logs`, `wait`, `stop` and `runs`.
#[test]
fn logs_of_a_job_prints_its_latest_run_and_an_execution_is_found_by_part_of_its_id() {
    let home = TestHome::new();
    let counter = home.scratch().join("count");
    let script = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; echo run $n",
        c = counter.display()
    );
    home.add("brief", "daily at 8am", &["--shell"], &[&script]);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = home.run(&["run", "brief", "--wait"]).ok();
        ids.push(crate::support::rows::execution_id_in(&out.stdout));
    }
    let latest = home.run(&["logs", "brief"]).ok();
    assert_eq!(latest.stdout, "run 2\n", "{latest}");
    assert!(latest.stderr.contains(&ids[1]), "names the run: {latest}");
    assert_eq!(
        home.run(&["logs", "brief", "--run", "2"]).ok().stdout,
        "run 1\n"
    );
    let out = home.run(&["logs", "brief", "--run", "3"]).fails_with(2);
    assert!(out.stderr.contains("2 run(s) with output, not 3"), "{out}");

    // By the end of its id (its beginning is its creation time's).
    let end = &ids[0][ids[0].len() - 6..];
    assert_eq!(home.run(&["logs", end]).ok().stdout, "run 1\n");
    assert_eq!(home.run(&["wait", end]).ok().code(), 0);
    assert_eq!(home.run(&["stop", end]).ok().code(), 0);
    let rows = home.run(&["runs", end, "--json"]).ok().json();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows:#}");
    assert_eq!(rows[0]["id"], ids[0].as_str());
    // A part both ids have is refused, listing them; one no id has is not found.
    let out = home.run(&["logs", &ids[0][..4]]).fails_with(2);
    assert!(
        out.stderr.contains("begins or ends 2 executions")
            && out.stderr.contains(&ids[0])
            && out.stderr.contains(&ids[1]),
        "{out}"
    );
    let out = home.run(&["wait", "ffffffffffff0"]).fails_with(2);
    assert!(
        out.stderr.contains("no execution \"ffffffffffff0\""),
        "{out}"
    );
}

/// `add` and `list` say when no gateway runs on the home, as one line for a
/// person (issue 24: kinder messages), and say nothing of it while one runs.
#[test]
fn add_and_list_warn_once_when_no_gateway_runs_and_not_while_one_does() {
    let home = TestHome::new().with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "200");
    let warned = |out: &crate::support::cli::Out| {
        out.stderr
            .lines()
            .filter(|l| l.starts_with("warning: no gateway is running on this home"))
            .count()
    };
    // On a shared ledger (the suite's PostgreSQL pass) another host's
    // gateway may fire the jobs: nothing is said.
    let expected = usize::from(!crate::support::ledger::on_postgres());
    let added = home
        .run(&["add", "--name", "a", "--schedule", "every 1h", "--", "true"])
        .ok();
    assert_eq!(warned(&added), expected, "{added}");
    assert!(
        expected == 0 || added.stderr.contains("hermes-cron gateway"),
        "{added}"
    );
    assert_eq!(warned(&home.run(&["list"]).ok()), expected);
    let mut gateway = home.gateway(&[]);
    gateway.wait_ready();
    let added = home
        .run(&["add", "--name", "b", "--schedule", "every 1h", "--", "true"])
        .ok();
    assert_eq!(warned(&added), 0, "{added}");
    assert_eq!(warned(&home.run(&["list", "--json"]).ok()), 0);
}

/// One time format (issue 24): `list`, `show`, `runs`, `status`, `alerts`
/// and `logs` show a job's instants as `2026-12-01 08:00:00 JST`, in the
/// job's zone; a job without one (and a spawned run) in the viewer's, the
/// config's `timezone`. (Before: `runs` and `status` in UTC, each in a
/// format of its own.)
#[test]
fn every_view_shows_a_job_s_times_in_its_zone_in_one_format() {
    let home = TestHome::new();
    home.run(&["config", "set", "timezone", "America/New_York"])
        .ok();
    home.add(
        "tokyo",
        "daily at 8am",
        &["--tz", "Asia/Tokyo"],
        &["echo", "hi"],
    );
    home.run(&["run", "tokyo", "--wait"]).ok();
    let in_zone = |text: &str, abbreviation: &str| -> usize {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .windows(3)
            .filter(|w| {
                let date =
                    w[0].len() == 10 && w[0].as_bytes()[4] == b'-' && w[0].as_bytes()[7] == b'-';
                let time =
                    w[1].len() == 8 && w[1].as_bytes()[2] == b':' && w[1].as_bytes()[5] == b':';
                date && time && w[2].trim_end_matches([')', ',']) == abbreviation
            })
            .count()
    };
    let list = home.run(&["list"]).ok().stdout;
    assert_eq!(
        in_zone(&list, "JST"),
        1,
        "next run in the job's zone: {list}"
    );
    let runs = home.run(&["runs", "tokyo"]).ok().stdout;
    assert_eq!(
        in_zone(&runs, "JST"),
        1,
        "started, in the job's zone: {runs}"
    );
    let status = home.run(&["status"]).stdout;
    let next = status
        .lines()
        .find(|l| l.starts_with("next fire:"))
        .unwrap_or_else(|| panic!("{status}"));
    assert_eq!(in_zone(next, "JST"), 1, "{status}");
    let logs = home.run(&["logs", "tokyo"]).ok();
    assert_eq!(in_zone(&logs.stderr, "JST"), 1, "{logs}");

    // Without a zone of its own: the viewer's (config `timezone`).
    home.add("local", "daily at 9am", &[], &["true"]);
    home.run(&["run", "local", "--wait"]).ok();
    let runs = home.run(&["runs", "local"]).ok().stdout;
    let eastern = in_zone(&runs, "EST") + in_zone(&runs, "EDT");
    assert_eq!(eastern, 1, "{runs}");
}

/// A job name with a newline, an ANSI escape and a right-to-left override
/// is shown escaped wherever people read it (`list`, `show`, `runs`, the
/// gateway's log), never obeyed by the terminal.
#[test]
fn a_hostile_job_name_is_shown_escaped_never_obeyed() {
    let h = TestHome::new();
    let name = "evil\nline2\u{1b}[31mred\u{202e}gpj.exe";
    h.add(name, "every 1h", &[], &["true"]);
    let out = h.run(&["run", "--wait", "--", name]);
    assert_eq!(out.code(), 0, "{out:#?}");
    for args in [&["list"][..], &["show", name], &["runs"]] {
        let out = h.run(args).ok();
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(
            !text.contains('\u{1b}'),
            "{args:?} printed an ANSI escape:\n{text:?}"
        );
        assert!(
            !text.contains('\u{202e}'),
            "{args:?} printed an RTL override:\n{text:?}"
        );
        assert!(
            text.contains("evil\\nline2\\u{1b}[31m"),
            "{args:?} does not show the name escaped:\n{text}"
        );
    }
    let shown = h.run(&["show", name]).ok().stdout;
    assert!(shown.contains("red\\u{202e}gpj.exe"), "{shown}");
}
