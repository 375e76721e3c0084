//! The gateway's HTTP endpoint from a test: where it listens (from its log),
//! a minimal HTTP/1.1 client over a `TcpStream` (one request per
//! connection, as the endpoint serves), and a real headless Chromium
//! (Debian's `chromium`, which `tests/run-all.sh` installs) to load the page.

use super::gateway::{Gateway, READY_TIMEOUT};
use super::waiting::poll;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// The values of header `name` (case-insensitive).
    pub(crate) fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

impl Gateway {
    /// Where its endpoint listens, once it says so in its log.
    #[track_caller]
    pub(crate) fn http_addr(&mut self) -> SocketAddr {
        const SAYS: &str = "http endpoint listening on http://";
        self.wait_log(SAYS, READY_TIMEOUT);
        let log = self.log();
        let at = log.find(SAYS).expect("logged") + SAYS.len();
        let addr = &log[at..at + log[at..].find('/').expect("a / after the address")];
        addr.parse().unwrap_or_else(|e| panic!("{addr:?}: {e}"))
    }
}

/// Debian's Chromium, headless, with its profile (`profile`) and `HOME` under
/// `scratch` and no stdin; panics naming the package when it is missing.
#[track_caller]
pub(crate) fn headless_chromium(scratch: &Path, profile: &str) -> Command {
    let chromium = which::which("chromium").unwrap_or_else(|_| {
        panic!("Debian's chromium is not installed: `apt-get install -y chromium` (tests/run-all.sh does)")
    });
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join(profile).display()
        ))
        .env("HOME", scratch)
        .stdin(Stdio::null());
    command
}

/// `method path` on `addr` with `headers`; panics when the exchange fails.
#[track_caller]
pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Reply {
    try_request(addr, method, path, headers)
        .unwrap_or_else(|e| panic!("{method} {path} on {addr}: {e}"))
}

/// `GET path` without headers.
#[track_caller]
pub(crate) fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, &[])
}

/// The exchange, or why it failed (refused, reset, malformed).
pub(crate) fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<Reply, String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(REQUEST_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8(raw).map_err(|e| e.to_string())?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or("no blank line after the head")?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status line in {head:?}"))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect();
    Ok(Reply {
        status,
        headers,
        body: body.to_string(),
    })
}

/// The DOM of `url` as a real headless Chromium builds it (`--dump-dom`),
/// with a profile under `scratch`.
#[track_caller]
pub(crate) fn chromium_dom(url: &str, scratch: &Path) -> String {
    let out = scratch.join("chromium-dom.html");
    let err = scratch.join("chromium-stderr.txt");
    let mut child = headless_chromium(scratch, "chromium-profile")
        .arg("--virtual-time-budget=2000")
        .args(["--dump-dom", url])
        .stdout(std::fs::File::create(&out).expect("dom file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("start chromium");
    let status = poll(Duration::from_secs(120), || child.try_wait().ok().flatten());
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "chromium did not finish within 120 s\n{}",
            std::fs::read_to_string(&err).unwrap_or_default()
        );
    };
    let dom = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        status.success() && !dom.is_empty(),
        "chromium failed ({status})\n{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    dom
}
