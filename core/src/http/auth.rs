//! Whether a request carries the endpoint's token: `Authorization: Bearer
//! <token>`, or `Authorization: Basic` with the token as the password (any
//! user name), so that a browser can open the page after its login prompt.
//! Compared in time that does not depend on where the first difference is.

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
        let Some(decoded) = base64_decode(credentials) else {
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

/// Standard base64 (RFC 4648 section 4), padding optional; None if malformed.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.as_bytes().chunks(4) {
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= value(*c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

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
        assert_eq!(base64_decode("bWU6eA==").unwrap(), b"me:x");
        assert_eq!(base64_decode("bWU6eA").unwrap(), b"me:x");
        assert_eq!(base64_decode("YWJj").unwrap(), b"abc");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert!(base64_decode("a").is_none());
        assert!(base64_decode("YW=J").is_none());
    }
}
