//! Row 6c: what a staged worker costs while it waits for its instant. Eight
//! runs are staged side by side through `Launcher::stage` (scoped, the real
//! worker: spawned, in its scope, the ledger open, its row held `staged`,
//! its command prepared); once every row is `staged`, each worker's `VmRSS`,
//! `Pss` (shared pages split between the eight) and private pages are read.
//! They are then released and run their job (`/bin/true`).
//!
//! Compared with the same worker while its job runs (row 6b): a staged
//! worker has done everything but fork its command. `cron.staging_max_workers`
//! (1000 by default) staged workers cost that many times the private figure.

use super::common::{claim_now, job, open_db, private_kib, pss_kib, status_kib};
use crate::setup::Setup;
use crate::stats::{Samples, mib, ratio};
use crate::table::{Met, Row};
use hermes_cron::ledger::{self, ExecState};
use hermes_cron::store;
use std::time::Duration;

const SIDE_BY_SIDE: usize = 8;

/// KiB samples.
#[derive(Default)]
pub(super) struct StagedMemory {
    pub rss: Samples,
    pub pss: Samples,
    pub private: Samples,
}

pub(super) async fn measure(setup: &Setup) -> Result<StagedMemory, String> {
    let mut db = open_db(&setup.dispatch_home)?;
    let mut jobs = Vec::new();
    for i in 0..SIDE_BY_SIDE {
        let j = job(
            &format!("staged-mem-{i}"),
            "every 1d",
            &["/bin/true"],
            &setup.zones,
        )?;
        store::insert_job(db.conn(), &j).map_err(|e| e.to_string())?;
        jobs.push(j);
    }
    let launcher = &setup.launchers.worker_scoped;
    let mut m = StagedMemory::default();
    eprintln!("bench: memory, staged workers");
    for _ in 0..setup.reps(5, 2) {
        let mut runs = Vec::new();
        for j in &jobs {
            runs.push(claim_now(&setup.dispatch_home, &mut db, j, &setup.zones)?);
        }
        let mut held = Vec::new();
        for run in &runs {
            held.push((run, super::common::stage(launcher, run).await?));
        }
        let all_staged = super::common::poll(Duration::from_secs(20), || {
            held.iter()
                .all(|(run, _)| {
                    ledger::get_execution(db.conn(), &run.id)
                        .ok()
                        .flatten()
                        .is_some_and(|(r, _)| r.state == ExecState::Staged)
                })
                .then_some(())
        })
        .await;
        all_staged.ok_or("the workers did not stage within 20 s")?;
        for (_, w) in &held {
            let pid = w.pid();
            let (Some(rss), Some(pss), Some(private)) =
                (status_kib(pid, "VmRSS"), pss_kib(pid), private_kib(pid))
            else {
                return Err("could not read a staged worker's memory".into());
            };
            m.rss.push(rss as f64);
            m.pss.push(pss as f64);
            m.private.push(private as f64);
        }
        for (_, w) in held {
            let (mut child, unit) = w.release().await?;
            let _ = child.wait();
            if let (Some(unit), Some(mgr)) = (&unit, launcher.manager()) {
                let _ = mgr.release_unit(unit).await;
            }
        }
    }
    Ok(m)
}

/// Row 6c, next to the running worker of row 6b (`running_rss`, KiB).
pub(super) fn row(m: &StagedMemory, running_rss: f64) -> Row {
    let kib = |v: f64| mib(v * 1024.0);
    Row {
        id: "6c",
        measure: format!(
            "staged worker: its memory while it holds its row ahead of the instant (n={})",
            m.rss.len()
        ),
        ours: format!(
            "VmRSS {}; Pss {} with {SIDE_BY_SIDE} side by side; private {}",
            kib(m.rss.median()),
            kib(m.pss.median()),
            kib(m.private.median())
        ),
        peer: format!(
            "the same worker while its job runs (6b): VmRSS {}",
            kib(running_rss)
        ),
        ratio: ratio(m.rss.median(), running_rss),
        target: "- (documented: 1000 staged cost 1000 × private)".into(),
        met: Met::Info,
    }
}
