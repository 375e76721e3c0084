//! A request head (request line and headers) from the bytes a client has sent
//! so far, read by `httparse`.
//!
//! Bounded: a head longer than [`MAX_HEAD`] bytes or with more than
//! [`MAX_HEADERS`] headers is refused, so a client cannot make the server
//! hold more than that per connection. Bodies are never read: the endpoint
//! has only GET and HEAD resources. Lines end in CRLF (a bare LF is
//! tolerated, and empty lines before the request line are skipped, as RFC
//! 9112 section 2.2 allows). A head is refused as soon as its bytes so far
//! cannot begin a valid one.

/// The longest head read.
pub const MAX_HEAD: usize = 16 * 1024;
/// The most headers read.
pub const MAX_HEADERS: usize = 64;

/// A parsed request head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The method as sent (`GET`).
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
    /// The head's bytes are not UTF-8.
    #[error("the request head is not UTF-8")]
    NotText,
    /// A malformed request line.
    #[error("the request line is not `METHOD TARGET HTTP/1.x`")]
    RequestLine,
    /// An HTTP version other than 1.0 and 1.1.
    #[error("only HTTP/1.0 and HTTP/1.1 are spoken")]
    Version,
    /// A malformed header line.
    #[error("a header line is not `Name: value`")]
    Header,
    /// More than [`MAX_HEADERS`] headers.
    #[error("more than 64 headers")]
    TooManyHeaders,
}

impl From<httparse::Error> for BadRequest {
    fn from(e: httparse::Error) -> BadRequest {
        match e {
            httparse::Error::Version => BadRequest::Version,
            httparse::Error::HeaderName | httparse::Error::HeaderValue => BadRequest::Header,
            httparse::Error::TooManyHeaders => BadRequest::TooManyHeaders,
            // A method or target that is no token, a line that does not end
            // where it must (`Status` is of responses only).
            httparse::Error::Token | httparse::Error::NewLine | httparse::Error::Status => {
                BadRequest::RequestLine
            }
        }
    }
}

/// The head at the start of `buf` (bytes after its blank line ignored), or
/// None while it is incomplete.
pub fn parse(buf: &[u8]) -> Result<Option<Head>, BadRequest> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let complete = req.parse(buf)?.is_complete();
    // Origin form or `*` only (the endpoint is no proxy), as soon as it is read.
    if req.path.is_some_and(|t| !t.starts_with('/') && t != "*") {
        return Err(BadRequest::RequestLine);
    }
    let (true, Some(method), Some(target)) = (complete, req.method, req.path) else {
        return Ok(None);
    };
    let headers = req.headers.iter().map(|h| {
        let value = std::str::from_utf8(h.value).map_err(|_| BadRequest::NotText)?;
        Ok((h.name.to_string(), value.trim().to_string()))
    });
    Ok(Some(Head {
        method: method.to_string(),
        target: target.to_string(),
        headers: headers.collect::<Result<_, BadRequest>>()?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_head_is_read_with_its_headers() {
        let raw =
            b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAuthorization:  Bearer t \r\n\r\n\xffbody";
        let head = parse(raw).unwrap().expect("complete");
        assert_eq!(head.method, "GET");
        assert_eq!(head.target, "/metrics?x=1");
        assert_eq!(head.header("authorization"), Some("Bearer t"));
        assert_eq!(head.header("cookie"), None);
        assert_eq!(head.headers.len(), 2, "nothing after the blank line");
        assert!(parse(b"GET / HTTP/1.0\n\n").unwrap().is_some());
        assert!(parse(b"\r\nGET * HTTP/1.1\r\n\r\n").unwrap().is_some());
    }

    #[test]
    fn a_partial_head_waits_for_more_unless_it_is_wrong_already() {
        let raw = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        for end in 0..raw.len() {
            assert_eq!(parse(&raw[..end]), Ok(None), "{end}");
        }
        assert_eq!(parse(b"GET x HTTP/1.1\r\n"), Err(BadRequest::RequestLine));
        assert_eq!(parse(b"GET / HTTP/2\r\n"), Err(BadRequest::Version));
        assert_eq!(parse(b"GET / HTTP/1.1\r\nA b"), Err(BadRequest::Header));
    }

    #[test]
    fn malformed_heads_are_refused() {
        for (raw, why) in [
            (&b"GET /\r\n\r\n"[..], BadRequest::RequestLine),
            (b"GET  / HTTP/1.1\r\n\r\n", BadRequest::RequestLine),
            (b"GET x HTTP/1.1\r\n\r\n", BadRequest::RequestLine),
            (b"GET /\xff HTTP/1.1\r\n\r\n", BadRequest::RequestLine),
            (b"GE(T / HTTP/1.1\r\n\r\n", BadRequest::RequestLine),
            (b"GET / HTTP/2\r\n\r\n", BadRequest::Version),
            (b"GET / HTTP/1.1\r\nNoColon\r\n\r\n", BadRequest::Header),
            (b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", BadRequest::Header),
            (b"GET / HTTP/1.1\r\n\xff: x\r\n\r\n", BadRequest::Header),
            (b"GET / HTTP/1.1\r\nX: \xff\r\n\r\n", BadRequest::NotText),
        ] {
            assert_eq!(parse(raw), Err(why), "{}", raw.escape_ascii());
        }
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(65));
        assert_eq!(parse(many.as_bytes()), Err(BadRequest::TooManyHeaders));
        let most = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(64));
        assert!(parse(most.as_bytes()).unwrap().is_some());
    }
}
