//! A Hermes `script` job's script as a command. Pure: paths are text.
//!
//! Hermes (`cron/scheduler.py`, `_run_job_script`; docs "Script-Only Cron
//! Jobs") runs `script` from `$HERMES_HOME/scripts/` (a relative path is
//! under it; absolute and `~` paths must stay inside it), picks the
//! interpreter by extension (`.sh`/`.bash` under bash, anything else under
//! its own Python), ignores the shebang, and runs it in the job's `workdir`
//! or else the script's directory. Here:
//! - interpreter: `bash` for `.sh`/`.bash`, else `python3` from PATH (Hermes'
//!   own interpreter and its packages are not known; the caller notes this);
//! - a relative script with a known Hermes home (the import file is
//!   `<home>/cron/jobs.json`) and an absolute script become
//!   `[interpreter, /abs/path]`, `shell = false`, workdir = the job's
//!   workdir or the script's directory;
//! - otherwise (home unknown, or a `~` path) the path is resolved when the
//!   job runs: a shell line `cd <dir> && exec <interpreter> <file>` with
//!   `<dir>` under `"${HERMES_HOME:-$HOME/.hermes}/scripts"` or `"$HOME"`,
//!   every literal part single-quoted.

use std::path::{Path, PathBuf};

/// How to run a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ScriptCommand {
    pub(super) argv: Vec<String>,
    pub(super) shell: bool,
    pub(super) workdir: Option<PathBuf>,
    /// Whether it runs under `python3` (the caller notes the interpreter).
    pub(super) python: bool,
}

/// What runs `script`.
fn interpreter(script: &str) -> &'static str {
    let ext = Path::new(script)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("sh" | "bash") => "bash",
        _ => "python3",
    }
}

/// `script` as a command; `home` is the Hermes home when known,
/// `workdir` the job's absolute working directory.
pub(super) fn script_command(
    script: &str,
    home: Option<&Path>,
    workdir: Option<&Path>,
) -> ScriptCommand {
    let interp = interpreter(script);
    let python = interp == "python3";
    let absolute = if script.starts_with('/') {
        Some(PathBuf::from(script))
    } else if script.starts_with('~') {
        None
    } else {
        home.map(|h| h.join("scripts").join(script))
    };
    if let Some(path) = absolute {
        let dir = workdir
            .map(Path::to_path_buf)
            .or_else(|| path.parent().map(Path::to_path_buf));
        return ScriptCommand {
            argv: vec![interp.to_string(), path.to_string_lossy().into_owned()],
            shell: false,
            workdir: dir,
            python,
        };
    }
    let (base, relative) = match script.strip_prefix("~/") {
        Some(rest) => ("\"$HOME\"", rest),
        None if script == "~" => ("\"$HOME\"", ""),
        None => ("\"${HERMES_HOME:-$HOME/.hermes}/scripts\"", script),
    };
    let line = match workdir {
        Some(_) => format!("exec {interp} {base}/{}", quote(relative)),
        None => {
            let (dir, file) = relative.rsplit_once('/').unwrap_or(("", relative));
            let dir = if dir.is_empty() {
                base.to_string()
            } else {
                format!("{base}/{}", quote(dir))
            };
            format!("cd {dir} && exec {interp} {}", quote(file))
        }
    };
    ScriptCommand {
        argv: vec![line],
        shell: true,
        workdir: workdir.map(Path::to_path_buf),
        python,
    }
}

/// Where the job will find `script`, when that is known: an absolute path
/// as it is, `~/...` under `user_home`, a relative one under
/// `<home>/scripts/` (`home`: the file's Hermes home, else `HERMES_HOME`
/// when the job runs). `None` for `~user/...` or an unknown home.
pub(super) fn script_location(
    script: &str,
    home: Option<&Path>,
    user_home: Option<&Path>,
) -> Option<PathBuf> {
    if script.starts_with('/') {
        Some(PathBuf::from(script))
    } else if let Some(rest) = script.strip_prefix("~/") {
        user_home.map(|h| h.join(rest))
    } else if script.starts_with('~') {
        None
    } else {
        home.map(|h| h.join("scripts").join(script))
    }
}

/// Single-quote `text` for `sh`.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_home_gives_an_absolute_argv() {
        let home = Path::new("/home/ann/.hermes");
        let cmd = script_command("watch/disk.sh", Some(home), None);
        assert_eq!(
            cmd.argv,
            ["bash", "/home/ann/.hermes/scripts/watch/disk.sh"]
        );
        assert!(!cmd.shell && !cmd.python);
        assert_eq!(
            cmd.workdir.as_deref(),
            Some(Path::new("/home/ann/.hermes/scripts/watch"))
        );
        let cmd = script_command("/opt/s/report.py", None, Some(Path::new("/srv")));
        assert_eq!(cmd.argv, ["python3", "/opt/s/report.py"]);
        assert!(cmd.python);
        assert_eq!(cmd.workdir.as_deref(), Some(Path::new("/srv")));
    }

    #[test]
    fn script_locations() {
        let (home, user) = (Some(Path::new("/h")), Some(Path::new("/home/ann")));
        let at = |s: &str| script_location(s, home, user);
        assert_eq!(at("a/b.sh"), Some(PathBuf::from("/h/scripts/a/b.sh")));
        assert_eq!(at("/opt/x.py"), Some(PathBuf::from("/opt/x.py")));
        assert_eq!(at("~/bin/x.sh"), Some(PathBuf::from("/home/ann/bin/x.sh")));
        assert_eq!(at("~ann/x.sh"), None);
        assert_eq!(script_location("a.sh", None, user), None);
        assert_eq!(script_location("~/a.sh", home, None), None);
    }

    #[test]
    fn unknown_home_resolves_when_the_job_runs() {
        let cmd = script_command("disk.BASH", None, None);
        assert!(cmd.shell);
        assert_eq!(
            cmd.argv,
            ["cd \"${HERMES_HOME:-$HOME/.hermes}/scripts\" && exec bash 'disk.BASH'"]
        );
        let cmd = script_command("it's/run.py", None, None);
        assert_eq!(
            cmd.argv,
            ["cd \"${HERMES_HOME:-$HOME/.hermes}/scripts\"/'it'\\''s' && exec python3 'run.py'"]
        );
        let cmd = script_command(
            "~/.hermes/scripts/a.sh",
            Some(Path::new("/h")),
            Some(Path::new("/w")),
        );
        assert_eq!(cmd.argv, ["exec bash \"$HOME\"/'.hermes/scripts/a.sh'"]);
        assert_eq!(cmd.workdir.as_deref(), Some(Path::new("/w")));
    }
}
