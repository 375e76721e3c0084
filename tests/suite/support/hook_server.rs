//! A webhook receiver on 127.0.0.1: records every request (method, path,
//! content type, body) and answers `200 OK`. Started on a port of its own,
//! or on a given port (a webhook that was down comes up there). One thread
//! per connection; stops when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request received.
#[derive(Clone, Debug)]
pub(crate) struct Hit {
    pub method: String,
    pub path: String,
    pub content_type: String,
    pub body: String,
}

impl Hit {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| {
            panic!(
                "the body of {} {} is not JSON ({e}): {}",
                self.method, self.path, self.body
            )
        })
    }
}

#[derive(Default)]
struct State {
    hits: Mutex<Vec<Hit>>,
    stop: AtomicBool,
}

pub(crate) struct HookServer {
    pub port: u16,
    state: Arc<State>,
}

fn serve(stream: TcpStream, state: &State) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let (mut length, mut content_type) = (0usize, String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            } else if k.eq_ignore_ascii_case("content-type") {
                content_type = v.trim().to_string();
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let mut words = request_line.split_whitespace();
    let hit = Hit {
        method: words.next().unwrap_or("").to_string(),
        path: words.next().unwrap_or("").to_string(),
        content_type,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    state.hits.lock().unwrap().push(hit);
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"
    )?;
    stream.flush()
}

impl HookServer {
    /// On a free port.
    pub(crate) fn start() -> HookServer {
        HookServer::listen(TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1"))
    }

    /// On `port` (free, e.g. from [`free_port`]).
    pub(crate) fn on(port: u16) -> HookServer {
        HookServer::listen(TcpListener::bind(("127.0.0.1", port)).expect("bind the given port"))
    }

    fn listen(listener: TcpListener) -> HookServer {
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &s);
                });
            }
        });
        HookServer { port, state }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request so far, in arrival order.
    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    /// The requests to `path` so far.
    pub(crate) fn hits_on(&self, path: &str) -> Vec<Hit> {
        self.hits().into_iter().filter(|h| h.path == path).collect()
    }
}

impl Drop for HookServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A port nothing listens on right now (bound, then released).
pub(crate) fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    l.local_addr().unwrap().port()
}
