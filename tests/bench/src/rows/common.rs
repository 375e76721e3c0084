//! Fixtures the rows share: homes, ledgers, jobs in bulk, stub runs, the
//! wall clock, and `/proc` readings.

use hermes_cron::clock::{Clock, SystemClock};
use hermes_cron::config::Config;
use hermes_cron::db::Db;
use hermes_cron::home::Home;
use hermes_cron::host_zone::system_zone;
use hermes_cron::ids::{ExecutionId, JobId};
use hermes_cron::job::{Job, JobInput};
use hermes_cron::ledger::{RunSpec, Source};
use hermes_cron::process::OwnerRole;
use hermes_cron::schedule::{Timestamp, Tz};
use hermes_cron::store;
use hermes_cron::tick::{ClaimContext, ClaimedRun};
use std::path::Path;
use std::time::Duration;

/// The real wall clock.
pub fn wall_now() -> Timestamp {
    SystemClock::real().now()
}

/// Now, in milliseconds since the epoch.
pub fn wall_ms() -> i64 {
    wall_now().timestamp_millis()
}

/// How far ahead rows 3 and 4 make their jobs due: schedules are known in
/// advance, and a gateway may prepare a run ahead of its instant (staging,
/// with a lead time of up to `cron.staging_lead_max_s`). The peers' timings
/// start at their own first launch.
pub const DUE_AHEAD: Duration = Duration::from_secs(20);

/// The next whole second at least `lead` from now, in milliseconds.
pub fn whole_second_after(lead: Duration) -> i64 {
    let at = wall_ms() + lead.as_millis() as i64;
    (at + 999) / 1000 * 1000
}

/// Sleep until the wall clock reads `ms` (milliseconds since the epoch).
pub async fn sleep_until_wall(ms: i64) {
    let left = ms - wall_ms();
    if left > 0 {
        tokio::time::sleep(Duration::from_millis(left as u64)).await;
    }
}

/// Open (creating) the ledger of `home`.
pub fn open_db(home: &Home) -> Result<Db, String> {
    home.ensure()
        .map_err(|e| format!("{}: {e}", home.root().display()))?;
    Db::open(&home.db_file()).map_err(|e| format!("{}: {e}", home.db_file().display()))
}

/// A fresh home in `dir`, with its ledger.
pub fn fresh_home(dir: &Path) -> Result<(Home, Db), String> {
    let home = Home::at(dir);
    let db = open_db(&home)?;
    Ok((home, db))
}

/// A claimed run that is not in the ledger: enough for a scoped or degraded
/// dispatch, which only reads the spec.
pub fn stub_run() -> ClaimedRun {
    ClaimedRun {
        id: ExecutionId::generate(),
        job_id: None,
        job_name: "bench".into(),
        scheduled_for: None,
        attempt: 1,
        source: Source::Manual,
        spec: RunSpec {
            argv: vec!["/bin/true".into()],
            timeout_s: 3600,
            output_max_bytes: 8 << 20,
            heartbeat_interval_s: 5,
            retry_backoff_s: 30,
            ..RunSpec::default()
        },
        owner: hermes_cron::process::owner(OwnerRole::Cli),
        replace: Vec::new(),
    }
}

/// A job as `add` would build it.
pub fn job(name: &str, schedule: &str, argv: &[&str]) -> Result<Job, String> {
    JobInput {
        name: Some(name.into()),
        schedule: Some(schedule.into()),
        argv: Some(argv.iter().map(|s| s.to_string()).collect()),
        ..JobInput::default()
    }
    .build(JobId::generate(), wall_now(), system_zone())
    .map_err(|e| e.to_string())
}

/// Insert `n` copies of `template` (fresh ids, names `<name>-<i>`), each
/// adjusted by `adjust`, in one transaction.
pub fn insert_jobs(
    db: &mut Db,
    template: &Job,
    n: usize,
    mut adjust: impl FnMut(usize, &mut Job),
) -> Result<(), String> {
    let tx = db.immediate().map_err(|e| e.to_string())?;
    for i in 0..n {
        let mut j = template.clone();
        j.id = JobId::generate();
        j.name = format!("{}-{i}", template.name);
        adjust(i, &mut j);
        store::insert_job(&tx, &j).map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())
}

/// Make every job due at `at_ms`, anchored `period_ms` before it, through a
/// connection of its own that is closed at once: the gateway's inotify wake
/// sees the `IN_CLOSE_WRITE`, as it sees a CLI command's exit. (A write by a
/// connection that stays open may be noticed only at the gateway's next
/// monitor tick: its `IN_MODIFY` comes before the commit is visible.)
pub fn make_all_due(home: &Home, at_ms: i64, period_ms: i64) -> Result<(), String> {
    let db = open_db(home)?;
    db.conn()
        .execute(
            "UPDATE jobs SET next_run_at = ?1, anchor = ?2",
            hermes_cron::params![at_ms, at_ms - period_ms],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A manual occurrence of `job`, claimed in `home`'s ledger `db` now.
pub fn claim_now(home: &Home, db: &mut Db, job: &Job) -> Result<ClaimedRun, String> {
    let config = Config::default();
    let ctx = claim_ctx(home, &config, wall_now());
    hermes_cron::tick::claim_manual(db, &ctx, job)
        .map_err(|e| format!("claim: {e}"))?
        .claimed
        .pop()
        .ok_or_else(|| "the manual claim was skipped (a previous run still active?)".into())
}

/// The claim context of this process at `now`.
pub fn claim_ctx<'a>(home: &'a Home, config: &'a Config, now: Timestamp) -> ClaimContext<'a> {
    ClaimContext {
        home,
        config,
        fallback_zone: zone(),
        owner: hermes_cron::process::owner(OwnerRole::Cli),
        host: hermes_cron::cluster::Host::this(),
        now,
    }
}

fn zone() -> Tz {
    system_zone()
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// A field of `/proc/<pid>/smaps_rollup`, in KiB.
fn smaps_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// `Pss` (shared pages split between their users), in KiB.
pub fn pss_kib(pid: u32) -> Option<u64> {
    smaps_kib(pid, "Pss")
}

/// Pages only `pid` has (`Private_Clean` + `Private_Dirty`), in KiB: what one
/// more such process costs.
pub fn private_kib(pid: u32) -> Option<u64> {
    Some(smaps_kib(pid, "Private_Clean")? + smaps_kib(pid, "Private_Dirty")?)
}

/// The children of `pid` (needs `/proc/<pid>/task/<pid>/children`).
pub fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Poll `f` every 10 ms until it returns `Some`, at most `timeout`.
pub async fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
