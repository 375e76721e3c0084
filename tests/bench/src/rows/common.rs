//! Fixtures the rows share: homes, ledgers, jobs in bulk, stub runs, the
//! wall clock, and `/proc` readings.

use hermes_cron::clock::{Clock, SystemClock};
use hermes_cron::config::Config;
use hermes_cron::db::Db;
use hermes_cron::dispatch::{Dispatched, Launched, Release, Start};
use hermes_cron::home::Home;
use hermes_cron::host_zone::system_zone;
use hermes_cron::ids::{ExecutionId, JobId};
use hermes_cron::job::{Job, JobInput};
use hermes_cron::ledger::ClaimedRun;
use hermes_cron::ledger::{RunSpec, Source};
use hermes_cron::process::OwnerRole;
use hermes_cron::schedule::{Timestamp, ZoneTable};
use hermes_cron::store;
use hermes_cron::tick::ClaimContext;
use std::path::Path;
use std::time::Duration;

/// The real wall clock.
pub(super) fn wall_now() -> Timestamp {
    SystemClock::real().now()
}

/// Now, in milliseconds since the epoch.
pub(super) fn wall_ms() -> i64 {
    wall_now().timestamp_millis()
}

/// How far ahead rows 3 and 4 make their jobs due: schedules are known in
/// advance, and a gateway may prepare a run ahead of its instant (staging,
/// with a lead time of up to `cron.staging_lead_max_s`). The peers' timings
/// start at their own first launch.
pub(super) const DUE_AHEAD: Duration = Duration::from_secs(20);

/// The next whole second at least `lead` from now, in milliseconds.
pub(super) fn whole_second_after(lead: Duration) -> i64 {
    let at = wall_ms() + lead.as_millis() as i64;
    (at + 999) / 1000 * 1000
}

/// Sleep until the wall clock reads `ms` (milliseconds since the epoch).
pub(super) async fn sleep_until_wall(ms: i64) {
    let left = ms - wall_ms();
    if left > 0 {
        tokio::time::sleep(Duration::from_millis(left as u64)).await;
    }
}

/// Open (creating) the ledger of `home`.
pub(super) fn open_db(home: &Home) -> Result<Db, String> {
    home.ensure()
        .map_err(|e| format!("{}: {e}", home.root().display()))?;
    Db::open(&home.db_file()).map_err(|e| format!("{}: {e}", home.db_file().display()))
}

/// A fresh home in `dir`, with its ledger.
pub(super) fn fresh_home(dir: &Path) -> Result<(Home, Db), String> {
    let home = Home::at(dir);
    let db = open_db(&home)?;
    Ok((home, db))
}

/// A claimed run that is not in the ledger: enough for a scoped or degraded
/// dispatch, which only reads the spec.
pub(super) fn stub_run() -> ClaimedRun {
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

/// A job as `add` would build it, zone names read in `zones`.
pub(super) fn job(
    name: &str,
    schedule: &str,
    argv: &[&str],
    zones: &ZoneTable,
) -> Result<Job, String> {
    JobInput {
        name: Some(name.into()),
        schedule: Some(schedule.into()),
        argv: Some(argv.iter().map(|s| s.to_string()).collect()),
        ..JobInput::default()
    }
    .build(
        JobId::generate(),
        wall_now(),
        hermes_cron::job::FallbackZone::System(system_zone(zones)),
        zones,
    )
    .map_err(|e| e.to_string())
}

/// Insert `n` copies of `template` (fresh ids, names `<name>-<i>`), each
/// adjusted by `adjust`, in one transaction.
pub(super) fn insert_jobs(
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
pub(super) fn make_all_due(home: &Home, at_ms: i64, period_ms: i64) -> Result<(), String> {
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
pub(super) fn claim_now(
    home: &Home,
    db: &mut Db,
    job: &Job,
    zones: &ZoneTable,
) -> Result<ClaimedRun, String> {
    let config = Config::default();
    let ctx = claim_ctx(home, &config, wall_now(), zones);
    hermes_cron::tick::claim_manual(db, &ctx, job)
        .map_err(|e| format!("claim: {e}"))?
        .claimed
        .pop()
        .ok_or_else(|| "the manual claim was skipped (a previous run still active?)".into())
}

/// This host, read once.
pub(super) fn host() -> &'static hermes_cron::cluster::Host {
    static HOST: std::sync::LazyLock<hermes_cron::cluster::Host> =
        std::sync::LazyLock::new(hermes_cron::cluster::Host::from_env);
    &HOST
}

/// The claim context of this process at `now`.
pub(super) fn claim_ctx<'a>(
    home: &'a Home,
    config: &'a Config,
    now: Timestamp,
    zones: &'a ZoneTable,
) -> ClaimContext<'a> {
    ClaimContext {
        home,
        config,
        fallback_zone: system_zone(zones),
        zones,
        owner: hermes_cron::process::owner(OwnerRole::Cli),
        host: host(),
        claim_batch: hermes_cron::knobs::Knobs::default().claim_batch,
        now,
    }
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB.
pub(super) fn status_kib(pid: u32, field: &str) -> Option<u64> {
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
pub(super) fn pss_kib(pid: u32) -> Option<u64> {
    smaps_kib(pid, "Pss")
}

/// Pages only `pid` has (`Private_Clean` + `Private_Dirty`), in KiB: what one
/// more such process costs.
pub(super) fn private_kib(pid: u32) -> Option<u64> {
    Some(smaps_kib(pid, "Private_Clean")? + smaps_kib(pid, "Private_Dirty")?)
}

/// The children of `pid` (needs `/proc/<pid>/task/<pid>/children`).
pub(super) fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Poll `f` every 10 ms until it returns `Some`, at most `timeout`.
pub(super) async fn poll<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = hermes_cron::clock::loop_now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if hermes_cron::clock::loop_now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A run launched staged, driven until its worker holds its row and waits
/// at the gate (as the gateway's loop drives it).
pub(super) struct StagedLaunch<'a> {
    gate: hermes_cron::dispatch::Gate,
    launch: std::pin::Pin<Box<dyn std::future::Future<Output = Launched> + 'a>>,
}

/// Launch `run` staged through `launcher`; back once its stage line is written.
pub(super) async fn stage<'a>(
    launcher: &'a hermes_cron::dispatch::Launcher,
    run: &'a ClaimedRun,
) -> Result<StagedLaunch<'a>, String> {
    let (gate, gated) = hermes_cron::dispatch::gate();
    let mut launch = Box::pin(launcher.launch(run, Start::Staged(gated)));
    while gate.pid().is_none() {
        tokio::select! {
            biased;
            launched = &mut launch => return Err(format!("not staged: {launched:?}")),
            _ = tokio::time::sleep(Duration::from_micros(100)) => {}
        }
    }
    Ok(StagedLaunch { gate, launch })
}

impl StagedLaunch<'_> {
    /// The staged worker's pid.
    pub(super) fn pid(&self) -> u32 {
        self.gate.pid().unwrap_or_default()
    }

    /// Open its gate: the release byte; the worker and its scope.
    pub(super) async fn release(self) -> Result<(std::process::Child, Option<String>), String> {
        self.gate.open(Release::default());
        match self.launch.await {
            Launched::Dispatched(Dispatched::Started { child, unit, .. }) => Ok((child, unit)),
            other => Err(format!("not released: {other:?}")),
        }
    }
}
