//! `status`, `doctor`, `metrics`, `prune`.

use super::context::Ctx;
use hermes_cron::db::Db;
use hermes_cron::job::Job;
use hermes_cron::job::JobState;
use hermes_cron::ops::doctor::{
    self, Finding, Gathered, ProviderState, RefusedZone, ZoneRules, ZoneUse,
};
use hermes_cron::ops::status::{self, GatewayHealth};
use hermes_cron::ops::{metrics, prune};
use hermes_cron::schedule::{self, Tz};
use hermes_cron::state_files::read_heartbeat;
use hermes_cron::store;
use hermes_cron_core::health::Capability;
use hermes_cron_core::placement::CauseCode;

/// Whether this process can make a scope right now (`dbus_timeout`: the knob).
fn capability_now(dbus_timeout: Option<std::time::Duration>) -> Capability {
    let manager = hermes_cron::systemd::session_manager(dbus_timeout);
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| {
            rt.block_on(hermes_cron::dispatch::probe_capability(Some(
                manager.as_ref(),
            )))
        });
    result.unwrap_or_else(|e| Capability::degraded(CauseCode::Io, Some(e.to_string())))
}

pub(super) fn status(ctx: &mut Ctx, json: bool) -> anyhow::Result<i32> {
    let now = ctx.now();
    let beat = read_heartbeat(&ctx.home);
    let alive = beat.as_ref().is_some_and(status::writer_alive);
    let cap = capability_now(ctx.knobs.dbus_timeout);
    let mut report = status::from_heartbeat(beat.as_ref(), alive, cap, now);
    let (db, cluster) = open_for_status(ctx)?;
    match db {
        Some(db) => {
            // Counts read from a damaged file would be wrong, or zeros: say it.
            db.check_whole()?;
            status::count_ledger(&mut report, db.conn())?;
        }
        // No ledger yet: no jobs, truly; a database out of reach: unknown.
        None => report.ledger_read = cluster.as_ref().is_none_or(|c| c.reachable),
    }
    status::add_cluster(&mut report, cluster);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let viewer = ctx.fallback_zone()?;
        print!("{}", status::render(&report, &ctx.zones, viewer));
    }
    Ok(if report.healthy {
        hermes_cron::exit::OK
    } else {
        hermes_cron::exit::FAILURE
    })
}

/// The ledger for `status` and `doctor`, and on a shared (PostgreSQL)
/// ledger the cluster's status: a database out of reach is reported, not an
/// error (`read_only` for `doctor`, which changes nothing).
fn open_ledger(
    ctx: &mut Ctx,
    read_only: bool,
) -> anyhow::Result<(Option<Db>, Option<hermes_cron::ops::cluster::ClusterStatus>)> {
    let location = hermes_cron::db::Location::of_home(&ctx.home)?;
    let hermes_cron::db::Location::Postgres(url) = &location else {
        let db = if read_only {
            if location.may_exist() {
                Some(Db::open_home_read_only(&ctx.home)?)
            } else {
                None
            }
        } else {
            ctx.open_existing_db()?
        };
        return Ok((db, None));
    };
    let view = hermes_cron::state_files::read_cluster(&ctx.home);
    // A config that does not load is `doctor`'s to report; the default here.
    let runs_at_once = ctx
        .config()
        .map_or(hermes_cron_core::config::SHARED_LEDGER_PARALLEL, |c| {
            c.cron.shared_parallel()
        });
    let opened = if read_only {
        Db::open_home_read_only(&ctx.home)
    } else {
        Db::open_home(&ctx.home)
    };
    let (db, error) = match opened {
        Ok(db) => (Some(db), None),
        Err(hermes_cron::db::DbError::NoLedger(_)) => (None, None),
        Err(e) => (None, Some(hermes_cron::text::Chain(&e).to_string())),
    };
    let cluster = hermes_cron::ops::cluster::status(
        &ctx.host,
        db.as_ref().map(|d| d.conn()),
        error,
        url,
        view,
        runs_at_once,
        ctx.now(),
    );
    Ok((db, Some(cluster)))
}

fn open_for_status(
    ctx: &mut Ctx,
) -> anyhow::Result<(Option<Db>, Option<hermes_cron::ops::cluster::ClusterStatus>)> {
    open_ledger(ctx, false)
}

/// Which zone rules are in use, and the zones the jobs use.
/// `gateway_zone`: the zone a running gateway reads jobs without one of
/// their own in (from its heartbeat).
fn zone_rules(ctx: &mut Ctx, jobs: &[Job], gateway_zone: Option<String>) -> ZoneRules {
    let host = hermes_cron::host_zone::ZoneDir::from_env();
    let system = hermes_cron::host_zone::find_system_zone(&ctx.zones);
    let fallback = ctx.fallback_zone().unwrap_or(system.zone);
    let mut zones: Vec<ZoneUse> = Vec::new();
    for job in jobs.iter().filter(|j| j.state != JobState::Completed) {
        let zone: Tz = match job.tz.as_deref().map(|name| ctx.zones.parse(name)) {
            Some(Ok(zone)) => zone,
            Some(Err(_)) => continue,
            None => fallback,
        };
        match zones.iter_mut().find(|z| z.zone == zone) {
            Some(used) => used.jobs.push(job.name.clone()),
            None => zones.push(ZoneUse {
                name: zone.name().to_string(),
                rules: zone.origin().as_str(),
                jobs: vec![job.name.clone()],
                zone,
            }),
        }
    }
    let version = host.version();
    ZoneRules {
        host_dir: host.dir().display().to_string(),
        host_present: host.exists(),
        host_version: version.as_ref().map(|(v, _)| v.clone()),
        host_version_from: version.map(|(_, from)| from),
        compiled_in_version: schedule::COMPILED_IN_TZDB_VERSION,
        system_zone: system.zone.name().to_string(),
        system_zone_from: system.source,
        fallback_zone: fallback.name().to_string(),
        gateway_zone,
        system_zone_refused: system
            .refused
            .into_iter()
            .map(|(source, value, reason)| RefusedZone {
                source,
                value,
                reason,
            })
            .collect(),
        zones,
    }
}

pub(super) fn doctor(ctx: &mut Ctx, json: bool) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let now = ctx.now();
    let (beat, gateway) = ctx.gateway_health();
    let cap = capability_now(ctx.knobs.dbus_timeout);
    let (db, cluster) = open_ledger(ctx, true)?;
    let jobs = match &db {
        Some(db) => store::list_jobs(db.conn(), true)?,
        None => Vec::new(),
    };
    let gateway_zone = beat
        .filter(|_| gateway != GatewayHealth::NotRunning)
        .and_then(|b| b.zone);
    let zones = zone_rules(ctx, &jobs, gateway_zone);
    let provider = provider_state(ctx, &jobs, now);
    let gathered = Gathered {
        home_root: ctx.home.root(),
        gateway,
        capability_now: &cap,
        config: &config,
        jobs: &jobs,
        journal: db.as_ref().map(|d| d.journal()),
        delegation: &hermes_cron::systemd::delegation(),
        private_paths: vec![
            ctx.home.root().to_path_buf(),
            ctx.home.cron_dir(),
            ctx.home.db_file(),
            ctx.home.config_file(),
        ],
        zone_rules: &zones,
        hermes_provider: &provider,
        now,
    };
    let mut findings: Vec<Finding> = doctor::check_all(&gathered);
    if let Some(c) = &cluster {
        findings.extend(hermes_cron::ops::cluster::findings(c, now));
    }
    if let Some(db) = &db {
        findings.extend(doctor::check_ledger(db.conn(), &gathered)?);
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "ok": findings.is_empty(), "findings": findings, "zone_rules": zones,
                "hermes_provider": provider, "cluster": cluster,
            }))?
        );
    } else if findings.is_empty() {
        println!("{}", zones.summary());
        println!("ok: no problems found in {}", ctx.home.root().display());
    } else {
        println!("{}", zones.summary());
        for f in &findings {
            let who = match (&f.job_name, &f.job_id) {
                (Some(n), Some(id)) => {
                    format!("job {} ({id}): ", hermes_cron::text::one_line(n, 48))
                }
                (Some(n), None) => format!("job {}: ", hermes_cron::text::one_line(n, 48)),
                _ => String::new(),
            };
            println!("[{}] {who}{}\n    fix: {}", f.code, f.problem, f.fix);
        }
        println!("{} problem(s) found", findings.len());
    }
    Ok(if findings.is_empty() {
        hermes_cron::exit::OK
    } else {
        hermes_cron::exit::FAILURE
    })
}

pub(super) fn metrics(ctx: &mut Ctx) -> anyhow::Result<i32> {
    let beat = read_heartbeat(&ctx.home);
    let db = ctx.open_db()?;
    print!(
        "{}",
        metrics::render(db.conn(), &ctx.host.name, beat.as_ref(), ctx.now())?
    );
    Ok(hermes_cron::exit::OK)
}

pub(super) fn prune(ctx: &mut Ctx, json: bool) -> anyhow::Result<i32> {
    let config = ctx.config()?.clone();
    let mut db = ctx.open_db()?;
    let r = prune::prune(&mut db, &ctx.home, &config.cron)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!(
            "deleted {} ledger rows and {} output files ({} bytes)",
            r.rows_deleted, r.outputs_deleted, r.bytes_freed
        );
    }
    Ok(hermes_cron::exit::OK)
}

/// Whether hermes-cron fires this home's Hermes jobs, and whether it was asked to.
fn provider_state(ctx: &Ctx, jobs: &[Job], now: hermes_cron::schedule::Timestamp) -> ProviderState {
    use hermes_cron::provider::{self, Activation, NAME};
    let reason = match provider::activation(&ctx.home, now) {
        Activation::Active(_) => None,
        Activation::Inactive(why) => Some(why),
    };
    // What the gateway's sync reads, read the same way.
    let (jobs_file_error, left_out) = match reason {
        Some(_) => (None, Vec::new()),
        None => match provider::sync::read_jobs(&ctx.home) {
            Ok(file) => (None, file.notes),
            Err(e) => (Some(hermes_cron::text::Chain(&e).to_string()), Vec::new()),
        },
    };
    ProviderState {
        active: reason.is_none(),
        reason,
        wanted: provider::configured_provider(&ctx.home).as_deref() == Some(NAME)
            || provider::plugin::plugin_dir(&ctx.home).exists(),
        managed_jobs: jobs.iter().filter(|j| j.managed).count(),
        jobs_file_error,
        left_out,
        plugin_drift: provider::plugin::read_settings(&ctx.home)
            .ok()
            .and_then(|s| provider::plugin::drift(&ctx.home, &s, env!("CARGO_PKG_VERSION"))),
    }
}
