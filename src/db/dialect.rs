//! The two SQL dialects. Statements are written once, in a portable subset
//! that SQLite and PostgreSQL both read the same way:
//!
//! - parameters are numbered, `?1`, `?2`... ([`to_postgres`] turns them into
//!   `$1`, `$2`... outside quoted text);
//! - a null-safe comparison is `IS NOT DISTINCT FROM`, an insert that may
//!   meet its row is `INSERT ... ON CONFLICT DO NOTHING`, a case-blind
//!   comparison is `lower(a) = lower(b)`, a derived table has an alias;
//! - a parameter tested with `IS NULL` is cast first (`CAST(?1 AS TEXT) IS
//!   NULL`, `CAST(?2 AS BIGINT) IS NULL`): PostgreSQL must know its type;
//! - columns are `INTEGER` (PostgreSQL's `BIGINT`, see [`ddl_to_postgres`]),
//!   `TEXT` and `REAL`; flags are 0/1 integers.
//!
//! What cannot be one text (a trigger, the schema version, locks) is a
//! function of [`Dialect`] here or a backend-specific step of a migration.

/// Which SQL a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgresql",
        }
    }
}

/// `?N` parameters as `$N`, leaving quoted text, quoted names and comments
/// alone. A bare `?` is numbered after the highest `?N` seen so far.
pub(super) fn to_postgres(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut i = 0;
    let mut next_bare = 1;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' => {
                let end = sql[i + 1..]
                    .find(c as char)
                    .map_or(sql.len(), |j| i + 2 + j);
                out.push_str(&sql[i..end]);
                i = end;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                let end = sql[i..].find('\n').map_or(sql.len(), |j| i + j);
                out.push_str(&sql[i..end]);
                i = end;
            }
            b'?' => {
                let digits = sql[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
                if digits == 0 {
                    out.push_str(&format!("${next_bare}"));
                    next_bare += 1;
                } else {
                    let n = &sql[i + 1..i + 1 + digits];
                    next_bare = next_bare.max(n.parse::<usize>().unwrap_or(0) + 1);
                    out.push('$');
                    out.push_str(n);
                }
                i += 1 + digits;
            }
            _ => {
                let ch = sql[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// A migration's DDL for PostgreSQL: `INTEGER` columns are 64-bit
/// (`BIGINT`), as SQLite's are. Everything else in the portable DDL
/// (`TEXT`, `REAL`, `CHECK`, partial indexes, `ALTER TABLE ... ADD COLUMN`,
/// `REFERENCES ... ON DELETE CASCADE`) reads the same on both.
pub(super) fn ddl_to_postgres(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut rest = sql;
    while let Some(at) = find_word(rest, "INTEGER") {
        out.push_str(&rest[..at]);
        out.push_str("BIGINT");
        rest = &rest[at + "INTEGER".len()..];
    }
    out.push_str(rest);
    out
}

fn find_word(hay: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = hay[from..].find(word) {
        let at = from + j;
        let before = hay[..at].chars().next_back();
        let after = hay[at + word.len()..].chars().next();
        let is_ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_ident(before) && !is_ident(after) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The transaction-scoped advisory locks PostgreSQL gateways take, each in
/// the namespace of the schema the ledger lives in (so two ledgers in one
/// database never contend). SQLite's equivalents are its own write lock
/// and the `flock` on `cron/.hermes-cron.tick.lock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockKey {
    /// Held by a claim pass (tried, never waited for): hosts do not stampede.
    Tick = 1,
    /// Held by every read-then-write transaction (`Db::immediate`): what
    /// SQLite's `BEGIN IMMEDIATE` gives.
    Write = 2,
    /// Held while the schema is migrated.
    Migrate = 3,
}

/// The advisory-lock namespace of a schema: a stable 31-bit hash of its name.
pub(super) fn lock_namespace(schema: &str) -> i32 {
    // FNV-1a, folded to a positive i32.
    let mut h: u32 = 0x811c_9dc5;
    for b in schema.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h & 0x7fff_ffff) as i32
}

/// The `NOTIFY` channel of the ledger whose advisory-lock namespace is
/// `namespace`.
pub(crate) fn channel(namespace: i32) -> String {
    format!("hermes_cron_{namespace}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parameters_outside_quotes() {
        assert_eq!(
            to_postgres("SELECT a FROM t WHERE x = ?1 AND y IS NOT DISTINCT FROM ?12"),
            "SELECT a FROM t WHERE x = $1 AND y IS NOT DISTINCT FROM $12"
        );
        assert_eq!(
            to_postgres("SELECT '?1', \"a?\" -- ?3\n, ?2"),
            "SELECT '?1', \"a?\" -- ?3\n, $2"
        );
        assert_eq!(to_postgres("VALUES (?, ?)"), "VALUES ($1, $2)");
        assert_eq!(to_postgres("x = 'é' AND y = ?1"), "x = 'é' AND y = $1");
    }

    #[test]
    fn integer_columns_are_bigint() {
        assert_eq!(
            ddl_to_postgres("a INTEGER NOT NULL, b INTEGER, c INTEGERS, MYINTEGER"),
            "a BIGINT NOT NULL, b BIGINT, c INTEGERS, MYINTEGER"
        );
    }

    #[test]
    fn namespaces_are_stable_and_positive() {
        assert_eq!(lock_namespace("public"), lock_namespace("public"));
        assert_ne!(lock_namespace("public"), lock_namespace("t_1"));
        assert!(lock_namespace("anything") >= 0);
    }
}
