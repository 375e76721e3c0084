//! Unit names and descriptions that systemd accepts verbatim.
//!
//! Owns three pure functions:
//! - [`escape_unit_component`]: byte-for-byte what `systemd-escape STRING` prints (string
//!   mode): `/` becomes `-`, `[A-Za-z0-9:_.]` is kept except a leading `.`, every other
//!   byte (including `-`, `\` and each byte of a non-ASCII character) becomes `\xHH` with
//!   lowercase hex.
//! - [`scope_unit_name`]: `hermes-cron-<escaped job>-<execution without dashes>.scope`,
//!   where the job is escaped as `systemd-escape` does but keeps its `-`, so the units of
//!   job `slow-report` match `hermes-cron-slow-report-*` ([`scope_unit_glob`]).
//! - [`sanitize_description`]: a `Description=` value with no control characters.
//!
//! Invariants:
//! - A scope unit name only uses `[A-Za-z0-9:_.\-\\]` and is at most [`UNIT_NAME_MAX`]
//!   bytes. When the escaped job name does not fit, it is cut on an escape boundary (never
//!   inside a `\xHH`) and `-<16 hex digits>` (FNV-1a 64 of the full job name) is appended,
//!   so two long names that share a prefix still get distinct units. The hash is
//!   implemented here, not taken from `std`, so the same job gets the same unit name across
//!   Rust versions (a restarted gateway finds its scopes by name).
//! - A description never contains a control character: systemd 252 writes it raw into the
//!   transient unit file, where a newline turns the rest into directives after
//!   `daemon-reload`, and a trailing `\` continues the line into the next directive.

/// The longest unit name systemd accepts, in bytes, suffix included.
pub const UNIT_NAME_MAX: usize = 255;

/// The longest description [`sanitize_description`] returns, in bytes.
pub const DESCRIPTION_MAX: usize = 200;

const PREFIX: &str = "hermes-cron-";
const SUFFIX: &str = ".scope";
/// `-` and 16 lowercase hex digits.
const HASH_LEN: usize = 17;

/// Escapes `s` like `systemd-escape` does in its default (string) mode.
///
/// ```
/// use hermes_cron_core::scope::escape_unit_component;
/// assert_eq!(escape_unit_component("backup/db-1"), r"backup-db\x2d1");
/// assert_eq!(escape_unit_component(".hidden"), r"\x2ehidden");
/// ```
pub fn escape_unit_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_escaped(s, Dash::Escape, &mut out, &mut Vec::new());
    out
}

/// What a `-` of a job name becomes.
#[derive(Clone, Copy, PartialEq)]
enum Dash {
    /// `\x2d`, as `systemd-escape` writes it (so unescaping gives the string back).
    Escape,
    /// Itself: the name is still valid, and a glob written from the job
    /// name (`hermes-cron-slow-report-*`) matches.
    Keep,
}

/// The pattern matching every scope unit of `job`, for `systemctl --user
/// status PATTERN` (systemd matches unit globs without backslash escapes, so
/// a `\x20` in it matches itself).
///
/// ```
/// use hermes_cron_core::scope::{scope_unit_glob, scope_unit_name};
/// assert_eq!(scope_unit_glob("slow-report"), "hermes-cron-slow-report-*.scope");
/// assert_eq!(scope_unit_glob("daily brief"), r"hermes-cron-daily\x20brief-*.scope");
/// ```
pub fn scope_unit_glob(job: &str) -> String {
    // A name made for a typical (UUID) execution id, with that id replaced:
    // a long job name is cut and hashed just as in its real units.
    const TYPICAL: &str = "00000000-0000-0000-0000-000000000000";
    let name = scope_unit_name(job, TYPICAL);
    let stem = name.len() - SUFFIX.len() - escape_execution(TYPICAL).len();
    format!("{}*{SUFFIX}", &name[..stem])
}

/// The transient scope unit for one execution of `job`:
/// `hermes-cron-<escaped job>-<execution without its dashes>.scope`, e.g.
/// `hermes-cron-brief-01a22aa7dd217629a0bbc02d93125b7f.scope`.
///
/// The execution id's dashes are dropped because systemd looks for drop-in
/// directories for every dash-separated prefix of a unit name in every unit
/// search path: four fewer prefixes per scope start (measured in the
/// benchmark's breakdown). A UUID stays unique without them.
///
/// At most [`UNIT_NAME_MAX`] bytes. `execution` is expected to be a UUID; any byte outside
/// `[A-Za-z0-9:_.]` in it is escaped as `\xHH` so the result is always a valid name.
pub fn scope_unit_name(job: &str, execution: &str) -> String {
    let execution = escape_execution(execution);
    let fixed = PREFIX.len() + 1 + execution.len() + SUFFIX.len();
    let budget = UNIT_NAME_MAX.saturating_sub(fixed);

    let mut job_part = String::with_capacity(job.len());
    let mut boundaries = Vec::new();
    push_escaped(job, Dash::Keep, &mut job_part, &mut boundaries);
    if job_part.len() > budget {
        let keep = budget.saturating_sub(HASH_LEN);
        let cut = boundaries
            .iter()
            .copied()
            .take_while(|&end| end <= keep)
            .last()
            .unwrap_or(0);
        job_part.truncate(cut);
        job_part.push_str(&format!("-{:016x}", fnv1a64(job.as_bytes())));
        // Only reachable with an absurdly long execution id: keep the name valid anyway.
        if job_part.len() > budget {
            job_part.truncate(budget);
        }
    }

    let mut name = String::with_capacity(fixed + job_part.len());
    name.push_str(PREFIX);
    name.push_str(&job_part);
    name.push('-');
    name.push_str(&execution);
    name.push_str(SUFFIX);
    if name.len() > UNIT_NAME_MAX {
        // An execution id longer than the whole budget: cut before the suffix, on an
        // escape boundary, so the name is still accepted (and still ends in `.scope`).
        let mut stem = name[..name.len() - SUFFIX.len()].to_owned();
        let mut cut = UNIT_NAME_MAX - SUFFIX.len();
        if let Some(backslash) = stem[..cut].rfind('\\')
            && backslash + 4 > cut
        {
            cut = backslash;
        }
        stem.truncate(cut);
        stem.push_str(SUFFIX);
        name = stem;
    }
    name
}

/// A description systemd can store safely: every run of control characters (C0 including
/// newline, CR, tab and NUL; DEL; C1) and other whitespace becomes one space, the ends are
/// trimmed, trailing backslashes are dropped, and the result is cut to at most
/// [`DESCRIPTION_MAX`] bytes on a character boundary.
pub fn sanitize_description(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(DESCRIPTION_MAX));
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_control() || c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        let extra = usize::from(pending_space) + c.len_utf8();
        if out.len() + extra > DESCRIPTION_MAX {
            break;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    while out.ends_with('\\') || out.ends_with(' ') {
        out.pop();
    }
    out
}

/// Appends the escaped form of `s` to `out`, recording in `boundaries` the length of `out`
/// after each escaped input byte (every valid cut point).
fn push_escaped(s: &str, dash: Dash, out: &mut String, boundaries: &mut Vec<usize>) {
    for (i, byte) in s.bytes().enumerate() {
        match byte {
            b'/' => out.push('-'),
            b'-' if dash == Dash::Keep => out.push('-'),
            b'.' if i == 0 => push_hex(byte, out),
            b if b.is_ascii_alphanumeric() || matches!(b, b':' | b'_' | b'.') => {
                out.push(char::from(b))
            }
            _ => push_hex(byte, out),
        }
        boundaries.push(out.len());
    }
}

fn escape_execution(execution: &str) -> String {
    let mut out = String::with_capacity(execution.len());
    for byte in execution.bytes().filter(|&b| b != b'-') {
        if byte.is_ascii_alphanumeric() || matches!(byte, b':' | b'_' | b'.') {
            out.push(char::from(byte));
        } else {
            push_hex(byte, &mut out);
        }
    }
    out
}

fn push_hex(byte: u8, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('\\');
    out.push('x');
    out.push(char::from(HEX[usize::from(byte >> 4)]));
    out.push(char::from(HEX[usize::from(byte & 0x0f)]));
}

/// FNV-1a, 64 bit: small, stable across toolchains, good enough to tell names apart.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
#[path = "escape_tests.rs"]
mod tests;
