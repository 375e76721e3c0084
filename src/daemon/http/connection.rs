//! One connection: read the request head (at most
//! [`MAX_HEAD`](hermes_cron_core::http::request::MAX_HEAD) bytes, within
//! [`READ_TIMEOUT`]), answer it, write the response within
//! [`WRITE_TIMEOUT`], close. One request per connection; no body is read. A
//! head that cannot be valid is answered 400 as soon as it is seen.
//! A client that sends nothing holds its slot until the server needs it for
//! another (`server.rs`) or the read timeout; one that never reads, for at
//! most the write timeout.

use super::handlers::App;
use hermes_cron_core::http::request::{self, BadRequest, Head, MAX_HEAD};
use hermes_cron_core::http::response::Response;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Time a client has to send its request head.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to take the response.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

enum Read {
    Head(Head),
    Bad(BadRequest),
    TooLarge,
    Closed,
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<Read> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(Read::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
        match request::parse(&buf) {
            Ok(Some(head)) => return Ok(Read::Head(head)),
            Err(e) => return Ok(Read::Bad(e)),
            Ok(None) if buf.len() > MAX_HEAD => return Ok(Read::TooLarge),
            Ok(None) => {}
        }
    }
}

/// Serve one connection to its end; `reading` is cleared once its head is
/// read (until then the server may close it to make room).
pub(super) async fn serve(mut stream: TcpStream, app: &App, reading: &AtomicBool) {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await;
    reading.store(false, Ordering::Relaxed);
    let (response, head_only) = match head {
        Err(_) => (Response::text(408, "the request head took too long"), false),
        Ok(Err(_)) | Ok(Ok(Read::Closed)) => return,
        Ok(Ok(Read::TooLarge)) => (Response::text(431, "the request head is too large"), false),
        Ok(Ok(Read::Bad(e))) => (Response::text(400, e.to_string()), false),
        Ok(Ok(Read::Head(head))) => (app.handle(&head), head.method == "HEAD"),
    };
    let bytes = response.to_bytes(head_only);
    let _ = tokio::time::timeout(WRITE_TIMEOUT, async {
        stream.write_all(&bytes).await?;
        stream.shutdown().await
    })
    .await;
}
