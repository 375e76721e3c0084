//! Unit tests for `escape.rs`, checked against the real `systemd-escape` binary.

use super::*;
use std::process::Command;

const UUID: &str = "0190f5d2-7c4e-7b3a-9c1d-2e4f6a8b0c1d";
/// The execution id as it appears in a unit name: without its dashes.
const BARE: &str = "0190f5d27c4e7b3a9c1d2e4f6a8b0c1d";

fn hostile_inputs() -> Vec<String> {
    let mut v: Vec<String> = [
        "backup",
        "a;b",
        "rm -rf /",
        "hello world",
        "line\nbreak",
        "cr\rtab\tnul\u{7f}",
        "../../etc/passwd",
        "..",
        ".hidden",
        "a/b/c",
        "/leading/slash/",
        "x-y",
        "back\\slash",
        "A:b_c.d",
        "café ☕",
        "日本語のジョブ",
        "$(reboot)`id`",
        "%h%n%%",
        "quote\"and'apos",
        "[Unit]\nWants=evil.service",
        "-",
        "a..b..",
        "\u{85}c1\u{9b}",
        "emoji 🚀 launch",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("j".repeat(300));
    v.push("é".repeat(150));
    v
}

fn systemd_escape(input: &str) -> String {
    let out = Command::new("systemd-escape")
        .arg("--")
        .arg(input)
        .output()
        .expect("systemd-escape must be installed (apt-get install -y systemd) for these tests");
    assert!(out.status.success(), "systemd-escape failed on {input:?}");
    let mut s = String::from_utf8(out.stdout).expect("systemd-escape prints ASCII");
    assert_eq!(s.pop(), Some('\n'));
    s
}

fn assert_valid_unit_chars(name: &str) {
    assert!(
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":_.-\\".contains(&b)),
        "invalid character in unit name {name:?}"
    );
}

#[test]
fn escape_matches_systemd_escape() {
    for input in hostile_inputs() {
        assert_eq!(
            escape_unit_component(&input),
            systemd_escape(&input),
            "input {input:?}"
        );
    }
}

#[test]
fn escape_of_empty_string_is_empty() {
    assert_eq!(escape_unit_component(""), "");
}

#[test]
fn escape_round_trips_through_systemd_escape_unescape() {
    for input in hostile_inputs() {
        let out = Command::new("systemd-escape")
            .args(["--unescape", "--"])
            .arg(escape_unit_component(&input))
            .output()
            .expect("systemd-escape");
        let back = String::from_utf8(out.stdout).expect("utf-8");
        // `-` in the input is escaped, so `-` in the output can only mean `/`: exact round trip.
        assert_eq!(back.strip_suffix('\n').unwrap_or(&back), input, "{input:?}");
    }
}

#[test]
fn scope_name_shape_and_validity() {
    for input in hostile_inputs() {
        let name = scope_unit_name(&input, UUID);
        assert!(name.len() <= UNIT_NAME_MAX, "{} bytes: {name}", name.len());
        assert!(name.starts_with("hermes-cron-"), "{name}");
        assert!(name.ends_with(&format!("-{BARE}.scope")), "{name}");
        assert_valid_unit_chars(&name);
    }
}

#[test]
fn short_name_is_prefix_escape_execution_suffix() {
    assert_eq!(
        scope_unit_name("daily briefing", UUID),
        format!("hermes-cron-daily\\x20briefing-{BARE}.scope")
    );
}

#[test]
fn the_execution_id_loses_its_dashes_so_systemd_has_fewer_prefixes_to_search() {
    let name = scope_unit_name("daily", UUID);
    assert_eq!(name, format!("hermes-cron-daily-{BARE}.scope"));
    // `hermes-cron-`, `hermes-cron-daily-`: the id adds no dash prefix of its own.
    assert_eq!(name.matches('-').count(), 3, "{name}");
}

#[test]
fn long_name_is_capped_with_hash_and_stays_distinct() {
    let a = format!("{}a", "x".repeat(299));
    let b = format!("{}b", "x".repeat(299));
    let (na, nb) = (scope_unit_name(&a, UUID), scope_unit_name(&b, UUID));
    assert_eq!(na.len(), UNIT_NAME_MAX);
    assert_ne!(na, nb, "distinct long names must give distinct units");
    // Deterministic: the same job always maps to the same unit.
    assert_eq!(na, scope_unit_name(&a, UUID));
}

#[test]
fn truncation_never_splits_an_escape() {
    // Every character escapes to 4 bytes (`\xHH`): wherever the budget falls, the cut must
    // land on a multiple of 4 within the job part, for every alignment.
    for pad in 0..4 {
        let job = format!("{}{}", "a".repeat(pad), " ".repeat(100));
        let name = scope_unit_name(&job, UUID);
        assert!(name.len() <= UNIT_NAME_MAX);
        let job_part = &name["hermes-cron-".len()..name.len() - format!("-{BARE}.scope").len()];
        let (kept, hash) = job_part.split_at(job_part.len() - 17);
        assert!(hash.starts_with('-') && hash[1..].bytes().all(|b| b.is_ascii_hexdigit()));
        let escapes = &kept[pad..];
        assert_eq!(escapes.len() % 4, 0, "cut inside an escape: {kept:?}");
        assert!(escapes.as_bytes().chunks(4).all(|c| c == b"\\x20"));
    }
}

#[test]
fn name_at_exactly_the_budget_is_not_hashed() {
    let budget = UNIT_NAME_MAX - "hermes-cron-".len() - 1 - BARE.len() - ".scope".len();
    let job = "k".repeat(budget);
    let name = scope_unit_name(&job, UUID);
    assert_eq!(name.len(), UNIT_NAME_MAX);
    assert!(name.contains(&job));
    let longer = scope_unit_name(&"k".repeat(budget + 1), UUID);
    assert_eq!(longer.len(), UNIT_NAME_MAX);
    assert_ne!(name, longer);
}

#[test]
fn execution_with_unsafe_bytes_is_escaped() {
    let name = scope_unit_name("job", "bad/exec id");
    assert_valid_unit_chars(&name);
    assert!(name.len() <= UNIT_NAME_MAX);
    let huge = scope_unit_name("job", &"e".repeat(400));
    assert_eq!(huge.len(), UNIT_NAME_MAX);
    assert!(huge.ends_with(".scope"));
}

#[test]
fn scope_name_job_part_unescapes_to_the_job() {
    // systemd itself parses the job part of the unit name back into the job string.
    for input in ["a;b", "café ☕", "../x", ".dot"] {
        let name = scope_unit_name(input, UUID);
        let stem = name
            .strip_prefix("hermes-cron-")
            .and_then(|s| s.strip_suffix(&format!("-{BARE}.scope")))
            .unwrap();
        let out = Command::new("systemd-escape")
            .args(["--unescape", "--"])
            .arg(stem)
            .output()
            .expect("systemd-escape");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), input);
    }
}

#[test]
fn description_has_no_control_characters() {
    let raw = "daily\nWants=evil.service\r\n\tNUL\0DEL\u{7f}C1\u{85}\u{9b} end";
    let clean = sanitize_description(raw);
    assert_eq!(clean, "daily Wants=evil.service NUL DEL C1 end");
    assert!(!clean.chars().any(char::is_control));
}

#[test]
fn description_is_trimmed_and_loses_trailing_backslashes() {
    assert_eq!(sanitize_description("  \n hi \\\\ \\"), "hi");
    assert_eq!(sanitize_description("\n\n"), "");
    assert_eq!(sanitize_description("a\\b"), "a\\b");
}

#[test]
fn description_is_capped_on_a_char_boundary() {
    let long = "é".repeat(150); // 300 bytes
    let clean = sanitize_description(&long);
    assert!(clean.len() <= DESCRIPTION_MAX);
    assert_eq!(clean.len(), DESCRIPTION_MAX);
    let odd = format!("a{}", "é".repeat(150));
    let clean = sanitize_description(&odd);
    assert_eq!(clean.len(), DESCRIPTION_MAX - 1);
    assert!(clean.is_char_boundary(clean.len()));
}

/// A job name's dashes stay dashes in its units (issue 24, bug 7), so the
/// glob a user writes from the name matches; the glob `scope_unit_glob`
/// gives matches every unit of the job, long names (cut and hashed) too.
#[test]
fn a_dashed_job_name_keeps_its_dashes_and_the_glob_matches_its_units() {
    assert_eq!(
        scope_unit_name("slow-report", UUID),
        format!("hermes-cron-slow-report-{BARE}.scope")
    );
    let long = format!("nightly-{}", "x".repeat(300));
    for job in ["slow-report", "daily briefing", "a/b", long.as_str()] {
        let glob = scope_unit_glob(job);
        let prefix = glob.strip_suffix("*.scope").expect(&glob);
        for execution in [UUID, "01a23c25-89f1-7289-ac3a-b8f1b13347f6"] {
            let name = scope_unit_name(job, execution);
            assert!(
                name.starts_with(prefix) && name.ends_with(".scope"),
                "{glob} does not match {name}"
            );
        }
    }
    assert_eq!(
        scope_unit_glob("slow-report"),
        "hermes-cron-slow-report-*.scope"
    );
    // `systemd-escape`'s own form is unchanged.
    assert_eq!(escape_unit_component("slow-report"), r"slow\x2dreport");
}
