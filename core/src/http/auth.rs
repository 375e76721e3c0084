//! Whether a request carries the endpoint's token: `Authorization: Bearer
//! <token>`, or `Authorization: Basic` with the token as the password (any
//! user name), so that a browser can open the page after its login prompt.
//! Compared in time that does not depend on where the first difference is.

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Whether the `Authorization` header value `header` carries `token`.
pub fn authorized(header: Option<&str>, token: &str) -> bool {
    let Some(header) = header.map(str::trim) else {
        return false;
    };
    let (scheme, credentials) = header.split_once(' ').unwrap_or((header, ""));
    let credentials = credentials.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return same(credentials.as_bytes(), token.as_bytes());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let Ok(decoded) = BASE64.decode(credentials) else {
            return false;
        };
        let password = match decoded.iter().position(|b| *b == b':') {
            Some(colon) => &decoded[colon + 1..],
            None => return false,
        };
        return same(password, token.as_bytes());
    }
    false
}

/// Byte equality whose time depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Standard base64 (RFC 4648 section 4) with its padding optional, as the
/// hand-made clients of Basic auth send it; bits beyond the last byte are
/// ignored, not refused.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef";

    #[test]
    fn bearer_and_basic_carry_the_token() {
        assert!(authorized(Some("Bearer 0123456789abcdef"), TOKEN));
        assert!(authorized(Some("bearer  0123456789abcdef "), TOKEN));
        // "me:0123456789abcdef" and ":0123456789abcdef"
        assert!(authorized(
            Some("Basic bWU6MDEyMzQ1Njc4OWFiY2RlZg=="),
            TOKEN
        ));
        assert!(authorized(Some("Basic OjAxMjM0NTY3ODlhYmNkZWY="), TOKEN));
    }

    #[test]
    fn anything_else_is_refused() {
        for header in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Bearer 0123456789abcde"),
            Some("Bearer 0123456789abcdef0"),
            Some("Token 0123456789abcdef"),
            Some("0123456789abcdef"),
            // "0123456789abcdef" with no user part: no colon
            Some("Basic MDEyMzQ1Njc4OWFiY2RlZg=="),
            // "me:wrong"
            Some("Basic bWU6d3Jvbmc="),
            Some("Basic !!!"),
        ] {
            assert!(!authorized(header, TOKEN), "{header:?}");
        }
    }

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(BASE64.decode("bWU6eA==").unwrap(), b"me:x");
        assert_eq!(BASE64.decode("bWU6eA").unwrap(), b"me:x");
        assert_eq!(BASE64.decode("bWU6eA=").unwrap(), b"me:x");
        assert_eq!(BASE64.decode("bWU6eB").unwrap(), b"me:x");
        assert_eq!(BASE64.decode("YWJj").unwrap(), b"abc");
        assert_eq!(BASE64.decode("").unwrap(), b"");
        for bad in ["a", "YW=J", "YWJj==", "bWU6eA===", "bWU6 eA=="] {
            assert!(BASE64.decode(bad).is_err(), "{bad}");
        }
    }
}
