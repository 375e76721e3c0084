//! Identifiers: UUIDv7 (time ordered), as newtypes. The ledger stores them as
//! TEXT (`as_str` to bind, `from_string` to read back).
//!
//! Ids take their time part from the real clock (uuid's `now_v7`, monotonic
//! within a process) even when tests move `clock::Clock`: ids order rows by
//! when they were really written, which is what `runs` lists by.

use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A fresh time-ordered id.
            pub fn generate() -> Self {
                $name(uuid::Uuid::now_v7().to_string())
            }
            /// Wrap a stored or user-given id as is.
            pub fn from_string(s: impl Into<String>) -> Self {
                $name(s.into())
            }
            /// The id's text, as stored.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// A job's id.
    JobId
);
id_type!(
    /// One occurrence's id (a ledger row).
    ExecutionId
);

/// Whether `s` looks like an id we generate (a hyphenated UUID).
pub fn looks_like_uuid(s: &str) -> bool {
    uuid::Uuid::try_parse(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_time_ordered_uuids() {
        let a = JobId::generate();
        let b = JobId::generate();
        assert!(a < b);
        assert!(looks_like_uuid(a.as_str()));
        assert!(!looks_like_uuid("brief"));
    }
}
