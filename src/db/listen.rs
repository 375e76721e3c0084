//! Waking gateways when another process changes the jobs of a PostgreSQL
//! ledger: the SQLite ledger is a file of this host (inotify on `cron/`,
//! `watch.rs`); a shared database is not. Writers of job definitions (and
//! of the retry queue) send `NOTIFY` on the ledger's channel in their
//! transaction ([`Conn::notify_jobs_changed`](super::Conn::notify_jobs_changed));
//! each gateway `LISTEN`s on a connection of its own, on a thread of its
//! own, and its event loop looks again when one arrives. Without a
//! connection (a partition) nothing arrives, and the loop still looks on its
//! monitor period.

use super::conn::Conn;
use super::dialect::channel;
use postgres::fallible_iterator::FallibleIterator;
use std::time::Duration;
use tokio::sync::mpsc;

/// Notifications of job changes, for the event loop.
pub struct PgListener {
    rx: mpsc::UnboundedReceiver<()>,
}

impl PgListener {
    /// Listen on the ledger at `url`; returns once listening (or after
    /// `patience`, when the database does not answer). The thread
    /// reconnects by itself.
    pub fn start(url: &str, patience: Duration) -> std::io::Result<PgListener> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let url = url.to_string();
        std::thread::Builder::new()
            .name("hermes-cron-listen".into())
            .spawn(move || listen(&url, &tx, &ready_tx))?;
        match ready_rx.recv_timeout(patience) {
            Ok(()) => tracing::info!("listening for changes from other hosts (LISTEN)"),
            Err(_) => tracing::warn!(
                "not listening for changes from other hosts yet (the database did not answer within {}s); they are noticed on the monitor period meanwhile",
                patience.as_secs()
            ),
        }
        Ok(PgListener { rx })
    }

    /// The next change (several at once count as one).
    pub async fn changed(&mut self) {
        if self.rx.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
        while self.rx.try_recv().is_ok() {}
    }
}

fn listen(url: &str, tx: &mpsc::UnboundedSender<()>, ready: &std::sync::mpsc::Sender<()>) {
    loop {
        if tx.is_closed() {
            return;
        }
        if let Err(e) = listen_once(url, tx, ready) {
            tracing::debug!("change notifications: {e}; listening again shortly");
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn listen_once(
    url: &str,
    tx: &mpsc::UnboundedSender<()>,
    ready: &std::sync::mpsc::Sender<()>,
) -> Result<(), String> {
    // The namespace of the ledger's schema names the channel.
    let namespace = match crate::db::Db::open_postgres(url, false) {
        Ok(db) => match db.conn() {
            Conn::Postgres(p) => p.namespace,
            Conn::Sqlite(_) => return Ok(()),
        },
        Err(e) => return Err(crate::text::Chain(&e).to_string()),
    };
    // As every connection is made: the password from `PGPASSWORD` when the
    // string gives none, and its TLS.
    let target = super::pg_target::parse(url).map_err(|e| e.to_string())?;
    let mut config = target.config;
    config
        .connect_timeout(Duration::from_secs(10))
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(5))
        .keepalives_interval(Duration::from_secs(2))
        .keepalives_retries(3);
    let mut client =
        super::pg::connect(&config, &target.tls).map_err(|e| crate::text::Chain(&e).to_string())?;
    client
        .batch_execute(&format!("LISTEN {}", channel(namespace)))
        .map_err(|e| crate::text::Chain(&e).to_string())?;
    let _ = ready.send(());
    // A change may have come while we were not listening.
    let _ = tx.send(());
    loop {
        {
            let mut n = client.notifications();
            let mut it = n.timeout_iter(Duration::from_secs(5));
            while let Some(_note) = it.next().map_err(|e| crate::text::Chain(&e).to_string())? {
                if tx.send(()).is_err() {
                    return Ok(());
                }
            }
        }
        if tx.is_closed() {
            return Ok(());
        }
        // Prove the connection still works (a partition shows here).
        client
            .simple_query("SELECT 1")
            .map_err(|e| crate::text::Chain(&e).to_string())?;
    }
}
