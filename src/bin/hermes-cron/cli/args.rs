//! The command line, as clap types. Parsing only; `router` runs them.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Cron scheduler and worker launcher: each occurrence runs in its own
/// systemd transient user scope and is recorded in an SQLite ledger.
#[derive(Debug, Parser)]
#[command(name = "hermes-cron", version, max_term_width = 100)]
pub(crate) struct Cli {
    /// The hermes home (default: $HERMES_HOME, else ~/.hermes).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Print JSON on stdout: the result as one object or array, and an error
    /// as an object too (`error`, `exit_code`, `message`, `field`, `fix`).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Add a job; prints its id.
    #[command(after_help = ADD_EXAMPLES)]
    Add(AddArgs),
    /// List jobs.
    #[command(after_help = "Example:\n  hermes-cron list --all")]
    List {
        /// Include paused and completed jobs.
        #[arg(long)]
        all: bool,
    },
    /// Show one job.
    Show {
        /// The job: its id (or a unique beginning of it) or its name.
        job: String,
    },
    /// Change a job (same flags as add; a new command replaces the old one).
    Edit(EditArgs),
    /// Stop scheduling a job.
    Pause {
        /// The job: its id or name.
        job: String,
        /// Why, shown by `show` and `list`.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Schedule a paused job again from now.
    Resume {
        /// The job: its id or name.
        job: String,
    },
    /// Remove a job (its ledger rows stay).
    Rm {
        /// The job: its id or name.
        job: String,
    },
    /// The next fires of a job or a schedule, in its zone and in UTC.
    #[command(after_help = NEXT_EXAMPLES)]
    Next(NextArgs),
    /// Fire a job now (source=manual).
    #[command(after_help = "Example:\n  hermes-cron run brief --wait && hermes-cron logs brief")]
    Run {
        /// The job: its id or name.
        job: String,
        /// Wait for the outcome; exit 0 on success, 1 otherwise.
        #[arg(long)]
        wait: bool,
        /// Run as a plain child of this command with its output here; Ctrl-C stops it.
        #[arg(long)]
        foreground: bool,
    },
    /// One claim+dispatch pass (for an external timer).
    Tick,
    /// The daemon: claims due occurrences and dispatches them.
    Gateway,
    /// Execution ledger rows, newest first.
    #[command(after_help = RUNS_EXAMPLES)]
    Runs(RunsArgs),
    /// Print the captured output of a run: an execution (its id, or a unique
    /// beginning or end of it), or a job's latest run (`--run N`: the Nth newest)
    #[command(after_help = LOGS_EXAMPLES)]
    Logs {
        /// An execution id (whole, or 4+ characters of its beginning or end), or a JOB.
        #[arg(value_name = "EXECUTION|JOB")]
        execution: String,
        /// With a JOB: the Nth newest of its runs that have output (1: the latest).
        #[arg(long = "run", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        run: Option<u64>,
        /// Keep printing while the run is going.
        #[arg(long, short)]
        follow: bool,
    },
    /// Launch a long-running worker outside any schedule (kanban workers).
    Spawn(SpawnArgs),
    /// Stop a run (its scope, or its worker, which passes SIGTERM to the job)
    /// and wait for its outcome; exit 0 once it has ended.
    Stop {
        /// The run: its execution id, or 4+ characters of its beginning or end.
        execution: String,
    },
    /// Wait for a run to end; exit with its command's exit code (128 + the
    /// signal when killed; 1 when it ended without one).
    Wait {
        /// The run: its execution id, or 4+ characters of its beginning or end.
        execution: String,
    },
    /// Is a gateway alive and making progress; can scopes be made. Exit 0 healthy, 1 otherwise.
    Status,
    /// A read-only check of the whole home; exit 1 on any finding.
    Doctor,
    /// Print the metrics (Prometheus text format).
    Metrics,
    /// Apply the retention limits now.
    Prune,
    /// Import a crontab or a Hermes cron/jobs.json.
    Import {
        /// A crontab file, or a Hermes home's `cron/jobs.json`.
        file: std::path::PathBuf,
        /// Show what would be imported; change nothing.
        #[arg(long = "dry-run")]
        dry_run: bool,
    },
    /// Read and change config.yaml.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Alert deliveries, newest first, with every attempt and its result.
    Alerts {
        /// Only this job's alerts (by name).
        job: Option<String>,
        /// At most this many alerts.
        #[arg(long, default_value_t = 20, value_name = "N")]
        limit: usize,
    },
    /// Send a gateway_failed alert to the config's alert command and webhook
    /// (what the user unit's OnFailure= hook runs).
    #[command(name = "gateway-failed")]
    GatewayFailed {
        /// The unit that failed (systemd's %i).
        #[arg(long, value_name = "NAME")]
        unit: Option<String>,
    },
    /// hermes-cron as the Hermes Agent's cron provider: install, uninstall.
    Hermes {
        #[command(subcommand)]
        action: HermesAction,
    },
    /// Write the systemd units that run the gateway, naming this binary.
    Units {
        #[command(subcommand)]
        action: UnitsAction,
    },
    /// Print a shell completion script.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Write the manual pages: hermes-cron(1), one page per command
    /// (hermes-cron-add(1), ...) and hermes-cron-config(5), the keys of config.yaml.
    #[command(
        after_help = "Example:\n  hermes-cron manpages ~/.local/share/man/man1 && man hermes-cron"
    )]
    Manpages {
        /// The directory to write them in (made if missing).
        dir: PathBuf,
    },
}

const ADD_EXAMPLES: &str = "\
Examples:
  hermes-cron add --name brief --schedule 'daily at 8am' --tz Europe/Berlin -- /usr/local/bin/briefing
  hermes-cron add --name tea --schedule 'in 30s' --shell -- 'echo \"tea is ready\"'
  hermes-cron add --name standup --schedule 'every monday 9am' --timeout 10m -- ./standup.sh
  hermes-cron add --name backup --schedule '30 2 * * *' --retries 2 --alert-on failed -- restic backup /srv";

const NEXT_EXAMPLES: &str = "\
Examples:
  hermes-cron next brief --count 3
  hermes-cron next --schedule '30 2 * * *' --tz Europe/Berlin --from 2026-03-28T00:00:00Z";

const RUNS_EXAMPLES: &str = "\
Examples:
  hermes-cron runs brief --limit 5
  hermes-cron runs --state failed --since 24h";

const LOGS_EXAMPLES: &str = "\
Examples:
  hermes-cron logs brief            # what brief's latest run printed
  hermes-cron logs brief --run 2    # the run before
  hermes-cron logs 5f3a9c1e --follow";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  hermes-cron completions bash > ~/.local/share/bash-completion/completions/hermes-cron
  hermes-cron completions zsh > ~/.zfunc/_hermes-cron     # with fpath+=~/.zfunc
  hermes-cron completions fish > ~/.config/fish/completions/hermes-cron.fish";

#[derive(Debug, Subcommand)]
pub(crate) enum UnitsAction {
    /// Write the gateway's units: with --user (the default) the user unit
    /// and its OnFailure= hook in ~/.config/systemd/user; with --system the
    /// template hermes-cron-gateway@USER.service in /etc/systemd/system.
    /// Their ExecStart= names this binary, wherever it is installed.
    #[command(after_help = UNITS_EXAMPLES)]
    Install {
        /// The user units (the default).
        #[arg(long, conflicts_with = "system")]
        user: bool,
        /// The system template, for a gateway run as a named user (as root).
        #[arg(long)]
        system: bool,
        /// Write them in this directory instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The hermes-cron the units run (packagers); default: this one.
        #[arg(long, value_name = "PATH")]
        binary: Option<PathBuf>,
    },
}

const UNITS_EXAMPLES: &str = "\
Examples:
  hermes-cron units install && systemctl --user daemon-reload \\
    && systemctl --user enable --now hermes-cron-gateway.service
  sudo hermes-cron units install --system && sudo systemctl daemon-reload \\
    && sudo systemctl enable --now hermes-cron-gateway@alice.service";

#[derive(Debug, Subcommand)]
pub(crate) enum HermesAction {
    /// Make hermes-cron fire this Hermes home's cron jobs: install the
    /// provider plugin and set `cron.provider: hermes-cron`.
    Install {
        /// Hermes's interpreter (default: the one the `hermes` on PATH names).
        #[arg(long, value_name = "PATH")]
        python: Option<std::path::PathBuf>,
    },
    /// Give Hermes's cron back to its built-in ticker: unset
    /// `cron.provider`, remove the plugin and the managed jobs.
    Uninstall,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigAction {
    /// Print the effective value of a key (a secret one masked).
    Get {
        /// The dotted key, e.g. `cron.max_parallel_jobs`.
        key: String,
        /// Print a secret key's value (a token, a webhook or ping URL) in full.
        #[arg(long)]
        reveal: bool,
    },
    /// Validate and write a value, keeping every other key.
    Set {
        /// The dotted key, e.g. `cron.max_parallel_jobs`.
        key: String,
        /// A negative number is a value to refuse by range, not a flag.
        #[arg(allow_negative_numbers = true)]
        value: String,
    },
    /// Remove a key so its built-in default applies.
    Unset {
        /// The dotted key, e.g. `cron.max_parallel_jobs`.
        key: String,
    },
    /// Every key, its value and where it came from (secret ones masked).
    Show {
        /// Print secret keys' values (tokens, webhook and ping URLs) in full.
        #[arg(long)]
        reveal: bool,
    },
}

/// Flags shared by add and edit.
#[derive(Debug, Args, Default)]
pub(crate) struct JobFlags {
    /// Zone the schedule is read in (IANA name, e.g. Europe/Berlin).
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    /// Wall-clock limit (e.g. 30m), or `off`; default cron.script_timeout_seconds.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// No output for this long means the run is stuck: stop it, recorded
    /// timed_out (idle). `off` for none (the default).
    #[arg(long = "idle-timeout", value_name = "DURATION")]
    pub idle_timeout: Option<String>,
    /// When the previous run is still going: skip, allow or replace.
    #[arg(long, value_name = "POLICY")]
    pub overlap: Option<String>,
    /// Slots missed while down: once, skip or all.
    #[arg(long = "catch-up", value_name = "POLICY")]
    pub catch_up: Option<String>,
    /// Extra attempts after failed or timed_out.
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// First retry delay, doubled each attempt (e.g. 30s).
    #[arg(long = "retry-backoff", value_name = "DURATION")]
    pub retry_backoff: Option<String>,
    /// Scope MemoryMax (e.g. 512M).
    #[arg(long = "memory-max", value_name = "BYTES")]
    pub memory_max: Option<String>,
    /// Scope CPUWeight (1..10000).
    #[arg(long = "cpu-weight", value_name = "WEIGHT")]
    pub cpu_weight: Option<u64>,
    /// Scope TasksMax.
    #[arg(long = "tasks-max", value_name = "N")]
    pub tasks_max: Option<u64>,
    /// Environment for the job (repeatable).
    #[arg(long, value_name = "K=V")]
    pub env: Vec<String>,
    /// A file of KEY=VALUE lines read when the job runs (absolute; repeatable).
    #[arg(long = "env-file", value_name = "PATH")]
    pub env_file: Vec<PathBuf>,
    /// Pass this variable from the process that starts the run (repeatable);
    /// nothing else of its environment reaches the job.
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Working directory (absolute).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Run the command through `sh -c`.
    #[arg(long)]
    pub shell: bool,
    /// Never run this job outside a restart-safe scope.
    #[arg(long = "require-scope")]
    pub require_scope: bool,
    /// Run only on the host of this name, or on hosts with this label
    /// (HERMES_CRON_HOST_LABELS); `any` (edit) runs it on any host again.
    #[arg(long = "on", value_name = "HOST|LABEL")]
    pub on: Option<String>,
    /// Do not check that the program exists.
    #[arg(long = "no-check")]
    pub no_check: bool,
    /// What alerts: kinds separated by commas (failed, timed_out, unknown,
    /// missed, refused, stalled, recovered, late), all, none, or default
    /// (cron.alert_on).
    #[arg(long = "alert-on", value_name = "KINDS")]
    pub alert_on: Option<String>,
    /// Alert only after N consecutive failed occurrences (default cron.alert_after).
    #[arg(long = "alert-after", value_name = "N")]
    pub alert_after: Option<u32>,
    /// Run this shell command line on an alert, like a job, with the event
    /// as JSON on stdin and in HERMES_CRON_ALERT_* variables ('' for none).
    #[arg(long = "on-alert", value_name = "CMD")]
    pub on_alert: Option<String>,
    /// POST each alert as JSON to this URL ('' for none).
    #[arg(long = "alert-webhook", value_name = "URL")]
    pub alert_webhook: Option<String>,
    /// A Healthchecks-style check: URL/start when a run starts, URL on
    /// success, URL/fail on failure ('' for none).
    #[arg(long = "alert-ping", value_name = "URL")]
    pub alert_ping: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// The job's name, unique on the home (`show NAME`, `run NAME`, ...).
    #[arg(long)]
    pub name: String,
    /// Cron, `every 30s`, `in 2h`, an ISO instant, or a phrase like `daily at 8am`.
    #[arg(long)]
    pub schedule: String,
    #[command(flatten)]
    pub flags: JobFlags,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct EditArgs {
    /// The job: its id or name.
    pub job: String,
    /// A new name.
    #[arg(long)]
    pub name: Option<String>,
    /// A new schedule (same forms as `add`).
    #[arg(long)]
    pub schedule: Option<String>,
    #[command(flatten)]
    pub flags: JobFlags,
    /// Run through `sh -c` no more.
    #[arg(long = "no-shell", conflicts_with = "shell")]
    pub no_shell: bool,
    /// Allow degraded runs again.
    #[arg(long = "no-require-scope", conflicts_with = "require_scope")]
    pub no_require_scope: bool,
    /// Replace the environment with none (also the env files and passed variables).
    #[arg(long = "clear-env", conflicts_with_all = ["env", "env_file", "pass_env"])]
    pub clear_env: bool,
    /// A new command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct NextArgs {
    /// A job id or name (or use --schedule).
    #[arg(required_unless_present = "schedule", conflicts_with = "schedule")]
    pub job: Option<String>,
    /// A schedule to try, in any form `add` accepts.
    #[arg(long)]
    pub schedule: Option<String>,
    /// The zone to read --schedule in (default: the system zone).
    #[arg(long, requires = "schedule", value_name = "ZONE")]
    pub tz: Option<String>,
    /// Start after this instant (RFC 3339, or naive in the zone); default now.
    #[arg(long, value_name = "INSTANT")]
    pub from: Option<String>,
    /// How many fires.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub count: usize,
}

#[derive(Debug, Args)]
pub(crate) struct RunsArgs {
    /// Only this job's runs (its id or name).
    pub job: Option<String>,
    /// At most this many rows.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub limit: usize,
    /// Only rows in this state.
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// Only rows claimed since (RFC 3339 instant, or a duration like 2h meaning that long ago).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SpawnArgs {
    /// A name for the run (its unit is named after it).
    #[arg(long)]
    pub name: String,
    /// Fail closed when no restart-safe scope can be made, whatever the config.
    #[arg(long = "require-scope")]
    pub require_scope: bool,
    /// Environment for the worker's command (repeatable).
    #[arg(long, value_name = "K=V")]
    pub env: Vec<String>,
    /// A file of KEY=VALUE lines read when the worker starts (repeatable).
    #[arg(long = "env-file", value_name = "PATH")]
    pub env_file: Vec<PathBuf>,
    /// Pass this variable of this process to the worker (repeatable).
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Working directory (absolute; default: the account's home).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Wall-clock limit (e.g. 8h); none by default.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Append the command's output (stdout and stderr) to this file instead
    /// of the home's `cron/output/`; rotating it is the caller's business.
    #[arg(long = "log-file", value_name = "PATH")]
    pub log_file: Option<PathBuf>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command, and every argument of every command (positionals,
    /// flags, the global --json and --home), says what it is for: the
    /// help, the man pages and the completions are made from it.
    #[test]
    fn every_command_and_argument_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} <{id}>"));
                }
            }
            for sub in cmd.get_subcommands() {
                let sub_path = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() && sub.get_long_about().is_none() {
                    missing.push(sub_path.clone());
                }
                walk(sub, &sub_path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "hermes-cron", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
