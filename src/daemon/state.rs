//! What the gateway's threads share: progress counters, the last tick, the
//! scope capability, and what the loop is doing right now.
//!
//! ## Locking
//! Counters and flags are atomics. The three small mutexes guard plain values; every
//! holder copies in or out and releases at once, never across IO, logging or
//! an await. The watchdog only ever `try_lock`s, so a loop wedged at any point
//! cannot wedge the watchdog too.

use hermes_cron_core::health::{Capability, HermesSide, TickSummary};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared by the loop, the heartbeat thread and the watchdog.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Bumped by the loop on every turn: a frozen loop shows as a stale counter.
    pub loop_counter: AtomicU64,
    /// Watchdog probes the loop answered.
    pub probes_answered: AtomicU64,
    pub active_runs: AtomicU64,
    pub last_tick: Mutex<TickSummary>,
    pub capability: Mutex<Capability>,
    /// What the provider sync last saw going wrong on the Hermes side.
    pub hermes: Mutex<Option<HermesSide>>,
    /// What the loop last started doing, for the forensic dump.
    pub doing: Mutex<String>,
    /// Set by the first thread that ends the process (the main thread after
    /// the loop, the watchdog, the signal thread): one exit line, one exit.
    pub exit_claimed: AtomicBool,
    /// Set by the signal thread on SIGTERM/SIGINT, before the loop hears of
    /// it: a dispatch batch in progress stops starting new runs.
    pub stop_requested: AtomicBool,
}

impl Shared {
    pub(crate) fn bump(&self) {
        self.loop_counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn counter(&self) -> u64 {
        self.loop_counter.load(Ordering::Relaxed)
    }

    /// Claim the process exit; false if another thread already did.
    pub(crate) fn claim_exit(&self) -> bool {
        !self.exit_claimed.swap(true, Ordering::SeqCst)
    }

    pub(crate) fn request_stop(&self) {
        self.stop_requested.store(true, Ordering::SeqCst);
    }

    pub(crate) fn stop_requested(&self) -> bool {
        self.stop_requested.load(Ordering::SeqCst)
    }

    /// Whether some thread is ending the process.
    pub(crate) fn exiting(&self) -> bool {
        self.exit_claimed.load(Ordering::SeqCst)
    }

    pub(crate) fn set_doing(&self, what: impl Into<String>) {
        let what = what.into();
        if let Ok(mut d) = self.doing.lock() {
            *d = what;
        }
    }

    /// What the loop is doing, if the lock is free right now.
    pub(crate) fn try_doing(&self) -> String {
        self.doing
            .try_lock()
            .map(|d| d.clone())
            .unwrap_or_else(|_| "(busy: the activity note is being written)".into())
    }

    pub(crate) fn set_tick(&self, t: TickSummary) {
        if let Ok(mut l) = self.last_tick.lock() {
            *l = t;
        }
    }

    pub(crate) fn tick(&self) -> TickSummary {
        self.last_tick.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub(crate) fn set_capability(&self, c: Capability) {
        if let Ok(mut l) = self.capability.lock() {
            *l = c;
        }
    }

    pub(crate) fn capability(&self) -> Capability {
        self.capability
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    pub(crate) fn set_hermes(&self, side: Option<HermesSide>) {
        if let Ok(mut l) = self.hermes.lock() {
            *l = side;
        }
    }

    pub(crate) fn hermes(&self) -> Option<HermesSide> {
        self.hermes.lock().map(|l| l.clone()).unwrap_or_default()
    }
}
