//! The harness of the integration suite, one file per responsibility:
//!
//! - `cli`: the binaries under test (the worker brought up to date first) and
//!   running them: a scrubbed environment, a hard timeout, output to files;
//! - `cluster`: several hosts (homes) on one PostgreSQL ledger, jobs in bulk,
//!   the exactly-once checks of the cluster tests;
//! - `home`: [`TestHome`], a private home per test (degraded by default, or on
//!   the real user manager's bus), the CLI commands tests run on it, and the
//!   cleanup when it is dropped;
//! - `gateway`: the gateway as a child process or as a transient user service;
//! - `waiting`: [`wait_for`], the only way a test waits;
//! - `process`: processes as `/proc` shows them;
//! - `rows`: ledger rows as the CLI prints them;
//! - `invariants`: the ledger read directly, and the invariants crash tests check;
//! - `ledger`: which ledger a home uses (its SQLite file, or a fresh PostgreSQL
//!   schema when `HERMES_CRON_TEST_PG` is set) and opening it; `pg_server`: a
//!   PostgreSQL server of one test's own, to stop, restart or starve;
//! - `scene`: the homes of the crash tests;
//! - `tmpfs`: a small filesystem for full-disk tests;
//! - `dbus_daemon`, `mock_manager`: a private bus and a mock systemd manager on it;
//! - `http`: the gateway's HTTP endpoint from a test: its address, a small
//!   client, and a real headless Chromium to load its page;
//! - `cdp`: the page in that Chromium at a given viewport (a phone's), driven
//!   over the DevTools protocol on a pipe: whether it scrolls sideways, and a
//!   screenshot;
//! - `hermes`: the real Hermes Agent (`hermes-agent` from PyPI, in a venv
//!   `tests/run-all.sh` caches) on a test home; `fake_model`: an
//!   OpenAI-compatible stand-in for an LLM on 127.0.0.1;
//! - `real_manager`: the real systemd user manager (booted, where none runs, by
//!   `tests/support/user-manager.sh`, which stays there: `tests/run-all.sh` and
//!   the benchmark run it).

pub(crate) mod cdp;
pub(crate) mod cli;
pub(crate) mod cluster;
pub(crate) mod dbus_daemon;
pub(crate) mod fake_model;
pub(crate) mod gateway;
pub(crate) mod hermes;
pub(crate) mod home;
pub(crate) mod hook_server;
pub(crate) mod http;
pub(crate) mod invariants;
pub(crate) mod ledger;
pub(crate) mod mock_manager;
pub(crate) mod pg_server;
pub(crate) mod process;
pub(crate) mod real_manager;
pub(crate) mod rows;
pub(crate) mod scene;
pub(crate) mod tmpfs;
pub(crate) mod waiting;

pub(crate) use home::{Bus, TestHome};
pub(crate) use waiting::{PATIENCE, SETTLE_TIMEOUT, wait_for};

/// What the fix for a missing user manager says on this machine: linger
/// where systemd booted it (`/run/systemd/system`), else how to start a
/// user manager without it (a container; issue 24: linger is wrong there).
pub(crate) fn host_fix_marker() -> &'static str {
    if std::path::Path::new("/run/systemd/system").is_dir() {
        "run `loginctl enable-linger "
    } else {
        "not booted with systemd"
    }
}
