//! What an alert is about, and a set of them (`--alert-on`, `cron.alert_on`).

/// The reason an alert is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlertKind {
    /// The command exited non-zero, or could not be started.
    Failed,
    /// Stopped by its timeout or idle timeout.
    TimedOut,
    /// Its owner died before recording an outcome.
    Unknown,
    /// A slot passed while nothing was claiming.
    Missed,
    /// A restart-safe scope was required and none could be made.
    Refused,
    /// The worker fell silent and was stopped (`timed_out`, `stalled`).
    Stalled,
    /// The first success after an alerted incident.
    Recovered,
    /// Not started for longer than its period plus grace while the gateway is up.
    Late,
    /// The gateway itself failed for good (the user unit's `OnFailure=` hook).
    GatewayFailed,
    /// The job ran, but its result was not delivered (`failed`,
    /// `delivery_failed`: a Hermes job's answer that Hermes could not send).
    DeliveryFailed,
}

crate::text_enum_impls!(AlertKind, "alert kind", {
    Failed => "failed", TimedOut => "timed_out", Unknown => "unknown", Missed => "missed",
    Refused => "refused", Stalled => "stalled", Recovered => "recovered", Late => "late",
    GatewayFailed => "gateway_failed", DeliveryFailed => "delivery_failed",
});
crate::text_enum_serde!(AlertKind);

impl AlertKind {
    /// Whether it opens (or continues) an incident, as opposed to closing one.
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            AlertKind::Recovered | AlertKind::Late | AlertKind::GatewayFailed
        )
    }

    fn bit(self) -> u16 {
        1 << (AlertKind::ALL.iter().position(|k| *k == self).unwrap_or(0) as u16)
    }
}

/// A set of alert kinds. Its text is a comma-separated list of kinds, `all`,
/// or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindSet(u16);

/// A word of a kind list that names no alert kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} (or `all`, or `none`; several are separated by commas)")]
pub struct NotKinds(crate::text_enum::UnknownWord);

impl KindSet {
    /// Every kind.
    pub const ALL: KindSet = KindSet((1 << 10) - 1);
    /// No kind.
    pub const NONE: KindSet = KindSet(0);

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: AlertKind) -> bool {
        self.0 & kind.bit() != 0
    }

    /// Whether no kind is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `failed,timed_out`, `all` or `none`.
    pub fn parse(text: &str) -> Result<KindSet, NotKinds> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(KindSet::ALL);
        }
        if t.eq_ignore_ascii_case("none") || t.is_empty() {
            return Ok(KindSet::NONE);
        }
        let mut set = KindSet::NONE;
        for word in t.split(',') {
            let kind = word.parse::<AlertKind>().map_err(NotKinds)?;
            set.0 |= kind.bit();
        }
        Ok(set)
    }

    /// The canonical text: `all`, `none`, or the kinds in table order.
    pub fn text(self) -> String {
        if self == KindSet::ALL {
            return "all".into();
        }
        if self.is_empty() {
            return "none".into();
        }
        let words: Vec<&str> = AlertKind::ALL
            .iter()
            .filter(|k| self.contains(**k))
            .map(|k| k.as_str())
            .collect();
        words.join(",")
    }
}

/// As its [`text`](KindSet::text); a text [`KindSet::parse`] refuses is an error.
impl serde::Serialize for KindSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> serde::Deserialize<'de> for KindSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<KindSet, D::Error> {
        let text: String = serde::Deserialize::deserialize(d)?;
        KindSet::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_and_print_canonically() {
        let set = KindSet::parse(" Timed_Out,failed ").unwrap();
        assert!(set.contains(AlertKind::Failed) && set.contains(AlertKind::TimedOut));
        assert!(!set.contains(AlertKind::Recovered));
        assert_eq!(set.text(), "failed,timed_out");
        assert_eq!(KindSet::parse("all").unwrap().text(), "all");
        assert_eq!(KindSet::parse("none").unwrap(), KindSet::NONE);
        let all: Vec<&str> = AlertKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(KindSet::parse(&all.join(",")).unwrap(), KindSet::ALL);
        let err = KindSet::parse("failed,explode").unwrap_err().to_string();
        assert!(err.contains("explode") && err.contains("late"), "{err}");
    }
}
