//! A stand-in for an LLM: an OpenAI-compatible server on 127.0.0.1 that
//! answers every model listing with one model (`fake-model`) and every chat
//! completion with a canned answer, after an optional delay. Hermes's real
//! agent code talks to it as to any custom endpoint (`model.base_url`).
//! One thread per connection, `Connection: close` after each answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

pub(crate) const MODEL: &str = "fake-model";

/// The `usage` block of every answer: 1,234 prompt tokens of which 100
/// cached, 56 completion tokens of which 7 reasoning. Hermes records them as
/// input 1,134, output 56, cache read 100, reasoning 7.
const USAGE: (u64, u64, u64, u64) = (1234, 56, 100, 7);

#[derive(Default)]
struct State {
    /// Chat completions asked for (counted when the request arrives).
    asked: AtomicUsize,
    /// ... and answered.
    answered: AtomicUsize,
    delay_ms: AtomicU64,
    stop: AtomicBool,
}

/// The running server; stops when dropped.
pub(crate) struct FakeModel {
    pub port: u16,
    state: Arc<State>,
}

fn respond(mut stream: TcpStream, state: &State, answer: &str) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let mut words = request_line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let json = if method == "POST" && path.ends_with("/chat/completions") {
        state.asked.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(state.delay_ms.load(Ordering::SeqCst)));
        serde_json::json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer}}],
            "usage": {"prompt_tokens": USAGE.0, "completion_tokens": USAGE.1,
                      "total_tokens": USAGE.0 + USAGE.1,
                      "prompt_tokens_details": {"cached_tokens": USAGE.2},
                      "completion_tokens_details": {"reasoning_tokens": USAGE.3}}
        })
    } else {
        serde_json::json!({"object": "list", "data": [
            {"id": MODEL, "object": "model", "created": 0, "owned_by": "fake", "context_length": 131072}
        ]})
    };
    let text = json.to_string();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    stream.flush()?;
    if path.ends_with("/chat/completions") {
        state.answered.fetch_add(1, Ordering::SeqCst);
    }
    Ok(())
}

impl FakeModel {
    pub(crate) fn start(answer: &str) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let (s, a) = (state.clone(), answer.to_string());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (s, a) = (s.clone(), a.clone());
                std::thread::spawn(move || {
                    let _ = respond(stream, &s, &a);
                });
            }
        });
        FakeModel { port, state }
    }

    /// `model.base_url` for Hermes.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Answer chat completions this much later.
    pub(crate) fn set_delay(&self, delay: Duration) {
        self.state
            .delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }

    pub(crate) fn asked(&self) -> usize {
        self.state.asked.load(Ordering::SeqCst)
    }

    pub(crate) fn answered(&self) -> usize {
        self.state.answered.load(Ordering::SeqCst)
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}
