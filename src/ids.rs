//! Identifiers: UUIDv7 (time ordered), as newtypes that store as TEXT.
//!
//! Ids take their time part from the real clock (uuid's `now_v7`, monotonic
//! within a process) even when tests move `clock::Clock`: ids order rows by
//! when they were really written, which is what `runs` lists by.

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.0.as_bytes())))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                String::column_result(value).map($name)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
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
