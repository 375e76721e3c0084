//! Several hosts on one PostgreSQL ledger, as the cluster tests make them:
//! one [`TestHome`] per host (its own home directory, as on its own
//! machine; `HERMES_CRON_HOST` names it), all on one fresh schema of the
//! suite's PostgreSQL server; jobs inserted in bulk through the library
//! (one transaction), and the ledger read directly.

use super::home::TestHome;
use super::ledger::{fresh_schema, pg_server};
use hermes_cron::db::Db;
use hermes_cron::ids::JobId;
use hermes_cron::job::JobInput;
use hermes_cron::params;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A lease short enough for tests: 2 s, renewed every 400 ms.
pub(crate) const LEASE_MS: u64 = 2000;

/// Hosts sharing one ledger.
pub(crate) struct Cluster {
    pub url: String,
    pub hosts: Vec<TestHome>,
    /// Every job appends its execution id here (shared by all hosts).
    pub side_effects: PathBuf,
}

impl Cluster {
    /// `names.len()` hosts on a fresh schema of the suite's server.
    pub(crate) fn new(names: &[&str]) -> Cluster {
        Cluster::on(&fresh_schema(&pg_server()), names)
    }

    /// Hosts on the ledger at `url`.
    pub(crate) fn on(url: &str, names: &[&str]) -> Cluster {
        let hosts: Vec<TestHome> = names
            .iter()
            .map(|n| {
                TestHome::new()
                    .on_database(url)
                    .with_env("HERMES_CRON_HOST", *n)
                    .with_env("HERMES_CRON_LEASE_MS", LEASE_MS.to_string())
                    .with_env("HERMES_CRON_BUSY_TIMEOUT_MS", "2000")
                    // The monitor period, where survivors look at leases.
                    .with_env("HERMES_CRON_HEARTBEAT_PERIOD_MS", "500")
            })
            .collect();
        let side_effects = hosts[0].scratch().join("side-effects.txt");
        Cluster {
            url: url.to_string(),
            hosts,
            side_effects,
        }
    }

    /// The ledger, migrated.
    pub(crate) fn db(&self) -> Db {
        Db::open_postgres(&self.url, true).unwrap_or_else(|e| panic!("{}: {e}", self.url))
    }

    /// A shell command that records its execution id, then sleeps `secs`.
    pub(crate) fn command(&self, secs: f64) -> String {
        format!(
            "echo \"$HERMES_CRON_EXECUTION_ID\" >> {}; sleep {secs}",
            self.side_effects.display()
        )
    }

    /// Insert `n` jobs `<prefix>-<i>` with `schedule` running `command`
    /// (through `sh -c`), all next due at `due_ms`, in one transaction.
    pub(crate) fn add_jobs(
        &self,
        prefix: &str,
        n: usize,
        schedule: &str,
        command: &str,
        due_ms: i64,
    ) {
        self.add_jobs_on(prefix, n, schedule, command, due_ms, None);
    }

    /// [`Cluster::add_jobs`], pinned to a host or label (`--on`).
    pub(crate) fn add_jobs_on(
        &self,
        prefix: &str,
        n: usize,
        schedule: &str,
        command: &str,
        due_ms: i64,
        run_on: Option<&str>,
    ) {
        let input = JobInput {
            run_on: run_on.map(str::to_string),
            ..JobInput::default()
        };
        self.add_jobs_like(input, prefix, n, schedule, command, due_ms);
    }

    /// [`Cluster::add_jobs`], each job made from `input` (its other flags).
    pub(crate) fn add_jobs_like(
        &self,
        input: JobInput,
        prefix: &str,
        n: usize,
        schedule: &str,
        command: &str,
        due_ms: i64,
    ) {
        let mut db = self.db();
        let now = hermes_cron::db::from_ms(due_ms - 60_000);
        let template = JobInput {
            name: Some(prefix.into()),
            schedule: Some(schedule.into()),
            argv: Some(vec![command.to_string()]),
            shell: Some(true),
            ..input
        }
        .build(
            JobId::generate(),
            now,
            hermes_cron::job::FallbackZone::Configured(hermes_cron::schedule::Tz::UTC),
            &hermes_cron::schedule::ZoneTable::compiled_in_only(),
        )
        .expect("a valid job");
        let tx = db.immediate().unwrap();
        for i in 0..n {
            let mut j = template.clone();
            j.id = JobId::generate();
            j.name = format!("{prefix}-{i:04}");
            j.next_run_at = Some(hermes_cron::db::from_ms(due_ms));
            hermes_cron::store::insert_job(&tx, &j).unwrap();
        }
        tx.commit().unwrap();
    }

    /// How many rows are in each state.
    pub(crate) fn states(&self) -> BTreeMap<String, u64> {
        self.db()
            .conn()
            .query_map(
                "SELECT state, COUNT(*) FROM executions GROUP BY state",
                params![],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, u64>(1)?)),
            )
            .unwrap()
            .into_iter()
            .collect()
    }

    /// Rows per host.
    pub(crate) fn by_host(&self) -> BTreeMap<String, u64> {
        self.db()
            .conn()
            .query_map(
                "SELECT COALESCE(host, '-'), COUNT(*) FROM executions GROUP BY 1",
                params![],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, u64>(1)?)),
            )
            .unwrap()
            .into_iter()
            .collect()
    }

    /// Rows still claimed or running.
    pub(crate) fn active(&self) -> u64 {
        self.db()
            .conn()
            .query_row(
                "SELECT COUNT(*) FROM executions WHERE state IN ('claimed', 'staged', 'running')",
                params![],
                |r| r.get(0),
            )
            .unwrap()
    }

    /// The side effects: how many times each execution id ran.
    pub(crate) fn side_effect_counts(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for line in std::fs::read_to_string(&self.side_effects)
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
        {
            *out.entry(line.to_string()).or_default() += 1;
        }
        out
    }

    /// Every row as (id, job_id, state, reason_code, host, late outcome state).
    pub(crate) fn rows(&self) -> Vec<ClusterRow> {
        self.db()
            .conn()
            .query_map(
                "SELECT e.id, e.job_id, e.scheduled_for, e.state, e.reason_code, e.host, l.state
                 FROM executions e LEFT JOIN late_outcomes l ON l.execution_id = e.id ORDER BY e.id",
                params![],
                |r| {
                    Ok(ClusterRow {
                        id: r.get(0)?,
                        job_id: r.get(1)?,
                        scheduled_for: r.get(2)?,
                        state: r.get(3)?,
                        reason_code: r.get(4)?,
                        host: r.get(5)?,
                        late: r.get(6)?,
                    })
                },
            )
            .unwrap()
    }

    /// The lease state of each host (`live`, `lost`, `stopped`).
    pub(crate) fn lease_states(&self) -> BTreeMap<String, String> {
        self.db()
            .conn()
            .query_map("SELECT host, state FROM hosts", params![], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .unwrap()
            .into_iter()
            .collect()
    }
}

/// One ledger row, as the cluster checks read it.
#[derive(Clone, Debug)]
pub(crate) struct ClusterRow {
    pub id: String,
    pub job_id: Option<String>,
    pub scheduled_for: Option<i64>,
    pub state: String,
    pub reason_code: Option<String>,
    pub host: Option<String>,
    pub late: Option<String>,
}

/// The wall clock in milliseconds.
pub(crate) fn wall_ms() -> i64 {
    super::waiting::wall_clock().timestamp_millis()
}

/// The next whole second at least `lead` from now, in milliseconds.
pub(crate) fn whole_second_after(lead: Duration) -> i64 {
    (wall_ms() + lead.as_millis() as i64 + 999) / 1000 * 1000
}

/// The invariants every cluster test ends with, on rows that are all
/// terminal: one row per (job, slot, attempt); no side effect twice, and
/// none for a row that never ran; every succeeded row's side effect exactly
/// once; a `host_lost` row's side effect at most once, and exactly once when
/// its late outcome says it succeeded. Panics listing every violation.
pub(crate) fn check_exactly_once(c: &Cluster) -> Vec<ClusterRow> {
    let rows = c.rows();
    let ran = c.side_effect_counts();
    let mut problems = Vec::new();
    let mut slots: BTreeMap<(Option<String>, Option<i64>), usize> = BTreeMap::new();
    for r in &rows {
        if r.scheduled_for.is_some() {
            *slots
                .entry((r.job_id.clone(), r.scheduled_for))
                .or_default() += 1;
        }
        let n = ran.get(&r.id).copied().unwrap_or(0);
        match r.state.as_str() {
            "claimed" | "running" => problems.push(format!("row left active: {r:?}")),
            "succeeded" if n != 1 => problems.push(format!("succeeded row ran {n} times: {r:?}")),
            "missed" | "skipped" | "refused" if n != 0 => {
                problems.push(format!("row that never ran has {n} side effects: {r:?}"))
            }
            "unknown" if r.late.as_deref() == Some("succeeded") && n != 1 => problems.push(
                format!("host_lost row whose late outcome succeeded ran {n} times: {r:?}"),
            ),
            _ if n > 1 => problems.push(format!("row ran {n} times: {r:?}")),
            _ => {}
        }
    }
    for ((job, slot), n) in slots {
        if n > 1 {
            problems.push(format!("job {job:?} slot {slot:?} has {n} attempt-1 rows"));
        }
    }
    for (id, n) in &ran {
        if !rows.iter().any(|r| &r.id == id) {
            problems.push(format!("side effect of {id} ({n}x), which has no row"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} violation(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    rows
}
