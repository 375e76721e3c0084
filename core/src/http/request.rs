//! A request head (request line and headers) from the bytes a client sent.
//!
//! Bounded: a head longer than [`MAX_HEAD`] bytes or with more than
//! [`MAX_HEADERS`] headers is refused, so a client cannot make the server
//! hold more than that per connection. Bodies are never read: the endpoint
//! has only GET and HEAD resources. Lines end in CRLF (a bare LF is
//! tolerated, as RFC 9112 allows).

/// The longest head read.
pub const MAX_HEAD: usize = 16 * 1024;
/// The most headers read.
pub const MAX_HEADERS: usize = 64;

/// A parsed request head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    /// The request target as sent (`/metrics`, `/?refresh=1`).
    pub target: String,
    /// Header names and values, names as sent, values trimmed.
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a head was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadRequest {
    #[error("the request head is not UTF-8")]
    NotText,
    #[error("the request line is not `METHOD TARGET HTTP/1.x`")]
    RequestLine,
    #[error("only HTTP/1.0 and HTTP/1.1 are spoken")]
    Version,
    #[error("a header line has no `:`")]
    Header,
    #[error("more than 64 headers")]
    TooManyHeaders,
}

/// The length of the head at the start of `buf` (through its blank line),
/// once it is all there.
pub fn head_len(buf: &[u8]) -> Option<usize> {
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Parse a complete head (as [`head_len`] delimits it).
pub fn parse(head: &[u8]) -> Result<Head, BadRequest> {
    let text = std::str::from_utf8(head).map_err(|_| BadRequest::NotText)?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().ok_or(BadRequest::RequestLine)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest::RequestLine);
    };
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic());
    if !token(method) || !target.starts_with('/') && target != "*" {
        return Err(BadRequest::RequestLine);
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(BadRequest::Version);
    }
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        if headers.len() == MAX_HEADERS {
            return Err(BadRequest::TooManyHeaders);
        }
        let (name, value) = line.split_once(':').ok_or(BadRequest::Header)?;
        if name.is_empty() || name.contains([' ', '\t']) {
            return Err(BadRequest::Header);
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    Ok(Head {
        method: method.to_string(),
        target: target.to_string(),
        headers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_head_is_read_with_its_headers() {
        let raw = b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAuthorization:  Bearer t \r\n\r\nbody";
        let len = head_len(raw).unwrap();
        assert_eq!(&raw[len..], b"body");
        let head = parse(&raw[..len]).unwrap();
        assert_eq!(head.method, "GET");
        assert_eq!(head.target, "/metrics?x=1");
        assert_eq!(head.header("authorization"), Some("Bearer t"));
        assert_eq!(head.header("cookie"), None);
        assert!(parse(b"GET / HTTP/1.0\n\n").is_ok());
    }

    #[test]
    fn malformed_heads_are_refused() {
        assert_eq!(head_len(b"GET / HTTP/1.1\r\nHost: a\r\n"), None);
        assert_eq!(parse(b"GET /\r\n\r\n"), Err(BadRequest::RequestLine));
        assert_eq!(
            parse(b"GET  / HTTP/1.1\r\n\r\n"),
            Err(BadRequest::RequestLine)
        );
        assert_eq!(
            parse(b"GET x HTTP/1.1\r\n\r\n"),
            Err(BadRequest::RequestLine)
        );
        assert_eq!(parse(b"GET / HTTP/2\r\n\r\n"), Err(BadRequest::Version));
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\nNoColon\r\n\r\n"),
            Err(BadRequest::Header)
        );
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\n\xff: x\r\n\r\n"),
            Err(BadRequest::NotText)
        );
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(65));
        assert_eq!(parse(many.as_bytes()), Err(BadRequest::TooManyHeaders));
    }
}
