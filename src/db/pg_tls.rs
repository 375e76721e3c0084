//! TLS for PostgreSQL connections, as libpq users set it: `sslmode`
//! (`disable`, `prefer` (libpq's default), `require`, `verify-ca`,
//! `verify-full`), `sslrootcert` (a file of CA certificates, or `system`
//! for the public roots), a client certificate (`sslcert` and `sslkey`),
//! each defaulting to libpq's file in `~/.postgresql/` when that exists.
//! rustls does the TLS (tokio-postgres-rustls connects it); this file
//! decides what is checked:
//!
//! | sslmode | encrypted | server certificate checked |
//! |---|---|---|
//! | `disable` | never | - |
//! | `prefer` | when the server offers it | no |
//! | `require` | always | no; its chain when a root certificate is given (as libpq) |
//! | `verify-ca` | always | its chain, against the root certificates |
//! | `verify-full` | always | its chain and that it names the host connected to |
//!
//! Over a Unix socket nothing is encrypted (PostgreSQL never does TLS there).

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Why a connection's TLS cannot be set up as its string asks.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error(
        "sslmode=allow (clear text first) is not supported; use prefer (TLS when the server offers it) or disable"
    )]
    Allow,
    #[error("sslmode={0:?} is not one of disable, prefer, require, verify-ca, verify-full")]
    Mode(String),
    #[error(
        "sslmode={0} checks the server's certificate, so it needs the certificate of the CA that signed it: set sslrootcert=/path/to/ca.crt (or sslrootcert=system for the public CAs), or put it at ~/.postgresql/root.crt"
    )]
    NoRoot(&'static str),
    #[error("cannot read {what} {path}")]
    Read {
        what: &'static str,
        path: String,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("sslrootcert {0} holds no certificate")]
    NoCertificate(String),
    #[error("{given} {path} is given without its {missing}: set {missing} too")]
    HalfClientCertificate {
        given: &'static str,
        missing: &'static str,
        path: String,
    },
    #[error("cannot set up TLS ({what})")]
    Rustls {
        what: &'static str,
        #[source]
        source: rustls::Error,
    },
    #[error("cannot use the root certificates")]
    Roots(#[source] rustls::client::VerifierBuilderError),
}

/// libpq's `sslmode` (`allow`, which tries clear text first, is refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// `sslrootcert=system`: the public roots (webpki-roots).
const SYSTEM_ROOTS: &str = "system";

/// What a connection's TLS checks, as its connection string says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TlsPolicy {
    pub mode: SslMode,
    /// `sslrootcert` as given (a path, or `system`).
    pub root: Option<String>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// What a connection made under a policy proves, for `status` and `doctor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TlsChecked {
    /// The server's certificate is not checked: anyone in the middle could
    /// pose as the server.
    Nothing,
    /// Its chain, against the root certificates (not its name).
    Chain,
    /// Its chain and that it names the host.
    ChainAndName,
}

impl TlsPolicy {
    /// The policy of a connection string's TLS settings (None: not given).
    pub(crate) fn from_settings(
        mode: Option<&str>,
        root: Option<String>,
        cert: Option<PathBuf>,
        key: Option<PathBuf>,
    ) -> Result<TlsPolicy, TlsError> {
        let mode = match mode.unwrap_or("prefer") {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => return Err(TlsError::Allow),
            other => return Err(TlsError::Mode(other.to_string())),
        };
        Ok(TlsPolicy {
            mode,
            root: root.filter(|r| !r.is_empty()),
            cert: cert.filter(|c| !c.as_os_str().is_empty()),
            key: key.filter(|k| !k.as_os_str().is_empty()),
        })
    }

    /// The root certificates to check against: `sslrootcert`, else libpq's
    /// `~/.postgresql/root.crt` when it exists.
    fn root(&self) -> Option<String> {
        self.root
            .clone()
            .or_else(|| libpq_default("root.crt").map(|p| p.to_string_lossy().into_owned()))
    }

    /// What is checked of the server's certificate.
    pub(crate) fn checked(&self) -> TlsChecked {
        match self.mode {
            SslMode::VerifyFull => TlsChecked::ChainAndName,
            SslMode::VerifyCa => TlsChecked::Chain,
            // As libpq: `require` with a root certificate is `verify-ca`.
            SslMode::Require if self.root().is_some() => TlsChecked::Chain,
            _ => TlsChecked::Nothing,
        }
    }

    /// The connector that does what the policy says; the files are read
    /// now (each connection), so a renewed certificate is taken.
    pub(crate) fn connector(&self) -> Result<MakeRustlsConnect, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|source| TlsError::Rustls {
                what: "protocol versions",
                source,
            })?;
        let verifier: Arc<dyn ServerCertVerifier> = match self.checked() {
            TlsChecked::Nothing => Arc::new(AnyCertificate(provider.clone())),
            checked => {
                let roots = self.roots()?;
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(TlsError::Roots)?;
                match checked {
                    TlsChecked::ChainAndName => webpki,
                    _ => Arc::new(ChainOnly(webpki)),
                }
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let cert = self
            .cert
            .clone()
            .or_else(|| libpq_default("postgresql.crt"));
        let key = self.key.clone().or_else(|| libpq_default("postgresql.key"));
        let config = match (cert, key) {
            (Some(cert), Some(key)) => {
                let chain = certificates("sslcert", &cert.to_string_lossy())?;
                let key = PrivateKeyDer::from_pem_file(&key).map_err(|source| TlsError::Read {
                    what: "sslkey",
                    path: key.display().to_string(),
                    source,
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|source| TlsError::Rustls {
                        what: "the client certificate",
                        source,
                    })?
            }
            (Some(cert), None) => {
                return Err(TlsError::HalfClientCertificate {
                    given: "sslcert",
                    missing: "sslkey",
                    path: cert.display().to_string(),
                });
            }
            (None, Some(key)) if self.key.is_some() => {
                return Err(TlsError::HalfClientCertificate {
                    given: "sslkey",
                    missing: "sslcert",
                    path: key.display().to_string(),
                });
            }
            _ => builder.with_no_client_auth(),
        };
        Ok(MakeRustlsConnect::new(config))
    }

    fn roots(&self) -> Result<RootCertStore, TlsError> {
        let mut roots = RootCertStore::empty();
        match self.root() {
            Some(r) if r == SYSTEM_ROOTS => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
            Some(path) => {
                let (added, _) =
                    roots.add_parsable_certificates(certificates("sslrootcert", &path)?);
                if added == 0 {
                    return Err(TlsError::NoCertificate(path));
                }
            }
            None => return Err(TlsError::NoRoot(self.mode.as_str())),
        }
        Ok(roots)
    }
}

/// The certificates of the PEM file at `path` (the setting `what`).
fn certificates(what: &'static str, path: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|source| TlsError::Read {
            what,
            path: path.to_string(),
            source,
        })
}

/// libpq's default file `~/.postgresql/<name>`, when it exists.
fn libpq_default(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let path = Path::new(&home).join(".postgresql").join(name);
    path.is_file().then_some(path)
}

/// The fix to add to a TLS failure of a connection under `policy`, when the
/// failure says what it was.
pub(crate) fn fix_for(detail: &str, policy: &TlsPolicy) -> Option<String> {
    if detail.contains("not valid for name") || detail.contains("NotValidForName") {
        return Some(format!(
            "the server's certificate does not name the host connected to (sslmode={}): connect by a name it has (`host=`; `hostaddr=` may give the address), or use sslmode=verify-ca to check its chain only",
            policy.mode.as_str()
        ));
    }
    if detail.contains("UnknownIssuer") || detail.contains("unknown issuer") {
        return Some(
            "the server's certificate was not signed by a CA in sslrootcert: give the CA that signed it".into(),
        );
    }
    if detail.contains("server does not support TLS") {
        return Some(format!(
            "the server does not offer TLS, and sslmode={} requires it: turn `ssl` on in the server's postgresql.conf, or lower sslmode (prefer, disable) where the network is trusted",
            policy.mode.as_str()
        ));
    }
    None
}

/// Accepts any certificate (`prefer`, `require`): the connection is
/// encrypted, the server unproven. Handshake signatures are still checked.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Checks the chain, not the name (`verify-ca`).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: &str, root: Option<&str>) -> TlsPolicy {
        TlsPolicy::from_settings(Some(mode), root.map(str::to_string), None, None).unwrap()
    }

    #[test]
    fn what_each_mode_checks() {
        assert_eq!(policy("prefer", None).checked(), TlsChecked::Nothing);
        assert_eq!(policy("verify-ca", None).checked(), TlsChecked::Chain);
        assert_eq!(
            policy("verify-full", None).checked(),
            TlsChecked::ChainAndName
        );
        assert_eq!(
            policy("require", Some("/ca.pem")).checked(),
            TlsChecked::Chain
        );
    }

    #[test]
    fn a_check_without_a_root_certificate_says_where_to_put_one() {
        let p = TlsPolicy {
            root: None,
            ..policy("verify-full", None)
        };
        // No ~/.postgresql/root.crt where the tests run with a temp HOME;
        // here the message is what matters when there is none.
        if libpq_default("root.crt").is_none() {
            let e = p.connector().err().unwrap().to_string();
            assert!(e.contains("sslrootcert=") && e.contains("root.crt"), "{e}");
        }
        let missing = policy("verify-ca", Some("/nonexistent/ca.pem"));
        let e = missing.connector().err().unwrap().to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
        assert!(policy("prefer", None).connector().is_ok());
        assert!(policy("verify-full", Some("system")).connector().is_ok());
    }

    #[test]
    fn failures_get_their_fix() {
        let p = policy("verify-full", Some("/ca.pem"));
        let name = fix_for(
            "invalid peer certificate: certificate not valid for name \"other.test\"",
            &p,
        );
        assert!(name.unwrap().contains("verify-ca"));
        assert!(fix_for("invalid peer certificate: UnknownIssuer", &p).is_some());
        assert!(fix_for("connection refused", &p).is_none());
    }
}
