//! Why a row is in its state: the stable reason codes stored in
//! `executions.reason_code` and printed by `runs --json`.

/// A reason code. The text forms are part of the documented `--json` output:
/// never renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReasonCode {
    /// Skipped: the previous run of the job was still going (overlap `skip`).
    Overlap,
    /// Missed: an older slot collapsed into a newer one (catch-up `once`).
    Collapsed,
    /// Missed: the slot was older than the misfire grace.
    OutsideGrace,
    /// Missed: beyond the newest 100 slots of catch-up `all`.
    CatchUpLimit,
    /// Timed out: the job's timeout.
    Timeout,
    /// Timed out: the worker stopped stamping its heartbeat.
    Stalled,
    /// Timed out: the job wrote no output for its idle timeout.
    Idle,
    /// Failed: the command exited non-zero.
    ExitCode,
    /// Failed: the command was killed by a signal nobody forwarded.
    Killed,
    /// Cancelled: the worker received a signal and passed it on.
    Signal,
    /// Failed: the command could not be started.
    ExecFailed,
    /// Failed: the worker could not be started.
    SpawnFailed,
    /// Refused: a restart-safe scope was required and none could be made.
    ScopeUnavailable,
    /// Missed: the process that claimed the row died (or lost track of it)
    /// before a worker adopted it, so it never ran, and its catch-up policy
    /// did not run it then (an earlier version recorded it `unknown`).
    ClaimerDied,
    /// Unknown: the worker died without writing an outcome.
    WorkerDied,
    /// Unknown: a degraded worker died with the gateway that started it.
    GatewayRestart,
    /// Missed: the gateway stopped before dispatching the claim.
    GatewayStopped,
    /// Failed: the worker ended before adopting its row (the command never started).
    WorkerExited,
    /// Unknown: the row names no owner that could be running it.
    NoOwner,
    /// Skipped: the command exited with its declined status (a Hermes job's
    /// fire that Hermes did not grant: already being fired, paused or gone).
    Declined,
    /// Unknown: the run had started on a host whose lease expired; a
    /// surviving gateway recorded it (never re-run).
    HostLost,
    /// Failed: the job ran, but what it was to deliver was not delivered (a
    /// Hermes job whose answer Hermes could not send to its chat).
    DeliveryFailed,
    /// Any end: Hermes ran the job by itself, outside hermes-cron (`hermes
    /// cron run`, its built-in ticker); the row says what Hermes recorded.
    RanOutside,
}

crate::text_enum_impls!(ReasonCode, "reason code", {
    Overlap => "overlap", Collapsed => "collapsed", OutsideGrace => "outside_grace",
    CatchUpLimit => "catch_up_limit", Timeout => "timeout", Stalled => "stalled", Idle => "idle",
    ExitCode => "exit_code", Killed => "killed", Signal => "signal", ExecFailed => "exec_failed",
    SpawnFailed => "spawn_failed", ScopeUnavailable => "scope_unavailable",
    ClaimerDied => "claimer_died", WorkerDied => "worker_died", GatewayRestart => "gateway_restart",
    GatewayStopped => "gateway_stopped", WorkerExited => "worker_exited", NoOwner => "no_owner",
    Declined => "declined", HostLost => "host_lost", DeliveryFailed => "delivery_failed",
    RanOutside => "ran_outside",
});

crate::text_enum_serde!(ReasonCode);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_text() {
        for code in ReasonCode::ALL {
            assert_eq!(code.as_str().parse::<ReasonCode>().unwrap(), *code);
            assert!(
                code.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_')
            );
        }
    }
}
