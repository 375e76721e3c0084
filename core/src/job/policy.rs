//! Per-job policies: what to do with overlap and with slots missed while down.

/// What a new occurrence does while the previous run of the job is still going.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// Record a `skipped` row and do not start (the default).
    #[default]
    Skip,
    /// Start anyway; runs overlap.
    Allow,
    /// Stop the old run (its scope or process group), then start.
    Replace,
}

/// What to do with slots that passed while nothing was claiming.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchUp {
    /// Collapse the missed slots into one run if the newest is within the grace.
    Once,
    /// Record every missed slot as `missed`; run nothing; re-anchor intervals.
    Skip,
    /// Run every missed slot (at most [`CatchUp::ALL_LIMIT`]).
    All,
}

impl CatchUp {
    /// The most missed slots `all` runs in one pass; older ones are `missed`.
    pub const ALL_LIMIT: usize = 100;

    /// The default when a job names none: `cron.catch_up_missed` true -> once.
    pub fn default_for(catch_up_missed: bool) -> CatchUp {
        if catch_up_missed {
            CatchUp::Once
        } else {
            CatchUp::Skip
        }
    }
}

crate::text_enum_impls!(Overlap, "--overlap", { Skip => "skip", Allow => "allow", Replace => "replace" });
crate::text_enum_impls!(CatchUp, "--catch-up", { Once => "once", Skip => "skip", All => "all" });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_names_the_flag_on_error() {
        assert_eq!("ALLOW".parse::<Overlap>().unwrap(), Overlap::Allow);
        assert_eq!("all".parse::<CatchUp>().unwrap(), CatchUp::All);
        let err = "sometimes".parse::<Overlap>().unwrap_err().to_string();
        assert!(
            err.contains("--overlap") && err.contains("sometimes"),
            "{err}"
        );
        assert_eq!(CatchUp::default_for(false), CatchUp::Skip);
    }
}
