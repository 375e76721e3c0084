//! `hermes-cron gateway`: set up, sweep, serve, shut down.
//!
//! Order at start: block SIGTERM/SIGINT (before any thread exists, see
//! `signals.rs`), check the home is ours and private, take the instance
//! lock, load the config (values read once, here; an HTTP endpoint others
//! could reach without a token is refused here), record the start, start
//! the signal, heartbeat and watchdog threads and the HTTP endpoint's (when
//! `gateway.http_listen` is set), then in the runtime: open the ledger,
//! run the startup sweep, fire `@reboot` jobs, say `READY=1`, and loop. Every
//! argument is computed before any lock is taken, and nothing reads config at
//! static-init time, so boot cannot deadlock on itself.

use super::event_loop::{EventLoop, LoopExit, Signals};
use super::fatal::Fatal;
use super::http;
use super::inflight::InFlight;
use super::monitor::{Monitor, probe};
use super::runs::Runs;
use super::staging::Stager;
use super::state::Shared;
use super::supervision::notify::Notifier;
use super::supervision::stop_signals as signals;
use super::supervision::watchdog::{self, WatchdogTiming};
use super::supervision::{farewell, heartbeat, instance, lifecycle};
use crate::clock::{Clock, ClockError, SystemClock};
use crate::config::{self, Config};
use crate::db::Db;
use crate::db::DbWatcher;
use crate::dispatch::Launcher;
use crate::exit;
use crate::home::Home;
use crate::ledger::ExecState;
use crate::logging::run_span;
use crate::process::OwnerRole;
use crate::reconcile::{self, Judgement};
use crate::schedule::{self, Tz};
use crate::systemd::UnitManager;
use crate::text::Chain;
use crate::tick::{ClaimContext, claim_reboot};
use hermes_cron_core::health::CapabilityMode;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Test hook: block the runtime thread this many milliseconds after ready,
/// as a wedged event loop would (for the loop watchdog's tests).
pub(crate) const WEDGE_ENV: &str = "HERMES_CRON_TEST_WEDGE_LOOP_AFTER_MS";

/// What the gateway is built from; tests may supply their own.
pub(crate) struct Deps {
    pub clock: Arc<dyn Clock>,
    /// None: never create scopes.
    pub manager: Option<Arc<dyn UnitManager>>,
}

impl Deps {
    /// The system clock (honouring the test override) and the session bus of
    /// this process's environment.
    pub fn from_env() -> Result<Deps, ClockError> {
        let clock = SystemClock::from_env()?;
        Ok(Deps {
            clock: Arc::new(clock),
            manager: Some(crate::dispatch::session_manager()),
        })
    }
}

/// Run the gateway on `home` until SIGTERM/SIGINT; returns the exit code.
pub fn run(home: Home) -> i32 {
    match Deps::from_env() {
        Ok(deps) => run_with(home, deps),
        Err(e) => {
            eprintln!("hermes-cron gateway: {e}");
            exit::USAGE
        }
    }
}

fn fail(home: &Home, clock: &dyn Clock, code: i32, why: &dyn std::error::Error) -> i32 {
    let msg = Chain(why).to_string();
    tracing::error!("{msg}");
    lifecycle::record(
        home,
        "exit",
        clock.now(),
        Some(&format!("fatal: {msg}")),
        Some(code),
    );
    code
}

/// Run the gateway with explicit dependencies. Call it before this process
/// starts any thread: it blocks SIGTERM and SIGINT for a thread of its own,
/// and threads started earlier would not inherit that.
pub(crate) fn run_with(home: Home, deps: Deps) -> i32 {
    if let Err(e) = signals::block() {
        eprintln!("hermes-cron gateway: cannot block SIGTERM/SIGINT: {e}");
        return exit::FAILURE;
    }
    if let Err(msg) = instance::check_private(&home) {
        eprintln!("hermes-cron gateway: {msg}");
        return exit::USAGE;
    }
    if let Err(e) = home.ensure() {
        eprintln!("hermes-cron gateway: {e}");
        return exit::FAILURE;
    }
    let _instance = match instance::acquire(&home) {
        Ok(lock) => lock,
        Err(msg) => {
            eprintln!("hermes-cron gateway: {msg}");
            return exit::FAILURE;
        }
    };
    for line in crate::legacy_names::migrate(&home) {
        tracing::info!("home written by an earlier version: {line}");
    }
    let clock = deps.clock.clone();
    let loaded = match config::load(&home.config_file()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hermes-cron gateway: {e}");
            return exit::USAGE;
        }
    };
    for w in &loaded.warnings {
        tracing::warn!(key = %w.key, "{}", w.message);
    }
    let config = loaded.config;
    // Refused before anything starts: an endpoint others could reach without a token.
    let endpoint = match http::Plan::from_config(&config.gateway) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("hermes-cron gateway: {e}");
            return exit::USAGE;
        }
    };
    let zone = match &config.timezone {
        Some(name) => {
            schedule::parse_zone(name).unwrap_or_else(|_| crate::host_zone::system_zone())
        }
        None => crate::host_zone::system_zone(),
    };
    lifecycle::record(&home, "start", clock.now(), None, None);
    tracing::info!(home = %home.root().display(), pid = std::process::id(), "gateway starting");

    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(&home, clock.as_ref(), exit::FAILURE, &Fatal::Runtime(e));
        }
    };
    let shared = Arc::new(Shared::default());
    let probe_handle = rt.handle().clone();
    let stop_requests = match signals::spawn(
        home.clone(),
        shared.clone(),
        clock.clone(),
        signals::STOP_GRACE,
        move |probe| {
            probe_handle.spawn(async move { probe() });
        },
    ) {
        Ok(rx) => rx,
        Err(e) => {
            return fail(
                &home,
                clock.as_ref(),
                exit::FAILURE,
                &Fatal::Thread {
                    what: "signal thread",
                    source: e,
                },
            );
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    if let Err(e) = heartbeat::spawn(home.clone(), shared.clone(), clock.clone(), stop.clone()) {
        return fail(
            &home,
            clock.as_ref(),
            exit::FAILURE,
            &Fatal::Thread {
                what: "heartbeat thread",
                source: e,
            },
        );
    }
    if config.gateway.loop_watchdog {
        let timing = WatchdogTiming {
            interval: config.gateway.loop_watchdog_probe_interval,
            timeout: config.gateway.loop_watchdog_probe_timeout,
            max_strikes: config.gateway.loop_watchdog_max_strikes,
        };
        let handle = rt.handle().clone();
        let started = watchdog::spawn(
            home.clone(),
            shared.clone(),
            clock.clone(),
            timing,
            move |probe| {
                handle.spawn(async move { probe() });
            },
        );
        if let Err(e) = started {
            return fail(
                &home,
                clock.as_ref(),
                exit::FAILURE,
                &Fatal::Thread {
                    what: "loop watchdog",
                    source: e,
                },
            );
        }
    }

    if let Some(plan) = endpoint {
        let ctx = http::Context {
            home: home.clone(),
            clock: clock.clone(),
            shared: shared.clone(),
            zone,
        };
        if let Err(e) = http::start(plan, ctx) {
            return fail(
                &home,
                clock.as_ref(),
                exit::FAILURE,
                &Fatal::Thread {
                    what: "http endpoint thread",
                    source: e,
                },
            );
        }
    }

    let outcome = rt.block_on(serve(
        &home,
        config,
        zone,
        clock.clone(),
        deps.manager,
        shared.clone(),
        stop_requests,
    ));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
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
        Ok(LoopExit::Fatal(fatal)) | Err(fatal) => {
            fail(&home, clock.as_ref(), exit::FAILURE, &fatal)
        }
    }
}

async fn serve(
    home: &Home,
    config: Config,
    zone: Tz,
    clock: Arc<dyn Clock>,
    manager: Option<Arc<dyn UnitManager>>,
    shared: Arc<Shared>,
    stop_requests: signals::StopRequests,
) -> Result<LoopExit, Fatal> {
    // SIGCHLD before anything is spawned; stop requests queue up meanwhile.
    let signals = Signals::install(stop_requests).map_err(Fatal::Signals)?;
    shared.set_doing("opening the ledger");
    let location = crate::db::Location::of_home(home).map_err(Fatal::Ledger)?;
    let mut db = Db::open_at(&location).map_err(Fatal::Ledger)?;
    if !db.journal().is_wal() {
        tracing::warn!(journal = ?db.journal(), "the ledger is not in WAL mode (network filesystem?): readers and writers block each other; runs still work");
    }
    let launcher = Launcher::with_manager(home, &config, manager.clone()).map_err(Fatal::Worker)?;
    let owner = crate::process::owner(OwnerRole::Gateway);
    let listener = match &location {
        crate::db::Location::Postgres(url) => Some(
            crate::db::PgListener::start(url, Duration::from_secs(10)).map_err(|source| {
                Fatal::Thread {
                    what: "change listener",
                    source,
                }
            })?,
        ),
        crate::db::Location::Sqlite(_) => None,
    };
    let cluster = match db.dialect() {
        crate::db::Dialect::Postgres => Some(
            super::cluster::Cluster::start(home, &location, owner, clock.clone()).map_err(
                |source| Fatal::Thread {
                    what: "lease",
                    source,
                },
            )?,
        ),
        crate::db::Dialect::Sqlite => None,
    };

    shared.set_doing("startup sweep");
    let report = reconcile::startup_sweep(&db, manager.as_deref(), clock.now())
        .await
        .map_err(Fatal::Sweep)?;
    let mut runs = Runs::default();
    for (row, judgement) in &report.rows {
        match judgement {
            Judgement::Alive { note } if row.state == ExecState::Running => {
                runs.add_adopted(row);
                run_span(&row.job_name, &row.id).in_scope(|| tracing::info!("adopted: {note}"));
            }
            Judgement::Alive { note } => {
                run_span(&row.job_name, &row.id).in_scope(|| tracing::info!("left alone: {note}"))
            }
            Judgement::Withdraw { reason } => run_span(&row.job_name, &row.id)
                .in_scope(|| tracing::info!("withdrawn, to be claimed again: {reason}")),
            j => {
                if let Some((_, code, reason)) = j.recorded() {
                    run_span(&row.job_name, &row.id)
                        .in_scope(|| tracing::warn!(reason = %code, "resolved unknown: {reason}"));
                }
            }
        }
    }

    let mut queue = VecDeque::new();
    let ctx = ClaimContext {
        home,
        config: &config,
        fallback_zone: zone,
        owner,
        host: crate::cluster::Host::this(),
        now: clock.now(),
    };
    match claim_reboot(&mut db, &ctx) {
        Ok(r) => queue.extend(r.claimed),
        Err(e) => tracing::error!("failed to claim @reboot jobs: {}", Chain(&e)),
    }

    let capability = probe(&launcher).await;
    if capability.mode != CapabilityMode::Scoped {
        tracing::warn!(
            cause = capability.cause.map_or("-", |c| c.as_str()),
            "restart-safe scopes are unavailable: {}",
            capability.detail.as_deref().unwrap_or("-")
        );
    }
    shared.set_capability(capability.clone());
    let notifier = Notifier::from_env();
    let adopted = runs.len();
    notifier.ready(&format!(
        "ready: adopted {adopted}, resolved {} unknown; dispatch {}",
        report.unknown_count(),
        capability.mode
    ));
    tracing::info!(adopted, unknown = report.unknown_count(), dispatch = %capability.mode, "gateway ready");

    let watcher = DbWatcher::new(&home.cron_dir()).unwrap_or_else(|e| {
        tracing::warn!(
            "cannot watch {} for changes ({e}); changes are noticed on the monitor period",
            home.cron_dir().display()
        );
        DbWatcher::disabled()
    });
    let period =
        heartbeat::period().min(Duration::from_secs(config.cron.heartbeat_interval_s.max(1)));
    let config_cron = config.cron.clone();
    let staging_max = match db.dialect() {
        // A staged worker holds its ledger connection until its release: on
        // a shared PostgreSQL ledger a thousand of them per host would take
        // the server's connection slots (`max_connections`, 100 by default)
        // from every host's gateways and workers. Staging is off there.
        crate::db::Dialect::Postgres => {
            if config_cron.staging_max_workers > 0 {
                tracing::info!(
                    "staging is off on a shared PostgreSQL ledger (each staged worker would hold a database connection); runs start at their instant"
                );
            }
            0
        }
        crate::db::Dialect::Sqlite => staging_room(config_cron.staging_max_workers),
    };
    let alerts = crate::alerts::AlertDriver::new(clock.now());
    alerts.startup(&db, clock.now());
    let monitor = Monitor::new(period, notifier);
    let deadman_stop = Arc::new(AtomicBool::new(false));
    match crate::alerts::spawn_deadman(
        &config.gateway,
        shared.clone(),
        monitor.period(),
        deadman_stop.clone(),
    ) {
        Ok(true) => tracing::info!(
            every_s = config.gateway.ping_interval_s,
            "dead-man ping on while the gateway is healthy"
        ),
        Ok(false) => {}
        Err(e) => tracing::error!("cannot start the dead-man ping thread: {e}"),
    }
    let mut event_loop = EventLoop {
        home: home.clone(),
        config,
        zone,
        clock,
        db,
        launcher: Arc::new(launcher),
        shared,
        owner,
        runs,
        monitor,
        upkeep: Default::default(),
        provider: Default::default(),
        alerts,
        queue,
        stage_queue: VecDeque::new(),
        stager: Stager::new(&config_cron, staging_max),
        inflight: InFlight::default(),
        claim_backoff_until: None,
        claim_failures: 0,
        fatal: None,
        cluster,
        listener,
    };
    if let Some(ms) = std::env::var(WEDGE_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            tracing::warn!("{WEDGE_ENV}: blocking the event loop thread now (test hook)");
            // Blocks the runtime's only thread, as a wedged loop would.
            std::thread::sleep(Duration::from_secs(u64::from(u32::MAX)));
        });
    }
    let exit = event_loop.run(signals, watcher).await;
    deadman_stop.store(true, std::sync::atomic::Ordering::Relaxed);
    event_loop.monitor.notifier().stopping();
    event_loop.abandon_queue();
    if let Some(cluster) = event_loop.cluster.take() {
        cluster.stop();
    }
    Ok(exit)
}

/// How many staged workers fit: the configured bound, or fewer when the
/// descriptor limit (raised as far as the hard limit allows) holds fewer
/// gates.
fn staging_room(configured: u32) -> usize {
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
