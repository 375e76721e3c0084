//! The ways hermes-cron is installed, each tried as a user would: the PyPI
//! wheel in a Hermes venv (firing a Hermes job through its own binaries),
//! `cargo install --locked`, the .deb; and what they carry: the units
//! `units install` writes, the man pages, the completions.
//!
//! The wheel, the `cargo install` root and the .deb are built from the tree
//! by `tests/support/packages.sh` (tests/run-all.sh runs it before the
//! suite and exports `HERMES_CRON_TEST_PACKAGES`); without them these tests
//! fail, naming the command.

use crate::support::cli::bin;
use crate::support::hermes::HermesHome;
use crate::support::real_manager;
use crate::support::waiting::{PATIENCE, SETTLE_TIMEOUT, wait_for_or, wall_clock};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const PACKAGES_ENV: &str = "HERMES_CRON_TEST_PACKAGES";
const HERMES_AGENT: &str = "hermes-agent==0.19.0";

/// The directory `tests/support/packages.sh` filled.
fn packages() -> PathBuf {
    let dir = std::env::var_os(PACKAGES_ENV).map(PathBuf::from).unwrap_or_else(|| {
        panic!(
            "{PACKAGES_ENV} is not set: these tests install the wheel, the cargo install and the \
             .deb built from the tree; run tests/run-all.sh, or \
             `eval \"$(tests/support/packages.sh /tmp/hermes-cron-packages)\"` first"
        )
    });
    assert!(
        dir.is_dir(),
        "{PACKAGES_ENV}={} is not a directory",
        dir.display()
    );
    dir
}

/// The one file in `dir` whose name ends with `suffix`.
fn the_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one *{suffix} in {}: {found:?}",
        dir.display()
    );
    found.into_iter().next().unwrap()
}

#[track_caller]
fn succeeded(what: &str, out: Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn version_line(binary: &Path) -> String {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    succeeded(&format!("{} --version", binary.display()), out)
        .trim()
        .to_string()
}

/// A program installed in `venv`, run as a user of `h` who has that venv's
/// `bin/` first on PATH and nothing of this build: no `--home` (the home is
/// `HERMES_HOME`), no `HERMES_CRON_WORKER`, the real user manager's bus.
fn from_venv(h: &HermesHome, venv: &Path, program: &str) -> Command {
    let mut cmd = Command::new(venv.join("bin").join(program));
    cmd.env_clear()
        .env("HERMES_HOME", h.home.path())
        .env("HOME", h.home.scratch())
        .env(
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                venv.join("bin").display()
            ),
        )
        .env("TZ", "UTC")
        .env("HERMES_DISABLE_LAZY_INSTALLS", "1")
        .env("TIRITH_ENABLED", "false")
        .envs(real_manager::command_env(&real_manager::bus_env()))
        .stdin(Stdio::null());
    cmd
}

/// A child killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The proof of the wheel: installed by pip into a fresh venv
/// beside hermes-agent 0.19.0, `hermes-cron hermes install` run from that
/// venv, and a script job made with `hermes cron create` fires once, in a
/// transient scope, through the wheel's two binaries (nothing of target/ on
/// PATH or in the environment).
#[test]
fn the_wheel_in_a_hermes_venv_fires_a_hermes_job_in_a_scope_through_its_own_binaries() {
    let wheel = the_file(&packages().join("wheel"), ".whl");
    let scratch = tempfile::tempdir().unwrap();
    let venv = scratch.path().join("venv");
    succeeded(
        "python3 -m venv",
        Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .output()
            .unwrap(),
    );
    succeeded(
        "pip install hermes-agent and the wheel",
        Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                HERMES_AGENT,
            ])
            .arg(&wheel)
            .output()
            .unwrap(),
    );
    let installed = venv.join("bin/hermes-cron");
    assert_eq!(
        version_line(&installed),
        format!("hermes-cron {}", env!("CARGO_PKG_VERSION"))
    );
    assert!(venv.join("bin/hermes-cron-worker").is_file());

    let h = HermesHome::scoped_in(venv.clone());
    h.home.require_scopes();
    // `hermes` on PATH names the venv's interpreter: no --python needed.
    let out = from_venv(&h, &venv, "hermes-cron")
        .args(["hermes", "install"])
        .output()
        .unwrap();
    succeeded("hermes-cron hermes install (from the venv)", out);
    let plugin = h.home.path().join("plugins/hermes-cron");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(plugin.join("plugin.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["binary"].as_str().map(PathBuf::from),
        Some(installed.clone()),
        "the plugin names the binary it was installed with: {settings:#}"
    );
    assert_eq!(
        settings["python"].as_str().map(PathBuf::from),
        Some(venv.join("bin/python3"))
    );
    // Hermes lists the plugin, with its version, from plugin.yaml.
    let listed = h.hermes(&["plugins", "list", "--plain", "--no-bundled"]);
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.contains("hermes-cron") && l.contains(env!("CARGO_PKG_VERSION"))),
        "{listed:#?}"
    );

    let log = h.home.scratch().join("wheel-gateway.log");
    let gateway = from_venv(&h, &venv, "hermes-cron")
        .arg("gateway")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let _gateway = Killed(gateway);
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_for_or(
        "the wheel's gateway to be ready",
        PATIENCE,
        || read_log().contains("gateway ready").then_some(()),
        read_log,
    );
    assert!(read_log().contains("dispatch=scoped"), "{}", read_log());

    let at = wall_clock() + chrono::Duration::seconds(5);
    let at_text = at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string();
    let id = h.script_job(
        "wheel",
        "echo fired-by-the-wheel\ncat /proc/self/cgroup\n",
        "local",
        &at_text,
    );
    let rows = h.home.settle(Some("wheel"), 1);
    let row = &rows[0];
    assert_eq!(row["state"], "succeeded", "{row:#}\n{}", read_log());
    assert_eq!(row["dispatch_mode"], "scoped", "{row:#}");
    let unit = row["unit"].as_str().expect("a scoped row names its unit");
    let output = h.home.output_of(row);
    assert!(output.contains("fired-by-the-wheel"), "{output}");
    assert!(
        output.lines().any(|l| l.ends_with(&format!("/{unit}"))),
        "the script's cgroup is not {unit}:\n{output}"
    );
    // Through the wheel's worker too: the gateway's environment names no
    // worker and its PATH holds no other (checked below), so the one it
    // found is the one next to itself.
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        assert!(
            !Path::new(dir).join("hermes-cron-worker").exists(),
            "{dir} has a worker"
        );
    }
    let executions = wait_for_or(
        "Hermes's record of the fire",
        SETTLE_TIMEOUT,
        || {
            let rows = h.executions(&id);
            (rows.len() == 1 && rows[0]["status"] == "completed").then_some(rows)
        },
        || format!("{:#?}", h.executions(&id)),
    );
    assert_eq!(executions[0]["source"], "hermes-cron", "{executions:#?}");
    assert_eq!(h.home.runs_of("wheel").len(), 1, "it fired once");

    // doctor (the wheel's) is content with the plugin; one installed by
    // another version is a finding with the fix.
    let doctor = |h: &HermesHome| -> Value {
        let out = from_venv(h, &venv, "hermes-cron")
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    };
    let codes = |v: &Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["code"].as_str().map(str::to_string))
            .collect()
    };
    assert!(!codes(&doctor(&h)).contains(&"hermes_plugin_outdated".to_string()));
    let mut older = settings.clone();
    older["version"] = "0.0.1".into();
    std::fs::write(plugin.join("plugin.json"), older.to_string()).unwrap();
    let report = doctor(&h);
    assert!(
        codes(&report).contains(&"hermes_plugin_outdated".to_string()),
        "{report:#}"
    );
}

/// `cargo install --locked --path .` gives both binaries, of this version,
/// side by side.
#[test]
fn cargo_install_gives_both_binaries() {
    let bin_dir = packages().join("cargo/bin");
    let want = format!("hermes-cron {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(version_line(&bin_dir.join("hermes-cron")), want);
    assert_eq!(
        version_line(&bin_dir.join("hermes-cron-worker")),
        format!("hermes-cron-worker {}", env!("CARGO_PKG_VERSION"))
    );
}

/// The .deb: both binaries in /usr/bin, the units naming them, the man
/// pages and the completions; extracted, its binaries run.
#[test]
fn the_deb_carries_the_binaries_units_man_pages_and_completions() {
    let deb = the_file(&packages().join("deb"), ".deb");
    let listing = succeeded(
        "dpkg-deb --contents",
        Command::new("dpkg-deb")
            .arg("--contents")
            .arg(&deb)
            .output()
            .unwrap(),
    );
    let paths: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .collect();
    for want in [
        "./usr/bin/hermes-cron",
        "./usr/bin/hermes-cron-worker",
        "./usr/lib/systemd/user/hermes-cron-gateway.service",
        "./usr/lib/systemd/user/hermes-cron-gateway-failed@.service",
        "./usr/lib/systemd/system/hermes-cron-gateway@.service",
        "./usr/share/man/man1/hermes-cron.1.gz",
        "./usr/share/man/man1/hermes-cron-add.1.gz",
        "./usr/share/man/man5/hermes-cron-config.5.gz",
        "./usr/share/bash-completion/completions/hermes-cron",
        "./usr/share/zsh/vendor-completions/_hermes-cron",
        "./usr/share/fish/vendor_completions.d/hermes-cron.fish",
        "./usr/share/doc/hermes-cron/copyright",
    ] {
        assert!(
            paths.contains(&want),
            "{want} is not in the .deb:\n{listing}"
        );
    }
    let info = succeeded(
        "dpkg-deb --field",
        Command::new("dpkg-deb")
            .arg("--field")
            .arg(&deb)
            .args(["Package", "Version"])
            .output()
            .unwrap(),
    );
    assert!(info.contains("Package: hermes-cron"), "{info}");
    assert!(
        info.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{info}"
    );

    let root = tempfile::tempdir().unwrap();
    succeeded(
        "dpkg-deb -x",
        Command::new("dpkg-deb")
            .arg("-x")
            .arg(&deb)
            .arg(root.path())
            .output()
            .unwrap(),
    );
    let usr_bin = root.path().join("usr/bin");
    assert_eq!(
        version_line(&usr_bin.join("hermes-cron")),
        format!("hermes-cron {}", env!("CARGO_PKG_VERSION"))
    );
    assert!(version_line(&usr_bin.join("hermes-cron-worker")).starts_with("hermes-cron-worker "));
    for unit in [
        "usr/lib/systemd/user/hermes-cron-gateway.service",
        "usr/lib/systemd/system/hermes-cron-gateway@.service",
    ] {
        let text = std::fs::read_to_string(root.path().join(unit)).unwrap();
        assert!(
            text.lines()
                .any(|l| l.starts_with("ExecStart=") && l.contains("/usr/bin/hermes-cron gateway")),
            "{unit}:\n{text}"
        );
    }
}

/// `units install` writes units that name the binary it runs from, and
/// systemd accepts them.
#[test]
fn units_install_writes_units_naming_this_binary_that_systemd_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let out = Command::new(bin())
        .args(["units", "install", "--dir"])
        .arg(&user)
        .output()
        .unwrap();
    let said = succeeded("units install", out);
    let binary = bin().canonicalize().unwrap();
    assert!(
        said.contains(&format!("ExecStart= runs {}", binary.display())),
        "{said}"
    );
    let unit = std::fs::read_to_string(user.join("hermes-cron-gateway.service")).unwrap();
    assert!(
        unit.lines()
            .any(|l| l == "OnFailure=hermes-cron-gateway-failed@%n.service")
    );
    assert!(
        unit.lines()
            .any(|l| l == format!("ExecStart={} gateway", binary.display())),
        "{unit}"
    );
    let hook = std::fs::read_to_string(user.join("hermes-cron-gateway-failed@.service")).unwrap();
    assert!(
        hook.lines()
            .any(|l| l == format!("ExecStart={} gateway-failed --unit %i", binary.display())),
        "{hook}"
    );
    let verify = Command::new("systemd-analyze")
        .args(["verify", "--user"])
        .arg(user.join("hermes-cron-gateway.service"))
        .arg(user.join("hermes-cron-gateway-failed@.service"))
        .env("SYSTEMD_UNIT_PATH", format!("{}:", user.display()))
        .output()
        .expect("systemd-analyze");
    let err = String::from_utf8_lossy(&verify.stderr);
    assert!(verify.status.success(), "systemd-analyze verify: {err}");
    assert!(
        !err.contains("Unknown key") && !err.contains("Unknown section"),
        "{err}"
    );

    // The system template, as an instance for root, is a valid system unit.
    let system = dir.path().join("system");
    let out = Command::new(bin())
        .args(["units", "install", "--system", "--dir"])
        .arg(&system)
        .output()
        .unwrap();
    succeeded("units install --system", out);
    let template = std::fs::read_to_string(system.join("hermes-cron-gateway@.service")).unwrap();
    assert!(
        template.contains(&format!("exec {} gateway'", binary.display())),
        "{template}"
    );
    std::fs::write(system.join("hermes-cron-gateway@root.service"), &template).unwrap();
    let verify = Command::new("systemd-analyze")
        .args(["verify"])
        .arg(system.join("hermes-cron-gateway@root.service"))
        .env("SYSTEMD_UNIT_PATH", format!("{}:", system.display()))
        .output()
        .expect("systemd-analyze");
    let err = String::from_utf8_lossy(&verify.stderr);
    assert!(
        !err.contains("Unknown key")
            && !err.contains("Unknown section")
            && !err.contains("bad-setting"),
        "{err}"
    );
}

/// The man pages: one per command and hermes-cron-config(5) with every key
/// of the config; each one renders without a warning from groff.
#[test]
fn the_man_pages_cover_every_command_and_key_and_render_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .arg("manpages")
        .arg(dir.path())
        .output()
        .unwrap();
    let listed = succeeded("manpages", out);
    for page in [
        "hermes-cron.1",
        "hermes-cron-add.1",
        "hermes-cron-logs.1",
        "hermes-cron-config-set.1",
        "hermes-cron-config.5",
    ] {
        assert!(
            listed.lines().any(|l| l.ends_with(&format!("/{page}"))),
            "{page} not written:\n{listed}"
        );
    }
    let config = std::fs::read_to_string(dir.path().join("hermes-cron-config.5")).unwrap();
    for key in hermes_cron::config::key_table() {
        assert!(
            config.contains(&key.name.replace('-', "\\-")),
            "{} is not in hermes-cron-config(5)",
            key.name
        );
    }
    for page in listed.lines() {
        let render = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(page)
            .output()
            .expect("groff (Debian's groff-base, which man needs)");
        let warnings = String::from_utf8_lossy(&render.stderr);
        assert!(
            render.status.success() && warnings.is_empty(),
            "{page}: {warnings}"
        );
    }
}

/// The bash completions load into a real bash and complete the commands
/// and a command's flags; zsh's and fish's scripts are for those shells.
#[test]
fn the_completions_complete_commands_and_flags_in_bash() {
    let script = succeeded(
        "completions bash",
        Command::new(bin())
            .args(["completions", "bash"])
            .output()
            .unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hermes-cron.bash");
    std::fs::write(&file, script).unwrap();
    let complete = |words: &str| -> String {
        let line = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); \
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _hermes__cron hermes-cron \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        succeeded(
            "bash",
            Command::new("bash").args(["-c", &line]).output().unwrap(),
        )
    };
    let commands = complete("hermes-cron ''");
    for c in ["add", "list", "logs", "units", "completions"] {
        assert!(
            commands.lines().any(|l| l == c),
            "{c} not completed:\n{commands}"
        );
    }
    let flags = complete("hermes-cron add --sch");
    assert_eq!(flags.trim(), "--schedule", "{flags}");
    let nested = complete("hermes-cron config se");
    assert_eq!(nested.trim(), "set", "{nested}");
    let zsh = succeeded(
        "completions zsh",
        Command::new(bin())
            .args(["completions", "zsh"])
            .output()
            .unwrap(),
    );
    assert!(zsh.starts_with("#compdef hermes-cron"), "{zsh}");
    let fish = succeeded(
        "completions fish",
        Command::new(bin())
            .args(["completions", "fish"])
            .output()
            .unwrap(),
    );
    assert!(fish.contains("complete -c hermes-cron"), "{fish}");
}
