//! Row 6: memory.
//!
//! 6a: the real gateway (scoped), idle with 10,000 jobs defined, each a cron
//! expression (`0 8 * * *`, the daily briefing; none due in the next hour): `VmRSS` and `VmHWM` from `/proc/<pid>/status` 3 s after it
//! said ready, over several boots; both ways: the HTTP endpoint off (the
//! default) and on (`gateway.http_listen: 127.0.0.1:0`), and with it on once
//! more 3 s after one GET each of `/`, `/metrics` and `/healthz`. Peer, read at the same moments: the
//! systemd user manager the timers would live in (its `VmRSS`, with whatever
//! units it holds now).
//!
//! 6b: what the worker costs next to the job it runs: a scoped dispatch of a
//! `sleep` job; once the job is running, the worker's `VmRSS`/`VmHWM` (the
//! job is a separate process, so all of it is overhead), and its `Pss` with
//! several workers running side by side (shared pages split between them:
//! the marginal cost of one more worker). Peer: the smallest
//! supervising wrapper, `sh -c 'sleep ...; echo $? >/dev/null'` (a resident
//! shell waiting for the job and recording its status).

use super::common::{
    children_of, claim_now, fresh_home, insert_jobs, job, open_db, poll, wall_ms, wall_now,
};
use super::gateway::Gateway;
use crate::setup::Setup;
use crate::stats::{Samples, mib, ratio};
use crate::table::{Met, Row};
use hermes_cron::dispatch::{Attach, Dispatched, Requirement};
use hermes_cron::store;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::common::{pss_kib, status_kib};

const JOBS: usize = 10_000;

/// KiB samples.
pub(super) struct Memory {
    pub gw_rss: Samples,
    pub gw_hwm: Samples,
    /// The same gateway with its HTTP endpoint on, idle.
    pub http_rss: Samples,
    pub http_hwm: Samples,
    /// ... and after one GET of each resource.
    pub scraped_rss: Samples,
    pub scraped_hwm: Samples,
    pub gw_empty_rss: Samples,
    pub manager_rss: Samples,
    /// The private manager with as many timers as the gateway has jobs.
    pub timers: Result<(u64, u64), String>,
    pub worker_rss: Samples,
    pub worker_hwm: Samples,
    pub worker_pss: Samples,
    pub job_rss: Samples,
    pub wrapper_rss: Samples,
    pub wrapper_pss: Samples,
}

/// Where the gateway's endpoint listens, from its log.
fn http_addr(log: &std::path::Path) -> Option<std::net::SocketAddr> {
    const SAYS: &str = "http endpoint listening on http://";
    let text = std::fs::read_to_string(log).ok()?;
    let at = text.find(SAYS)? + SAYS.len();
    text[at..at + text[at..].find('/')?].parse().ok()
}

/// One GET; the status code.
fn http_get(addr: std::net::SocketAddr, path: &str) -> Result<u16, String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&reply);
    text.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("{path}: no status in {:?}", text.lines().next()))
}

async fn gateway_idle(
    setup: &Setup,
    jobs: usize,
    boots: usize,
    http: bool,
    m: &mut Memory,
) -> Result<(), String> {
    let dir = setup.fresh_dir(&format!("memory-{jobs}{}", if http { "-http" } else { "" }))?;
    let (home, mut db) = fresh_home(&dir)?;
    if http {
        std::fs::write(
            dir.join("config.yaml"),
            "gateway:\n  http_listen: 127.0.0.1:0\n",
        )
        .map_err(|e| e.to_string())?;
    }
    if jobs > 0 {
        let template = job(
            "idle",
            "0 8 * * *",
            &["/usr/local/bin/job", "--nightly"],
            &setup.zones,
        )?;
        let later = wall_ms() + 3_600_000;
        insert_jobs(&mut db, &template, jobs, |i, j| {
            j.next_run_at = Some(hermes_cron::db::from_ms(later + i as i64 * 1000));
        })?;
    }
    drop(db);
    for _ in 0..boots {
        let mut gw = Gateway::start(setup, &home, true)?;
        gw.ready(true).await?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let pid = gw.pid();
        let rss = status_kib(pid, "VmRSS").ok_or("no VmRSS for the gateway")?;
        let hwm = status_kib(pid, "VmHWM").ok_or("no VmHWM for the gateway")?;
        if http {
            m.http_rss.push(rss as f64);
            m.http_hwm.push(hwm as f64);
            let addr = http_addr(&gw.log).ok_or("the gateway did not say where it listens")?;
            for path in ["/", "/metrics", "/healthz"] {
                let code = http_get(addr, path)?;
                if code != 200 {
                    return Err(format!("GET {path}: {code}"));
                }
            }
            tokio::time::sleep(Duration::from_secs(3)).await;
            m.scraped_rss
                .push(status_kib(pid, "VmRSS").ok_or("no VmRSS for the gateway")? as f64);
            m.scraped_hwm
                .push(status_kib(pid, "VmHWM").ok_or("no VmHWM for the gateway")? as f64);
        } else if jobs > 0 {
            m.gw_rss.push(rss as f64);
            m.gw_hwm.push(hwm as f64);
            if let Some(kib) = setup.manager.pid().and_then(|p| status_kib(p, "VmRSS")) {
                m.manager_rss.push(kib as f64);
            }
        } else {
            m.gw_empty_rss.push(rss as f64);
        }
        gw.stop().await?;
    }
    Ok(())
}

/// Workers running side by side in one reading: their shared pages (the
/// binary's text, libc) split between them in `Pss`.
const SIDE_BY_SIDE: usize = 8;

async fn worker_overhead(setup: &Setup, reps: usize, m: &mut Memory) -> Result<(), String> {
    let mut db = open_db(&setup.dispatch_home)?;
    let mut jobs = Vec::new();
    for i in 0..SIDE_BY_SIDE {
        let j = job(
            &format!("mem-{i}"),
            "every 1d",
            &["/bin/sleep", "30"],
            &setup.zones,
        )?;
        store::insert_job(db.conn(), &j).map_err(|e| e.to_string())?;
        jobs.push(j);
    }
    let launcher = &setup.launchers.worker_scoped;
    for _ in 0..reps {
        let mut started = Vec::new();
        for j in &jobs {
            let run = claim_now(&setup.dispatch_home, &mut db, j, &setup.zones)?;
            let d = launcher
                .dispatch(&db, &run, Requirement::None, Attach::Detached, wall_now())
                .await
                .map_err(|e| e.to_string())?;
            let Dispatched::Started { unit, child, .. } = d else {
                return Err(format!("not started: {d:?}"));
            };
            started.push((unit, child));
        }
        let mut job_pids = Vec::new();
        for (_, child) in &started {
            let worker = child.id();
            let pid = poll(Duration::from_secs(10), || {
                children_of(worker).first().copied()
            })
            .await
            .ok_or("the worker's job did not start")?;
            job_pids.push(pid);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut readings = Vec::new();
        for ((_, child), job_pid) in started.iter().zip(&job_pids) {
            let w = child.id();
            readings.push((
                status_kib(w, "VmRSS"),
                status_kib(w, "VmHWM"),
                pss_kib(w),
                status_kib(*job_pid, "VmRSS"),
            ));
        }
        for p in &job_pids {
            // SAFETY: kill(2) on a job we started; its worker records it.
            unsafe { libc::kill(*p as i32, libc::SIGKILL) };
        }
        for (unit, mut child) in started {
            let _ = child.wait();
            if let (Some(unit), Some(mgr)) = (&unit, launcher.manager()) {
                let _ = mgr.release_unit(unit).await;
            }
        }
        for r in readings {
            let (Some(rss), Some(hwm), Some(pss), Some(job_rss)) = r else {
                return Err("could not read a worker's or a job's memory".into());
            };
            m.worker_rss.push(rss as f64);
            m.worker_hwm.push(hwm as f64);
            m.worker_pss.push(pss as f64);
            m.job_rss.push(job_rss as f64);
        }

        let mut shells = Vec::new();
        for _ in 0..SIDE_BY_SIDE {
            let sh = Command::new("/bin/sh")
                .args(["-c", "/bin/sleep 30; echo $? >/dev/null"])
                .stdin(Stdio::null())
                .spawn()
                .map_err(|e| e.to_string())?;
            shells.push(sh);
        }
        let mut inner = Vec::new();
        for sh in &shells {
            let id = sh.id();
            if let Some(p) =
                poll(Duration::from_secs(10), || children_of(id).first().copied()).await
            {
                inner.push(p);
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let readings: Vec<_> = shells
            .iter()
            .map(|sh| (status_kib(sh.id(), "VmRSS"), pss_kib(sh.id())))
            .collect();
        for p in inner {
            // SAFETY: kill(2) on a sleep we started.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
        for mut sh in shells {
            let _ = sh.wait();
        }
        for r in readings {
            let (Some(rss), Some(pss)) = r else {
                return Err("could not read a wrapper's memory".into());
            };
            m.wrapper_rss.push(rss as f64);
            m.wrapper_pss.push(pss as f64);
        }
    }
    Ok(())
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            gw_rss: Samples::new(),
            gw_hwm: Samples::new(),
            http_rss: Samples::new(),
            http_hwm: Samples::new(),
            scraped_rss: Samples::new(),
            scraped_hwm: Samples::new(),
            gw_empty_rss: Samples::new(),
            manager_rss: Samples::new(),
            timers: Err("not measured".into()),
            worker_rss: Samples::new(),
            worker_hwm: Samples::new(),
            worker_pss: Samples::new(),
            job_rss: Samples::new(),
            wrapper_rss: Samples::new(),
            wrapper_pss: Samples::new(),
        }
    }
}

pub(super) async fn measure(setup: &Setup) -> Result<Memory, String> {
    let mut m = Memory::default();
    let boots = setup.reps(5, 2);
    eprintln!("bench: memory, idle gateway with {JOBS} jobs ({boots} boots)");
    gateway_idle(setup, JOBS, boots, false, &mut m).await?;
    eprintln!("bench: memory, the same with the HTTP endpoint on ({boots} boots)");
    gateway_idle(setup, JOBS, boots, true, &mut m).await?;
    gateway_idle(setup, 0, 1, false, &mut m).await?;
    eprintln!("bench: memory, a private systemd --user with {JOBS} timers");
    m.timers = super::timer_manager::measure(setup, JOBS)
        .await
        .map(|r| (r.rss_kib, r.hwm_kib));
    if let Err(e) = &m.timers {
        eprintln!("bench: the private manager with {JOBS} timers failed: {e}");
    }
    eprintln!("bench: memory, worker overhead");
    worker_overhead(setup, setup.reps(5, 2), &mut m).await?;
    Ok(m)
}

fn kib(v: f64) -> String {
    mib(v * 1024.0)
}

pub(super) fn rows(m: &Memory) -> Vec<Row> {
    let gw = m.gw_rss.median();
    let worker = m.worker_rss.median();
    vec![
        Row {
            id: "6a",
            measure: format!(
                "gateway memory, idle with {JOBS} jobs (scoped; boots={}), HTTP endpoint off and on",
                m.gw_rss.len()
            ),
            ours: format!(
                "off: VmRSS {} (VmHWM {}); on: VmRSS {} (VmHWM {}), {} (VmHWM {}) after one GET of /, /metrics, /healthz; with 0 jobs, off: VmRSS {}",
                kib(gw),
                kib(m.gw_hwm.median()),
                kib(m.http_rss.median()),
                kib(m.http_hwm.median()),
                kib(m.scraped_rss.median()),
                kib(m.scraped_hwm.median()),
                kib(m.gw_empty_rss.median())
            ),
            peer: match &m.timers {
                Ok((rss, hwm)) => format!(
                    "`systemd --user` with {JOBS} timers (private manager booted for this row): VmRSS {} (VmHWM {})",
                    kib(*rss as f64),
                    kib(*hwm as f64)
                ),
                Err(e) => format!(
                    "private manager with {JOBS} timers failed ({e}); the shared `systemd --user`: VmRSS {}",
                    kib(m.manager_rss.median())
                ),
            },
            ratio: match &m.timers {
                Ok((rss, _)) => ratio(gw, *rss as f64),
                Err(_) => ratio(gw, m.manager_rss.median()),
            },
            target: "RSS off < 15 MiB, on < 20 MiB".into(),
            met: Met::of(
                gw < 15.0 * 1024.0
                    && m.gw_hwm.median() < 15.0 * 1024.0
                    && m.scraped_rss.median().max(m.http_rss.median()) < 20.0 * 1024.0
                    && m.scraped_hwm.median() < 20.0 * 1024.0,
            ),
        },
        Row {
            id: "6b",
            measure: format!(
                "worker overhead: the worker's own memory while its job (`sleep`, VmRSS {}) runs (n={})",
                kib(m.job_rss.median()),
                m.worker_rss.len()
            ),
            ours: format!(
                "VmRSS {} (VmHWM {}); Pss {} with {SIDE_BY_SIDE} side by side",
                kib(worker),
                kib(m.worker_hwm.median()),
                kib(m.worker_pss.median())
            ),
            peer: format!(
                "resident wrapper `sh -c 'JOB; echo $?'`: VmRSS {}; Pss {}",
                kib(m.wrapper_rss.median()),
                kib(m.wrapper_pss.median())
            ),
            ratio: ratio(worker, m.wrapper_rss.median()),
            target: "< 5 MiB".into(),
            met: Met::of(worker < 5.0 * 1024.0 && m.worker_hwm.median() < 5.0 * 1024.0),
        },
    ]
}
