//! From the config to what the endpoint serves with: its address and its
//! token, read once when the gateway starts.
//!
//! Refused (the gateway does not start, exit 2, the message naming the key
//! and the fix): a non-loopback `gateway.http_listen` without a token; both
//! `gateway.http_token` and `gateway.http_token_file` set; a token file that
//! cannot be read or does not hold a valid token. A token file others can
//! read is used, with a warning.

use crate::config::{GatewayConfig, SecretText};
use hermes_cron_core::http::{listen, token};
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// Where the endpoint listens and the token it requires (if any).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub addr: SocketAddr,
    pub token: Option<SecretText>,
}

/// Why the gateway refuses to start its endpoint (and so to start).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error(transparent)]
    TokenRequired(#[from] listen::TokenRequired),
    #[error("gateway.http_listen: {text:?} {why}")]
    Address { text: String, why: &'static str },
    #[error(
        "both gateway.http_token and gateway.http_token_file are set: keep one \
         (`hermes-cron config unset gateway.http_token` keeps the file)"
    )]
    TwoTokens,
    /// The cause is in the message (before the fix), so it is no `source`.
    #[error(
        "gateway.http_token_file: cannot read {}: {error}; write the token there \
         (one line, 16 or more characters) or unset the key",
        path.display()
    )]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "gateway.http_token_file: the token in {} {why}; expected 16 to 4096 visible \
         ASCII characters, e.g. `head -c 24 /dev/urandom | base64 > {}`",
        path.display(),
        path.display()
    )]
    BadToken { path: PathBuf, why: &'static str },
}

impl Plan {
    /// The plan for `gateway`, None when the endpoint is off.
    pub(crate) fn from_config(gateway: &GatewayConfig) -> Result<Option<Plan>, SetupError> {
        let Some(text) = &gateway.http_listen else {
            return Ok(None);
        };
        // The config holds only addresses that parse; this is its own check.
        let addr = listen::parse(text).map_err(|why| SetupError::Address {
            text: text.clone(),
            why,
        })?;
        let token = match (&gateway.http_token, &gateway.http_token_file) {
            (Some(_), Some(_)) => return Err(SetupError::TwoTokens),
            (Some(t), None) => Some(t.clone()),
            (None, Some(path)) => Some(read_token_file(&PathBuf::from(path))?),
            (None, None) => None,
        };
        listen::require_token(&addr, token.is_some())?;
        Ok(Some(Plan { addr, token }))
    }
}

fn read_token_file(path: &PathBuf) -> Result<SecretText, SetupError> {
    let unreadable = |error| SetupError::Unreadable {
        path: path.clone(),
        error,
    };
    let contents =
        crate::small_file::read_text(path, crate::small_file::TOKEN_MAX).map_err(unreadable)?;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            "gateway.http_token_file: {} can be read by other users; `chmod 600` it",
            path.display()
        );
    }
    token::from_file_contents(&contents)
        .map(SecretText::new)
        .map_err(|why| SetupError::BadToken {
            path: path.clone(),
            why,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn gateway(listen: &str) -> GatewayConfig {
        let mut c = Config::default().gateway;
        c.http_listen = Some(listen.into());
        c
    }

    #[test]
    fn off_by_default_and_loopback_without_a_token() {
        assert!(
            Plan::from_config(&Config::default().gateway)
                .unwrap()
                .is_none()
        );
        let plan = Plan::from_config(&gateway("127.0.0.1:0")).unwrap().unwrap();
        assert!(plan.token.is_none());
    }

    #[test]
    fn other_addresses_need_a_token_and_one_only() {
        let err = Plan::from_config(&gateway("0.0.0.0:9464")).unwrap_err();
        assert!(
            err.to_string()
                .contains("gateway.http_listen is 0.0.0.0:9464"),
            "{err}"
        );
        let mut g = gateway("0.0.0.0:9464");
        g.http_token = Some(SecretText::new("0123456789abcdef".into()));
        assert!(Plan::from_config(&g).unwrap().unwrap().token.is_some());
        g.http_token_file = Some("/nonexistent".into());
        assert!(matches!(Plan::from_config(&g), Err(SetupError::TwoTokens)));
    }

    #[test]
    fn a_token_file_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let mut g = gateway("[::]:9464");
        g.http_token_file = Some(path.display().to_string());
        let err = Plan::from_config(&g).unwrap_err();
        assert!(matches!(err, SetupError::Unreadable { .. }), "{err}");
        std::fs::write(&path, "short\n").unwrap();
        let err = Plan::from_config(&g).unwrap_err().to_string();
        assert!(
            err.contains("shorter than 16") && !err.contains("short\n"),
            "{err}"
        );
        std::fs::write(&path, "0123456789abcdef\n").unwrap();
        let plan = Plan::from_config(&g).unwrap().unwrap();
        assert_eq!(plan.token.unwrap().expose(), "0123456789abcdef");
    }
}
