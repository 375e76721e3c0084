//! Crontab import, end to end through the public entry points. Expected
//! fires are worked out by hand from the crontab's meaning, not from the
//! schedule code.

use super::*;
use crate::ids::JobId;
use crate::schedule::{Timestamp, Tz, ZoneTable};

/// Friday 2026-05-01 10:00 UTC: 06:00 in Toronto (EDT), 12:00 in Berlin
/// (CEST), 19:00 in Tokyo.
fn now() -> Timestamp {
    at("2026-05-01T10:00:00Z")
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn import(text: &str, zone: Tz) -> ImportPlan {
    parse_crontab(text, now(), zone, &ZoneTable::compiled_in_only())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn next_of(job: &ImportedJob) -> Option<Timestamp> {
    job.next.as_ref().map(|f| f.at)
}

fn env_of(job: &ImportedJob) -> Vec<(&str, &str)> {
    job.env
        .0
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// (line, name, schedule, zone, next fire in UTC)
type Row = (
    usize,
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
);

const TWENTY: &str = r#"# Crontab for ann@host: nightly maintenance and reports
# m h  dom mon dow   command
SHELL=/bin/sh
PATH=/usr/local/bin:/usr/bin:/bin
MAILTO=ann@example.com

# Nightly backup
30 2 * * * /usr/local/bin/backup.sh --full
# Rotate logs
@daily /usr/sbin/logrotate /home/ann/.logrotate.conf
*/15 * * * * /home/ann/bin/poll-queue
0 9 * * mon-fri /home/ann/bin/standup-reminder
@hourly /home/ann/bin/sync-mail

REPORT_DIR="/srv/reports"
# Weekly report
0 7 * * 1 /home/ann/bin/report.py --week
0 0 1 * * /home/ann/bin/report.py --month
@weekly /home/ann/bin/cleanup-tmp
5 4 * * sun /usr/bin/find /tmp -mtime +7 -delete

CRON_TZ=Europe/Berlin
# Berlin office opens
0 8 * * 1-5 /home/ann/bin/notify berlin-open
30 17 * * 1-5 /home/ann/bin/notify berlin-close
@midnight /home/ann/bin/berlin-rollover

CRON_TZ=Asia/Tokyo
0 9 * * * /home/ann/bin/notify tokyo-open
0 0 1 1 * /home/ann/bin/new-year

CRON_TZ=
45 23 * * * date +\%F >> /home/ann/days.log
0 12 15 * * /home/ann/bin/invoice
0 6 * * 6,0 /home/ann/bin/weekend-digest
@reboot /home/ann/bin/start-agent
0 */6 * * * /home/ann/bin/refresh-cache
@yearly /home/ann/bin/archive-year
"#;

#[test]
fn twenty_entry_crontab_imports_twenty_jobs_with_the_fires_it_means() {
    let plan = import(TWENTY, Tz::America__Toronto);
    // (line, name, schedule, zone, next fire in UTC)
    let berlin = Some("Europe/Berlin");
    let tokyo = Some("Asia/Tokyo");
    let expected: [Row; 20] = [
        // Toronto is UTC-4 in May, UTC-5 in January; now is Fri 06:00 there.
        (
            8,
            "Nightly backup",
            "30 2 * * *",
            None,
            Some("2026-05-02T06:30:00Z"),
        ),
        (
            10,
            "Rotate logs",
            "@daily",
            None,
            Some("2026-05-02T04:00:00Z"),
        ),
        (
            11,
            "poll-queue-11",
            "*/15 * * * *",
            None,
            Some("2026-05-01T10:15:00Z"),
        ),
        (
            12,
            "standup-reminder-12",
            "0 9 * * mon-fri",
            None,
            Some("2026-05-01T13:00:00Z"),
        ),
        (
            13,
            "sync-mail-13",
            "@hourly",
            None,
            Some("2026-05-01T11:00:00Z"),
        ),
        (
            17,
            "Weekly report",
            "0 7 * * 1",
            None,
            Some("2026-05-04T11:00:00Z"),
        ),
        (
            18,
            "report-18",
            "0 0 1 * *",
            None,
            Some("2026-06-01T04:00:00Z"),
        ),
        (
            19,
            "cleanup-tmp-19",
            "@weekly",
            None,
            Some("2026-05-03T04:00:00Z"),
        ),
        (
            20,
            "find-20",
            "5 4 * * sun",
            None,
            Some("2026-05-03T08:05:00Z"),
        ),
        // Berlin is UTC+2; now is Fri 12:00 there.
        (
            24,
            "Berlin office opens",
            "0 8 * * 1-5",
            berlin,
            Some("2026-05-04T06:00:00Z"),
        ),
        (
            25,
            "notify-25",
            "30 17 * * 1-5",
            berlin,
            Some("2026-05-01T15:30:00Z"),
        ),
        (
            26,
            "berlin-rollover-26",
            "@midnight",
            berlin,
            Some("2026-05-01T22:00:00Z"),
        ),
        // Tokyo is UTC+9; now is Fri 19:00 there.
        (
            29,
            "notify-29",
            "0 9 * * *",
            tokyo,
            Some("2026-05-02T00:00:00Z"),
        ),
        (
            30,
            "new-year-30",
            "0 0 1 1 *",
            tokyo,
            Some("2026-12-31T15:00:00Z"),
        ),
        // `CRON_TZ=` returns to the default zone.
        (
            33,
            "date-33",
            "45 23 * * *",
            None,
            Some("2026-05-02T03:45:00Z"),
        ),
        (
            34,
            "invoice-34",
            "0 12 15 * *",
            None,
            Some("2026-05-15T16:00:00Z"),
        ),
        (
            35,
            "weekend-digest-35",
            "0 6 * * 6,0",
            None,
            Some("2026-05-02T10:00:00Z"),
        ),
        (36, "start-agent-36", "@reboot", None, None),
        (
            37,
            "refresh-cache-37",
            "0 */6 * * *",
            None,
            Some("2026-05-01T16:00:00Z"),
        ),
        (
            38,
            "archive-year-38",
            "@yearly",
            None,
            Some("2027-01-01T05:00:00Z"),
        ),
    ];
    assert_eq!(plan.jobs.len(), 20);
    for (job, (line, name, schedule, tz, next)) in plan.jobs.iter().zip(expected) {
        assert_eq!(job.origin, format!("crontab line {line}"));
        assert_eq!(job.name, name, "line {line}");
        assert_eq!(job.schedule, schedule, "line {line}");
        assert_eq!(job.tz.as_deref(), tz, "line {line}");
        assert_eq!(next_of(job), next.map(at), "line {line} ({schedule})");
        assert!(
            job.shell && job.enabled && job.workdir.is_none(),
            "line {line}"
        );
        assert_eq!(job.argv.len(), 1, "line {line}");
    }
    assert!(plan.skipped.is_empty(), "{:?}", plan.skipped);

    let by_line = |line: usize| {
        plan.jobs
            .iter()
            .find(|j| j.origin == format!("crontab line {line}"))
            .unwrap()
    };
    assert_eq!(by_line(8).argv, ["/usr/local/bin/backup.sh --full"]);
    assert_eq!(by_line(33).argv, ["date +%F >> /home/ann/days.log"]);
    let early = [
        ("SHELL", "/bin/sh"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ];
    assert_eq!(env_of(by_line(8)), early);
    assert_eq!(env_of(by_line(13)), early);
    let later = [
        ("SHELL", "/bin/sh"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("REPORT_DIR", "/srv/reports"),
    ];
    for line in [17, 24, 29, 38] {
        assert_eq!(env_of(by_line(line)), later, "line {line}");
    }
    assert_eq!(plan.notes.len(), 1, "{:?}", plan.notes);
    assert_eq!(plan.notes[0].origin, "crontab line 5");
    assert!(
        plan.notes[0]
            .message
            .starts_with("MAILTO=ann@example.com is not supported")
    );

    // Every job is accepted by the job layer as `add` would build it.
    for job in &plan.jobs {
        let built = job
            .to_job_input()
            .build(
                JobId::generate(),
                now(),
                crate::job::FallbackZone::Configured(Tz::America__Toronto),
                &ZoneTable::compiled_in_only(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", job.origin));
        assert_eq!(built.next_run_at, next_of(job), "{}", job.origin);
        assert_eq!(built.tz, job.tz);
    }
}

#[test]
fn every_macro() {
    let text = "@reboot a\n@yearly b\n@annually c\n@monthly d\n@weekly e\n@daily f\n@midnight g\n@hourly h\n@DAILY i\n";
    let plan = import(text, Tz::UTC);
    let expected = [
        ("@reboot", None),
        ("@yearly", Some("2027-01-01T00:00:00Z")),
        ("@annually", Some("2027-01-01T00:00:00Z")),
        ("@monthly", Some("2026-06-01T00:00:00Z")),
        ("@weekly", Some("2026-05-03T00:00:00Z")),
        ("@daily", Some("2026-05-02T00:00:00Z")),
        ("@midnight", Some("2026-05-02T00:00:00Z")),
        ("@hourly", Some("2026-05-01T11:00:00Z")),
        ("@daily", Some("2026-05-02T00:00:00Z")),
    ];
    assert_eq!(plan.jobs.len(), expected.len());
    for (job, (schedule, next)) in plan.jobs.iter().zip(expected) {
        assert_eq!(job.schedule, schedule);
        assert_eq!(next_of(job), next.map(at), "{schedule}");
    }
}

#[test]
fn assignments_apply_only_below_and_later_ones_replace() {
    let text =
        "0 1 * * * first\nA=1\n0 2 * * * second\n  B = \"two words\"\nA = '3'\n0 3 * * * third\n";
    let plan = import(text, Tz::UTC);
    let envs: Vec<_> = plan.jobs.iter().map(env_of).collect();
    assert_eq!(envs[0], []);
    assert_eq!(envs[1], [("A", "1")]);
    assert_eq!(envs[2], [("B", "two words"), ("A", "3")]);
}

#[test]
fn cron_tz_switches_the_zone_of_the_entries_below() {
    let text = "0 8 * * * a\nCRON_TZ=Asia/Kolkata\n0 8 * * * b\nTZ=america/new_york\n0 8 * * * c\nCRON_TZ=\n0 8 * * * d\n";
    let plan = import(text, Tz::UTC);
    let got: Vec<_> = plan
        .jobs
        .iter()
        .map(|j| (j.tz.as_deref(), next_of(j).unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (None, at("2026-05-02T08:00:00Z")),
            // 08:00 IST (UTC+5:30); it is already 15:30 there.
            (Some("Asia/Kolkata"), at("2026-05-02T02:30:00Z")),
            // 08:00 EDT; it is 06:00 there.
            (Some("America/New_York"), at("2026-05-01T12:00:00Z")),
            (None, at("2026-05-02T08:00:00Z")),
        ]
    );
    // TZ is also the job's environment (canonical name); CRON_TZ is not.
    assert_eq!(env_of(&plan.jobs[1]), []);
    assert_eq!(env_of(&plan.jobs[2]), [("TZ", "America/New_York")]);
    assert_eq!(env_of(&plan.jobs[3]), [("TZ", "America/New_York")]);
}

#[test]
fn a_malformed_line_is_an_error_naming_line_and_token_and_imports_nothing() {
    let cases = [
        (
            "15 4 * * /usr/local/bin/backup.sh",
            "/usr/local/bin/backup.sh",
        ),
        ("61 * * * * /bin/true", "61"),
        ("@fortnightly /bin/true", "@fortnightly"),
        ("0 8 * *", "0 8 * *"),
        ("30 2 * * *", "30 2 * * *"),
        ("CRON_TZ=Mars/Base", "Mars/Base"),
    ];
    for (bad, token) in cases {
        let text = format!("# ok\n0 1 * * * /bin/true\n{bad}\n0 2 * * * /bin/true\n");
        let err =
            parse_crontab(&text, now(), Tz::UTC, &ZoneTable::compiled_in_only()).expect_err(bad);
        let ImportError::Line {
            file,
            line,
            token: got,
            message,
        } = &err
        else {
            panic!("{bad:?}: {err:?}");
        };
        assert_eq!(
            (file.as_str(), *line, got.as_str()),
            ("crontab", 3, token),
            "{bad:?}: {message}"
        );
        assert!(
            message.contains(&format!("{token:?}")),
            "{bad:?}: {message}"
        );
        assert!(err.to_string().starts_with("crontab line 3: "), "{err}");
        assert_eq!(err.token(), Some(token));
    }
    let err = parse_crontab(
        "0 1 * * * a\n61 * * * * b\n",
        now(),
        Tz::UTC,
        &ZoneTable::compiled_in_only(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "crontab line 2: invalid schedule \"61 * * * *\": minute \"61\" is out of range 0-59 (a crontab entry is 5 time fields (minute hour day-of-month month day-of-week) or a @macro, then the command)"
    );
}

#[test]
fn unescaped_percent_skips_the_entry_with_the_reason() {
    let text = "0 1 * * * date +\\%Y\\%m >> /tmp/d\n0 2 * * * mail -s hi ann%Hello%Ann\n0 3 * * * /bin/true\n";
    let plan = import(text, Tz::UTC);
    assert_eq!(plan.jobs.len(), 2);
    assert_eq!(plan.jobs[0].argv, ["date +%Y%m >> /tmp/d"]);
    assert_eq!(plan.skipped.len(), 1);
    assert_eq!(plan.skipped[0].origin, "crontab line 2");
    assert_eq!(plan.skipped[0].code, SkipCode::CronStdin);
    let reason = &plan.skipped[0].reason;
    assert!(
        reason.starts_with("unescaped \"%\" in \"mail -s hi ann%Hello%Ann\""),
        "{reason}"
    );
    assert!(
        reason.contains("stdin") && reason.contains("\\%"),
        "{reason}"
    );
}

#[test]
fn names_from_comments_directly_above_else_from_the_command() {
    let text = "\
# Backup
0 1 * * * /bin/backup.sh
# Backup
0 2 * * * /bin/backup.sh
# 0 3 * * * /bin/old-backup.sh
0 3 * * * /bin/backup.sh
# This comment explains at great length what the job below does, and why
0 4 * * * \"/opt/tools/run.sh\" x
# Comment about X
X=1
0 5 * * * LANG=C /bin/other
# Separated by a blank line

0 6 * * * /bin/other
";
    let plan = import(text, Tz::UTC);
    let names: Vec<_> = plan.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Backup", "Backup-4", "backup-6", "run-8", "other-11", "other-14"
        ]
    );
    let renames: Vec<_> = plan
        .notes
        .iter()
        .map(|n| (n.origin.as_str(), n.code, n.message.as_str()))
        .collect();
    assert_eq!(
        renames,
        [(
            "crontab line 4",
            NoteCode::Renamed,
            "name \"Backup\" is taken by crontab line 2: imported as \"Backup-4\""
        )]
    );
}

#[test]
fn names_of_existing_jobs_are_taken() {
    let existing = [ExistingJob {
        id: "01a22a96-d658-7175-a525-7d6f0e34c20f".into(),
        name: "Backup".into(),
        hermes_id: None,
        managed: false,
    }];
    let zones = ZoneTable::compiled_in_only();
    let cx = ImportContext {
        existing: &existing,
        ..ImportContext::new(now(), Tz::UTC, &zones)
    };
    let plan = import_file("crontab", "# Backup\n0 1 * * * /bin/backup.sh\n", &cx).unwrap();
    assert_eq!(plan.jobs[0].name, "Backup-2");
    assert_eq!(
        plan.notes[0].message,
        "name \"Backup\" is taken by an existing job (01a22a96-d658-7175-a525-7d6f0e34c20f): imported as \"Backup-2\""
    );
    // A crontab is not a Hermes file: no warning about Hermes.
    assert_eq!(plan.notes.len(), 1);
    assert_eq!(plan.jobs[0].hermes_id, None);
}

#[test]
fn a_non_sh_shell_runs_the_command_itself() {
    let text =
        "SHELL=/bin/bash\n0 1 * * * [[ -d /x ]] && echo y\nSHELL=/bin/sh\n0 2 * * * echo z\n";
    let plan = import(text, Tz::UTC);
    let bash = &plan.jobs[0];
    assert_eq!(bash.argv, ["/bin/bash", "-c", "[[ -d /x ]] && echo y"]);
    assert!(!bash.shell);
    assert_eq!(env_of(bash), [("SHELL", "/bin/bash")]);
    let sh = &plan.jobs[1];
    assert_eq!(
        (sh.argv.as_slice(), sh.shell),
        (&["echo z".to_string()][..], true)
    );
    assert_eq!(plan.notes.len(), 1);
    assert_eq!(plan.notes[0].origin, "crontab line 1");
    assert!(
        plan.notes[0].message.contains("/bin/bash -c"),
        "{:?}",
        plan.notes
    );
}

#[test]
fn system_crontabs_drop_the_user_field_with_a_note() {
    let text = "\
SHELL=/bin/sh
17 * * * * root cd / && run-parts --report /etc/cron.hourly
25 6 * * * root test -x /usr/sbin/anacron || run-parts /etc/cron.daily
@daily backup /usr/local/bin/nightly
";
    let plan = detect_and_parse(
        "/etc/crontab",
        text,
        now(),
        Tz::UTC,
        &ZoneTable::compiled_in_only(),
    )
    .unwrap();
    let argv: Vec<_> = plan.jobs.iter().map(|j| j.argv[0].as_str()).collect();
    assert_eq!(
        argv,
        [
            "cd / && run-parts --report /etc/cron.hourly",
            "test -x /usr/sbin/anacron || run-parts /etc/cron.daily",
            "/usr/local/bin/nightly",
        ]
    );
    assert_eq!(plan.jobs[0].origin, "/etc/crontab line 2");
    let noted: Vec<_> = plan.notes.iter().map(|n| n.origin.as_str()).collect();
    assert_eq!(noted, ["/etc/crontab line 2", "/etc/crontab line 4"]);
    assert!(plan.notes[1].message.contains("\"backup\""));

    // Anywhere else the same word is part of the command: cron would run `root`.
    let plan = detect_and_parse(
        "/home/ann/my.cron",
        text,
        now(),
        Tz::UTC,
        &ZoneTable::compiled_in_only(),
    )
    .unwrap();
    assert_eq!(
        plan.jobs[0].argv,
        ["root cd / && run-parts --report /etc/cron.hourly"]
    );
    assert!(plan.notes.is_empty());
}

#[test]
fn an_empty_or_comment_only_crontab_is_an_empty_plan() {
    assert_eq!(import("", Tz::UTC), ImportPlan::default());
    assert_eq!(
        import("# nothing\n\n  \n# here\r\n", Tz::UTC),
        ImportPlan::default()
    );
}

#[test]
fn windows_line_endings_are_ignored() {
    let plan = import("A=1\r\n# Name\r\n0 1 * * * /bin/x\r\n", Tz::UTC);
    assert_eq!(plan.jobs[0].name, "Name");
    assert_eq!(plan.jobs[0].argv, ["/bin/x"]);
    assert_eq!(env_of(&plan.jobs[0]), [("A", "1")]);
}
