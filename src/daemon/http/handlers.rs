//! The token check and the three resources. Each request reads what it shows
//! afresh: the heartbeat file and the ledger, on this endpoint's own
//! read-only connection (opened at the first request, reopened after an
//! error), with a short busy timeout so a long write lock turns into a 503,
//! not a hung client.
//!
//! ## Locking
//! `db` is held for one request's reads, on the endpoint's thread only (its
//! connections are served one at a time there); nothing else takes it.

use super::page_reads;
use crate::clock::Clock;
use crate::config::SecretText;
use crate::daemon::state::Shared;
use crate::db::{Conn, Db, DbError, Location, SqlError, SqlResult};
use crate::home::Home;
use crate::ops::{metrics, status};
use crate::schedule::Tz;
use crate::state_files::read_heartbeat;
use crate::text::Chain;
use hermes_cron_core::http::auth::authorized;
use hermes_cron_core::http::listen::host_allowed;
use hermes_cron_core::http::request::Head;
use hermes_cron_core::http::response::{PAGE_POLICY, Response};
use hermes_cron_core::http::route::{Route, route};
use hermes_cron_core::page::select::MAX_JOBS;
use hermes_cron_core::page::{self, PageData, PageHeader, Window};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a read waits for a write lock before the request gets a 503.
const BUSY_TIMEOUT: Duration = Duration::from_secs(2);
/// The connection's page cache, in KiB (SQLite's default is 2 MiB).
const CACHE_KIB: i64 = 512;

/// The most of a run's output one response carries (its end).
const OUTPUT_SERVED: u64 = 4 << 20;

/// The last `max` bytes of `path`.
fn read_tail(path: &std::path::Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut bytes = Vec::with_capacity(len.min(max) as usize);
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What the handlers read from.
pub(crate) struct Context {
    pub home: Home,
    pub clock: Arc<dyn Clock>,
    pub shared: Arc<Shared>,
    /// The zone the page shows times in where a job has none (the gateway's).
    pub zone: Tz,
    /// Where the jobs' zone names are read (the process's table).
    pub zones: Arc<crate::schedule::ZoneTable>,
    /// This host.
    pub host: crate::cluster::Host,
    /// The runs the gateway starts at once on a shared ledger
    /// (`CronConfig::parallel_bound`).
    pub runs_at_once: u32,
}

/// Why a request could not read the ledger (printed with [`Chain`]). A
/// statement's error is no `source`: rusqlite's own `source` repeats it.
#[derive(Debug, thiserror::Error)]
enum ReadFailed {
    #[error("cannot open the ledger")]
    Open(#[source] DbError),
    #[error("cannot configure the ledger connection: {0}")]
    Configure(rusqlite::Error),
    #[error("{0}")]
    Read(SqlError),
}

/// The endpoint's state: where to read, the token, the connection.
pub(super) struct App {
    ctx: Context,
    token: Option<SecretText>,
    /// Where it listens (loopback when there is no token).
    listen: SocketAddr,
    host: String,
    /// Where the ledger is (a shared one adds the cluster to the report);
    /// None when the config does not say (then every read fails, saying why).
    location: Option<Location>,
    db: Mutex<Option<Db>>,
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

impl App {
    pub(super) fn new(ctx: Context, token: Option<SecretText>, listen: SocketAddr) -> App {
        App {
            location: Location::of_home(&ctx.home).ok(),
            ctx,
            token,
            listen,
            host: host_name(),
            db: Mutex::new(None),
        }
    }

    /// The response to `head`.
    pub(super) fn handle(&self, head: &Head) -> Response {
        match &self.token {
            Some(token) if !authorized(head.header("authorization"), token.expose()) => {
                return Response::unauthorized();
            }
            // Without a token only this machine is served, and only requests
            // that name it: a site that rebinds its name to 127.0.0.1 gets
            // nothing (`host_allowed`).
            None if !host_allowed(head.header("host"), &self.listen) => {
                return Response::text(
                    421,
                    "this endpoint answers requests for this machine only (Host: localhost or its address); set gateway.http_token to serve other names",
                );
            }
            _ => {}
        }
        match route(&head.method, &head.target) {
            Route::Metrics => self.metrics(),
            Route::Healthz => self.healthz(),
            Route::Page => self.page(Window::of_target(&head.target)),
            Route::Output(id) => self.output(&id),
            Route::NotFound => Response::text(
                404,
                "not found; this endpoint serves / (the status page), /runs/ID/output, /metrics and /healthz",
            ),
            Route::MethodNotAllowed => Response::text(405, "read-only: GET and HEAD only")
                .with_header("Allow", "GET, HEAD"),
        }
    }

    /// Run `read` on the endpoint's connection, opening it when needed; a
    /// failure closes it (the next request opens a fresh one).
    fn with_db<T>(&self, read: impl FnOnce(&Conn) -> SqlResult<T>) -> Result<T, ReadFailed> {
        let mut slot = self.db.lock().unwrap_or_else(|p| p.into_inner());
        let db = match slot.take() {
            Some(db) => db,
            None => {
                let db = Db::open_home_read_only(&self.ctx.home).map_err(ReadFailed::Open)?;
                // SQLite only: PostgreSQL's reads never wait for a writer.
                if let Some(conn) = db.conn().sqlite() {
                    conn.busy_timeout(BUSY_TIMEOUT)
                        .and_then(|()| conn.pragma_update(None, "cache_size", -CACHE_KIB))
                        .map_err(ReadFailed::Configure)?;
                }
                db
            }
        };
        let result = read(db.conn()).map_err(ReadFailed::Read)?;
        *slot = Some(db);
        Ok(result)
    }

    fn metrics(&self) -> Response {
        let beat = read_heartbeat(&self.ctx.home);
        let now = self.ctx.clock.now();
        match self.with_db(|c| metrics::render(c, &self.ctx.host.name, beat.as_ref(), now)) {
            Ok(text) => Response::new(200, "text/plain; version=0.0.4; charset=utf-8", text),
            Err(e) => Response::text(503, format!("cannot compute metrics: {}", Chain(&e))),
        }
    }

    /// What `status --json` says, with the ledger when it can be read (when
    /// it cannot, the report is not healthy).
    fn report(&self) -> status::StatusReport {
        let beat = read_heartbeat(&self.ctx.home);
        let alive = beat.as_ref().is_some_and(status::writer_alive);
        let now = self.ctx.clock.now();
        let mut report =
            status::from_heartbeat(beat.as_ref(), alive, self.ctx.shared.capability(), now);
        if let Err(e) = self.with_db(|c| status::count_ledger(&mut report, c)) {
            tracing::warn!("http endpoint: {}", Chain(&e));
            report.healthy = false;
        }
        if let Some(Location::Postgres(url)) = &self.location {
            let cluster = |conn: Option<&Conn>, error| {
                let seen = crate::state_files::read_cluster(&self.ctx.home);
                crate::ops::cluster::status(
                    &self.ctx.host,
                    conn,
                    error,
                    url,
                    seen,
                    self.ctx.runs_at_once,
                    now,
                )
            };
            let cluster = self
                .with_db(|c| Ok(cluster(Some(c), None)))
                .unwrap_or_else(|e| cluster(None, Some(Chain(&e).to_string())));
            status::add_cluster(&mut report, Some(cluster));
        }
        report
    }

    fn healthz(&self) -> Response {
        let report = self.report();
        let code = if report.healthy { 200 } else { 503 };
        match serde_json::to_string_pretty(&report) {
            Ok(mut body) => {
                body.push('\n');
                Response::new(code, "application/json", body)
            }
            Err(e) => Response::text(500, format!("cannot write the report: {e}")),
        }
    }

    /// A run's captured output, as text: only a file under this home's
    /// `cron/output/` (a spawned run's `--log-file` is the caller's, and
    /// another host's output is on that host), at most its last
    /// [`OUTPUT_SERVED`] bytes.
    fn output(&self, id: &str) -> Response {
        let id = crate::ids::ExecutionId::from_string(id.to_string());
        let row = match self.with_db(|c| crate::ledger::get_execution(c, &id)) {
            Ok(Some((row, _))) => row,
            Ok(None) => return Response::text(404, format!("no run {id}")),
            Err(e) => return Response::text(503, format!("cannot read the ledger: {}", Chain(&e))),
        };
        let Some(path) = row.output_path.as_deref().map(std::path::Path::new) else {
            return Response::text(404, format!("run {id} has no captured output"));
        };
        let root = self.ctx.home.output_root();
        let inside = match (path.canonicalize(), root.canonicalize()) {
            (Ok(file), Ok(root)) => file.starts_with(root),
            _ => false,
        };
        if !inside {
            let host = row.host.as_deref().unwrap_or("this host");
            return Response::text(
                404,
                format!(
                    "the output of run {id} is not in this home's cron/output/ (pruned, kept by its caller, or on {host})"
                ),
            );
        }
        match read_tail(path, OUTPUT_SERVED) {
            Ok(bytes) => Response::new(200, "text/plain; charset=utf-8", bytes)
                .with_header("X-Content-Type-Options", "nosniff")
                .with_header("Content-Security-Policy", PAGE_POLICY),
            Err(e) => Response::text(404, format!("cannot read the output of run {id}: {e}")),
        }
    }

    fn page(&self, window: Window) -> Response {
        let report = self.report();
        let header = PageHeader {
            host: self.host.clone(),
            healthy: report.healthy,
            // The same words as `hermes-cron status`.
            facts: status::render(&report, &self.ctx.zones, self.ctx.zone)
                .lines()
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
        };
        let now = self.ctx.clock.now();
        let zones = (&*self.ctx.zones, self.ctx.zone);
        match self.with_db(|c| page_reads::read(c, now, window, MAX_JOBS, &zones)) {
            Ok(rows) => {
                let data = PageData {
                    header,
                    jobs: rows.jobs,
                    jobs_total: rows.jobs_total,
                    runs: rows.runs,
                    runs_capped: rows.runs_capped,
                    zone: self.ctx.zone,
                    window,
                    now,
                };
                Response::new(200, "text/html; charset=utf-8", page::render(&data))
                    .with_header("Content-Security-Policy", PAGE_POLICY)
            }
            Err(e) => Response::text(503, format!("cannot read the ledger: {}", Chain(&e))),
        }
    }
}
