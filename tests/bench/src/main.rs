//! `hermes-cron-bench`: hermes-cron side by side with what a user would
//! otherwise use, measured in the same run on the same machine, printed as
//! one markdown table (see docs/BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p hermes-cron-bench -- all
//! cargo run --release -p hermes-cron-bench -- scoped degraded   # rows 1 and 2 only
//! ```
//!
//! The same binary also plays the worker stand-in, a trivial job and a
//! timer's service ([`probe`]); those roles are decided before anything else.

mod machine;
mod probe;
mod ready;
mod rows;
mod setup;
mod stats;
mod table;

use hermes_cron::clock::Clock;
use rows::Section;
use setup::{Options, Setup};
use std::path::PathBuf;

const USAGE: &str = "\
usage: hermes-cron-bench [--quick] [--keep] [--dir DIR] SECTION...

sections (run in table order; `all` is every one):
  all        every row below
  scoped     1a/1b/1c  scoped dispatch vs systemd-run --scope and fork+exec
  degraded   2         degraded dispatch vs fork+exec
  fanout     3a/3b     1,000 jobs due in the same second
  lateness   4a/4b     100 jobs, then 1 job, every 1s for 60 s vs a systemd timer
  claim      5a/5b     claim pass cost at 1k, 10k, 100k jobs
  memory     6a/6b/6c  gateway RSS with 10k jobs; worker overhead; a staged worker
  ledger     7a/7b     terminal rows per second; size per 100k rows
  cluster    8a-8c     PostgreSQL: claim pass vs SQLite at 1k and 100k jobs;
                       1,000 same-second jobs on three gateways vs one
  breakdown  -         (diagnostics, stderr) where a scoped dispatch spends its time

options:
  --quick    a fifth of the repetitions (a smoke test; not for publishing)
  --keep     keep the work directory (homes, ledgers, gateway logs)
  --dir DIR  work directory (default: $TMPDIR/hermes-cron-bench-<pid>)

Boots a private systemd user manager (tests/support/user-manager.sh) when
none is reachable, and stops it again at the end.";

fn parse_args() -> Result<(Options, Vec<Section>), String> {
    let mut opts = Options::default();
    let mut sections = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--quick" => opts.quick = true,
            "--keep" => opts.keep = true,
            "--dir" => opts.dir = Some(PathBuf::from(args.next().ok_or("--dir needs a value")?)),
            "all" => sections.extend(Section::ALL),
            other => sections
                .push(Section::parse(other).ok_or_else(|| format!("unknown section {other:?}"))?),
        }
    }
    if sections.is_empty() {
        return Err("name at least one section, or `all`".into());
    }
    sections.dedup();
    Ok((opts, sections))
}

fn real_main() -> i32 {
    let (opts, sections) = match parse_args() {
        Ok(parsed) => parsed,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!("hermes-cron-bench: {e}\n\n{USAGE}");
            return 2;
        }
    };
    let quick = opts.quick;
    // The process's one zone table, over the host's zoneinfo; handed down.
    let zones = hermes_cron::host_zone::table();
    let setup = match Setup::prepare(opts, zones) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hermes-cron-bench: {e}");
            return 1;
        }
    };
    let manager = match &setup.manager {
        setup::ManagerUse::Reused { pid } => format!("reused (pid {})", pid.unwrap_or(0)),
        setup::ManagerUse::Booted { pid } => {
            format!("booted for this run (pid {})", pid.unwrap_or(0))
        }
    };
    let load_start = machine::load();
    if machine::load1() >= 1.0 {
        eprintln!(
            "bench: warning: the 1-minute load average is {load_start}; figures from a busy machine are not for publishing"
        );
    }
    let started = hermes_cron::clock::SystemClock::real().now();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hermes-cron-bench: cannot build the runtime: {e}");
            return 1;
        }
    };
    let rows = rt.block_on(rows::run(&setup, &sections));
    drop(rt);
    let minutes =
        (hermes_cron::clock::SystemClock::real().now() - started).num_seconds() as f64 / 60.0;

    println!(
        "hermes-cron-bench, {} UTC, {:.1} min{}\n",
        started.format("%Y-%m-%d %H:%M"),
        minutes,
        if quick {
            ", **--quick: not for publishing**"
        } else {
            ""
        }
    );
    println!(
        "{}",
        machine::describe(&setup.work, setup::profile(), &manager)
    );
    println!(
        "- load average (1/5/15 min): {load_start} at start, {} at end",
        machine::load()
    );
    println!(
        "- \"running\": the launched worker executes its own `main` after `exec` and, when held, after its go line (rows 1, 2, peers of 3); the job's command's `main` (3, 4); service `main` (timers)\n"
    );
    print!("{}", table::render(&rows));
    let failed = rows.iter().any(|r| r.ours.starts_with("failed"));
    drop(setup);
    if failed { 1 } else { 0 }
}

fn main() {
    if let Some(code) = probe::role() {
        std::process::exit(code);
    }
    std::process::exit(real_main());
}
