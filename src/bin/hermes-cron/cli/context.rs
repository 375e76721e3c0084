//! What every command needs: the home, the clock, the config, the database.

use super::fail::usage;
use hermes_cron::clock::{Clock, SystemClock};
use hermes_cron::config::{self, Config};
use hermes_cron::db::Db;
use hermes_cron::home::Home;
use hermes_cron::schedule::{self, Timestamp, Tz};

/// The resolved environment of one command.
pub struct Ctx {
    pub home: Home,
    pub clock: SystemClock,
    config: Option<Config>,
}

impl Ctx {
    pub fn new(home: Home) -> anyhow::Result<Ctx> {
        let clock = SystemClock::from_env().map_err(|e| usage(e.to_string()))?;
        Ok(Ctx {
            home,
            clock,
            config: None,
        })
    }

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The config, loaded once; each warning is logged once.
    pub fn config(&mut self) -> anyhow::Result<&Config> {
        if self.config.is_none() {
            let loaded = config::load(&self.home.config_file())?;
            for w in &loaded.warnings {
                tracing::warn!(key = %w.key, "{}", w.message);
            }
            self.config = Some(loaded.config);
        }
        Ok(self.config.as_ref().expect("loaded above"))
    }

    /// The zone for jobs without `--tz`: config `timezone`, else the system zone.
    pub fn fallback_zone(&mut self) -> anyhow::Result<Tz> {
        let configured = self.config()?.timezone.clone();
        Ok(match configured {
            Some(name) => {
                schedule::parse_zone(&name).map_err(|e| usage(format!("timezone: {e}")))?
            }
            None => hermes_cron::host_zone::system_zone(),
        })
    }

    /// Create the home if needed and open the database.
    pub fn open_db(&self) -> anyhow::Result<Db> {
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
    pub fn open_existing_db(&self) -> anyhow::Result<Option<Db>> {
        if !hermes_cron::db::Location::of_home(&self.home)?.may_exist() {
            return Ok(None);
        }
        self.open_db().map(Some)
    }
}
