//! What every command needs: the home, the clock, the zone table, the
//! config, the database.

use super::fail::usage;
use hermes_cron::clock::{Clock, SystemClock};
use hermes_cron::cluster::Host;
use hermes_cron::config::{self, Config};
use hermes_cron::db::Db;
use hermes_cron::dispatch::Launcher;
use hermes_cron::home::Home;
use hermes_cron::job::FallbackZone;
use hermes_cron::knobs::Knobs;
use hermes_cron::ops::status::{self, GatewayHealth};
use hermes_cron::process::OwnerRole;
use hermes_cron::schedule::{Timestamp, Tz, ZoneTable};
use hermes_cron::tick::ClaimContext;
use hermes_cron_core::health::Heartbeat;

/// Each job's zone by id, and the viewer's for the rest (spawned runs, the
/// runs of a removed job).
pub(super) struct JobZones {
    by_id: std::collections::HashMap<String, Tz>,
    viewer: Tz,
}

impl JobZones {
    /// The zone a run of `job_id` is shown in.
    pub(super) fn of(&self, job_id: Option<&str>) -> Tz {
        job_id
            .and_then(|id| self.by_id.get(id).copied())
            .unwrap_or(self.viewer)
    }
}

/// The resolved environment of one command.
pub(super) struct Ctx {
    pub home: Home,
    pub clock: SystemClock,
    /// This host (its name on every row claimed here).
    pub host: Host,
    /// The process's zone table (made in `main`): every zone name is read in it.
    pub zones: ZoneTable,
    /// The test knobs, read in `main`.
    pub knobs: Knobs,
    config: Option<Config>,
}

impl Ctx {
    pub(super) fn new(home: Home, zones: ZoneTable, knobs: Knobs) -> anyhow::Result<Ctx> {
        let clock = SystemClock::from_env().map_err(|e| usage(e.to_string()))?;
        Ok(Ctx {
            home,
            clock,
            host: Host::from_env(),
            zones,
            knobs,
            config: None,
        })
    }

    /// The launcher of this command's runs.
    pub(super) fn launcher(&mut self) -> anyhow::Result<Launcher> {
        let config = self.config()?.clone();
        Ok(Launcher::from_env(&self.home, &config, &self.knobs)?)
    }

    /// What a claim by this command at this instant needs.
    pub(super) fn claim_ctx<'a>(&'a self, config: &'a Config, zone: Tz) -> ClaimContext<'a> {
        ClaimContext {
            home: &self.home,
            config,
            fallback_zone: zone,
            zones: &self.zones,
            owner: hermes_cron::process::owner(OwnerRole::Cli),
            host: &self.host,
            claim_batch: self.knobs.claim_batch,
            now: self.now(),
        }
    }

    pub(super) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// This home's gateway, as its heartbeat shows it.
    pub(super) fn gateway_health(&self) -> (Option<Heartbeat>, GatewayHealth) {
        let beat = hermes_cron::state_files::read_heartbeat(&self.home);
        let alive = beat.as_ref().is_some_and(status::writer_alive);
        let health = status::judge_gateway(beat.as_ref(), alive, self.now());
        (beat, health)
    }

    /// `add` and `list` say when nothing will fire the jobs: no gateway runs
    /// on this home (on a shared ledger another host's may, so they do not).
    pub(super) fn warn_if_no_gateway(&self, db: &Db) {
        if db.caps().shared || self.gateway_health().1 != GatewayHealth::NotRunning {
            return;
        }
        tracing::warn!(
            "no gateway is running on this home: no job fires until one does; start it with `hermes-cron gateway`, or keep it running with the user unit (`systemctl --user enable --now hermes-cron-gateway.service`)"
        );
    }

    /// The config, loaded once; each warning is logged once.
    pub(super) fn config(&mut self) -> anyhow::Result<&Config> {
        if self.config.is_none() {
            let loaded = config::load(&self.home.config_file(), &self.zones)?;
            for w in &loaded.warnings {
                tracing::warn!(key = %w.key, "{}", w.message);
            }
            self.config = Some(loaded.config);
        }
        Ok(self.config.as_ref().expect("loaded above"))
    }

    /// The zone for jobs without `--tz`: config `timezone`, else the system zone.
    pub(super) fn fallback_zone(&mut self) -> anyhow::Result<Tz> {
        Ok(self.new_job_zone()?.zone())
    }

    /// The same, saying which: a job made or rescheduled in the system zone
    /// keeps it (`JobInput::build`, `apply_edit`).
    pub(super) fn new_job_zone(&mut self) -> anyhow::Result<FallbackZone> {
        let configured = self.config()?.timezone.clone();
        Ok(match configured {
            Some(name) => FallbackZone::Configured(
                self.zones
                    .parse(&name)
                    .map_err(|e| usage(format!("timezone: {e}")))?,
            ),
            None => FallbackZone::System(hermes_cron::host_zone::system_zone(&self.zones)),
        })
    }

    /// Each job's zone (its own, else the viewer's), for the views of runs
    /// and alerts: every instant of a job's run is shown in its zone.
    pub(super) fn job_zones(&mut self, conn: &hermes_cron::db::Conn) -> anyhow::Result<JobZones> {
        let viewer = self.fallback_zone()?;
        let mut by_id = std::collections::HashMap::new();
        for job in hermes_cron::store::list_jobs(conn, true)? {
            by_id.insert(
                job.id.to_string(),
                self.zones.zone_or(job.tz.as_deref(), viewer),
            );
        }
        Ok(JobZones { by_id, viewer })
    }

    /// Create the home if needed and open the database.
    pub(super) fn open_db(&self) -> anyhow::Result<Db> {
        self.home.ensure()?;
        Db::open_home(&self.home).map_err(|e| {
            // SQLite says only "unable to open database file" or "disk I/O
            // error"; name the usual cause (a read-only or foreign directory,
            // a held lock, a full disk) when it is one.
            let dir = self.home.cron_dir();
            let why = match nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK) {
                Err(errno) => format!(" ({} is not writable: {})", dir.display(), errno.desc()),
                Ok(()) => hermes_cron::db::explain(&e, &dir)
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default(),
            };
            let what = format!(
                "failed to open the ledger in {}{why}",
                self.home.root().display()
            );
            anyhow::Error::from(e).context(what)
        })
    }

    /// Open the database only if the home already has one.
    pub(super) fn open_existing_db(&self) -> anyhow::Result<Option<Db>> {
        if !hermes_cron::db::Location::of_home(&self.home)?.may_exist() {
            return Ok(None);
        }
        self.open_db().map(Some)
    }
}
