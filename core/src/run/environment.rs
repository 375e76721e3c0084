//! A job's environment, defined: the same for a scheduled run, a manual
//! `run` and a `spawn`, and nothing from the process that starts the run
//! unless the job names it. Pure: the worker gathers the parts (its account,
//! the bus variables it was given, the env files it read, the values of the
//! variables the job passes through) and [`compose`] lays them out.
//!
//! In order, a later layer winning over an earlier one:
//!
//! 1. the base: `HOME`, `USER`, `LOGNAME`, `SHELL` (the account the worker
//!    runs as), `PATH` (`cron.path`, default [`DEFAULT_PATH`]), `LANG`
//!    ([`DEFAULT_LANG`]), and `XDG_RUNTIME_DIR` / `DBUS_SESSION_BUS_ADDRESS`
//!    when the worker has them (so a job can reach the user's systemd and
//!    session bus);
//! 2. `cron.env` from the config;
//! 3. the job's `--env-file` files, in order;
//! 4. the job's `--pass-env NAME`s that are set in the starting process;
//! 5. the job's `--env K=V`;
//! 6. the run's own ids: `HERMES_CRON_EXECUTION_ID`, `HERMES_CRON_JOB_NAME`,
//!    `HERMES_CRON_JOB_ID` (not for spawned runs), `HERMES_HOME`, and
//!    `HERMES_CRON_USAGE_FILE` (where the run may report its model usage).

use crate::job::Env;

/// `PATH` when `cron.path` is not set.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// `LANG` in the base; a job or `cron.env` may set another.
pub const DEFAULT_LANG: &str = "C.UTF-8";
/// The session variables passed on when the worker has them.
pub const BUS_VARIABLES: [&str; 2] = ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"];

/// The account a run runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The user name (`USER`, `LOGNAME`).
    pub user: String,
    /// The home directory (`HOME`).
    pub home: String,
    /// The login shell (`SHELL`).
    pub shell: String,
}

/// Every layer of a job's environment.
#[derive(Clone, Debug, Default)]
pub struct Layers<'a> {
    /// The account for the base (None: no `HOME`, `USER`, `LOGNAME`, `SHELL`).
    pub account: Option<&'a Account>,
    /// `cron.path`; None means [`DEFAULT_PATH`].
    pub path: Option<&'a str>,
    /// [`BUS_VARIABLES`] the worker has.
    pub bus: Vec<(String, String)>,
    /// `cron.env` (None: empty).
    pub config_env: Option<&'a Env>,
    /// The pairs of each env file, in order.
    pub files: Vec<Vec<(String, String)>>,
    /// The passed-through variables that are set.
    pub passed: Vec<(String, String)>,
    /// The job's `--env` (None: empty).
    pub job_env: Option<&'a Env>,
    /// The run's own ids, last so nothing overrides them.
    pub ids: Vec<(String, String)>,
}

/// The environment, each name once, in the order names first appear.
pub fn compose(l: &Layers<'_>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: &str| match out.iter_mut().find(|(name, _)| name == k) {
        Some(entry) => entry.1 = v.to_string(),
        None => out.push((k.to_string(), v.to_string())),
    };
    if let Some(a) = l.account {
        set("HOME", &a.home);
        set("USER", &a.user);
        set("LOGNAME", &a.user);
        set("SHELL", &a.shell);
    }
    set("PATH", l.path.unwrap_or(DEFAULT_PATH));
    set("LANG", DEFAULT_LANG);
    let pairs = l
        .bus
        .iter()
        .chain(l.config_env.map(|e| e.0.iter()).into_iter().flatten())
        .chain(l.files.iter().flatten())
        .chain(l.passed.iter())
        .chain(l.job_env.map(|e| e.0.iter()).into_iter().flatten())
        .chain(l.ids.iter());
    for (k, v) in pairs {
        set(k, v);
    }
    out
}

/// The `PATH` a job's program without a `/` is looked up on, as far as it
/// is known before the run (`add`, `edit` and `doctor` check it): the job's
/// `--env PATH=...`, else `cron_path` (`cron.path`). An env file or a
/// passed-through `PATH`, read when the job runs, may still change it.
pub fn lookup_path<'a>(job_env: &'a Env, cron_path: &'a str) -> &'a str {
    job_env
        .0
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map_or(cron_path, |(_, value)| value.as_str())
}

/// A line of an env file that is not `KEY=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct EnvFileError {
    /// Which line, 1 first.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// Read an env file: `KEY=VALUE` lines (an optional leading `export `),
/// blank lines and `#` comments; a value may be wrapped in single quotes
/// (taken as is) or double quotes (`\"`, `\\`, `\n` unescaped). No variable
/// expansion.
pub fn parse_env_file(text: &str) -> Result<Vec<(String, String)>, EnvFileError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |problem: &str| EnvFileError {
            line: i + 1,
            problem: problem.to_string(),
        };
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let (key, value) = line.split_once('=').ok_or_else(|| err("not KEY=VALUE"))?;
        let key = key.trim_end();
        if !crate::job::is_env_name(key) {
            return Err(err(&format!("{key:?} is not a variable name")));
        }
        let value = value.trim();
        let value = if let Some(inner) = value.strip_prefix('\'') {
            inner
                .strip_suffix('\'')
                .ok_or_else(|| err("unterminated single quote"))?
                .to_string()
        } else if let Some(inner) = value.strip_prefix('"') {
            let inner = inner
                .strip_suffix('"')
                .ok_or_else(|| err("unterminated double quote"))?;
            unescape(inner)
        } else {
            value.to_string()
        };
        if value.contains('\0') {
            return Err(err("a value contains a NUL byte"));
        }
        out.push((key.to_string(), value));
    }
    Ok(out)
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(env: &'a [(String, String)], k: &str) -> Option<&'a str> {
        env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn later_layers_win_and_ids_win_over_all() {
        let account = Account {
            user: "ann".into(),
            home: "/home/ann".into(),
            shell: "/bin/bash".into(),
        };
        let config = Env(vec![
            ("LANG".into(), "de_DE.UTF-8".into()),
            ("A".into(), "config".into()),
        ]);
        let job = Env(vec![
            ("A".into(), "job".into()),
            ("HERMES_CRON_JOB_NAME".into(), "x".into()),
        ]);
        let env = compose(&Layers {
            account: Some(&account),
            path: None,
            bus: vec![("XDG_RUNTIME_DIR".into(), "/run/user/1000".into())],
            config_env: Some(&config),
            files: vec![vec![
                ("A".into(), "file".into()),
                ("B".into(), "file".into()),
            ]],
            passed: vec![("B".into(), "passed".into())],
            job_env: Some(&job),
            ids: vec![("HERMES_CRON_JOB_NAME".into(), "brief".into())],
        });
        assert_eq!(get(&env, "HOME"), Some("/home/ann"));
        assert_eq!(get(&env, "LOGNAME"), Some("ann"));
        assert_eq!(get(&env, "PATH"), Some(DEFAULT_PATH));
        assert_eq!(get(&env, "LANG"), Some("de_DE.UTF-8"));
        assert_eq!(get(&env, "XDG_RUNTIME_DIR"), Some("/run/user/1000"));
        assert_eq!(get(&env, "A"), Some("job"));
        assert_eq!(get(&env, "B"), Some("passed"));
        assert_eq!(get(&env, "HERMES_CRON_JOB_NAME"), Some("brief"));
        let names: Vec<_> = env.iter().map(|(k, _)| k.as_str()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn a_program_is_looked_up_on_the_jobs_path_else_cron_path() {
        let none = Env::default();
        assert_eq!(lookup_path(&none, "/opt/bin:/usr/bin"), "/opt/bin:/usr/bin");
        let own = Env(vec![
            ("A".into(), "1".into()),
            ("PATH".into(), "/job/bin".into()),
        ]);
        assert_eq!(lookup_path(&own, DEFAULT_PATH), "/job/bin");
    }

    #[test]
    fn cron_path_is_the_base_path_and_cron_env_comes_before_the_jobs_layers() {
        let config = Env(vec![
            ("TZ".into(), "Europe/Berlin".into()),
            ("SHARED".into(), "config".into()),
        ]);
        let job = Env(vec![("SHARED".into(), "job".into())]);
        let env = compose(&Layers {
            path: Some("/opt/tools/bin:/usr/bin"),
            config_env: Some(&config),
            job_env: Some(&job),
            ..Layers::default()
        });
        assert_eq!(get(&env, "PATH"), Some("/opt/tools/bin:/usr/bin"));
        assert_eq!(get(&env, "TZ"), Some("Europe/Berlin"));
        assert_eq!(get(&env, "SHARED"), Some("job"));
    }

    #[test]
    fn env_files_read_like_dotenv_without_expansion() {
        let text = "# secrets\n\nexport TOKEN=abc\nNAME='a $b'\nQ=\"x\\\"y\\nz\"\n  SPACED = v  \n";
        let got = parse_env_file(text).unwrap();
        assert_eq!(
            got,
            vec![
                ("TOKEN".into(), "abc".into()),
                ("NAME".into(), "a $b".into()),
                ("Q".into(), "x\"y\nz".into()),
                ("SPACED".into(), "v".into()),
            ]
        );
        assert_eq!(parse_env_file("JUST TEXT").unwrap_err().line, 1);
        assert!(parse_env_file("\n1X=2").unwrap_err().problem.contains("1X"));
        assert!(parse_env_file("A='open").is_err());
    }
}
