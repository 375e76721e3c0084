//! Which environment values are secret, and how they are shown.
//!
//! A value is shown only when its name is clearly harmless; names that look
//! secret (`*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, ...) are always
//! replaced by `<redacted>` in logs, `show`, `runs --json` and dumps.

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

/// `env` with secret values replaced, for display.
pub fn redacted_env(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| {
            let shown = if is_secret_name(k) { REDACTED } else { v };
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
}
