//! The descriptor limit staging needs. The gateway keeps one pipe open per
//! staged worker (its gate), so `cron.staging_max_workers` (1000 by default)
//! does not fit the soft `RLIMIT_NOFILE` of 1024 systemd gives a service.
//!
//! - [`raise_for`] raises the gateway's soft limit as far as the hard limit
//!   allows for the pipes it will hold, and says how many staged workers
//!   fit under the result.
//! - Children must not inherit a raised soft limit (a program that uses
//!   `select(2)` breaks on descriptors above 1024): what jobs start with
//!   ([`super::start_attrs`]) has the [`original`] one.

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use std::sync::OnceLock;

/// Descriptors kept for everything but staged workers' gates (the ledger,
/// the bus, inotify, logs, dispatches in flight).
const RESERVED: u64 = 256;

static ORIGINAL: OnceLock<u64> = OnceLock::new();

/// The soft limit this process started with, when it raised it.
pub fn original() -> Option<u64> {
    ORIGINAL.get().copied()
}

/// Raise the soft limit for `workers` staged workers; returns how many fit.
pub fn raise_for(workers: u64) -> u64 {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return workers;
    };
    let wanted = workers.saturating_add(RESERVED);
    if wanted > soft {
        let target = wanted.min(hard);
        if setrlimit(Resource::RLIMIT_NOFILE, target, hard).is_ok() {
            let _ = ORIGINAL.set(soft);
            return workers.min(target.saturating_sub(RESERVED));
        }
    }
    workers.min(soft.saturating_sub(RESERVED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_stays_under_the_hard_limit_and_counts_what_fits() {
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        // Nothing to raise for none.
        assert_eq!(raise_for(0), 0);
        let fits = raise_for(hard + 10);
        assert!(fits <= hard.saturating_sub(RESERVED), "{fits}");
        let (now, _) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        assert!(now >= soft && now <= hard);
        if now > soft {
            assert_eq!(original(), Some(soft));
        }
    }
}
