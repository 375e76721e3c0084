//! The gateway's health as its state files carry it: the heartbeat (pid,
//! loop progress, the last claim pass, whether scopes can be made) and the
//! lifecycle record (one line per start and exit). The gateway writes them
//! (`daemon/`), `status`, `doctor` and `metrics` read them (`ops/`); the
//! formats and the pure judgements of them live here, below both.

use crate::placement::CauseCode;
use crate::schedule::Timestamp;
use std::time::Duration;

/// A heartbeat file older than this many periods, or a loop counter still
/// for as long, means the gateway is STALLED.
pub const STALL_PERIODS: u32 = 3;

/// Whether scopes can be made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CapabilityMode {
    /// Not checked yet.
    #[default]
    Unknown,
    /// Scopes can be made.
    Scoped,
    /// Scopes cannot be made: runs start degraded.
    Degraded,
}

crate::text_enum_impls!(CapabilityMode, "dispatch capability", {
    Unknown => "unknown", Scoped => "scoped", Degraded => "degraded",
});

impl serde::Serialize for CapabilityMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for CapabilityMode {
    /// A word this version does not know (or an empty one, from before the
    /// first check) reads as `unknown`.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(text.parse().unwrap_or(CapabilityMode::Unknown))
    }
}

/// Whether a scope can be made now, and why not.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Capability {
    /// Whether scopes can be made.
    pub mode: CapabilityMode,
    /// The cause when degraded.
    #[serde(default, deserialize_with = "lenient_cause")]
    pub cause: Option<CauseCode>,
    /// What the probe said, in words (None: nothing more to say).
    pub detail: Option<String>,
}

impl Capability {
    /// Scopes can be made.
    pub fn scoped() -> Capability {
        Capability {
            mode: CapabilityMode::Scoped,
            cause: None,
            detail: None,
        }
    }

    /// Scopes cannot be made, for `cause`.
    pub fn degraded(cause: CauseCode, detail: Option<String>) -> Capability {
        Capability {
            mode: CapabilityMode::Degraded,
            cause: Some(cause),
            detail,
        }
    }
}

/// A cause code this version does not know reads as none.
fn lenient_cause<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<CauseCode>, D::Error> {
    let text = <Option<String> as serde::Deserialize>::deserialize(d)?;
    Ok(text.and_then(|t| t.parse().ok()))
}

/// How the last claim pass ended: `ok`, `contended`, or `error: <why>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TickResult {
    /// No pass yet.
    #[default]
    None,
    /// The pass ran.
    Ok,
    /// Another process held the tick lock.
    Contended,
    /// The pass failed, for this reason.
    Error(String),
}

impl std::fmt::Display for TickResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TickResult::None => Ok(()),
            TickResult::Ok => f.write_str("ok"),
            TickResult::Contended => f.write_str("contended"),
            TickResult::Error(why) => write!(f, "error: {why}"),
        }
    }
}

impl serde::Serialize for TickResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TickResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(match text.as_ref() {
            "" => TickResult::None,
            "ok" => TickResult::Ok,
            "contended" => TickResult::Contended,
            other => TickResult::Error(other.strip_prefix("error: ").unwrap_or(other).to_string()),
        })
    }
}

/// The outcome of the last claim pass.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TickSummary {
    /// When the pass ran (None: no pass yet).
    pub at: Option<Timestamp>,
    /// How it ended.
    pub result: TickResult,
    /// Rows it claimed.
    pub claimed: usize,
    /// Rows it recorded `skipped`.
    pub skipped: usize,
    /// Rows it recorded `missed`.
    pub missed: usize,
}

/// The heartbeat file's contents.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Heartbeat {
    /// The gateway's pid.
    pub pid: u32,
    /// The gateway's start time, in clock ticks after boot (with `pid`, its identity).
    pub start_time: u64,
    /// When the gateway started.
    pub started_at: Timestamp,
    /// When the file was written.
    pub updated_at: Timestamp,
    /// How often it is written, in milliseconds.
    pub period_ms: u64,
    /// Bumped by the loop on every turn: a frozen loop shows as a still counter.
    pub loop_counter: u64,
    /// When the heartbeat thread last saw `loop_counter` change.
    pub loop_counter_changed_at: Timestamp,
    /// The last claim pass.
    pub last_tick: TickSummary,
    /// Whether scopes can be made.
    pub capability: Capability,
    /// Runs the gateway watches.
    pub active_runs: u64,
    /// The gateway's version.
    pub version: String,
    /// The zone it reads a job without a zone of its own in (config
    /// `timezone`, else its system zone); absent from an earlier version's file.
    #[serde(default)]
    pub zone: Option<String>,
    /// What its last sync saw going wrong on the Hermes side, while it fires
    /// this home's Hermes jobs (None: it does not, or an earlier version's file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hermes: Option<HermesSide>,
    /// What a job starts with on this home, whoever launches it (the
    /// gateway's own attributes); absent from an earlier version's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_start: Option<StartAttrs>,
}

/// The process attributes a job starts with: the gateway's umask, nice
/// value and resource limits, so that a run started by `run` or `spawn`
/// from a shell gets what a scheduled one gets, not the shell's.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StartAttrs {
    /// The file mode creation mask (None: unknown, left as it is).
    pub umask: Option<u32>,
    /// The nice value.
    pub nice: i32,
    /// The resource limits.
    pub limits: Vec<Limit>,
}

/// One resource limit; None is unlimited.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limit {
    /// The resource, as `prlimit(1)` names it in lower case: `nofile`, `stack`, ...
    pub resource: String,
    /// The soft limit.
    pub soft: Option<u64>,
    /// The hard limit.
    pub hard: Option<u64>,
}

/// What the provider sync last saw going wrong on the Hermes side: no Hermes
/// ticker runs under hermes-cron to repair any of it, so `status` says it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HermesSide {
    /// Why `cron/jobs.json` could not be read: no Hermes job is followed
    /// until it can (None: it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs_unreadable: Option<String>,
    /// The records of `jobs.json` left out, each named with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Why the runs Hermes made by itself could not be recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_unrecorded: Option<String>,
}

impl HermesSide {
    /// Whether nothing is wrong.
    pub fn is_clear(&self) -> bool {
        self == &HermesSide::default()
    }
}

impl Heartbeat {
    /// Whether the loop counter has been still for [`STALL_PERIODS`] periods at `now`.
    pub fn loop_stalled(&self, now: Timestamp) -> bool {
        let still = (now - self.loop_counter_changed_at)
            .to_std()
            .unwrap_or_default();
        still > Duration::from_millis(self.period_ms) * STALL_PERIODS
    }

    /// Whether the file itself is older than [`STALL_PERIODS`] periods at `now`.
    pub fn file_stale(&self, now: Timestamp) -> bool {
        let age = (now - self.updated_at).to_std().unwrap_or_default();
        age > Duration::from_millis(self.period_ms) * STALL_PERIODS
    }
}

/// One lifecycle event: a gateway start or exit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LifecycleLine {
    /// `start` or `exit`.
    pub event: String,
    /// When it happened.
    pub at: Timestamp,
    /// The gateway's pid.
    pub pid: u32,
    /// The gateway's start time, in clock ticks after boot.
    pub start_time: u64,
    /// Why it exited: `signal`, `loop_liveness_watchdog`, `fatal: ...`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The exit status (None: a start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The gateway's version.
    pub version: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_stay_as_documented() {
        let t = TickSummary {
            result: TickResult::Error("disk full".into()),
            ..TickSummary::default()
        };
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["result"], "error: disk full");
        let back: TickSummary = serde_json::from_value(json).unwrap();
        assert_eq!(back, t);
        for (r, text) in [(TickResult::Ok, "ok"), (TickResult::Contended, "contended")] {
            assert_eq!(serde_json::to_value(&r).unwrap(), text);
        }
        let c = Capability::degraded(CauseCode::NoAddress, None);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["mode"], "degraded");
        assert_eq!(json["cause"], "no_address");
        // An older file (mode "" before the first check), an unknown cause.
        let old: Capability =
            serde_json::from_str(r#"{"mode": "", "cause": "new_cause", "detail": null}"#).unwrap();
        assert_eq!(old.mode, CapabilityMode::Unknown);
        assert_eq!(old.cause, None);
    }
}
