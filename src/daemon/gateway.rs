//! `hermes-cron gateway`: start up, serve, shut down.
//!
//! Start-up is a sequence of named steps, each of which can refuse:
//! 1. [`claim_home`]: block SIGTERM/SIGINT (before any thread exists, see
//!    `stop_signals.rs`), check the home is ours and private, take the
//!    instance lock, rename an earlier version's files;
//! 2. [`load`]: the config (values read once, here; an HTTP endpoint others
//!    could reach without a token is refused here) and the fallback zone,
//!    read in the zone table of `Deps` (the process's, made by `main`);
//! 3. record the start in the lifecycle;
//! 4. [`start_threads`]: the runtime, then the signal, heartbeat and
//!    watchdog threads and the HTTP endpoint's (when `gateway.http_listen`
//!    is set);
//! 5. in the runtime, [`serve`]: open the ledger, start what its backend
//!    needs (the change listener and the lease on a shared ledger), the
//!    startup sweep, claim `@reboot` jobs, probe the scope capability, say
//!    `READY=1`, and loop.
//!
//! Every argument is computed before any lock is taken, and nothing reads
//! config at static-init time, so boot cannot deadlock on itself.

use super::cluster::Cluster;
use super::context::Ctx;
use super::event_loop::{EventLoop, LoopExit, Parts, Signals};
use super::fatal::Fatal;
use super::feed::Feed;
use super::http;
use super::monitor::Monitor;
use super::runs::Runs;
use super::staging::Stager;
use super::state::Shared;
use super::supervision::instance::InstanceLock;
use super::supervision::notify::Notifier;
use super::supervision::stop_signals::{self as signals, StopRequests};
use super::supervision::watchdog::{self, WatchdogTiming};
use super::supervision::{farewell, heartbeat, instance, lifecycle};
use crate::clock::{Clock, ClockError, SystemClock};
use crate::cluster::Host;
use crate::config::{self, Config};
use crate::db::{Db, DbWatcher};
use crate::dispatch::{Launcher, locate_worker, probe_capability};
use crate::exit;
use crate::home::Home;
use crate::knobs::{Knobs, WEDGE_ENV};
use crate::ledger::{ExecState, Execution};
use crate::process::OwnerRole;
use crate::reconcile::{self, Judgement};
use crate::schedule::{Tz, ZoneTable};
use crate::systemd::UnitManager;
use crate::text::Chain;
use crate::tick::claim_reboot;
use hermes_cron_core::health::CapabilityMode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the gateway is built from; tests may supply their own.
pub(crate) struct Deps {
    pub clock: Arc<dyn Clock>,
    /// None: never create scopes.
    pub manager: Option<Arc<dyn UnitManager>>,
    pub host: Host,
    /// Where zone names are read: the process's table (the loop's and the
    /// HTTP endpoint's).
    pub zones: Arc<ZoneTable>,
    pub knobs: Knobs,
}

impl Deps {
    /// The system clock (honouring the test override) and the session bus of
    /// this process's environment; zone names read in `zones`.
    pub(super) fn from_env(zones: ZoneTable, knobs: Knobs) -> Result<Deps, ClockError> {
        let clock = SystemClock::from_env()?;
        Ok(Deps {
            clock: Arc::new(clock),
            manager: Some(crate::systemd::session_manager(knobs.dbus_timeout)),
            host: Host::from_env(),
            zones: Arc::new(zones),
            knobs,
        })
    }
}

/// Why the gateway did not start: said on stderr with its exit code, or a
/// fatal failure (logged and recorded in the lifecycle, exit 1).
enum Refusal {
    Said { code: i32, message: String },
    Fatal(Fatal),
}

impl Refusal {
    fn usage(e: impl std::fmt::Display) -> Refusal {
        Refusal::Said {
            code: exit::USAGE,
            message: e.to_string(),
        }
    }

    fn failure(e: impl std::fmt::Display) -> Refusal {
        Refusal::Said {
            code: exit::FAILURE,
            message: e.to_string(),
        }
    }
}

impl From<Fatal> for Refusal {
    fn from(f: Fatal) -> Refusal {
        Refusal::Fatal(f)
    }
}

/// The config as loaded for this gateway's life.
struct Loaded {
    config: Config,
    endpoint: Option<http::Plan>,
    zone: Tz,
}

/// Run the gateway on `home` until SIGTERM/SIGINT, reading zone names in
/// `zones` (the process's table); returns the exit code.
pub fn run(home: Home, zones: ZoneTable, knobs: Knobs) -> i32 {
    match Deps::from_env(zones, knobs) {
        Ok(deps) => run_with(home, deps),
        Err(e) => {
            eprintln!("hermes-cron gateway: {e}");
            exit::USAGE
        }
    }
}

fn fail(home: &Home, clock: &dyn Clock, why: &dyn std::error::Error) -> i32 {
    let msg = Chain(why).to_string();
    tracing::error!("{msg}");
    lifecycle::record(
        home,
        "exit",
        clock.now(),
        Some(&format!("fatal: {msg}")),
        Some(exit::FAILURE),
    );
    exit::FAILURE
}

/// Run the gateway with explicit dependencies. Call it before this process
/// starts any thread: it blocks SIGTERM and SIGINT for a thread of its own,
/// and threads started earlier would not inherit that.
pub(crate) fn run_with(home: Home, deps: Deps) -> i32 {
    let clock = deps.clock.clone();
    let started = claim_home(&home).and_then(|lock| {
        let loaded = load(&home, &deps.zones)?;
        lifecycle::record(&home, "start", clock.now(), None, None);
        tracing::info!(home = %home.root().display(), pid = std::process::id(), "gateway starting");
        let shared = Arc::new(Shared::default());
        let (rt, stops, stop_threads) =
            start_threads(&home, &loaded, &deps, shared.clone(), clock.clone())?;
        Ok((lock, loaded, shared, rt, stops, stop_threads))
    });
    let (_lock, loaded, shared, rt, stops, stop_threads) = match started {
        Ok(s) => s,
        Err(Refusal::Said { code, message }) => {
            eprintln!("hermes-cron gateway: {message}");
            return code;
        }
        Err(Refusal::Fatal(fatal)) => return fail(&home, clock.as_ref(), &fatal),
    };
    let outcome = rt.block_on(serve(&home, loaded, deps, shared.clone(), stops));
    stop_threads.store(true, Ordering::Relaxed);
    if !shared.claim_exit() {
        // The watchdog or the signal thread is ending the process right now.
        farewell::park_forever();
    }
    match outcome {
        Ok(LoopExit::Signal(sig)) => {
            tracing::info!(
                signal = sig,
                "gateway stopping; running workers are left to finish"
            );
            lifecycle::record(&home, "exit", clock.now(), Some("signal"), Some(exit::OK));
            exit::OK
        }
        Ok(LoopExit::Fatal(fatal)) | Err(fatal) => fail(&home, clock.as_ref(), &fatal),
    }
}

/// Step 1: make this process the home's one gateway.
fn claim_home(home: &Home) -> Result<InstanceLock, Refusal> {
    signals::block().map_err(|e| Refusal::failure(format!("cannot block SIGTERM/SIGINT: {e}")))?;
    instance::check_private(home).map_err(Refusal::usage)?;
    home.ensure().map_err(Refusal::failure)?;
    let lock = instance::acquire(home).map_err(Refusal::failure)?;
    for line in crate::legacy_names::migrate(home) {
        tracing::info!("home written by an earlier version: {line}");
    }
    Ok(lock)
}

/// Step 2: the config, read once for the gateway's life.
fn load(home: &Home, zones: &ZoneTable) -> Result<Loaded, Refusal> {
    let loaded = config::load(&home.config_file(), zones).map_err(Refusal::usage)?;
    for w in &loaded.warnings {
        tracing::warn!(key = %w.key, "{}", w.message);
    }
    let config = loaded.config;
    // Refused before anything starts: an endpoint others could reach without a token.
    let endpoint = http::Plan::from_config(&config.gateway).map_err(Refusal::usage)?;
    let zone = match &config.timezone {
        Some(name) => zones
            .parse(name)
            .unwrap_or_else(|_| crate::host_zone::system_zone(zones)),
        None => crate::host_zone::system_zone(zones),
    };
    Ok(Loaded {
        config,
        endpoint,
        zone,
    })
}

/// Step 4: the runtime and the threads that watch over it; the stop
/// requests the signal thread sends, and the flag that stops the others.
fn start_threads(
    home: &Home,
    loaded: &Loaded,
    deps: &Deps,
    shared: Arc<Shared>,
    clock: Arc<dyn Clock>,
) -> Result<(tokio::runtime::Runtime, StopRequests, Arc<AtomicBool>), Fatal> {
    let thread = |what| move |source| Fatal::Thread { what, source };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Fatal::Runtime)?;
    let probe_handle = rt.handle().clone();
    let stops = signals::spawn(
        home.clone(),
        shared.clone(),
        clock.clone(),
        signals::STOP_GRACE,
        move |probe| {
            probe_handle.spawn(async move { probe() });
        },
    )
    .map_err(thread("signal thread"))?;
    let stop = Arc::new(AtomicBool::new(false));
    heartbeat::spawn(
        home.clone(),
        loaded.zone.name().to_string(),
        shared.clone(),
        clock.clone(),
        deps.knobs.heartbeat_period,
        stop.clone(),
    )
    .map_err(thread("heartbeat thread"))?;
    let gateway = &loaded.config.gateway;
    if gateway.loop_watchdog {
        let timing = WatchdogTiming {
            interval: gateway.loop_watchdog_probe_interval,
            timeout: gateway.loop_watchdog_probe_timeout,
            max_strikes: gateway.loop_watchdog_max_strikes,
        };
        let handle = rt.handle().clone();
        watchdog::spawn(
            home.clone(),
            shared.clone(),
            clock.clone(),
            timing,
            move |probe| {
                handle.spawn(async move { probe() });
            },
        )
        .map_err(thread("loop watchdog"))?;
    }
    if let Some(plan) = loaded.endpoint.clone() {
        let ctx = http::Context {
            home: home.clone(),
            clock,
            shared,
            zone: loaded.zone,
            zones: deps.zones.clone(),
            host: deps.host.clone(),
            runs_at_once: loaded.config.cron.shared_parallel(),
        };
        http::start(plan, ctx).map_err(thread("http endpoint thread"))?;
    }
    Ok((rt, stops, stop))
}

/// Step 5: the gateway proper, inside the runtime.
async fn serve(
    home: &Home,
    loaded: Loaded,
    deps: Deps,
    shared: Arc<Shared>,
    stops: StopRequests,
) -> Result<LoopExit, Fatal> {
    // SIGCHLD before anything is spawned; stop requests queue up meanwhile.
    let signals = Signals::install(stops).map_err(Fatal::Signals)?;
    shared.set_doing("opening the ledger");
    let location = crate::db::Location::of_home(home).map_err(Fatal::Ledger)?;
    let mut db = Db::open_at(&location).map_err(Fatal::Ledger)?;
    // A damaged ledger is refused before anything is claimed from it.
    db.check_whole().map_err(Fatal::Ledger)?;
    if !db.journal().is_wal() {
        tracing::warn!(journal = ?db.journal(), "the ledger is not in WAL mode (network filesystem?): readers and writers block each other; runs still work");
    }
    let Loaded { config, zone, .. } = loaded;
    let worker = locate_worker().map_err(Fatal::Worker)?;
    let manager = deps.manager;
    let launcher = Launcher::new(
        home,
        worker,
        config.cron.require_restart_safe_scope,
        manager.clone(),
        deps.knobs.kill_grace,
    );
    let cx = Ctx {
        home: home.clone(),
        zone,
        zones: deps.zones,
        clock: deps.clock,
        owner: crate::process::owner(OwnerRole::Gateway),
        host: deps.host,
        launcher: Arc::new(launcher),
        shared,
        config,
        knobs: deps.knobs,
    };
    let shared_ledger = db.caps().shared;
    let listener = match (&location, db.caps().notify) {
        (crate::db::Location::Postgres(url), true) => Some(
            crate::db::PgListener::start(url, Duration::from_secs(10)).map_err(|source| {
                Fatal::Thread {
                    what: "change listener",
                    source,
                }
            })?,
        ),
        _ => None,
    };
    let cluster = if shared_ledger {
        Some(
            Cluster::start(
                home,
                &location,
                &cx.host,
                cx.owner,
                cx.clock.clone(),
                cx.knobs.lease_ttl,
            )
            .map_err(|source| Fatal::Thread {
                what: "lease",
                source,
            })?,
        )
    } else {
        None
    };
    cx.shared.set_doing("startup sweep");
    let (runs, unknown, retake) = sweep(&db, manager.as_deref(), &cx).await?;
    let launch_first = match claim_reboot(&mut db, &cx.claim_ctx(cx.clock.now())) {
        Ok(r) => r.claimed,
        Err(e) => {
            tracing::error!("failed to claim @reboot jobs: {}", Chain(&e));
            Vec::new()
        }
    };
    // Said before ready, so that whoever waits for ready has read it.
    say_connection_bound(&cx, db.caps().shared);
    let monitor = ready(&cx, runs.len(), unknown, manager.as_deref()).await;
    let deadman_stop = Arc::new(AtomicBool::new(false));
    start_deadman(&cx, &monitor, deadman_stop.clone());
    let alerts = crate::alerts::AlertDriver::new(cx.clock.now());
    alerts.startup(&db, &cx.host.name, cx.clock.now());
    let stager = Stager::new(&cx.config.cron, staging_room(&cx, db.caps().staging));
    let parts = Parts {
        runs,
        monitor,
        stager,
        alerts,
        feed: Feed::new(watch(home), listener),
        cluster,
        launch_first,
    };
    let mut event_loop = EventLoop::new(cx, db, parts);
    // Claims an earlier gateway made and never started: run now, or missed.
    event_loop.retake(retake);
    wedge_if_asked(event_loop.knobs().wedge_loop_after);
    let exit = event_loop.run(signals).await;
    deadman_stop.store(true, Ordering::Relaxed);
    event_loop.shut_down();
    Ok(exit)
}

/// The startup sweep: every active row adopted, left alone or resolved;
/// the runs it adopted, to watch, how many it resolved `unknown`, and the
/// claims to retake (never started: see `reconcile::retake`).
async fn sweep(
    db: &Db,
    manager: Option<&dyn UnitManager>,
    cx: &Ctx,
) -> Result<(Runs, usize, Vec<(Execution, String)>), Fatal> {
    let report = reconcile::startup_sweep(db, &cx.host.name, manager, cx.clock.now())
        .await
        .map_err(Fatal::Sweep)?;
    let mut runs = Runs::default();
    let mut retake = Vec::new();
    for (row, judgement) in &report.rows {
        match judgement {
            Judgement::Alive { .. } if row.state == ExecState::Running => runs.add_adopted(row),
            Judgement::Retake { reason } => {
                retake.push((row.clone(), reason.clone()));
                continue;
            }
            _ => {}
        }
        reconcile::announce(row, judgement);
    }
    Ok((runs, report.unknown_count(), retake))
}

/// Probe the scope capability and say we are ready (`READY=1`); the
/// monitor that goes on telling systemd how we are.
async fn ready(
    cx: &Ctx,
    adopted: usize,
    unknown: usize,
    manager: Option<&dyn UnitManager>,
) -> Monitor {
    let capability = probe_capability(manager).await;
    if capability.mode != CapabilityMode::Scoped {
        tracing::warn!(
            cause = capability.cause.map_or("-", |c| c.as_str()),
            "restart-safe scopes are unavailable: {}",
            capability.detail.as_deref().unwrap_or("-")
        );
    }
    cx.shared.set_capability(capability.clone());
    let notifier = Notifier::from_env();
    notifier.ready(&format!(
        "ready: adopted {adopted}, resolved {unknown} unknown; dispatch {}",
        capability.mode
    ));
    tracing::info!(adopted, unknown, dispatch = %capability.mode, "gateway ready");
    let period = cx.knobs.heartbeat_period.min(Duration::from_secs(
        cx.config.cron.heartbeat_interval_s.max(1),
    ));
    Monitor::new(period, notifier)
}

/// The dead-man ping thread, when one is configured.
fn start_deadman(cx: &Ctx, monitor: &Monitor, stop: Arc<AtomicBool>) {
    let gateway = &cx.config.gateway;
    match super::supervision::deadman::spawn(gateway, cx.shared.clone(), monitor.period(), stop) {
        Ok(true) => tracing::info!(
            every_s = gateway.ping_interval_s,
            "dead-man ping on while the gateway is healthy"
        ),
        Ok(false) => {}
        Err(e) => tracing::error!("cannot start the dead-man ping thread: {e}"),
    }
}

fn watch(home: &Home) -> DbWatcher {
    DbWatcher::new(&home.cron_dir()).unwrap_or_else(|e| {
        tracing::warn!(
            "cannot watch {} for changes ({e}); changes are noticed on the monitor period",
            home.cron_dir().display()
        );
        DbWatcher::disabled()
    })
}

/// How many staged workers fit: none where the backend allows no staging;
/// else the configured bound, or fewer when the descriptor limit (raised as
/// far as the hard limit allows) holds fewer gates.
/// On a shared ledger, say how many database connections this host's
/// gateway and its runs may hold at once.
fn say_connection_bound(cx: &Ctx, shared: bool) {
    if let Some(runs) = cx.config.cron.parallel_bound(shared).filter(|_| shared) {
        let own = hermes_cron_core::config::GATEWAY_CONNECTIONS;
        tracing::info!(
            runs_at_once = runs,
            connections = runs + own,
            "on the shared ledger this host holds at most {} database connections: {runs} running workers (cron.max_parallel_jobs) and {own} of the gateway's; runs beyond wait for a slot",
            runs + own
        );
    }
}

fn staging_room(cx: &Ctx, allowed: bool) -> usize {
    let configured = cx.config.cron.staging_max_workers;
    if !allowed {
        // A staged worker holds its ledger connection until its release: on
        // a shared PostgreSQL ledger a thousand of them per host would take
        // the server's connection slots (`max_connections`, 100 by default)
        // from every host's gateways and workers.
        if configured > 0 {
            tracing::info!(
                "staging is off on a shared PostgreSQL ledger (each staged worker would hold a database connection); runs start at their instant"
            );
        }
        return 0;
    }
    let fits = crate::process::fd_limit::raise_for(u64::from(configured));
    if fits < u64::from(configured) {
        tracing::warn!(
            configured,
            fits,
            "cron.staging_max_workers is more than the descriptor limit allows (one pipe per staged worker); raise LimitNOFILE= of the gateway's unit to stage more"
        );
    }
    fits as usize
}

/// The loop watchdog's test hook (the knob `wedge_loop_after`).
fn wedge_if_asked(after: Option<Duration>) {
    if let Some(after) = after {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            tracing::warn!("{WEDGE_ENV}: blocking the event loop thread now (test hook)");
            // Blocks the runtime's only thread, as a wedged loop would.
            std::thread::sleep(Duration::from_secs(u64::from(u32::MAX)));
        });
    }
}
