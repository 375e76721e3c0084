//! The test knobs (CONTRIBUTING.md, "Test knobs"): environment variables that make
//! tests fast or let them provoke a failure. Read once, in each binary's
//! `main` ([`Knobs::from_env`]), and handed down as values; production
//! leaves them unset and gets the defaults.
//!
//! Three stay with the code they steer, each read once where it is made:
//! `HERMES_CRON_NOW` (the clock, `clock::SystemClock::from_env`), the
//! ledger's busy timeout and journal mode (`db`, at each open, so every
//! connection of a process has the same) and the crash points (`crash.rs`,
//! a test hook every layer calls, read once per process).

use std::time::Duration;

/// The kill grace: SIGTERM, then SIGKILL this much later (docs/schedules.md,
/// "Policies": `--timeout`).
pub const KILL_GRACE: Duration = Duration::from_secs(10);
const HEARTBEAT_PERIOD: Duration = Duration::from_secs(5);
const CLAIM_BATCH: usize = 64;

/// The knobs' variables.
pub const KILL_GRACE_ENV: &str = "HERMES_CRON_KILL_GRACE_MS";
pub const HEARTBEAT_PERIOD_ENV: &str = "HERMES_CRON_HEARTBEAT_PERIOD_MS";
pub const WEDGE_ENV: &str = "HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS";
pub const DBUS_TIMEOUT_ENV: &str = "HERMES_CRON_DBUS_TIMEOUT_MS";
pub const CLAIM_BATCH_ENV: &str = "HERMES_CRON_CLAIM_BATCH";
pub const LEASE_TTL_ENV: &str = "HERMES_CRON_LEASE_MS";

/// The knobs of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knobs {
    /// SIGTERM to SIGKILL, for the worker's timeouts and every stop.
    pub kill_grace: Duration,
    /// How often the gateway writes its heartbeat file.
    pub heartbeat_period: Duration,
    /// Block the gateway's loop this long after it is ready, as a wedged
    /// loop would (the loop watchdog's tests).
    pub wedge_loop_after: Option<Duration>,
    /// Every D-Bus timeout, a call's and a scope start's (default 5 s and
    /// 15 s, `systemd::ZbusTimeouts`).
    pub dbus_timeout: Option<Duration>,
    /// Most jobs one claim pass takes on a shared ledger.
    pub claim_batch: usize,
    /// A host's lease on a shared ledger (default 15 s,
    /// `hermes_cron_core::cluster::LeasePolicy`).
    pub lease_ttl: Option<Duration>,
}

impl Default for Knobs {
    fn default() -> Knobs {
        Knobs {
            kill_grace: KILL_GRACE,
            heartbeat_period: HEARTBEAT_PERIOD,
            wedge_loop_after: None,
            dbus_timeout: None,
            claim_batch: CLAIM_BATCH,
            lease_ttl: None,
        }
    }
}

impl Knobs {
    /// The knobs the environment sets; a value out of its range is ignored.
    pub fn from_env() -> Knobs {
        Knobs::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Knobs {
        let number = |name, range: std::ops::RangeInclusive<u64>| {
            var(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|n| range.contains(n))
        };
        let ms = |name, range| number(name, range).map(Duration::from_millis);
        let d = Knobs::default();
        Knobs {
            kill_grace: ms(KILL_GRACE_ENV, 0..=600_000).unwrap_or(d.kill_grace),
            heartbeat_period: ms(HEARTBEAT_PERIOD_ENV, 10..=600_000).unwrap_or(d.heartbeat_period),
            wedge_loop_after: ms(WEDGE_ENV, 0..=u64::MAX),
            dbus_timeout: ms(DBUS_TIMEOUT_ENV, 1..=600_000),
            claim_batch: number(CLAIM_BATCH_ENV, 1..=10_000).map_or(d.claim_batch, |n| n as usize),
            lease_ttl: ms(LEASE_TTL_ENV, 500..=3_600_000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_knob_is_read_within_its_range_else_its_default() {
        let set = |pairs: &'static [(&'static str, &'static str)]| {
            Knobs::from_vars(move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })
        };
        assert_eq!(set(&[]), Knobs::default());
        let k = set(&[
            (KILL_GRACE_ENV, "250"),
            (HEARTBEAT_PERIOD_ENV, " 200 "),
            (DBUS_TIMEOUT_ENV, "900"),
            (CLAIM_BATCH_ENV, "8"),
            (LEASE_TTL_ENV, "2000"),
            (WEDGE_ENV, "1500"),
        ]);
        assert_eq!(k.kill_grace, Duration::from_millis(250));
        assert_eq!(k.heartbeat_period, Duration::from_millis(200));
        assert_eq!(k.dbus_timeout, Some(Duration::from_millis(900)));
        assert_eq!(k.claim_batch, 8);
        assert_eq!(k.lease_ttl, Some(Duration::from_secs(2)));
        assert_eq!(k.wedge_loop_after, Some(Duration::from_millis(1500)));
        let out = set(&[
            (HEARTBEAT_PERIOD_ENV, "5"),
            (CLAIM_BATCH_ENV, "0"),
            (LEASE_TTL_ENV, "nope"),
            (DBUS_TIMEOUT_ENV, "0"),
        ]);
        assert_eq!(out, Knobs::default());
    }
}
