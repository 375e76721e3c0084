//! The fix for running without a user systemd manager, filled in for this
//! process (`<user>`, `<uid>`), and a bus failure as the [`Cause`] the pure
//! placement and the ledger row carry.

use crate::systemd::{BusCause, FIX_TEXT, NOT_BOOTED_FIX_TEXT, UnitManager};
use hermes_cron_core::health::Capability;
use hermes_cron_core::placement::{Cause, CauseCode};

/// The fix for this host: linger where systemd booted it
/// (`/run/systemd/system`, as `sd_booted` reads it), else how to run a user
/// manager without one.
fn host_fix(booted_with_systemd: bool) -> &'static str {
    if booted_with_systemd {
        FIX_TEXT
    } else {
        NOT_BOOTED_FIX_TEXT
    }
}

/// `text` with the fix for this host, and `<user>` and `<uid>` filled in
/// for this process.
pub(crate) fn personalize(text: &str) -> String {
    let booted = std::path::Path::new("/run/systemd/system").is_dir();
    fill_in(text, host_fix(booted))
}

fn fill_in(text: &str, fix: &str) -> String {
    let text = text.replace(FIX_TEXT, fix);
    let uid = nix::unistd::getuid();
    let user = std::env::var("USER")
        .ok()
        .or_else(|| {
            nix::unistd::User::from_uid(uid)
                .ok()
                .flatten()
                .map(|u| u.name)
        })
        .unwrap_or_else(|| "<user>".into());
    text.replace("<user>", &user)
        .replace("<uid>", &uid.to_string())
}

/// The fix for running without a user systemd manager.
pub(crate) fn fix_text() -> String {
    personalize(FIX_TEXT)
}

/// A cause of ours (not from the bus), with the usual fix.
pub fn cause(code: CauseCode, problem: impl Into<String>) -> Cause {
    Cause {
        code,
        problem: problem.into(),
        fix: Some(fix_text()),
    }
}

/// A bus failure as a cause: its problem, and the fix whether or not the
/// bus message names one (every way of not getting a scope has the same
/// remedy).
pub(crate) fn cause_of(c: &BusCause) -> Cause {
    cause(c.code(), personalize(&c.problem()))
}

/// What `status` shows for a bus failure: its message, fix included where
/// the bus cause carries one.
pub(crate) fn capability_detail(c: &BusCause) -> String {
    personalize(&c.to_string())
}

/// Whether `manager` (None: scopes disabled) can make a scope right now,
/// and why not.
pub async fn probe_capability(manager: Option<&dyn UnitManager>) -> Capability {
    let Some(m) = manager else {
        return Capability::degraded(CauseCode::Disabled, None);
    };
    match m.probe().await {
        Ok(()) => Capability::scoped(),
        Err(bus) => Capability::degraded(bus.code(), Some(capability_detail(&bus))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fix_fits_the_host_linger_only_where_systemd_booted_it() {
        let text = BusCause::NoAddress.to_string();
        let booted = fill_in(&text, host_fix(true));
        assert!(booted.contains("run `loginctl enable-linger "), "{booted}");
        let container = fill_in(&text, host_fix(false));
        assert!(
            container.contains("not booted with systemd")
                && container.contains("systemd --user")
                && !container.contains("run `loginctl"),
            "{container}"
        );
        for t in [booted, container] {
            assert!(!t.contains("<user>") && !t.contains("<uid>"), "{t}");
        }
    }

    #[test]
    fn fix_in_a_bus_cause_is_personalized() {
        let c = cause_of(&BusCause::NoAddress);
        let text = c.explained();
        assert!(text.contains("enable-linger"), "{text}");
        assert!(
            !text.contains("<user>") && !text.contains("<uid>"),
            "{text}"
        );
        assert_eq!(text.matches("enable-linger").count(), 1, "{text}");
        assert_eq!(capability_detail(&BusCause::NoAddress), text);
    }
}
