//! What a job starts with: the umask, nice value and resource limits of the
//! gateway, whoever launches the run. The gateway's launcher hands its own
//! (with the descriptor limit it started with, not the one it raised for
//! staging, see `fd_limit`); `run` and `spawn` from a shell hand the ones a
//! live gateway put in its heartbeat, else their own. Either way they reach
//! the worker in [`ENV`], and the worker takes them first thing
//! ([`take_from_env`]), before it starts its job.

use hermes_cron_core::health::{Limit, StartAttrs};
use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// The environment variable that carries them to a worker (JSON).
pub const ENV: &str = "HERMES_CRON_JOB_START";

/// The limits carried, by `prlimit(1)`'s names.
const RESOURCES: &[(&str, Resource)] = &[
    ("as", Resource::RLIMIT_AS),
    ("core", Resource::RLIMIT_CORE),
    ("cpu", Resource::RLIMIT_CPU),
    ("data", Resource::RLIMIT_DATA),
    ("fsize", Resource::RLIMIT_FSIZE),
    ("locks", Resource::RLIMIT_LOCKS),
    ("memlock", Resource::RLIMIT_MEMLOCK),
    ("msgqueue", Resource::RLIMIT_MSGQUEUE),
    ("nice", Resource::RLIMIT_NICE),
    ("nofile", Resource::RLIMIT_NOFILE),
    ("nproc", Resource::RLIMIT_NPROC),
    ("rss", Resource::RLIMIT_RSS),
    ("rtprio", Resource::RLIMIT_RTPRIO),
    ("sigpending", Resource::RLIMIT_SIGPENDING),
    ("stack", Resource::RLIMIT_STACK),
];

fn finite(v: u64) -> Option<u64> {
    (v != nix::libc::RLIM_INFINITY).then_some(v)
}

fn raw(v: Option<u64>) -> u64 {
    v.unwrap_or(nix::libc::RLIM_INFINITY)
}

/// This process's umask (from /proc: reading it with umask(2) would change
/// it for a moment under the other threads).
fn umask() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    u32::from_str_radix(value.trim(), 8).ok()
}

fn nice() -> i32 {
    // SAFETY: getpriority only reads this process's scheduling priority.
    unsafe { nix::libc::getpriority(nix::libc::PRIO_PROCESS, 0) }
}

/// This process's attributes, as its jobs should start with them.
pub fn of_this_process() -> StartAttrs {
    let limits = RESOURCES
        .iter()
        .filter_map(|(name, resource)| {
            let (mut soft, hard) = getrlimit(*resource).ok()?;
            if *resource == Resource::RLIMIT_NOFILE
                && let Some(original) = super::fd_limit::original()
            {
                soft = original;
            }
            Some(Limit {
                resource: (*name).to_string(),
                soft: finite(soft),
                hard: finite(hard),
            })
        })
        .collect();
    StartAttrs {
        umask: umask(),
        nice: nice(),
        limits,
    }
}

/// Take `attrs` for this process; returns what could not be taken, each
/// said (an unprivileged process cannot raise its priority or a hard
/// limit: it keeps what it has and comes as close as it may).
pub fn apply(attrs: &StartAttrs) -> Vec<String> {
    let mut missed = Vec::new();
    if let Some(mask) = attrs.umask {
        nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(mask & 0o777));
    }
    let now = nice();
    if now != attrs.nice {
        // SAFETY: setpriority only changes this process's scheduling priority.
        let set = unsafe { nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, attrs.nice) };
        if set != 0 {
            missed.push(format!(
                "nice stays {now}, not the gateway's {}: {}",
                attrs.nice,
                std::io::Error::last_os_error()
            ));
        }
    }
    for limit in &attrs.limits {
        let Some((_, resource)) = RESOURCES.iter().find(|(n, _)| *n == limit.resource) else {
            continue;
        };
        let Ok((soft_now, hard_now)) = getrlimit(*resource) else {
            continue;
        };
        let (soft, hard) = (raw(limit.soft), raw(limit.hard));
        if (soft, hard) == (soft_now, hard_now) || setrlimit(*resource, soft, hard).is_ok() {
            continue;
        }
        // A hard limit above ours cannot be had: ours, and the soft one under it.
        let _ = setrlimit(*resource, soft.min(hard_now), hard_now.min(hard));
        let shown = |v: u64| finite(v).map_or("unlimited".to_string(), |v| v.to_string());
        missed.push(format!(
            "limit {} stays at hard {}, under the gateway's {}: only a privileged process may raise it",
            limit.resource,
            shown(hard_now.min(hard)),
            shown(hard)
        ));
    }
    missed
}

/// In a worker, first thing: take the attributes its launcher handed in
/// [`ENV`] (nothing to do without them), saying on stderr (the worker's
/// log) what could not be taken.
pub fn take_from_env() {
    let Some(text) = std::env::var_os(ENV) else {
        return;
    };
    let attrs: StartAttrs = match serde_json::from_str(&text.to_string_lossy()) {
        Ok(attrs) => attrs,
        Err(e) => {
            eprintln!(
                "hermes-cron-worker: {ENV} is not readable ({e}); the job starts as this worker did"
            );
            return;
        }
    };
    for why in apply(&attrs) {
        eprintln!("hermes-cron-worker: {why}");
    }
}

/// `attrs` as [`ENV`] carries them.
pub fn to_env(attrs: &StartAttrs) -> String {
    serde_json::to_string(attrs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_every_limit_and_taking_its_own_changes_nothing() {
        let mine = of_this_process();
        assert_eq!(mine.limits.len(), RESOURCES.len());
        assert!(mine.umask.is_some());
        assert_eq!(apply(&mine), Vec::<String>::new());
        assert_eq!(of_this_process(), mine);
        let back: StartAttrs = serde_json::from_str(&to_env(&mine)).unwrap();
        assert_eq!(back, mine);
    }
}
