//! The one judgement of an active row whose owner may be gone: given the row
//! and the evidence (is its owner alive, by pid and start time; is a worker
//! started for it alive; did we reap its worker; what its scope holds; how
//! long it has been silent), what should happen to it. Pure: the evidence is
//! gathered by the main crate's `reconcile` (from `/proc`, the bus, `wait`),
//! which then calls the named ledger move the [`Judgement`] names.
//!
//! The rules, in order:
//! 1. A terminal row is [`Judgement::Ended`].
//! 2. A row still `claimed` by the launcher that reaped its worker: the worker
//!    ended before adopting it, the command never started: `unadopted`. A
//!    `staged` row whose worker its launcher reaped: `unadopted` when the
//!    launcher never released it (the command never started), else
//!    `worker_died` (it may have forked the command before recording it).
//! 3. At a gateway's start, a `running` row with a scope: the scope's process
//!    list decides when it can (adopt, or `worker_died`).
//! 4. An owner that cannot be read: `no_owner`.
//! 5. A live owner: the row is left to it (a `running` row is watched), unless
//!    it has been silent for [`STALL_INTERVALS`] heartbeat intervals: `stalled`;
//!    or it is a `claimed` row of the judging gateway itself that it no longer
//!    tracks (a launch or a reaped worker it could not record while the ledger
//!    was out of reach) with no worker alive for it: retaken, as in 6.
//! 6. A dead claimer of a `claimed` row: left alone while a worker started
//!    for the row lives (it will adopt it, or exit on EOF); else a claim made
//!    ahead of its instant for staging is withdrawn (no worker ever held it,
//!    so its command never started: the slot is claimed again), any other
//!    is retaken ([`Judgement::Retake`]): a worker adopts its row before it
//!    starts the command, so a `claimed` row's command never started, and
//!    the occurrence is owed a run. The judging gateway takes the claim over
//!    and runs it, or records it `missed` (`claimer_died`) when its catch-up
//!    policy says so ([`retake_fate`]). Until a gateway (or a `tick`) judges
//!    it, it stays claimed.
//! 7. A dead worker of a `staged` row: `worker_died` (its launcher may have
//!    released it, and it may have forked the command before recording it;
//!    a worker whose launcher went away first withdraws its row itself).
//! 8. A dead worker of a `running` row: `gateway_restart` when it ran degraded
//!    under a gateway that is gone too, else `worker_died`.
//!
//! Rows of another host are never judged by the processes of this one (a
//! pid means nothing across hosts). They are judged only when that host's
//! lease has expired, by [`judge_lost_row`]: a row it claimed but never
//! started is taken over by the survivor (`take_over`: the compare-and-set
//! on the lost claimer means its worker can no longer adopt it), one that
//! had started is `unknown` (`host_lost`) and never re-run.

use crate::run::{
    DispatchMode, ExecState, Execution, Owner, OwnerRole, ProcessIdentity, ReasonCode,
};
use crate::schedule::{Timestamp, format_duration};
use std::time::Duration;

/// Heartbeat intervals of silence that make a live worker stalled.
pub const STALL_INTERVALS: u32 = 3;

/// Answers whether a process is alive.
pub trait Liveness {
    /// Whether this very process (pid and start time) is alive.
    fn alive(&self, owner: &Owner) -> bool;
    /// A live worker process started for `execution` (it may not have
    /// adopted its row yet).
    fn worker_for(&self, execution: &str) -> Option<ProcessIdentity>;
}

/// We reaped the worker of the row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reaped {
    /// Who launched (and reaped) it: the row's claimer if it never adopted.
    pub by: Owner,
    /// The worker's pid.
    pub pid: u32,
    /// How it ended, in words (`exit 3`, `SIGKILL`).
    pub how: String,
    /// Its launcher released it (wrote the go) before it ended: a staged
    /// worker may have started the command.
    pub released: bool,
}

/// What the user manager says about a row's scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopeSeen {
    /// The unit exists and holds these pids.
    Holds(Vec<u32>),
    /// No such unit.
    Gone,
}

/// How long silence may last, for the stall check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Silence {
    /// The row's own heartbeat interval.
    pub interval: Duration,
    /// The instant of the check.
    pub now: Timestamp,
    /// When the checker last resumed watching after a gap in its own running
    /// (a suspend, a stop): nobody's silence counts from before it.
    pub watching_since: Option<Timestamp>,
}

/// The evidence about one row beyond the liveness of processes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// We reaped the row's worker (None: not one we launched, or it lives).
    pub reaped: Option<Reaped>,
    /// At a gateway's start: its scope, when the manager could be asked.
    pub scope: Option<ScopeSeen>,
    /// Check for a stall.
    pub silence: Option<Silence>,
    /// The row was claimed ahead of its instant for staging and not yet
    /// released (the ledger's `staged_claims` has it).
    pub staging: bool,
    /// The row's worker lives but its command has ended (the worker has no
    /// live child): the worker is recording how it ended, however long the
    /// ledger keeps it waiting. Silence is then no stall.
    pub command_ended: bool,
    /// The row is a claim of the judging gateway itself that it no longer
    /// tracks: queued, in flight, staged or watched, it would know it.
    pub untracked: bool,
}

/// What to do with a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Already terminal: nothing to do.
    Ended,
    /// Its owner (or a worker started for it) lives: leave it; a `running`
    /// row is watched to its end.
    Alive {
        /// Who lives, for the log.
        note: String,
    },
    /// `unadopted`: failed (`worker_exited`), retried per policy.
    Unadopted {
        /// Why, as recorded.
        reason: String,
    },
    /// `orphaned`: unknown, never retried.
    Orphaned {
        /// Why, as a code (`claimer_died`, `worker_died`, ...).
        code: ReasonCode,
        /// Why, as recorded.
        reason: String,
    },
    /// `stalled`: timed out (`stalled`); the caller stops the worker.
    Stalled {
        /// Why, as recorded.
        reason: String,
    },
    /// `withdraw`: a claim made ahead that no worker ever held is taken
    /// back (the row removed, the job's slot restored).
    Withdraw {
        /// Why, for the log.
        reason: String,
    },
    /// A claim whose command never started and nobody will start: the
    /// judging gateway takes it over and runs it (`take_over`), or records it
    /// `missed` by its catch-up policy ([`retake_fate`]).
    Retake {
        /// Why, as recorded when it is missed.
        reason: String,
    },
}

impl Judgement {
    /// The state, reason code and reason a moving judgement records (None
    /// for one that moves nothing).
    pub fn recorded(&self) -> Option<(ExecState, ReasonCode, &str)> {
        match self {
            Judgement::Ended
            | Judgement::Alive { .. }
            | Judgement::Withdraw { .. }
            | Judgement::Retake { .. } => None,
            Judgement::Unadopted { reason } => {
                Some((ExecState::Failed, ReasonCode::WorkerExited, reason))
            }
            Judgement::Orphaned { code, reason } => Some((ExecState::Unknown, *code, reason)),
            Judgement::Stalled { reason } => {
                Some((ExecState::TimedOut, ReasonCode::Stalled, reason))
            }
        }
    }
}

/// What becomes of a retaken claim ([`Judgement::Retake`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetakeFate {
    /// Taken over and run now.
    Run,
    /// Recorded `missed` (`claimer_died`): it never ran and will not.
    Missed {
        /// Why, as recorded.
        reason: String,
    },
}

/// What the job still wants of a retaken claim: whether it is paused, its
/// catch-up policy runs missed slots (`once`/`all`, not `skip`), and the
/// misfire grace of its schedule at the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetakeJob {
    /// The job is paused (a one-shot the claim completed is not: its one
    /// occurrence is this one).
    pub paused: bool,
    /// Its catch-up policy runs a late slot (`once` or `all`).
    pub catches_up: bool,
    /// How late a slot may start (`plan::misfire_grace`).
    pub grace: Duration,
}

impl RetakeJob {
    /// What `job` wants of its claim for `slot` (its slot, else when it
    /// was claimed), read in `zone`; `catch_up_missed` is the config's
    /// default policy (`cron.catch_up_missed`).
    pub fn of(
        job: &crate::job::Job,
        catch_up_missed: bool,
        zone: crate::schedule::Tz,
        slot: Timestamp,
    ) -> RetakeJob {
        use crate::job::{CatchUp, JobState};
        use crate::schedule::Schedule;
        let policy = match job.schedule {
            Schedule::External => CatchUp::All,
            _ => job
                .catch_up
                .unwrap_or(CatchUp::default_for(catch_up_missed)),
        };
        RetakeJob {
            paused: matches!(job.state, JobState::Paused { .. }),
            catches_up: policy != CatchUp::Skip,
            grace: crate::plan::misfire_grace(job.schedule.period_at(slot, zone, job.anchor)),
        }
    }
}

/// Whether a claim that never started (`row`, judged [`Judgement::Retake`]
/// for `why`) runs now or is `missed`, as the job's catch-up policy says of a
/// slot the gateway was down for: a scheduled occurrence (a slot, a retry, an
/// `@reboot` run) runs when its job is active, catches up, and it is within
/// the misfire grace of when it was claimed; a manual or spawned run never
/// runs again (whoever asked has been told it did not start), nor does the
/// run of a job that is gone.
pub fn retake_fate(
    row: &Execution,
    job: Option<RetakeJob>,
    why: &str,
    now: Timestamp,
) -> RetakeFate {
    use crate::run::Source;
    let missed = |because: String| RetakeFate::Missed {
        reason: format!("{why}; {because}"),
    };
    if matches!(row.source, Source::Manual | Source::Spawn | Source::Hermes) {
        return missed(format!("a {} run is not started again", row.source));
    }
    let Some(job) = job else {
        return missed("its job is gone".into());
    };
    if job.paused {
        return missed("its job is paused".into());
    }
    if !job.catches_up {
        return missed("its catch-up policy is skip".into());
    }
    let late = (now - row.claimed_at).to_std().unwrap_or_default();
    if late > job.grace {
        return missed(format!(
            "it was claimed {} ago, past its misfire grace of {}",
            format_duration(late),
            format_duration(job.grace)
        ));
    }
    RetakeFate::Run
}

/// What a surviving gateway does with an active row of a host whose lease
/// expired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LostRowFate {
    /// Terminal already: nothing.
    Ended,
    /// Claimed, never started: the survivor takes it over and dispatches it.
    TakeOver,
    /// Claimed ahead of its instant (staging), or staged by a worker there,
    /// never started: taken back as if never claimed (`withdraw`); the job's
    /// slot is set back, and the survivors claim it at its instant. (Taken
    /// over, it would run before its instant.)
    Withdraw,
    /// Started: `unknown` (`host_lost`), never re-run.
    Unknown {
        /// Why, as recorded.
        reason: String,
    },
}

/// Judge an active row of `lost` (a host whose lease ran out at
/// `lease_until`), for the survivor `me`; `claimed_ahead`: the row was
/// claimed ahead of its instant for staging.
pub fn judge_lost_row(
    row: &Execution,
    claimed_ahead: bool,
    lost: &str,
    lease_until: Timestamp,
    me: &str,
) -> LostRowFate {
    match row.state {
        ExecState::Staged => LostRowFate::Withdraw,
        ExecState::Claimed if claimed_ahead => LostRowFate::Withdraw,
        ExecState::Claimed => LostRowFate::TakeOver,
        ExecState::Running => {
            let started = row
                .started_at
                .map_or("?".into(), |s| s.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            let beat = row.heartbeat_at.map_or("never".into(), |h| {
                h.format("%Y-%m-%dT%H:%M:%SZ").to_string()
            });
            LostRowFate::Unknown {
                reason: format!(
                    "host {lost} stopped renewing its lease (it ran out at {}); the run had started there at {started} (worker pid {}, last heartbeat {beat}) and may still be running or have finished unseen; recorded by host {me}, never re-run",
                    lease_until.format("%Y-%m-%dT%H:%M:%SZ"),
                    row.pid.map_or("?".into(), |p| p.to_string()),
                ),
            }
        }
        _ => LostRowFate::Ended,
    }
}

/// Whether a worker whose `finish` lost its compare-and-set may record its
/// outcome as a late outcome: its row was ended `unknown` (`host_lost`) by a
/// survivor while it, the row's owner, still ran. The row stays as the
/// survivor decided; the late outcome is kept beside it.
pub fn may_record_late(row: &Execution, me: &Owner) -> bool {
    row.state == ExecState::Unknown
        && row.reason_code == Some(ReasonCode::HostLost)
        && row.owner.as_ref().and_then(|o| o.owner()) == Some(*me)
}

/// Whether `row` (running) has been silent too long. Silence is counted
/// from its last heartbeat, but not from before `watching_since`.
pub fn is_stalled(row: &Execution, silence: &Silence) -> bool {
    let Some(last) = row.heartbeat_at.or(row.started_at) else {
        return false;
    };
    let last = silence.watching_since.map_or(last, |w| last.max(w));
    (silence.now - last)
        .to_std()
        .is_ok_and(|silent| silent > silence.interval * STALL_INTERVALS)
}

/// Judge `row` from the evidence.
pub fn judge(row: &Execution, live: &dyn Liveness, ev: &Evidence) -> Judgement {
    if row.state.is_terminal() {
        return Judgement::Ended;
    }
    let owner = row.owner.as_ref().and_then(|o| o.owner());
    if let Some(r) = &ev.reaped
        && row.state == ExecState::Claimed
        && owner == Some(r.by)
    {
        return Judgement::Unadopted {
            reason: format!(
                "worker pid {} ended ({}) before adopting the row; the command never started",
                r.pid, r.how
            ),
        };
    }
    if let Some(r) = &ev.reaped
        && row.state == ExecState::Staged
        && row.claimed_by.as_ref().and_then(|c| c.owner()) == Some(r.by)
    {
        return reaped_staged(r);
    }
    if let (ExecState::Running, Some(unit), Some(worker), Some(scope)) =
        (row.state, row.unit.as_deref(), owner, &ev.scope)
        && let Some(j) = by_scope(unit, &worker, live.alive(&worker), scope)
    {
        return j;
    }
    let Some(owner) = owner else {
        return Judgement::Orphaned {
            code: ReasonCode::NoOwner,
            reason: "the row has no readable owner; nothing can be running it".into(),
        };
    };
    if live.alive(&owner) {
        if row.state == ExecState::Claimed
            && ev.untracked
            && live.worker_for(row.id.as_str()).is_none()
        {
            return Judgement::Retake {
                reason: format!(
                    "the gateway that claimed it (pid {}) lost track of it while the ledger was out of reach, and no worker adopted it; the command never started",
                    owner.process.pid
                ),
            };
        }
        if let Some(silence) = &ev.silence
            && row.state == ExecState::Running
            && is_stalled(row, silence)
            && !ev.command_ended
        {
            return Judgement::Stalled {
                reason: stall_reason(row, silence),
            };
        }
        return Judgement::Alive {
            note: match row.state {
                ExecState::Running if ev.command_ended => format!(
                    "worker {owner} alive; its command ended and it is recording the outcome"
                ),
                ExecState::Claimed => format!("claimed by live {owner}"),
                ExecState::Staged => format!("staged by live worker {owner}"),
                _ => format!("worker {owner} alive with the same start time"),
            },
        };
    }
    match row.state {
        ExecState::Claimed => match live.worker_for(row.id.as_str()) {
            // Released (or held) but not yet adopted: the worker moves the
            // row on, or exits on EOF and a later look resolves it.
            Some(worker) => Judgement::Alive {
                note: format!("worker pid {} started for it lives", worker.pid),
            },
            None if ev.staging => Judgement::Withdraw {
                reason: format!(
                    "claimed ahead of its instant by the {} pid {}, which ended before a worker staged it; the command never started",
                    owner.role.describe(),
                    owner.process.pid
                ),
            },
            None => Judgement::Retake {
                reason: format!(
                    "the {} that claimed it (pid {}) ended before a worker adopted the row (checked pid {} with start time {}: gone); the command never started",
                    owner.role.describe(),
                    owner.process.pid,
                    owner.process.pid,
                    owner.process.start
                ),
            },
        },
        ExecState::Staged => Judgement::Orphaned {
            code: ReasonCode::WorkerDied,
            reason: format!(
                "worker pid {} (start time {}) staged the row and is gone without a word; it may have been released and started the command",
                owner.process.pid, owner.process.start
            ),
        },
        _ => worker_gone(row, &owner, live),
    }
}

/// A staged row whose worker its launcher reaped.
fn reaped_staged(r: &Reaped) -> Judgement {
    if r.released {
        Judgement::Orphaned {
            code: ReasonCode::WorkerDied,
            reason: format!(
                "worker pid {} ended ({}) after its release without recording the start; the command may have started",
                r.pid, r.how
            ),
        }
    } else {
        Judgement::Unadopted {
            reason: format!(
                "worker pid {} ended ({}) while staged, before its release; the command never started",
                r.pid, r.how
            ),
        }
    }
}

/// A running row's worker is dead: say what was checked, and whether the
/// gateway that ran it degraded is gone too.
fn worker_gone(row: &Execution, worker: &Owner, live: &dyn Liveness) -> Judgement {
    let mut reason = format!(
        "worker pid {} (start time {}) is gone and wrote no outcome",
        worker.process.pid, worker.process.start
    );
    let claimer = row.claimed_by.as_ref().and_then(|c| c.owner());
    if row.dispatch_mode == Some(DispatchMode::Degraded)
        && let Some(c) = claimer.filter(|c| c.role == OwnerRole::Gateway && !live.alive(c))
    {
        reason.push_str(&format!(
            "; it ran degraded (no scope) under gateway pid {}, which is gone too: a gateway restart or stop kills degraded runs",
            c.process.pid
        ));
        return Judgement::Orphaned {
            code: ReasonCode::GatewayRestart,
            reason,
        };
    }
    if let Some(unit) = &row.unit {
        reason.push_str(&format!("; its scope was {unit}"));
    }
    Judgement::Orphaned {
        code: ReasonCode::WorkerDied,
        reason,
    }
}

/// A running scoped row judged by its scope's process list. None: the list
/// does not settle it (the scope is gone but the worker lives); judge by pid.
fn by_scope(unit: &str, worker: &Owner, alive: bool, scope: &ScopeSeen) -> Option<Judgement> {
    let pid = worker.process.pid;
    Some(match (scope, alive) {
        (ScopeSeen::Holds(pids), true) if pids.contains(&pid) => Judgement::Alive {
            note: format!("scope {unit} holds worker pid {pid}"),
        },
        (ScopeSeen::Holds(_), true) => Judgement::Alive {
            note: format!(
                "worker pid {pid} alive (start time matches) though scope {unit} does not list it"
            ),
        },
        (ScopeSeen::Holds(_), false) => Judgement::Orphaned {
            code: ReasonCode::WorkerDied,
            reason: format!(
                "checked scope {unit}: it exists but no longer holds worker pid {pid}; the worker is gone and wrote no outcome"
            ),
        },
        (ScopeSeen::Gone, false) => Judgement::Orphaned {
            code: ReasonCode::WorkerDied,
            reason: format!(
                "checked scope {unit}: gone; worker pid {pid} (start time {}): gone; no outcome was written",
                worker.process.start
            ),
        },
        (ScopeSeen::Gone, true) => return None,
    })
}

fn stall_reason(row: &Execution, silence: &Silence) -> String {
    let silent = row
        .heartbeat_at
        .map(|h| format_duration((silence.now - h).to_std().unwrap_or_default()));
    format!(
        "no heartbeat for {} (limit: {} intervals of {}) while worker pid {} was alive; stopped",
        silent.unwrap_or_else(|| "ever".into()),
        STALL_INTERVALS,
        format_duration(silence.interval),
        row.pid.unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RowOwner;
    use chrono::TimeZone;

    struct Dead;
    impl Liveness for Dead {
        fn alive(&self, _: &Owner) -> bool {
            false
        }
        fn worker_for(&self, _: &str) -> Option<ProcessIdentity> {
            None
        }
    }
    struct Alive;
    impl Liveness for Alive {
        fn alive(&self, _: &Owner) -> bool {
            true
        }
        fn worker_for(&self, _: &str) -> Option<ProcessIdentity> {
            None
        }
    }
    /// The claimer is dead but the released worker lives.
    struct Released;
    impl Liveness for Released {
        fn alive(&self, _: &Owner) -> bool {
            false
        }
        fn worker_for(&self, _: &str) -> Option<ProcessIdentity> {
            Some(ProcessIdentity { pid: 99, start: 1 })
        }
    }

    fn owner(role: OwnerRole, pid: u32) -> Owner {
        Owner {
            role,
            process: ProcessIdentity { pid, start: 7 },
        }
    }

    fn row(
        state: ExecState,
        owner: Owner,
        claimed_by: Owner,
        mode: Option<DispatchMode>,
    ) -> Execution {
        Execution {
            state,
            owner: Some(owner.into()),
            claimed_by: Some(claimed_by.into()),
            dispatch_mode: mode,
            ..Execution::sample()
        }
    }

    fn code(j: Judgement) -> ReasonCode {
        match j {
            Judgement::Orphaned { code, .. } => code,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lost_hosts_claims_are_taken_over_and_its_started_runs_are_unknown() {
        let gw = owner(OwnerRole::Gateway, 10);
        let claimed = row(ExecState::Claimed, gw, gw, None);
        let until = chrono::Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        assert_eq!(
            judge_lost_row(&claimed, false, "b", until, "a"),
            LostRowFate::TakeOver
        );
        let worker = owner(OwnerRole::Worker, 11);
        let running = Execution {
            pid: Some(11),
            ..row(ExecState::Running, worker, gw, Some(DispatchMode::Scoped))
        };
        assert_eq!(
            judge_lost_row(&claimed, true, "b", until, "a"),
            LostRowFate::Withdraw,
            "a claim made ahead of its instant"
        );
        let staged = Execution {
            state: ExecState::Staged,
            ..claimed.clone()
        };
        assert_eq!(
            judge_lost_row(&staged, true, "b", until, "a"),
            LostRowFate::Withdraw
        );
        match judge_lost_row(&running, false, "b", until, "a") {
            LostRowFate::Unknown { reason } => {
                assert!(
                    reason.contains("host b") && reason.contains("never re-run"),
                    "{reason}"
                );
                assert!(reason.contains("pid 11"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let done = Execution {
            state: ExecState::Succeeded,
            ..running.clone()
        };
        assert_eq!(
            judge_lost_row(&done, false, "b", until, "a"),
            LostRowFate::Ended
        );

        let lost = Execution {
            state: ExecState::Unknown,
            reason_code: Some(ReasonCode::HostLost),
            ..running.clone()
        };
        assert!(may_record_late(&lost, &worker));
        assert!(!may_record_late(&lost, &owner(OwnerRole::Worker, 12)));
        let died = Execution {
            reason_code: Some(ReasonCode::WorkerDied),
            ..lost
        };
        assert!(!may_record_late(&died, &worker), "only host_lost rows");
    }

    #[test]
    fn regression_a_released_worker_keeps_its_claimed_row() {
        let cli = owner(OwnerRole::Cli, 10);
        let j = judge(
            &row(ExecState::Claimed, cli, cli, None),
            &Released,
            &Evidence::default(),
        );
        assert!(matches!(j, Judgement::Alive { .. }), "{j:?}");
    }

    #[test]
    fn live_owners_are_left_alone() {
        let gw = owner(OwnerRole::Gateway, 10);
        let j = judge(
            &row(ExecState::Claimed, gw, gw, None),
            &Alive,
            &Evidence::default(),
        );
        assert!(matches!(j, Judgement::Alive { .. }), "{j:?}");
    }

    /// A claim of the judging gateway that it no longer tracks (its launch
    /// or its worker's end could not be recorded) is retaken, unless a
    /// worker started for it lives.
    #[test]
    fn a_claim_the_live_gateway_lost_track_of_is_retaken() {
        let gw = owner(OwnerRole::Gateway, 10);
        let claimed = row(ExecState::Claimed, gw, gw, None);
        let untracked = Evidence {
            untracked: true,
            ..Evidence::default()
        };
        let j = judge(&claimed, &Alive, &untracked);
        assert!(matches!(j, Judgement::Retake { .. }), "{j:?}");
        let j = judge(&claimed, &Released, &untracked);
        assert!(matches!(j, Judgement::Alive { .. }), "{j:?}");
    }

    #[test]
    fn a_retaken_claim_runs_within_its_catch_up_policy_and_grace_only() {
        use crate::run::Source;
        let gw = owner(OwnerRole::Gateway, 10);
        let claimed = row(ExecState::Claimed, gw, gw, None);
        let at = claimed.claimed_at;
        let job = RetakeJob {
            paused: false,
            catches_up: true,
            grace: Duration::from_secs(120),
        };
        let fate = |row: &Execution, job: Option<RetakeJob>, late_s: i64| {
            retake_fate(
                row,
                job,
                "claimer gone",
                at + chrono::Duration::seconds(late_s),
            )
        };
        let scheduled = Execution {
            source: Source::Schedule,
            ..claimed.clone()
        };
        assert_eq!(fate(&scheduled, Some(job), 60), RetakeFate::Run);
        let missed = |f: RetakeFate| match f {
            RetakeFate::Missed { reason } => reason,
            RetakeFate::Run => panic!("ran"),
        };
        assert!(missed(fate(&scheduled, Some(job), 121)).contains("past its misfire grace of 2m"));
        assert!(missed(fate(&scheduled, None, 1)).contains("job is gone"));
        let paused = RetakeJob {
            paused: true,
            ..job
        };
        assert!(missed(fate(&scheduled, Some(paused), 1)).contains("paused"));
        let skip = RetakeJob {
            catches_up: false,
            ..job
        };
        assert!(missed(fate(&scheduled, Some(skip), 1)).contains("catch-up policy is skip"));
        for source in [Source::Manual, Source::Spawn] {
            let r = Execution {
                source,
                ..claimed.clone()
            };
            let why = missed(fate(&r, Some(job), 1));
            assert!(why.starts_with("claimer gone; a ") && why.contains("not started again"));
        }
        for source in [Source::Retry, Source::CatchUp, Source::Reboot] {
            let r = Execution {
                source,
                ..claimed.clone()
            };
            assert_eq!(fate(&r, Some(job), 1), RetakeFate::Run, "{source:?}");
        }
    }

    #[test]
    fn dead_claimer_and_dead_worker_are_named() {
        let gw = owner(OwnerRole::Gateway, 10);
        let w = owner(OwnerRole::Worker, 11);
        let none = Evidence::default();
        match judge(&row(ExecState::Claimed, gw, gw, None), &Dead, &none) {
            Judgement::Retake { reason } => {
                assert!(reason.contains("pid 10"), "{reason}");
                assert!(reason.contains("never started"), "{reason}");
            }
            j => panic!("{j:?}"),
        }
        match judge(
            &row(ExecState::Running, w, gw, Some(DispatchMode::Degraded)),
            &Dead,
            &none,
        ) {
            Judgement::Orphaned { code, reason } => {
                assert_eq!(code, ReasonCode::GatewayRestart);
                assert!(reason.contains("gateway pid 10"), "{reason}");
            }
            j => panic!("{j:?}"),
        }
        let scoped = row(ExecState::Running, w, gw, Some(DispatchMode::Scoped));
        assert_eq!(code(judge(&scoped, &Dead, &none)), ReasonCode::WorkerDied);
        let mut junk = scoped.clone();
        junk.owner = Some(RowOwner::stored("junk"));
        assert_eq!(code(judge(&junk, &Alive, &none)), ReasonCode::NoOwner);
    }

    #[test]
    fn a_reaped_unadopted_worker_fails_the_row_only_for_its_launcher() {
        let gw = owner(OwnerRole::Gateway, 10);
        let other = owner(OwnerRole::Cli, 12);
        let claimed = row(ExecState::Claimed, gw, gw, None);
        let reaped = |by| Evidence {
            reaped: Some(Reaped {
                by,
                pid: 42,
                how: "exit 3".into(),
                released: false,
            }),
            ..Evidence::default()
        };
        match judge(&claimed, &Alive, &reaped(gw)) {
            Judgement::Unadopted { reason } => {
                assert!(reason.contains("worker pid 42 ended (exit 3)"), "{reason}")
            }
            j => panic!("{j:?}"),
        }
        assert!(matches!(
            judge(&claimed, &Alive, &reaped(other)),
            Judgement::Alive { .. }
        ));
    }

    #[test]
    fn a_staged_row_is_failed_when_never_released_and_unknown_once_released() {
        let gw = owner(OwnerRole::Gateway, 10);
        let w = owner(OwnerRole::Worker, 11);
        let staged = row(ExecState::Staged, w, gw, Some(DispatchMode::Scoped));
        let reaped = |released| Evidence {
            reaped: Some(Reaped {
                by: gw,
                pid: 11,
                how: "SIGKILL".into(),
                released,
            }),
            ..Evidence::default()
        };
        assert!(matches!(
            judge(&staged, &Dead, &reaped(false)),
            Judgement::Unadopted { reason } if reason.contains("before its release")
        ));
        assert_eq!(
            code(judge(&staged, &Dead, &reaped(true))),
            ReasonCode::WorkerDied
        );
        // Nobody knows whether it was released: unknown, never retried.
        assert_eq!(
            code(judge(&staged, &Dead, &Evidence::default())),
            ReasonCode::WorkerDied
        );
        assert!(matches!(
            judge(&staged, &Alive, &Evidence::default()),
            Judgement::Alive { note } if note.starts_with("staged by live worker")
        ));
    }

    #[test]
    fn a_claim_made_for_staging_that_no_worker_held_is_withdrawn() {
        let gw = owner(OwnerRole::Gateway, 10);
        let claimed = row(ExecState::Claimed, gw, gw, None);
        let staging = Evidence {
            staging: true,
            ..Evidence::default()
        };
        assert!(matches!(
            judge(&claimed, &Dead, &staging),
            Judgement::Withdraw { .. }
        ));
        // A worker started for it still lives: it stages or withdraws it itself.
        assert!(matches!(
            judge(&claimed, &Released, &staging),
            Judgement::Alive { .. }
        ));
        assert!(matches!(
            judge(&claimed, &Dead, &Evidence::default()),
            Judgement::Retake { .. }
        ));
    }

    #[test]
    fn the_scope_decides_at_start_when_it_can() {
        let gw = owner(OwnerRole::Gateway, 10);
        let w = owner(OwnerRole::Worker, 11);
        let mut r = row(ExecState::Running, w, gw, Some(DispatchMode::Scoped));
        r.unit = Some("u.scope".into());
        let seen = |scope| Evidence {
            scope: Some(scope),
            ..Evidence::default()
        };
        assert!(matches!(
            judge(&r, &Alive, &seen(ScopeSeen::Holds(vec![11]))),
            Judgement::Alive { note } if note.contains("scope u.scope holds worker pid 11")
        ));
        assert_eq!(
            code(judge(&r, &Dead, &seen(ScopeSeen::Holds(vec![])))),
            ReasonCode::WorkerDied
        );
        assert!(matches!(
            judge(&r, &Dead, &seen(ScopeSeen::Gone)),
            Judgement::Orphaned { reason, .. } if reason.starts_with("checked scope u.scope: gone")
        ));
        // The scope is gone but the worker lives: judged by pid.
        assert!(matches!(
            judge(&r, &Alive, &seen(ScopeSeen::Gone)),
            Judgement::Alive { .. }
        ));
    }

    #[test]
    fn stalled_after_three_silent_intervals() {
        let t0 = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let mut row = Execution::sample();
        row.heartbeat_at = Some(t0);
        let i = Duration::from_secs(5);
        let at = |s| t0 + chrono::Duration::seconds(s);
        let silence = |now, since| Silence {
            interval: i,
            now,
            watching_since: since,
        };
        assert!(!is_stalled(&row, &silence(at(15), None)));
        assert!(is_stalled(&row, &silence(at(16), None)));
        // The checker itself was away until t0+10: silence counts from then.
        assert!(!is_stalled(&row, &silence(at(16), Some(at(10)))));
        assert!(is_stalled(&row, &silence(at(26), Some(at(10)))));

        let w = owner(OwnerRole::Worker, 11);
        row.state = ExecState::Running;
        row.owner = Some(w.into());
        row.pid = Some(11);
        let ev = Evidence {
            silence: Some(silence(at(16), None)),
            ..Evidence::default()
        };
        match judge(&row, &Alive, &ev) {
            Judgement::Stalled { reason } => {
                assert!(
                    reason.starts_with(
                        "no heartbeat for 16s (limit: 3 intervals of 5s) while worker pid 11"
                    ),
                    "{reason}"
                )
            }
            j => panic!("{j:?}"),
        }
        // A dead worker is not stalled: it is gone.
        assert_eq!(code(judge(&row, &Dead, &ev)), ReasonCode::WorkerDied);
        // Nor is a live one whose command ended: it is recording the outcome
        // (a ledger it cannot write silenced it; issue 23).
        let recording = Evidence {
            command_ended: true,
            ..ev.clone()
        };
        match judge(&row, &Alive, &recording) {
            Judgement::Alive { note } => assert!(note.contains("recording"), "{note}"),
            j => panic!("{j:?}"),
        }
    }
}
