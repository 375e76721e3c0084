use super::*;

#[test]
fn the_user_units_name_the_binary_they_were_rendered_for() {
    let files = render(
        UnitSet::User,
        Path::new("/opt/venv/bin/hermes-cron"),
        "9.9.9",
    )
    .unwrap();
    let names: Vec<_> = files.iter().map(|f| f.name).collect();
    assert_eq!(
        names,
        [
            "hermes-cron-gateway.service",
            "hermes-cron-gateway-failed@.service"
        ]
    );
    assert!(
        files[0]
            .text
            .contains("\nExecStart=/opt/venv/bin/hermes-cron gateway\n"),
        "{}",
        files[0].text
    );
    assert!(
        files[1]
            .text
            .contains("\nExecStart=/opt/venv/bin/hermes-cron gateway-failed --unit %i\n")
    );
    for f in &files {
        assert!(!f.text.contains("%h/.cargo/bin/hermes-cron "), "{}", f.text);
        assert!(
            f.text
                .starts_with("# Written by `hermes-cron units install` (hermes-cron 9.9.9)")
        );
    }
}

#[test]
fn the_system_template_runs_the_binary_it_was_rendered_for() {
    let files = render(UnitSet::System, Path::new("/usr/bin/hermes-cron"), "1.0.0").unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "hermes-cron-gateway@.service");
    assert!(
        files[0]
            .text
            .contains("; exec /usr/bin/hermes-cron gateway'\n")
    );
    assert!(
        !files[0]
            .text
            .contains("ExecStart=/bin/sh -c '/usr/local/bin")
    );
    assert!(!files[0].text.contains("exec /usr/local/bin/hermes-cron"));
}

#[test]
fn paths_a_unit_would_misread_are_refused_with_the_fix() {
    for bad in [
        "/home/a b/hermes-cron",
        "/x/%h/hermes-cron",
        "/x/$HOME/hermes-cron",
        "/x/it's/hermes-cron",
        "relative/hermes-cron",
    ] {
        let err = render(UnitSet::User, Path::new(bad), "1")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(bad), "{err}");
        assert!(err.contains("ExecStart="), "{err}");
    }
}

#[test]
fn user_units_go_under_the_xdg_config_home() {
    let home = Path::new("/home/alice");
    assert_eq!(
        default_dir(UnitSet::User, None, home),
        Path::new("/home/alice/.config/systemd/user")
    );
    assert_eq!(
        default_dir(UnitSet::User, Some(Path::new("/cfg")), home),
        Path::new("/cfg/systemd/user")
    );
    assert_eq!(
        default_dir(UnitSet::User, Some(Path::new("rel")), home),
        Path::new("/home/alice/.config/systemd/user")
    );
    assert_eq!(
        default_dir(UnitSet::System, None, home),
        Path::new("/etc/systemd/system")
    );
}

#[test]
fn writing_twice_changes_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let files = render(UnitSet::User, Path::new("/usr/bin/hermes-cron"), "1").unwrap();
    let first = write(&dir.path().join("systemd/user"), &files).unwrap();
    assert!(first.iter().all(|(_, changed)| *changed));
    let mode = std::fs::metadata(&first[0].0).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let second = write(&dir.path().join("systemd/user"), &files).unwrap();
    assert!(second.iter().all(|(_, changed)| !changed));
}
