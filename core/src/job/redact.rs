//! Which environment values are secret, and how they are shown.
//!
//! A value is shown only when its name is clearly harmless; names that look
//! secret (`*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, ...) are always
//! replaced by `<redacted>` in logs, `show`, `runs --json`, `config get` and
//! dumps, and so is a value that carries a password whatever its name: a URL
//! with one (`http://user:password@proxy:3128`, what `HTTPS_PROXY` holds).

const SECRET_MARKERS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "PRIVATE",
    "SIGNATURE",
    "DSN",
];

/// The text shown in place of a secret value.
pub const REDACTED: &str = "<redacted>";

/// Whether an environment variable's name looks like it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

/// Whether `value` carries a secret whatever its name: a URL whose user
/// part has a password (`scheme://user:password@host`).
pub fn is_secret_value(value: &str) -> bool {
    let Some((_, rest)) = value.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'))
}

/// Whether the variable `name` = `value` is shown as [`REDACTED`].
pub fn is_secret(name: &str, value: &str) -> bool {
    is_secret_name(name) || is_secret_value(value)
}

/// `env` with secret values replaced, for display.
pub fn redacted_env(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| {
            let shown = if is_secret(k, v) { REDACTED } else { v };
            (k.clone(), shown.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_redacted() {
        for name in [
            "GITHUB_TOKEN",
            "api_key",
            "DB_PASSWORD",
            "aws_secret_access_key",
            "MY_AUTH",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "LANG", "TZ", "REPO_DIR"] {
            assert!(!is_secret_name(name), "{name}");
        }
        let shown = redacted_env(&[("TOKEN".into(), "s3cr3t".into()), ("A".into(), "b".into())]);
        assert_eq!(shown[0].1, REDACTED);
        assert_eq!(shown[1].1, "b");
    }

    #[test]
    fn a_url_with_a_password_is_redacted_whatever_its_name() {
        for value in [
            "http://user:pw@proxy.example:3128",
            "https://u:p@h/path",
            "socks5://me:s3cr3t@127.0.0.1:1080?x=1",
            "postgres://app:hunter2@db/app",
            "http://user:p@ss@proxy:3128",
        ] {
            assert!(is_secret_value(value), "{value}");
            assert!(is_secret("HTTPS_PROXY", value), "{value}");
        }
        for value in [
            "http://proxy.example:3128",
            "http://user@proxy.example:3128",
            "https://example.com/a:b@c",
            "https://example.com/?q=a:b@c",
            "mailto:someone@example.com",
            "a:b@c",
            "Europe/Berlin",
            "",
        ] {
            assert!(!is_secret_value(value), "{value}");
            assert!(!is_secret("HTTPS_PROXY", value), "{value}");
        }
        let shown = redacted_env(&[("HTTPS_PROXY".into(), "http://u:p@proxy:3128".into())]);
        assert_eq!(shown[0].1, REDACTED);
    }
}
