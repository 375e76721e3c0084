//! A damaged SQLite ledger (issue 23, section 3): emptied to 0 bytes, cut
//! in half, its header or a page's bytes overwritten. Every command says
//! the ledger is damaged, names the file and the fix, and writes nothing:
//! the file and `config.yaml` stay byte for byte; the gateway refuses to
//! start on it rather than report healthy. A new home's ledger is made
//! whole before it is put in place, so an empty file is never a new ledger.

use crate::support::{PATIENCE, TestHome};

/// A home with jobs and runs, its gateway stopped: a ledger worth keeping.
fn home_with_history() -> TestHome {
    let h = TestHome::new();
    h.add("keep", "every 1h", &[], &["echo", "history"]);
    for _ in 0..3 {
        h.run(&["run", "keep", "--wait"]).ok();
    }
    h.config_set("cron.output_retention", "20");
    h
}

/// Every command refuses the ledger, naming it, and changes nothing.
#[track_caller]
fn every_command_refuses(h: &TestHome, what: &str) {
    let db = h.path().join("cron/cron.db");
    let config = h.path().join("config.yaml");
    let (db_before, config_before) = (std::fs::read(&db).unwrap(), std::fs::read(&config).unwrap());
    for args in [
        &["list"][..],
        &[
            "add",
            "--name",
            "new",
            "--schedule",
            "every 1h",
            "--",
            "true",
        ],
        &["runs"],
        &["status"],
        &["tick"],
    ] {
        let out = h.cmd(args).run();
        assert_ne!(out.code(), 0, "{what}: {args:?} went on\n{out}");
        assert!(
            out.stderr.contains("damaged") && out.stderr.contains(&db.display().to_string()),
            "{what}: {args:?} does not say the ledger is damaged:\n{out}"
        );
        assert!(
            out.stderr.contains("restore it from a backup")
                || out.stderr.contains("restore cron.db from a backup"),
            "{what}: {args:?} names no fix:\n{out}"
        );
    }
    let doctor = h.cmd(&["doctor"]).run();
    assert_ne!(doctor.code(), 0, "{what}: {doctor}");
    assert!(
        format!("{}{}", doctor.stdout, doctor.stderr).contains("damaged"),
        "{what}: {doctor}"
    );
    let mut gw = h.gateway(&[]);
    let status = gw.wait_exit(PATIENCE);
    assert_ne!(status.code(), Some(0), "{what}: {}", gw.log());
    assert!(gw.log().contains("damaged"), "{what}: {}", gw.log());
    assert!(!gw.log().contains("gateway ready"), "{what}: {}", gw.log());
    assert_eq!(
        std::fs::read(&db).unwrap(),
        db_before,
        "{what}: the ledger was written"
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        config_before,
        "{what}: config.yaml changed"
    );
}

#[test]
fn an_emptied_ledger_is_refused_never_taken_for_a_new_one() {
    let h = home_with_history();
    std::fs::write(h.path().join("cron/cron.db"), b"").unwrap();
    every_command_refuses(&h, "0 bytes");
}

#[test]
fn a_ledger_cut_in_half_or_overwritten_is_refused_and_left_as_it_is() {
    for (what, damage) in [
        ("cut in half", Damage::Truncate),
        ("header overwritten", Damage::Header),
        ("a page overwritten", Damage::Page),
    ] {
        let h = home_with_history();
        let db = h.path().join("cron/cron.db");
        let mut bytes = std::fs::read(&db).unwrap();
        assert!(
            bytes.len() >= 4 * 4096,
            "{what}: a ledger of {} bytes",
            bytes.len()
        );
        match damage {
            Damage::Truncate => bytes.truncate(bytes.len() / 2),
            Damage::Header => bytes[..16].copy_from_slice(b"not a database!!"),
            // Past the schema page: the table pages.
            Damage::Page => bytes[2 * 4096..3 * 4096].fill(0xA5),
        }
        std::fs::write(&db, &bytes).unwrap();
        every_command_refuses(&h, what);
    }
}

enum Damage {
    Truncate,
    Header,
    Page,
}

#[test]
fn a_new_home_gets_a_whole_ledger_and_no_stray_file() {
    let h = TestHome::new();
    h.add("first", "every 1h", &[], &["true"]);
    let cron = h.path().join("cron");
    let names: Vec<String> = std::fs::read_dir(&cron)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"cron.db".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains(".new-")), "{names:?}");
    assert!(std::fs::metadata(cron.join("cron.db")).unwrap().len() > 0);
}
