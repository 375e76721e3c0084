//! `gateway.http_listen`: the address the endpoint listens on, and who may
//! listen where.
//!
//! Accepted: an IP address and port (`127.0.0.1:9464`, `[::1]:9464`,
//! `0.0.0.0:9464`), `localhost:PORT` (read as `127.0.0.1:PORT`), or a bare
//! port (`9464`, on `127.0.0.1`). Port 0 asks the kernel for a free port (the
//! gateway logs the one it got). Host names are refused: the address must
//! say by itself whether it is loopback. Canonical form: `SocketAddr`'s own
//! (`127.0.0.1:9464`, `[::1]:9464`).
//!
//! The rule: loopback addresses may serve without a token; any other address
//! serves only with one ([`require_token`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The canonical form of a listen address, or why it is not one (a fragment
/// that follows the value, as config warnings print it).
pub fn canonical(text: &str) -> Result<String, &'static str> {
    parse(text).map(|addr| addr.to_string())
}

/// A listen address from its text (see the module documentation).
pub fn parse(text: &str) -> Result<SocketAddr, &'static str> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        return port
            .parse::<u16>()
            .map(|port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
            .map_err(|_| "has no valid port after localhost:");
    }
    if text.starts_with(':') {
        return Err("names no address: write 127.0.0.1:PORT, or 0.0.0.0:PORT for every interface");
    }
    text.parse::<SocketAddr>()
        .map_err(|_| "is not an IP address and port (host names are not accepted)")
}

/// Whether only this machine can reach `addr`.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Whether a request with `Host` header `host` may be served by an
/// endpoint on `listen` that needs no token (a loopback address): only
/// when it names this machine (`localhost`, a loopback address, the listen
/// address), or says nothing (HTTP/1.0). A page of another site that a
/// browser was made to send here by DNS rebinding names that site's host,
/// and is refused.
pub fn host_allowed(host: Option<&str>, listen: &SocketAddr) -> bool {
    let Some(host) = host.map(str::trim) else {
        return true;
    };
    // Strip the port: `[::1]:9464`, `127.0.0.1:9464`, `localhost:9464`.
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        }),
    };
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match name.parse::<IpAddr>() {
        Ok(ip) => is_loopback(&SocketAddr::new(ip, 0)) || ip == listen.ip(),
        Err(_) => false,
    }
}

/// An endpoint that would serve other machines without a token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "gateway.http_listen is {addr}, which other machines can reach, but no token is set: \
     set gateway.http_token (16 or more characters, e.g. `hermes-cron config set \
     gateway.http_token \"$(head -c 24 /dev/urandom | base64)\"`) or gateway.http_token_file, \
     or listen on a loopback address such as 127.0.0.1:{}",
    addr.port()
)]
pub struct TokenRequired {
    /// The address asked for.
    pub addr: SocketAddr,
}

/// The rule: a non-loopback address serves only with a token.
pub fn require_token(addr: &SocketAddr, has_token: bool) -> Result<(), TokenRequired> {
    if has_token || is_loopback(addr) {
        Ok(())
    } else {
        Err(TokenRequired { addr: *addr })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hosts_that_name_this_machine_are_served_without_a_token() {
        let listen: SocketAddr = "127.0.0.1:9464".parse().unwrap();
        for ok in [
            None,
            Some("127.0.0.1:9464"),
            Some("localhost:9464"),
            Some("LOCALHOST"),
            Some("[::1]:9464"),
            Some("127.0.0.2"),
        ] {
            assert!(host_allowed(ok, &listen), "{ok:?}");
        }
        for bad in [
            Some("evil.example"),
            Some("evil.example:9464"),
            Some("localhost.evil.example"),
            Some("10.0.0.1:9464"),
            Some(""),
        ] {
            assert!(!host_allowed(bad, &listen), "{bad:?}");
        }
    }

    #[test]
    fn forms_read_to_their_canonical_address() {
        for (text, want) in [
            ("9464", "127.0.0.1:9464"),
            (" 9464 ", "127.0.0.1:9464"),
            ("localhost:80", "127.0.0.1:80"),
            ("127.0.0.1:0", "127.0.0.1:0"),
            ("0.0.0.0:9464", "0.0.0.0:9464"),
            ("[::1]:9464", "[::1]:9464"),
            ("[::]:9464", "[::]:9464"),
            ("192.168.1.5:8080", "192.168.1.5:8080"),
        ] {
            assert_eq!(canonical(text).as_deref(), Ok(want), "{text}");
        }
        for bad in [
            ":9464",
            "example.com:80",
            "127.0.0.1",
            "127.0.0.1:65536",
            "localhost",
            "localhost:x",
            "::1:80",
            "-1",
        ] {
            assert!(canonical(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_loopback_serves_without_a_token() {
        let addr = |t: &str| parse(t).unwrap();
        for open in [
            "127.0.0.1:1",
            "127.8.9.10:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(require_token(&addr(open), false).is_ok(), "{open}");
        }
        for exposed in ["0.0.0.0:1", "[::]:1", "10.0.0.1:1", "[::ffff:10.0.0.1]:1"] {
            let err = require_token(&addr(exposed), false).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("gateway.http_token"), "{text}");
            assert!(text.contains("127.0.0.1:1"), "{text}");
            assert!(require_token(&addr(exposed), true).is_ok(), "{exposed}");
        }
    }
}
