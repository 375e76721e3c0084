//! The life of a row, as named moves: which states each one starts from and
//! which it may end in. The ledger (main crate, `ledger/`) is the only code
//! that moves rows, one function per [`Move`], and checks every move against
//! this table before it writes.
//!
//! ```text
//!            claim                adopt                  finish
//!   (none) --------> claimed --------------> running --------------> succeeded | failed
//!     |               |  |  refuse -> refused   ^  |  stalled -> timed_out    | timed_out | cancelled
//!     |               |  |  spawn_failed -> failed |
//!     |               |  |  unadopted -> failed |  |
//!     |               |  |  abandoned -> missed |  |
//!     |               |  +--- orphaned ---------|--+---> unknown (also host_lost)
//!     |               |  +--- take_over --> claimed (a survivor's, on its host)
//!     |         stage |                   start |
//!     |               +----> staged ------------+
//!     |                        |  overlapped -> skipped
//!     |                        |  unadopted -> failed,  orphaned -> unknown
//!     |                        |  withdraw (also from claimed): the row is removed
//!     +--- not_run --> skipped | missed
//! ```
//!
//! `withdraw` is the one move that ends in no state: a run claimed ahead of
//! its instant that never started (its job paused, edited or removed before
//! the instant; its gateway gone before releasing it) is taken back, as if
//! it had never been claimed, and its job's next slot set back to it when
//! the job has not been rescheduled since.
//!
//! `take_over` is the one move between two active states of different
//! owners: a surviving gateway takes a claimed row of a host whose lease
//! expired, compare-and-setting on the lost claimer, so the lost host's
//! worker can no longer adopt it.

use super::state::ExecState;

/// A named move of a ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// A claim inserts the occurrence's row (tick, `run`, `@reboot`, retry, `spawn`).
    Claim,
    /// A claim records a slot that will not run (overlap `skip`, catch-up).
    NotRun,
    /// The worker takes over its claimed row and starts the command.
    Adopt,
    /// The worker stamps its liveness; the state does not change.
    Heartbeat,
    /// The worker records how its run ended.
    Finish,
    /// A restart-safe scope was required and none could be made.
    Refuse,
    /// The worker process could not be started.
    SpawnFailed,
    /// The worker ended before adopting its row: the command never started.
    Unadopted,
    /// The owner died without a terminal state: side effects may have happened.
    Orphaned,
    /// A live worker stopped stamping its heartbeat and was stopped.
    Stalled,
    /// The gateway stopped with the claim not yet dispatched.
    Abandoned,
    /// A surviving gateway takes a claimed row of a host whose lease expired.
    TakeOver,
    /// The worker takes over its row ahead of the instant and holds.
    Stage,
    /// The released worker started the command (right after forking it).
    Start,
    /// At the instant, a previous run of the job was still going (overlap skip).
    Overlapped,
    /// A run claimed ahead that never started is taken back: the row is removed.
    Withdraw,
    /// A run Hermes made by itself, outside hermes-cron (`hermes cron run`,
    /// its built-in ticker), is recorded as Hermes recorded its end.
    RanOutside,
}

use ExecState::*;

impl Move {
    /// Every move, in the order of a row's life.
    pub const ALL: [Move; 17] = [
        Move::Claim,
        Move::NotRun,
        Move::Adopt,
        Move::Heartbeat,
        Move::Finish,
        Move::Refuse,
        Move::SpawnFailed,
        Move::Unadopted,
        Move::Orphaned,
        Move::Stalled,
        Move::Abandoned,
        Move::TakeOver,
        Move::Stage,
        Move::Start,
        Move::Overlapped,
        Move::Withdraw,
        Move::RanOutside,
    ];

    /// The move's name, as the ledger's functions are named.
    pub fn name(self) -> &'static str {
        match self {
            Move::Claim => "claim",
            Move::NotRun => "not_run",
            Move::Adopt => "adopt",
            Move::Heartbeat => "heartbeat",
            Move::Finish => "finish",
            Move::Refuse => "refuse",
            Move::SpawnFailed => "spawn_failed",
            Move::Unadopted => "unadopted",
            Move::Orphaned => "orphaned",
            Move::Stalled => "stalled",
            Move::Abandoned => "abandoned",
            Move::TakeOver => "take_over",
            Move::Stage => "stage",
            Move::Start => "start",
            Move::Overlapped => "overlapped",
            Move::Withdraw => "withdraw",
            Move::RanOutside => "ran_outside",
        }
    }

    /// The states a row may be in for this move (empty: the move inserts it).
    pub fn from(self) -> &'static [ExecState] {
        match self {
            Move::Claim | Move::NotRun | Move::RanOutside => &[],
            Move::Adopt
            | Move::Refuse
            | Move::SpawnFailed
            | Move::Abandoned
            | Move::Stage
            | Move::TakeOver => &[Claimed],
            Move::Unadopted | Move::Overlapped | Move::Withdraw => &[Claimed, Staged],
            Move::Start => &[Staged],
            Move::Heartbeat | Move::Finish | Move::Stalled => &[Running],
            Move::Orphaned => &[Claimed, Staged, Running],
        }
    }

    /// The states the move may leave the row in (empty: the move removes it).
    pub fn to(self) -> &'static [ExecState] {
        match self {
            Move::Withdraw => &[],
            Move::Stage => &[Staged],
            Move::Start => &[Running],
            Move::Overlapped => &[Skipped],
            Move::Claim | Move::TakeOver => &[Claimed],
            Move::NotRun => &[Skipped, Missed],
            Move::Adopt | Move::Heartbeat => &[Running],
            Move::Finish => &[Succeeded, Failed, TimedOut, Cancelled, Skipped],
            Move::Refuse => &[Refused],
            Move::SpawnFailed | Move::Unadopted => &[Failed],
            Move::Orphaned => &[Unknown],
            Move::Stalled => &[TimedOut],
            Move::Abandoned => &[Missed],
            Move::RanOutside => &[Succeeded, Failed, Unknown],
        }
    }

    /// Whether the move removes the row instead of moving it.
    pub fn removes(self) -> bool {
        self.to().is_empty()
    }

    /// Whether the move may take a row from `from` to `to`.
    pub fn allows(self, from: Option<ExecState>, to: ExecState) -> bool {
        let from_ok = match from {
            None => self.from().is_empty(),
            Some(state) => self.from().contains(&state),
        };
        from_ok && self.to().contains(&to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_rows_never_move_and_unknown_comes_only_from_orphaned() {
        for m in Move::ALL {
            assert!(m.from().iter().all(|s| !s.is_terminal()), "{m:?}");
            // Or from Hermes's own record of a run it made outside hermes-cron.
            if m.to().contains(&Unknown) {
                assert!(matches!(m, Move::Orphaned | Move::RanOutside), "{m:?}");
            }
        }
        assert!(Move::Finish.allows(Some(Running), Succeeded));
        assert!(!Move::Finish.allows(Some(Claimed), Succeeded));
        assert!(!Move::Refuse.allows(Some(Running), Refused));
        assert!(Move::Claim.allows(None, Claimed));
        assert!(!Move::Claim.allows(Some(Claimed), Claimed));
        assert!(Move::TakeOver.allows(Some(Claimed), Claimed));
        assert!(!Move::TakeOver.allows(Some(Running), Claimed));
    }

    #[test]
    fn a_staged_row_starts_only_through_start_and_is_withdrawn_only_before_it() {
        assert!(Move::Stage.allows(Some(Claimed), Staged));
        assert!(Move::Start.allows(Some(Staged), Running));
        assert!(!Move::Adopt.allows(Some(Staged), Running));
        assert!(!Move::Heartbeat.allows(Some(Staged), Running));
        assert!(Move::Overlapped.allows(Some(Staged), Skipped));
        assert!(Move::Withdraw.removes() && Move::ALL.iter().filter(|m| m.removes()).count() == 1);
        assert!(Move::Withdraw.from().contains(&Staged));
        assert!(
            !Move::Withdraw.from().contains(&Running),
            "a started run is never taken back"
        );
    }

    #[test]
    fn every_state_is_reached_by_some_move() {
        for state in ExecState::ALL {
            assert!(Move::ALL.iter().any(|m| m.to().contains(state)), "{state}");
        }
    }
}
