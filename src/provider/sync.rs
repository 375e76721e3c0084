//! Keeping the managed jobs in step with Hermes's `cron/jobs.json` (the
//! rules are the core's `provider::plan_sync`): read the file, plan, and
//! apply the plan in one transaction. The gateway calls [`sync`] when it
//! starts, when `cron/` says `jobs.json` or the plugin's poke file changed,
//! and when Hermes's files changed (see the daemon's `provider_sync.rs`).
//! Hermes's limits on a fire are read afresh at each sync ([`super::limits`]),
//! and the runs Hermes made by itself are recorded ([`super::outside`]).

use super::activation::{Activation, activation};
use super::limits::hermes_limits;

use crate::db::Db;
use crate::home::Home;
use crate::ids::JobId;
use crate::ledger;
use crate::schedule::Timestamp;
use crate::store::{self, StoreError};
use hermes_cron_core::job::Env;
use hermes_cron_core::provider::{Fired, JobsFile, SyncAt, SyncChange, plan_sync, read_jobs_file};
use std::time::SystemTime;

/// What one sync did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Why Hermes's jobs are not hermes-cron's (None: they are).
    pub inactive: Option<String>,
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub removed: Vec<String>,
    /// Records of `jobs.json` left out, each named.
    pub notes: Vec<String>,
    /// The jobs of the runs Hermes made by itself that this sync recorded.
    pub ran_outside: Vec<String>,
    /// Why those runs could not be read or recorded this time.
    pub outside_error: Option<String>,
}

impl SyncReport {
    pub fn changed(&self) -> bool {
        !(self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty())
    }
}

/// A sync that could not be done; the managed jobs stay as they were.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    File(#[from] hermes_cron_core::provider::JobsFileError),
    #[error("cannot update the managed jobs")]
    Sql(#[from] crate::db::SqlError),
    #[error("cannot update the managed jobs")]
    Store(#[from] StoreError),
}

impl SyncError {
    /// Whether Hermes's `jobs.json` is what could not be read (not the ledger).
    pub fn is_hermes_file(&self) -> bool {
        matches!(self, SyncError::Read { .. } | SyncError::File(_))
    }
}

/// `jobs.json`'s modification time, to notice a change without reading it.
pub fn jobs_file_stamp(home: &Home) -> Option<SystemTime> {
    std::fs::metadata(home.hermes_jobs_file())
        .and_then(|m| m.modified())
        .ok()
}

/// Hermes's `cron/jobs.json` as the sync reads it (none yet: no jobs).
pub fn read_jobs(home: &Home) -> Result<JobsFile, SyncError> {
    let path = home.hermes_jobs_file();
    match crate::small_file::read_text(&path, crate::small_file::JOBS_MAX) {
        Ok(text) => Ok(read_jobs_file(&path.display().to_string(), &text)?),
        // No jobs.json: Hermes has no jobs (yet).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(JobsFile::default()),
        Err(source) => Err(SyncError::Read {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Make the managed jobs follow Hermes's jobs (or remove them all when
/// Hermes fires its own). `config_env` is hermes-cron's `cron.env` (a layer
/// of `fire.py`'s environment); `when` the sync's instant and Hermes's zone.
pub fn sync(
    db: &mut Db,
    home: &Home,
    host: &str,
    config_env: &Env,
    when: SyncAt,
) -> Result<SyncReport, SyncError> {
    let now = when.now;
    let mut report = SyncReport::default();
    let (file, fire) = match activation(home, now) {
        Activation::Active(fire) => (read_jobs(home)?, Some(fire)),
        Activation::Inactive(why) => {
            report.inactive = Some(why);
            (JobsFile::default(), None)
        }
    };
    report.notes = file.notes.clone();
    // On a shared ledger each host mirrors its own Hermes home: its managed
    // jobs are pinned to it, and it never touches another host's.
    let pin = db.caps().shared.then(|| host.to_string());
    // Hermes's own runs are read before the write lock is taken: another
    // program's file is never read while holding it.
    let hermes_runs = match (&fire, store::managed_jobs(db.conn())) {
        (Some(_), Ok(jobs)) => match jobs.iter().map(|j| j.created_at).min() {
            Some(oldest) => super::outside::read_hermes_runs(home, oldest)
                .map_err(|e| crate::text::Chain(&e).to_string()),
            None => Ok(Vec::new()),
        },
        _ => Ok(Vec::new()),
    };
    let tx = db.immediate()?;
    let managed: Vec<_> = store::managed_jobs(&tx)?
        .into_iter()
        .filter(|j| pin.is_none() || j.run_on == pin)
        .collect();
    if managed.is_empty() && file.jobs.is_empty() {
        return Ok(report);
    }
    let changes = match &fire {
        Some(fire) => {
            let fired = |id: &JobId, at: Timestamp| match ledger::latest_slot_from(&tx, id, at) {
                Ok(None) => Fired::No,
                Ok(Some(latest)) => Fired::Through(latest),
                Err(_) => Fired::Unknown,
            };
            plan_sync(
                &file,
                &managed,
                fire,
                hermes_limits(home, config_env),
                &fired,
                when,
            )
        }
        None => managed
            .iter()
            .map(|j| SyncChange::Remove {
                id: j.id.clone(),
                name: j.name.clone(),
            })
            .collect(),
    };
    match hermes_runs {
        Ok(rows) if fire.is_some() => {
            match super::outside::record_outside_runs(&tx, &rows, host, &managed) {
                Ok(names) => report.ran_outside = names,
                Err(e) => report.outside_error = Some(crate::text::Chain(&e).to_string()),
            }
        }
        Ok(_) => {}
        Err(e) => report.outside_error = Some(e),
    }
    for change in changes {
        match change {
            SyncChange::Add(want) => {
                let mut job = want.new_job(JobId::generate(), now);
                job.run_on = pin.clone();
                store::insert_job(&tx, &job)?;
                report.added.push(job.name);
            }
            SyncChange::Update { id, to } => {
                if let Some(mut job) = managed.iter().find(|j| j.id == id).cloned() {
                    to.apply_to(&mut job);
                    job.updated_at = now;
                    store::update_job(&tx, &job)?;
                    report.updated.push(job.name);
                }
            }
            SyncChange::Remove { id, name } => {
                store::delete_job(&tx, &id)?;
                report.removed.push(name);
            }
        }
    }
    tx.commit()?;
    Ok(report)
}
