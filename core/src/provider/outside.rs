//! Runs Hermes made by itself, outside hermes-cron: which rows of Hermes's
//! `cron/executions.db` become rows of hermes-cron's ledger, and what those
//! rows say ([`outside_runs`]).
//!
//! Hermes records every fire in its own ledger with a `source`: `hermes-cron`
//! for the fires hermes-cron made (through `fire.py`), `direct` for `hermes
//! cron run` (Hermes runs it in the CLI's own process), `builtin` for its own
//! ticker, a provider's name for another provider's. A managed job's run
//! from any source but ours is recorded once it has ended, so `runs`,
//! alerts and the metrics see every way a Hermes user fires a job. Only runs
//! claimed since the managed job exists are taken: installing hermes-cron does
//! not import (and alert on) a job's old history.
//!
//! Each recorded row's id is made from Hermes's execution id, so recording the
//! same run again (the next sync, another gateway) is a no-op: a UUIDv7
//! whose time is Hermes's claim and whose other bits are a hash of its id.

use super::jobs_file::instant;
use crate::ids::{ExecutionId, JobId};
use crate::job::Job;
use crate::run::ExecState;
use crate::schedule::Timestamp;

/// The `source` of the executions `fire.py` makes: hermes-cron's own fires.
pub const FIRE_SOURCE: &str = "hermes-cron";

/// One row of Hermes's `cron/executions.db`, as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HermesExecution {
    /// Hermes's execution id (32 hex digits).
    pub id: String,
    /// The Hermes job it ran.
    pub job_id: String,
    /// Who fired it: `hermes-cron`, `direct`, `builtin`, a provider's name.
    pub source: String,
    /// `claimed`, `running`, `completed`, `failed` or `unknown`.
    pub status: String,
    /// When Hermes claimed it: an ISO 8601 instant with an offset, as
    /// Hermes writes its times.
    pub claimed_at: String,
    /// When it started running (None: it never did).
    pub started_at: Option<String>,
    /// When it ended (None: not yet).
    pub finished_at: Option<String>,
    /// Hermes's error, for a failed run.
    pub error: Option<String>,
}

/// A run Hermes made by itself, as hermes-cron records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutsideRun {
    /// Made from Hermes's execution id: the same run always has the same row.
    pub id: ExecutionId,
    /// The managed job.
    pub job_id: JobId,
    /// The managed job's name.
    pub job_name: String,
    /// `succeeded`, `failed` or `unknown`, as Hermes recorded it.
    pub state: ExecState,
    /// Who ran it, Hermes's execution id and its error.
    pub reason: String,
    /// When Hermes claimed it.
    pub claimed_at: Timestamp,
    /// When it started (None: it never did).
    pub started_at: Option<Timestamp>,
    /// When it ended.
    pub finished_at: Timestamp,
}

/// The rows to record for `rows` (Hermes's executions) of the `managed`
/// jobs: every ended run of a managed job that hermes-cron did not fire,
/// claimed since the managed job was made. Runs still going are left for a
/// later sync; rows it cannot read (a time that does not parse) are left out.
pub fn outside_runs(rows: &[HermesExecution], managed: &[Job]) -> Vec<OutsideRun> {
    rows.iter()
        .filter(|r| r.source != FIRE_SOURCE)
        .filter_map(|r| {
            let job = managed
                .iter()
                .find(|j| j.hermes_id.as_deref() == Some(r.job_id.as_str()))?;
            let state = match r.status.as_str() {
                "completed" => ExecState::Succeeded,
                "failed" => ExecState::Failed,
                "unknown" => ExecState::Unknown,
                _ => return None,
            };
            let claimed_at = instant(&r.claimed_at)?;
            if claimed_at < job.created_at {
                return None;
            }
            let started_at = r.started_at.as_deref().and_then(instant);
            let finished_at = r
                .finished_at
                .as_deref()
                .and_then(instant)
                .unwrap_or(claimed_at)
                .max(claimed_at);
            Some(OutsideRun {
                id: id_for(&r.id, claimed_at),
                job_id: job.id.clone(),
                job_name: job.name.clone(),
                state,
                reason: reason(r),
                claimed_at,
                started_at,
                finished_at,
            })
        })
        .collect()
}

/// Who made the run, in words.
fn made_by(source: &str) -> String {
    match source {
        "direct" => "`hermes cron run` (in the Hermes CLI's own process)".to_string(),
        "builtin" => "Hermes's built-in ticker".to_string(),
        other => format!("Hermes's cron provider {other:?}"),
    }
}

fn reason(r: &HermesExecution) -> String {
    let mut text = format!(
        "run by Hermes itself, outside hermes-cron: by {} (no scope, no output captured; \
         Hermes execution {})",
        made_by(&r.source),
        r.id
    );
    if let Some(error) = r.error.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
        text.push_str(": ");
        text.push_str(error);
    }
    text
}

/// The id of the row of Hermes's execution `hermes_id`: a UUIDv7 at
/// `claimed_at` whose other bits are two FNV-1a hashes of the id (stable
/// across builds, unlike std's hasher).
pub fn id_for(hermes_id: &str, claimed_at: Timestamp) -> ExecutionId {
    fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
        bytes.iter().fold(seed, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }
    let a = fnv1a(0xcbf2_9ce4_8422_2325, hermes_id.as_bytes());
    let b = fnv1a(a ^ 0x9e37_79b9_7f4a_7c15, hermes_id.as_bytes());
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&a.to_be_bytes());
    random[8..].copy_from_slice(&b.to_be_bytes()[..2]);
    let millis = u64::try_from(claimed_at.timestamp_millis()).unwrap_or(0);
    let id = uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid();
    ExecutionId::from_string(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{
        FireCommand, Fired, HermesLimits, SyncAt, SyncChange, plan_sync, read_jobs_file,
    };

    fn at(text: &str) -> Timestamp {
        instant(text).unwrap()
    }

    /// The managed job the sync makes of Hermes's job `hermes_id`, made at `created`.
    fn managed(hermes_id: &str, created: &str) -> Job {
        let record = format!(
            r#"{{"jobs": [{{"id": "{hermes_id}", "name": "brief",
                "next_run_at": "2026-12-08T08:00:00+00:00", "schedule": {{"display": "0 8 * * *"}}}}]}}"#
        );
        let file = read_jobs_file("jobs.json", &record).unwrap();
        let fire = FireCommand {
            python: "/venv/bin/python".into(),
            fire_script: "/h/plugins/hermes-cron/fire.py".into(),
        };
        let when = SyncAt {
            now: at(created),
            zone: crate::schedule::Tz::UTC,
        };
        let changes = plan_sync(
            &file,
            &[],
            &fire,
            HermesLimits::default(),
            &|_, _| Fired::No,
            when,
        );
        let [SyncChange::Add(want)] = changes.as_slice() else {
            panic!("{changes:?}")
        };
        want.new_job(JobId::generate(), at(created))
    }

    fn row(id: &str, source: &str, status: &str, claimed: &str) -> HermesExecution {
        HermesExecution {
            id: id.into(),
            job_id: "abc123".into(),
            source: source.into(),
            status: status.into(),
            claimed_at: claimed.into(),
            started_at: Some(claimed.into()),
            finished_at: Some("2026-12-07T09:00:05.250000+01:00".into()),
            error: None,
        }
    }

    #[test]
    fn ended_runs_hermes_made_itself_since_the_job_was_managed_are_recorded() {
        let job = managed("abc123", "2026-12-07T07:00:00Z");
        let claimed = "2026-12-07T09:00:00.125000+01:00";
        let mut failed = row("f1", "builtin", "failed", claimed);
        failed.error = Some("  RuntimeError: boom ".into());
        let rows = [
            row("d1", "direct", "completed", claimed),
            failed,
            row("u1", "chronos", "unknown", claimed),
            // Ours, still going, from before the job was managed, another job.
            row("h1", FIRE_SOURCE, "completed", claimed),
            row("r1", "direct", "running", claimed),
            row("o1", "direct", "completed", "2026-12-07T06:59:59+00:00"),
            HermesExecution {
                job_id: "other".into(),
                ..row("x1", "direct", "completed", claimed)
            },
        ];
        let runs = outside_runs(&rows, std::slice::from_ref(&job));
        let states: Vec<_> = runs.iter().map(|r| r.state).collect();
        assert_eq!(
            states,
            [ExecState::Succeeded, ExecState::Failed, ExecState::Unknown]
        );
        let direct = &runs[0];
        assert_eq!(direct.job_id, job.id);
        assert_eq!(direct.job_name, "brief");
        assert_eq!(direct.claimed_at, at("2026-12-07T08:00:00.125Z"));
        assert_eq!(direct.started_at, Some(direct.claimed_at));
        assert_eq!(direct.finished_at, at("2026-12-07T08:00:05.250Z"));
        assert!(
            direct.reason.contains("`hermes cron run`"),
            "{}",
            direct.reason
        );
        assert!(
            direct.reason.contains("Hermes execution d1"),
            "{}",
            direct.reason
        );
        assert!(
            runs[1]
                .reason
                .ends_with("Hermes execution f1): RuntimeError: boom"),
            "{}",
            runs[1].reason
        );
        assert!(runs[1].reason.contains("built-in ticker"));
        assert!(runs[2].reason.contains("\"chronos\""));
    }

    #[test]
    fn the_same_hermes_execution_always_gets_the_same_time_ordered_id() {
        let t = at("2026-12-07T08:00:00.125Z");
        let a = id_for("9f86d081884c7d659a2feaa0c55ad015", t);
        assert_eq!(a, id_for("9f86d081884c7d659a2feaa0c55ad015", t));
        assert_ne!(a, id_for("9f86d081884c7d659a2feaa0c55ad016", t));
        let uuid = uuid::Uuid::parse_str(a.as_str()).unwrap();
        assert_eq!(uuid.get_version_num(), 7);
        let (secs, nanos) = uuid.get_timestamp().unwrap().to_unix();
        assert_eq!((secs, nanos / 1_000_000), (t.timestamp() as u64, 125));
        assert!(a < id_for("0", at("2026-12-07T08:00:00.126Z")));
    }

    #[test]
    fn a_run_without_a_readable_end_ends_when_it_was_claimed() {
        let job = managed("abc123", "2026-12-07T07:00:00Z");
        let mut r = row("u2", "direct", "unknown", "2026-12-07T08:00:00Z");
        r.finished_at = Some("not a time".into());
        r.started_at = None;
        let runs = outside_runs(&[r], &[job]);
        assert_eq!(runs[0].finished_at, runs[0].claimed_at);
        assert_eq!(runs[0].started_at, None);
        let mut bad = row("b1", "direct", "completed", "yesterday");
        bad.job_id = "abc123".into();
        assert!(outside_runs(&[bad], &[managed("abc123", "2026-12-07T07:00:00Z")]).is_empty());
    }
}
