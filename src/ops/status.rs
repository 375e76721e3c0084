//! `status`: is a gateway alive, is its loop moving, what did it last do,
//! can scopes be made, and what is scheduled. Built from the heartbeat file
//! and the database; judged purely from those and `now`.

use crate::db::from_ms;
use crate::db::{Conn, SqlResult};
use crate::params;
use crate::process::ProcessIdentity;
use crate::schedule::{Timestamp, Tz, ZoneTable};
use crate::text::local_time;
use hermes_cron_core::health::{
    Capability, CapabilityMode, Heartbeat, HermesSide, STALL_PERIODS, TickSummary,
};

/// The gateway's health as `status` sees it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GatewayHealth {
    /// Alive and its loop counter moves.
    Running,
    /// Alive, but its loop counter has not moved for 3 heartbeat periods
    /// (or its heartbeat file stopped being rewritten).
    Stalled,
    /// No heartbeat, or its process is gone.
    NotRunning,
}

/// Everything `status` reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StatusReport {
    pub healthy: bool,
    pub gateway: GatewayHealth,
    pub pid: Option<u32>,
    pub uptime_s: Option<i64>,
    pub heartbeat_age_ms: Option<i64>,
    /// The heartbeat file has not been rewritten for 3 periods while its
    /// writer lives: the gateway cannot write its state directory (a full
    /// disk) or is wedged. Its contents (loop counter, last tick) are old.
    pub heartbeat_stale: bool,
    pub loop_counter: Option<u64>,
    pub loop_counter_still_ms: Option<i64>,
    pub last_tick: Option<TickSummary>,
    /// What the gateway last saw.
    pub gateway_capability: Option<Capability>,
    /// What this command sees right now.
    pub capability_now: Capability,
    /// Whether the job counts and the next fire were read from the ledger;
    /// false when it could not be (the counts are then 0, and unknown).
    pub ledger_read: bool,
    pub jobs_active: u64,
    pub jobs_paused: u64,
    pub jobs_completed: u64,
    /// Active Hermes jobs (managed) with no next run: they will not fire
    /// again (`doctor`'s `hermes_job_no_next_run` names each).
    pub hermes_jobs_without_next_run: u64,
    /// What the gateway's last sync saw going wrong on the Hermes side
    /// (None: nothing, or it does not fire this home's Hermes jobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hermes: Option<HermesSide>,
    pub running: u64,
    pub next_fire: Option<NextFire>,
    /// On a shared (PostgreSQL) ledger: every host and its lease.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<super::cluster::ClusterStatus>,
}

/// The soonest fire of any active job.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NextFire {
    pub job_id: String,
    pub job_name: String,
    pub at: Timestamp,
    /// The job's zone (`render` shows `at` in it), when it has one.
    pub tz: Option<String>,
}

/// Judge the gateway from its heartbeat file and whether its process lives.
pub fn judge_gateway(beat: Option<&Heartbeat>, alive: bool, now: Timestamp) -> GatewayHealth {
    match beat {
        None => GatewayHealth::NotRunning,
        Some(_) if !alive => GatewayHealth::NotRunning,
        Some(b) if b.loop_stalled(now) || b.file_stale(now) => GatewayHealth::Stalled,
        Some(_) => GatewayHealth::Running,
    }
}

/// Whether the process that wrote `beat` is alive.
pub fn writer_alive(beat: &Heartbeat) -> bool {
    crate::process::is_alive(&ProcessIdentity {
        pid: beat.pid,
        start: beat.start_time,
    })
}

/// The report from the heartbeat, whether its writer lives, and what scopes
/// look like now; [`count_ledger`] adds what the database says. `status` and
/// the endpoint's `/healthz` build it the same way.
pub fn from_heartbeat(
    beat: Option<&Heartbeat>,
    alive: bool,
    capability_now: Capability,
    now: Timestamp,
) -> StatusReport {
    let gateway = judge_gateway(beat, alive, now);
    StatusReport {
        healthy: gateway == GatewayHealth::Running,
        gateway: gateway.clone(),
        pid: beat.map(|b| b.pid),
        uptime_s: beat.map(|b| (now - b.started_at).num_seconds()),
        heartbeat_age_ms: beat.map(|b| (now - b.updated_at).num_milliseconds()),
        heartbeat_stale: gateway != GatewayHealth::NotRunning
            && beat.is_some_and(|b| b.file_stale(now)),
        loop_counter: beat.map(|b| b.loop_counter),
        loop_counter_still_ms: beat.map(|b| (now - b.loop_counter_changed_at).num_milliseconds()),
        last_tick: beat.map(|b| b.last_tick.clone()),
        gateway_capability: beat.map(|b| b.capability.clone()),
        capability_now,
        ledger_read: false,
        jobs_active: 0,
        jobs_paused: 0,
        jobs_completed: 0,
        hermes_jobs_without_next_run: 0,
        hermes: beat
            .and_then(|b| b.hermes.clone())
            .filter(|side| alive && !side.is_clear()),
        running: beat.map_or(0, |b| b.active_runs),
        next_fire: None,
        cluster: None,
    }
}

/// Jobs by state, the soonest fire and the active runs, from the database.
/// SQL counts: no job is parsed, so many jobs cost no memory here.
pub fn count_ledger(report: &mut StatusReport, conn: &Conn) -> SqlResult<()> {
    // One pass over the jobs: the count per state, and the active Hermes
    // jobs with no next run.
    for row in conn.query(
        "SELECT state, COUNT(*) AS n,
                SUM(CASE WHEN managed = 1 AND next_run_at IS NULL THEN 1 ELSE 0 END) AS stranded
         FROM jobs GROUP BY state",
        params![],
    )? {
        let state: String = row.get("state")?;
        let n = row.get::<_, i64>("n")?.max(0) as u64;
        match state.as_str() {
            "active" => {
                report.jobs_active = n;
                report.hermes_jobs_without_next_run = row.get::<_, i64>("stranded")?.max(0) as u64;
            }
            "paused" => report.jobs_paused = n,
            "completed" => report.jobs_completed = n,
            _ => {}
        }
    }
    report.ledger_read = true;
    report.next_fire = conn.query_opt(
        "SELECT id, name, next_run_at, tz FROM jobs
         WHERE state = 'active' AND next_run_at IS NOT NULL
         ORDER BY next_run_at, id LIMIT 1",
        params![],
        |r| {
            Ok(NextFire {
                job_id: r.get("id")?,
                job_name: r.get("name")?,
                at: from_ms(r.get("next_run_at")?),
                tz: r.get("tz")?,
            })
        },
    )?;
    report.running = conn
        .query_row(
            "SELECT COUNT(*) AS n FROM executions WHERE state IN ('claimed', 'staged', 'running')",
            params![],
            |r| r.get::<_, i64>("n"),
        )?
        .max(0) as u64;
    Ok(())
}

/// On a shared ledger, the cluster's section; this host's gateway cut off
/// from the database (by its own word) or a database this command cannot
/// reach is not healthy.
pub fn add_cluster(report: &mut StatusReport, cluster: Option<super::cluster::ClusterStatus>) {
    if cluster
        .as_ref()
        .is_some_and(|c| c.gateway_cut_off() || !c.reachable)
    {
        report.healthy = false;
    }
    report.cluster = cluster;
}

fn human_ms(ms: i64) -> String {
    crate::schedule::format_duration(std::time::Duration::from_millis(ms.max(0) as u64))
}

/// The text form.
pub fn render(r: &StatusReport, zones: &ZoneTable, viewer: Tz) -> String {
    let mut out = String::new();
    let gw = match r.gateway {
        GatewayHealth::Running => format!(
            "running (pid {}, up {})",
            r.pid.unwrap_or_default(),
            human_ms(r.uptime_s.unwrap_or_default() * 1000)
        ),
        GatewayHealth::Stalled if r.heartbeat_stale => format!(
            "STALLED (pid {}: its heartbeat file has not been rewritten for {}, more than {STALL_PERIODS} heartbeat periods: it cannot write its state directory (disk full?) or is wedged; what follows is as old)",
            r.pid.unwrap_or_default(),
            human_ms(r.heartbeat_age_ms.unwrap_or_default())
        ),
        GatewayHealth::Stalled => format!(
            "STALLED (pid {}: its loop counter has not moved for {}; more than {STALL_PERIODS} heartbeat periods)",
            r.pid.unwrap_or_default(),
            human_ms(r.loop_counter_still_ms.unwrap_or_default())
        ),
        GatewayHealth::NotRunning => {
            let seen = match (r.pid, r.heartbeat_age_ms) {
                (Some(pid), Some(age)) => format!("last seen {} ago as pid {pid}; ", human_ms(age)),
                _ => String::new(),
            };
            format!("not running ({seen}start it with `hermes-cron gateway` or the user unit)")
        }
    };
    let running = r.gateway != GatewayHealth::NotRunning;
    out.push_str(&format!("gateway:    {gw}\n"));
    if let (true, Some(age)) = (running, r.heartbeat_age_ms) {
        out.push_str(&format!(
            "heartbeat:  {} old, loop counter {} (last moved {} ago)\n",
            human_ms(age),
            r.loop_counter.unwrap_or_default(),
            human_ms(r.loop_counter_still_ms.unwrap_or_default())
        ));
    }
    match r.last_tick.as_ref().and_then(|t| Some((t, t.at?))) {
        Some((t, at)) => out.push_str(&format!(
            "last tick:  {} at {} (claimed {}, skipped {}, missed {})\n",
            t.result,
            local_time(at, viewer),
            t.claimed,
            t.skipped,
            t.missed
        )),
        None if running => out.push_str("last tick:  none yet\n"),
        None => {}
    }
    let cap = &r.capability_now;
    match cap.mode {
        CapabilityMode::Scoped => {
            out.push_str("dispatch:   scoped (restart-safe scopes available)\n")
        }
        _ => out.push_str(&format!(
            "dispatch:   DEGRADED ({}): {}\n",
            cap.cause.map_or("-", |c| c.as_str()),
            cap.detail.as_deref().unwrap_or("-")
        )),
    }
    if let Some(g) = &r.gateway_capability
        && running
        && g.mode != CapabilityMode::Unknown
        && g.mode != cap.mode
    {
        out.push_str(&format!(
            "            (the gateway itself last saw: {}{})\n",
            g.mode,
            g.cause.map(|c| format!(", {c}")).unwrap_or_default()
        ));
    }
    if !r.ledger_read {
        out.push_str(&format!(
            "jobs:       unknown: the ledger could not be read; {} running\n",
            r.running
        ));
    } else {
        out.push_str(&format!(
            "jobs:       {} active, {} paused, {} completed; {} running\n",
            r.jobs_active, r.jobs_paused, r.jobs_completed, r.running
        ));
    }
    match &r.next_fire {
        None if !r.ledger_read => out.push_str("next fire:  unknown\n"),
        Some(n) => out.push_str(&format!(
            "next fire:  {} ({}) at {}\n",
            crate::text::one_line(&n.job_name, 48),
            n.job_id,
            local_time(n.at, zones.zone_or(n.tz.as_deref(), viewer))
        )),
        None => out.push_str("next fire:  none\n"),
    }
    if r.hermes_jobs_without_next_run > 0 {
        out.push_str(&format!(
            "hermes:     {} active Hermes job(s) with no next run will not fire again; `hermes-cron doctor` names them and the fix\n",
            r.hermes_jobs_without_next_run
        ));
    }
    if let Some(side) = &r.hermes {
        out.push_str(&render_hermes_side(side));
    }
    if let Some(c) = &r.cluster {
        out.push_str(&super::cluster::render(c, viewer));
    }
    out
}

/// The `hermes:` lines of what the gateway saw going wrong on the Hermes side.
fn render_hermes_side(side: &HermesSide) -> String {
    let mut out = String::new();
    if let Some(why) = &side.jobs_unreadable {
        out.push_str(&format!(
            "hermes:     cron/jobs.json cannot be read, so no change to Hermes's jobs is followed: {}\n",
            crate::text::one_line(why, 200)
        ));
    }
    if let Some(first) = side.left_out.first() {
        out.push_str(&format!(
            "hermes:     {} record(s) of cron/jobs.json left out (never fired), first: {}; `hermes-cron doctor` names each and the fix\n",
            side.left_out.len(),
            crate::text::one_line(first, 160)
        ));
    }
    if let Some(why) = &side.outside_unrecorded {
        out.push_str(&format!(
            "hermes:     runs Hermes made by itself are not recorded yet: {}\n",
            crate::text::one_line(why, 200)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn beat(counter_changed: Timestamp, updated: Timestamp) -> Heartbeat {
        Heartbeat {
            pid: 1,
            start_time: 1,
            started_at: counter_changed,
            updated_at: updated,
            period_ms: 5000,
            loop_counter: 7,
            loop_counter_changed_at: counter_changed,
            last_tick: Default::default(),
            capability: Default::default(),
            active_runs: 0,
            version: "x".into(),
            zone: None,
            hermes: None,
            job_start: None,
        }
    }

    #[test]
    fn what_went_wrong_on_the_hermes_side_is_a_line_each() {
        let side = HermesSide {
            jobs_unreadable: Some("cannot read cron/jobs.json: EOF while parsing".into()),
            left_out: vec!["job #2 has no \"id\"".into(), "job #3 ...".into()],
            outside_unrecorded: None,
        };
        let text = render_hermes_side(&side);
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("cannot be read") && lines[0].contains("EOF"));
        assert!(lines[1].contains("2 record(s)") && lines[1].contains("job #2"));
        assert!(HermesSide::default().is_clear() && !side.is_clear());
    }

    #[test]
    fn stalled_when_the_counter_stops_for_three_periods() {
        let t0 = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let now = t0 + chrono::Duration::seconds(16);
        let b = beat(t0, now);
        assert_eq!(judge_gateway(Some(&b), true, now), GatewayHealth::Stalled);
        let b = beat(t0 + chrono::Duration::seconds(14), now);
        assert_eq!(judge_gateway(Some(&b), true, now), GatewayHealth::Running);
        assert_eq!(
            judge_gateway(Some(&b), false, now),
            GatewayHealth::NotRunning
        );
        assert_eq!(judge_gateway(None, true, now), GatewayHealth::NotRunning);
    }
}
