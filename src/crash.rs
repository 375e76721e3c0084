//! Test-only crash points: named places where a process can be made to die
//! by SIGKILL, to prove that nothing is lost or doubled at that step.
//!
//! Set `HERMES_CRON_CRASH_AT=<point>` (one name, or several separated by
//! commas). Production never sets it; an unset variable costs one cached
//! lookup. Points:
//!
//! | point | where |
//! |---|---|
//! | `claim_before_commit` | tick/gateway: every row of the pass inserted, the transaction not yet committed, the tick lock held |
//! | `after_claim_commit` | tick/gateway/`run`: the claim committed, the lock released, nothing dispatched |
//! | `after_worker_spawn` | launcher: the worker is spawned and held, no scope asked for yet |
//! | `after_scope_created` | launcher: the scope exists, the go (or stage) line not yet written |
//! | `after_go` | launcher: the go byte written |
//! | `after_stage_claim` | gateway: runs claimed ahead of their instant committed, nothing staged |
//! | `after_stage_line` | launcher: a worker's stage line written; it holds its row until released |
//! | `after_release` | gateway: the release bytes of an instant's staged runs written |
//! | `worker_before_adopt` | worker: released (go byte read) and its row read, the adopting compare-and-set not yet made |
//! | `worker_after_adopt` | worker: the row is `running`, the job not yet started |
//! | `worker_before_finish` | worker: the job ended, the terminal row not yet written |
//! | `worker_after_finish` | worker: the terminal row written, the worker not yet exited |
//! | `worker_before_stage` | worker: its stage line read and its row read, the staging compare-and-set not yet made |
//! | `worker_after_stage` | worker: the row is `staged`, waiting for its release |
//! | `worker_after_fork` | worker: released, the command forked, the start not yet recorded |
//! | `worker_after_start` | worker: the row is `running` after a release |
//! | `worker_before_withdraw` | worker: staged and not released (EOF), about to withdraw its row |
//! | `sweep_before_resolve` | sweep: about to resolve (or withdraw) the first stale row |
//! | `lost_host_before_resolve` | a survivor: another host declared lost in its open transaction, about to record its first started run `host_lost` |

use std::sync::OnceLock;

/// The environment variable naming the crash points.
pub const CRASH_ENV: &str = "HERMES_CRON_CRASH_AT";

fn armed() -> &'static [String] {
    static POINTS: OnceLock<Vec<String>> = OnceLock::new();
    POINTS.get_or_init(|| {
        std::env::var(CRASH_ENV)
            .map(|v| {
                v.split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// Die by SIGKILL here if `point` is armed.
pub fn point(point: &str) {
    if armed().iter().any(|p| p == point) {
        eprintln!("hermes-cron: crash point {point} reached; killing self (test hook {CRASH_ENV})");
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGKILL);
    }
}
