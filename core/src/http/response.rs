//! A response and its bytes. Every response closes its connection (one
//! request per connection keeps the server's state per client to one read
//! and one write) and forbids caching and content sniffing; the page's also
//! forbids scripts, frames and forms (`Content-Security-Policy`).

/// The page's policy: its own inline style, nothing else.
pub const PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
     frame-ancestors 'none'; form-action 'none'; base-uri 'none'";

/// A response to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body (left out of a HEAD response).
    pub body: Vec<u8>,
    /// Headers beyond the ones every response has.
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    /// A response with no extra headers.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A plain-text response (errors, refusals).
    pub fn text(status: u16, body: impl Into<String>) -> Response {
        let mut body = body.into();
        if !body.ends_with('\n') {
            body.push('\n');
        }
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    /// The response with one more header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    /// 401, asking for the token (Bearer) or a login whose password is the
    /// token (Basic, which makes a browser prompt).
    pub fn unauthorized() -> Response {
        Response::text(401, "a token is required: Authorization: Bearer <token>")
            .with_header("WWW-Authenticate", "Bearer realm=\"hermes-cron\"")
            .with_header(
                "WWW-Authenticate",
                "Basic realm=\"hermes-cron\", charset=\"UTF-8\"",
            )
    }

    /// The bytes on the wire; without the body for HEAD (`Content-Length`
    /// still the body's).
    pub fn to_bytes(&self, head_only: bool) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
             Referrer-Policy: no-referrer\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            // Values are ours; a line break would split the head.
            let value: String = value.chars().filter(|c| !c.is_control()).collect();
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if !head_only {
            bytes.extend_from_slice(&self.body);
        }
        bytes
    }
}

/// The reason phrase of the statuses the endpoint sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_carry_length_and_close_and_head_drops_the_body() {
        let r = Response::text(200, "ok").with_header("X-A", "b\r\nInjected: 1");
        let full = String::from_utf8(r.to_bytes(false)).unwrap();
        assert!(full.starts_with("HTTP/1.1 200 OK\r\n"), "{full}");
        assert!(full.contains("Content-Length: 3\r\n"), "{full}");
        assert!(full.contains("Connection: close\r\n"), "{full}");
        assert!(full.contains("X-A: bInjected: 1\r\n"), "{full}");
        assert!(full.ends_with("\r\n\r\nok\n"), "{full}");
        let head = String::from_utf8(r.to_bytes(true)).unwrap();
        assert!(head.ends_with("\r\n\r\n") && head.contains("Content-Length: 3"));
    }

    #[test]
    fn unauthorized_offers_bearer_and_basic() {
        let text = String::from_utf8(Response::unauthorized().to_bytes(false)).unwrap();
        assert!(text.starts_with("HTTP/1.1 401 Unauthorized"));
        assert!(text.contains("WWW-Authenticate: Bearer realm=\"hermes-cron\""));
        assert!(text.contains("WWW-Authenticate: Basic realm=\"hermes-cron\""));
    }
}
