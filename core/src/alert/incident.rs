//! The incident a job is in, and how one observation moves it. One alert
//! per incident: the incident alerts when its consecutive failures reach
//! `after` (or at once when the job is `late`), then stays quiet until a
//! success closes it, which alerts `recovered` when the incident had
//! alerted. A failed attempt that is owed a retry is not an outcome yet: the
//! occurrence alerts only when its last attempt fails. Kinds not in the
//! rules' set neither count nor alert.

use super::kind::{AlertKind, KindSet};
use crate::run::{ExecState, ReasonCode};
use crate::schedule::Timestamp;

/// A job's incident, as stored between observations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Incident {
    /// Consecutive failed occurrences.
    pub failures: u32,
    /// The alert this incident sent (None: it has not alerted).
    pub alerted: Option<AlertKind>,
    /// When its first failure (or lateness) was seen.
    pub since: Option<Timestamp>,
}

/// What one ledger event means for the incident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observed {
    /// An occurrence ended badly, for good.
    Failure(AlertKind),
    /// An occurrence succeeded: the incident, if any, ends.
    Success,
    /// Changes nothing: skipped, cancelled, or a failed attempt owed a retry.
    Neutral,
    /// The job has not started for longer than its period plus grace.
    Late,
}

/// What a row that just became terminal in `state` (with `reason`) is;
/// `retry_owed` when its failure queued another attempt.
pub fn observe(state: ExecState, reason: Option<ReasonCode>, retry_owed: bool) -> Observed {
    if retry_owed {
        return Observed::Neutral;
    }
    match state {
        ExecState::Succeeded => Observed::Success,
        ExecState::Failed if reason == Some(ReasonCode::DeliveryFailed) => {
            Observed::Failure(AlertKind::DeliveryFailed)
        }
        ExecState::Failed => Observed::Failure(AlertKind::Failed),
        ExecState::TimedOut if reason == Some(ReasonCode::Stalled) => {
            Observed::Failure(AlertKind::Stalled)
        }
        ExecState::TimedOut => Observed::Failure(AlertKind::TimedOut),
        ExecState::Unknown => Observed::Failure(AlertKind::Unknown),
        ExecState::Missed => Observed::Failure(AlertKind::Missed),
        ExecState::Refused => Observed::Failure(AlertKind::Refused),
        ExecState::Skipped
        | ExecState::Cancelled
        | ExecState::Claimed
        | ExecState::Staged
        | ExecState::Running => Observed::Neutral,
    }
}

/// The incident after `obs` at `at`, and the alert it sends, if any.
pub fn step(
    prev: &Incident,
    obs: Observed,
    on: KindSet,
    after: u32,
    at: Timestamp,
) -> (Incident, Option<AlertKind>) {
    match obs {
        Observed::Neutral => (prev.clone(), None),
        Observed::Failure(kind) if !on.contains(kind) => (prev.clone(), None),
        Observed::Success => {
            let alert = (prev.alerted.is_some() && on.contains(AlertKind::Recovered))
                .then_some(AlertKind::Recovered);
            (Incident::default(), alert)
        }
        Observed::Failure(kind) => {
            let next = Incident {
                failures: prev.failures.saturating_add(1),
                alerted: prev.alerted,
                since: prev.since.or(Some(at)),
            };
            if next.alerted.is_none() && next.failures >= after.max(1) {
                let alerted = Incident {
                    alerted: Some(kind),
                    ..next
                };
                return (alerted, Some(kind));
            }
            (next, None)
        }
        Observed::Late => {
            if prev.alerted.is_some() || !on.contains(AlertKind::Late) {
                return (prev.clone(), None);
            }
            let next = Incident {
                failures: prev.failures,
                alerted: Some(AlertKind::Late),
                since: prev.since.or(Some(at)),
            };
            (next, Some(AlertKind::Late))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        chrono::DateTime::UNIX_EPOCH + chrono::Duration::seconds(s)
    }

    /// Feed `outcomes` to a fresh incident; the alerts sent, by position.
    fn run(outcomes: &[Observed], on: KindSet, after: u32) -> Vec<(usize, AlertKind)> {
        let mut incident = Incident::default();
        let mut sent = Vec::new();
        for (i, obs) in outcomes.iter().enumerate() {
            let (next, alert) = step(&incident, *obs, on, after, t(i as i64));
            incident = next;
            sent.extend(alert.map(|a| (i, a)));
        }
        sent
    }

    const F: Observed = Observed::Failure(AlertKind::Failed);
    const S: Observed = Observed::Success;

    #[test]
    fn one_alert_per_incident_until_it_recovers() {
        let sent = run(&[F, F, F, S, S, F], KindSet::ALL, 1);
        assert_eq!(
            sent,
            vec![
                (0, AlertKind::Failed),
                (3, AlertKind::Recovered),
                (5, AlertKind::Failed)
            ]
        );
    }

    #[test]
    fn alert_after_three_alerts_on_the_third_failure_only_and_recovers_once() {
        let sent = run(&[F, F, S, F, F, F, F, F, S, S], KindSet::ALL, 3);
        assert_eq!(
            sent,
            vec![(5, AlertKind::Failed), (8, AlertKind::Recovered)]
        );
    }

    #[test]
    fn a_success_below_the_threshold_resets_quietly() {
        assert_eq!(run(&[F, F, S, F, F, S], KindSet::ALL, 3), vec![]);
    }

    #[test]
    fn a_retried_attempt_is_not_an_outcome_until_the_last_one() {
        let owed = observe(ExecState::Failed, Some(ReasonCode::ExitCode), true);
        assert_eq!(owed, Observed::Neutral);
        let last = observe(ExecState::Failed, Some(ReasonCode::ExitCode), false);
        let sent = run(&[owed, owed, last], KindSet::ALL, 1);
        assert_eq!(sent, vec![(2, AlertKind::Failed)]);
    }

    #[test]
    fn states_map_to_kinds() {
        let kind = |s, r| observe(s, r, false);
        assert_eq!(
            kind(ExecState::TimedOut, Some(ReasonCode::Stalled)),
            Observed::Failure(AlertKind::Stalled)
        );
        assert_eq!(
            kind(ExecState::TimedOut, Some(ReasonCode::Idle)),
            Observed::Failure(AlertKind::TimedOut)
        );
        for (state, k) in [
            (ExecState::Unknown, AlertKind::Unknown),
            (ExecState::Missed, AlertKind::Missed),
            (ExecState::Refused, AlertKind::Refused),
        ] {
            assert_eq!(kind(state, None), Observed::Failure(k));
        }
        assert_eq!(kind(ExecState::Skipped, None), Observed::Neutral);
        assert_eq!(kind(ExecState::Cancelled, None), Observed::Neutral);
    }

    #[test]
    fn kinds_outside_the_set_neither_count_nor_alert() {
        let on = KindSet::parse("failed").unwrap();
        let missed = Observed::Failure(AlertKind::Missed);
        assert_eq!(run(&[missed, missed, F], on, 2), vec![]);
        assert_eq!(run(&[F, F, S], on, 2), vec![(1, AlertKind::Failed)]);
    }

    #[test]
    fn late_alerts_once_and_a_success_recovers_it() {
        let l = Observed::Late;
        let sent = run(&[l, l, F, S], KindSet::ALL, 1);
        assert_eq!(sent, vec![(0, AlertKind::Late), (3, AlertKind::Recovered)]);
        assert_eq!(run(&[l], KindSet::parse("failed").unwrap(), 1), vec![]);
    }

    #[test]
    fn the_incident_remembers_when_it_began() {
        let (a, _) = step(&Incident::default(), F, KindSet::ALL, 3, t(10));
        let (b, _) = step(&a, F, KindSet::ALL, 3, t(20));
        assert_eq!((b.failures, b.since), (2, Some(t(10))));
    }
}
