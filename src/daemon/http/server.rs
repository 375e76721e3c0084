//! The endpoint's thread: a current-thread tokio runtime of its own, the
//! listening socket, and the accept loop.
//!
//! Bounds: at most [`MAX_CONNECTIONS`] connections are served at once. When
//! all are taken and another comes, the oldest one still waiting for its
//! request head is closed to make room: idle (or slow) clients cannot lock
//! anyone out, however many they open. Only when every connection is being
//! answered is the newcomer told 503 with `Retry-After` and a body saying
//! it is busy (written only if the socket takes it at once), and closed. An address
//! that is taken (another process, a previous gateway's socket) is retried
//! every [`BIND_RETRY`]; the gateway schedules meanwhile. When the last
//! connection ends, the heap it used is handed back ([`give_back_memory`]).
//!
//! ## Locking
//! None here: the accept loop and its connection tasks run on this thread
//! only. The handlers hold their own database mutex for one request.

use super::connection;
use super::handlers::{App, Context};
use super::setup::Plan;
use crate::text::Chain;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Semaphore;

/// Connections served at once.
pub(crate) const MAX_CONNECTIONS: usize = 16;
/// How often a taken address is tried again.
pub(crate) const BIND_RETRY: Duration = Duration::from_secs(30);
/// How long start-up waits for the thread's first bind.
const FIRST_BIND_WAIT: Duration = Duration::from_secs(10);

/// Sent to a connection over the bound (every slot busy answering): a body
/// that says so, unlike `/healthz`'s 503 (a JSON report).
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 37\r\nConnection: close\r\nRetry-After: 1\r\n\r\nbusy: every connection is answering\r\n";

/// Why the endpoint does not listen (yet).
#[derive(Debug, thiserror::Error)]
enum NotListening {
    #[error("cannot start its runtime")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen on {0}")]
    Bind(SocketAddr, #[source] std::io::Error),
}

type FirstBind = std::sync::mpsc::SyncSender<Result<SocketAddr, NotListening>>;

fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // A previous gateway's connections in TIME_WAIT must not block a restart.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(64)
}

/// Start the endpoint's thread; logs where it listens, or why it does not
/// yet (it keeps trying). An error only when the thread cannot start.
pub(crate) fn start(plan: Plan, ctx: Context) -> std::io::Result<()> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let token = plan.token.is_some();
    std::thread::Builder::new()
        .name("hermes-cron-http".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = tx.send(Err(NotListening::Runtime(e)));
                    return;
                }
            };
            rt.block_on(serve(plan, ctx, tx));
        })?;
    let says = if token { "required" } else { "not required" };
    match rx.recv_timeout(FIRST_BIND_WAIT) {
        Ok(Ok(addr)) => {
            tracing::info!("http endpoint listening on http://{addr}/ (token {says})");
        }
        Ok(Err(e)) => tracing::error!(
            "http endpoint: {}; the gateway runs without it and tries again every {}s",
            Chain(&e),
            BIND_RETRY.as_secs()
        ),
        Err(_) => tracing::warn!("http endpoint: not listening yet (still starting)"),
    }
    Ok(())
}

/// Return the heap a request used to the system once no request is being
/// served: this thread allocates from an arena of its own, and glibc keeps
/// freed arena memory resident otherwise (a page render would stay in the
/// gateway's RSS).
fn give_back_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free heap pages; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

async fn serve(plan: Plan, ctx: Context, tx: FirstBind) {
    let mut first = Some(tx);
    let listener = loop {
        match bind(plan.addr) {
            Ok(listener) => {
                let addr = listener.local_addr().unwrap_or(plan.addr);
                match first.take() {
                    Some(tx) => {
                        let _ = tx.send(Ok(addr));
                    }
                    None => tracing::info!("http endpoint listening on http://{addr}/ at last"),
                }
                break listener;
            }
            Err(e) => {
                if let Some(tx) = first.take() {
                    let _ = tx.send(Err(NotListening::Bind(plan.addr, e)));
                }
                tokio::time::sleep(BIND_RETRY).await;
            }
        }
    };
    let app = Arc::new(App::new(ctx, plan.token, plan.addr));
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut waiting = Waiting::default();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, or a connection reset before accept: pause, go on.
                tracing::debug!("http endpoint: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            // Full: make room by closing the oldest one still waiting for
            // its head (its task, and its permit, are dropped).
            Err(_) if waiting.evict_oldest() => permits.clone().try_acquire_owned().ok(),
            Err(_) => None,
        };
        let Some(permit) = permit else {
            let _ = stream.try_write(BUSY);
            continue;
        };
        let (app, permits) = (app.clone(), permits.clone());
        let reading = Arc::new(AtomicBool::new(true));
        let flag = reading.clone();
        let task = tokio::spawn(async move {
            connection::serve(stream, &app, &flag).await;
            drop(permit);
            if permits.available_permits() == MAX_CONNECTIONS {
                give_back_memory();
            }
        });
        waiting.add(task, reading);
    }
}

/// The connections being served, oldest first, and whether each still
/// waits for its request head.
#[derive(Default)]
struct Waiting {
    tasks: std::collections::VecDeque<(tokio::task::JoinHandle<()>, Arc<AtomicBool>)>,
}

impl Waiting {
    fn add(&mut self, task: tokio::task::JoinHandle<()>, reading: Arc<AtomicBool>) {
        self.tasks.retain(|(t, _)| !t.is_finished());
        self.tasks.push_back((task, reading));
    }

    /// Close the oldest connection still waiting for its head; false when
    /// every one is being answered.
    fn evict_oldest(&mut self) -> bool {
        self.tasks.retain(|(t, _)| !t.is_finished());
        let Some(i) = self
            .tasks
            .iter()
            .position(|(_, reading)| reading.load(Ordering::Relaxed))
        else {
            return false;
        };
        if let Some((task, _)) = self.tasks.remove(i) {
            task.abort();
        }
        true
    }
}
