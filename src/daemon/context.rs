//! What every part of the gateway's loop works with, built once at start:
//! the home, the config as loaded, the fallback zone, the process's zone
//! table (job zones are read in it), the clock, this
//! gateway as a row owner, this host, the launcher, and the state the
//! loop's threads share. The ledger connection is not in it: parts that
//! write take it as `&mut`, next to this.

use super::state::Shared;
use crate::clock::Clock;
use crate::cluster::Host;
use crate::config::Config;
use crate::dispatch::Launcher;
use crate::home::Home;
use crate::knobs::Knobs;
use crate::process::Owner;
use crate::schedule::{Timestamp, Tz, ZoneTable};
use crate::tick::ClaimContext;
use std::sync::Arc;

pub(crate) struct Ctx {
    pub home: Home,
    pub config: Config,
    /// The config zone, else the system zone.
    pub zone: Tz,
    /// The process's zone table (from the gateway's `Deps`).
    pub zones: std::sync::Arc<ZoneTable>,
    pub clock: Arc<dyn Clock>,
    pub owner: Owner,
    pub host: Host,
    pub launcher: Arc<Launcher>,
    pub shared: Arc<Shared>,
    /// The test knobs, read in `main`.
    pub knobs: Knobs,
}

impl Ctx {
    /// What a claim made at `now` needs.
    pub(super) fn claim_ctx(&self, now: Timestamp) -> ClaimContext<'_> {
        ClaimContext {
            home: &self.home,
            config: &self.config,
            fallback_zone: self.zone,
            zones: &self.zones,
            owner: self.owner,
            host: &self.host,
            claim_batch: self.knobs.claim_batch,
            now,
        }
    }
}
