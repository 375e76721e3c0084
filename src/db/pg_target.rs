//! A PostgreSQL connection string as hermes-cron reads it, in both of
//! libpq's forms (a `postgresql://` URL, `key=value` pairs): what
//! `postgres::Config` reads, plus the TLS settings libpq users set and it
//! does not take (`sslmode` `verify-ca` and `verify-full`, `sslrootcert`,
//! `sslcert`, `sslkey`; see `pg_tls.rs`), the password from `PGPASSWORD`
//! when the string gives none, and the string as it may be shown, its
//! password hidden. Every connection (the statements' thread, `LISTEN`) is
//! made from one [`Target`].

use super::pg_tls::{SslMode, TlsChecked, TlsPolicy};
use std::path::PathBuf;

/// The password of a connection string that gives none.
pub(crate) const PASSWORD_ENV: &str = "PGPASSWORD";

/// The keys read here and taken out of what `postgres::Config` reads.
const TLS_KEYS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// A connection string that does not parse (what it says is why).
#[derive(Debug, thiserror::Error)]
#[error("not a PostgreSQL connection string: {0}")]
pub struct NotAConnectionString(pub(crate) String);

/// Where and how to connect.
#[derive(Clone)]
pub(crate) struct Target {
    pub config: postgres::Config,
    pub tls: TlsPolicy,
    /// The string with its password hidden, for messages.
    pub shown: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("shown", &self.shown)
            .finish()
    }
}

/// One `key=value` of a connection string: its key and value as meant, its
/// text as written (shown), and as passed on to `postgres::Config`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Setting {
    key: String,
    value: String,
    raw: String,
    passed: String,
}

/// Read `url` (see the module docs).
pub(crate) fn parse(url: &str) -> Result<Target, NotAConnectionString> {
    let url = url.trim();
    let is_url = url.starts_with("postgresql://") || url.starts_with("postgres://");
    let (base, settings) = if is_url {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        (Some(base), query_settings(query)?)
    } else {
        (None, key_values(url)?)
    };
    let value = |key: &str| {
        settings
            .iter()
            .rev()
            .find(|s| s.key == key)
            .map(|s| s.value.clone())
    };
    let tls = TlsPolicy::from_settings(
        value("sslmode").as_deref(),
        value("sslrootcert"),
        value("sslcert").map(PathBuf::from),
        value("sslkey").map(PathBuf::from),
    )
    .map_err(|e| NotAConnectionString(e.to_string()))?;
    let rest: Vec<&Setting> = settings
        .iter()
        .filter(|s| !TLS_KEYS.contains(&s.key.as_str()))
        .collect();
    let mut config: postgres::Config = rebuild(base, &rest)
        .parse()
        .map_err(|e: postgres::Error| NotAConnectionString(e.to_string()))?;
    config.ssl_mode(match tls.mode {
        SslMode::Disable => postgres::config::SslMode::Disable,
        SslMode::Prefer => postgres::config::SslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
            postgres::config::SslMode::Require
        }
    });
    // As libpq does: a password the string does not give comes from
    // `PGPASSWORD` (how `cron.database`, which refuses one, gets it).
    if config.get_password().is_none()
        && let Some(password) = std::env::var_os(PASSWORD_ENV).filter(|p| !p.is_empty())
    {
        config.password(password.as_encoded_bytes());
    }
    let shown = if is_url {
        shown_url(url)
    } else {
        shown_pairs(&settings)
    };
    Ok(Target { config, tls, shown })
}

/// The string `postgres::Config` reads: a URL's `base` with the `rest` of
/// its parameters, or the `rest` of the `key=value` pairs.
fn rebuild(base: Option<&str>, rest: &[&Setting]) -> String {
    let passed: Vec<&str> = rest.iter().map(|s| s.passed.as_str()).collect();
    match base {
        Some(base) if passed.is_empty() => base.to_string(),
        Some(base) => format!("{base}?{}", passed.join("&")),
        None => passed.join(" "),
    }
}

/// What the TLS of a connection to `url` is: its `sslmode`, whether every
/// host is a Unix socket (nothing crosses a network), and what of the
/// server's certificate is checked; None when `url` does not parse.
pub fn tls_of(url: &str) -> Option<(&'static str, bool, TlsChecked)> {
    let target = parse(url).ok()?;
    let local = target
        .config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, postgres::config::Host::Unix(_)));
    Some((target.tls.mode.as_str(), local, target.tls.checked()))
}

/// `url` with its password hidden, whatever it holds (for messages about
/// a string that may not even parse).
pub(crate) fn shown(url: &str) -> String {
    let url = url.trim();
    if url.starts_with("postgresql://") || url.starts_with("postgres://") {
        return shown_url(url);
    }
    match key_values(url) {
        Ok(settings) => shown_pairs(&settings),
        Err(_) => "(a connection string that does not parse)".into(),
    }
}

/// A URL's password hidden: in its user info, and a `password` parameter.
fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgresql", url));
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let base = match base.rsplit_once('@') {
        Some((user_info, hosts)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{user}:***@{hosts}"),
            None => base.to_string(),
        },
        None => base.to_string(),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if percent_decode(k) == "password" => format!("{k}=***"),
                _ => pair.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    match query {
        Some(q) => format!("{scheme}://{base}?{q}"),
        None => format!("{scheme}://{base}"),
    }
}

/// `key=value` pairs with the password's value hidden.
fn shown_pairs(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| match s.key.as_str() {
            "password" => "password=***".to_string(),
            _ => s.raw.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A URL's query: `key=value` pairs separated by `&`, percent-encoded.
fn query_settings(query: &str) -> Result<Vec<Setting>, NotAConnectionString> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                NotAConnectionString(format!("the URL parameter {pair:?} has no value"))
            })?;
            Ok(Setting {
                key: percent_decode(k),
                value: percent_decode(v),
                raw: pair.to_string(),
                passed: pair.to_string(),
            })
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// libpq's `key=value` form: pairs separated by whitespace, spaces allowed
/// around `=`; a value in single quotes may hold spaces; `\` escapes the
/// next character, in or out of quotes.
fn key_values(text: &str) -> Result<Vec<Setting>, NotAConnectionString> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_space = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_space(&mut i);
        if i >= chars.len() {
            return Ok(out);
        }
        let start = i;
        while i < chars.len() && chars[i] != '=' && !chars[i].is_whitespace() {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        skip_space(&mut i);
        if i >= chars.len() || chars[i] != '=' {
            return Err(NotAConnectionString(format!(
                "{key:?} is not followed by \"=\""
            )));
        }
        i += 1;
        skip_space(&mut i);
        let mut value = String::new();
        if i < chars.len() && chars[i] == '\'' {
            i += 1;
            loop {
                match chars.get(i) {
                    None => {
                        return Err(NotAConnectionString(format!(
                            "the quoted value of {key} does not end"
                        )));
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some('\\') if i + 1 < chars.len() => {
                        value.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(c) => {
                        value.push(*c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < chars.len() && !chars[i].is_whitespace() {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                value.push(chars[i]);
                i += 1;
            }
        }
        if key.is_empty() {
            return Err(NotAConnectionString(
                "a setting has no name before \"=\"".into(),
            ));
        }
        out.push(Setting {
            raw: chars[start..i].iter().collect(),
            passed: quoted(&key, &value),
            key,
            value,
        });
    }
}

/// `key='value'`, quoted as libpq reads it.
fn quoted(key: &str, value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('\'', "\\'");
    format!("{key}='{escaped}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_give_the_same_connection_and_the_tls_settings_apart() {
        let url = "postgresql://cron:s3cr%40t@db.example:5433/ledger?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x";
        let t = parse(url).unwrap();
        assert_eq!(t.tls.mode, SslMode::VerifyFull);
        assert_eq!(t.tls.root.as_deref(), Some("/etc/ca.pem"));
        assert_eq!(t.config.get_dbname(), Some("ledger"));
        assert_eq!(t.config.get_password(), Some(&b"s3cr@t"[..]));
        assert_eq!(t.config.get_application_name(), Some("x"));
        assert_eq!(t.config.get_ssl_mode(), postgres::config::SslMode::Require);
        assert_eq!(
            t.shown,
            "postgresql://cron:***@db.example:5433/ledger?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x"
        );

        let kv = "host=db.example port=5433 user=cron password='a b\\'c' dbname = ledger sslmode=verify-ca sslrootcert='/etc/my ca.pem' sslcert=/c.pem sslkey=/k.pem";
        let t = parse(kv).unwrap();
        assert_eq!(t.tls.mode, SslMode::VerifyCa);
        assert_eq!(t.tls.root.as_deref(), Some("/etc/my ca.pem"));
        assert_eq!(t.tls.cert.as_deref(), Some(std::path::Path::new("/c.pem")));
        assert_eq!(t.config.get_password(), Some(&b"a b'c"[..]));
        assert_eq!(t.config.get_dbname(), Some("ledger"));
        // The whole password is hidden, its quoted tail too.
        assert!(
            !t.shown.contains("b\\'c") && !t.shown.contains("a b"),
            "{}",
            t.shown
        );
        assert!(t.shown.contains("password=***"), "{}", t.shown);
    }

    #[test]
    fn libpq_defaults_and_refusals() {
        let t = parse("host=/run/postgresql dbname=x").unwrap();
        assert_eq!(t.tls.mode, SslMode::Prefer, "libpq's default");
        assert_eq!(t.config.get_ssl_mode(), postgres::config::SslMode::Prefer);
        let t = parse("postgresql://h/x?sslmode=disable").unwrap();
        assert_eq!(t.config.get_ssl_mode(), postgres::config::SslMode::Disable);
        for bad in [
            "host=h sslmode=sometimes",
            "host=h sslmode=allow",
            "host=h password='never ends",
            "host=h =x",
            "host",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let e = parse("host=h sslmode=allow").unwrap_err().to_string();
        assert!(e.contains("prefer") && e.contains("disable"), "{e}");
    }

    #[test]
    fn a_password_is_hidden_in_every_form() {
        assert_eq!(
            shown("postgresql://u:pw@h/db?password=other&x=1"),
            "postgresql://u:***@h/db?password=***&x=1"
        );
        assert_eq!(shown("postgresql://h/db"), "postgresql://h/db");
        assert_eq!(
            shown("host=h password = 'p w' user=u"),
            "host=h password=*** user=u"
        );
        assert_eq!(
            shown("host=/tmp user=cron password=s3cret dbname=x"),
            "host=/tmp user=cron password=*** dbname=x"
        );
        assert!(!shown("host=h password='unterminated").contains("unterminated"));
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("a%20b%2fc"), "a b/c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
