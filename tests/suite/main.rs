//! The integration suite: every integration test of hermes-cron, in one test
//! binary (one link instead of one per file). Each module is one former test
//! file, named for what it tests; `support` is the harness they share.
//!
//! Most tests drive the real `hermes-cron` and `hermes-cron-worker` binaries.
//! The scoped ones need a systemd user manager (`tests/run-all.sh` boots one
//! where none runs; see `support::real_manager`), the full-disk ones need root
//! (they mount a tmpfs). Run one module with a filter, e.g.
//! `cargo nextest run --workspace -E 'test(/^crash_soak::/)'` or
//! `cargo test --test suite crash_soak::`.

mod support;

mod alerts;
mod cli_config;
mod cli_jobs;
mod cli_json;
mod cluster;
mod cluster_partition;
mod code_rules;
mod config_environment;
mod crash_points;
mod crash_soak;
mod damaged_ledger;
mod dispatch_modes;
mod dispatch_scoped;
mod dispatch_worker;
mod docs_config_table;
mod docs_examples;
mod dst_oracles;
mod full_disk;
mod gateway_loop;
mod gateway_regression;
mod gateway_restart;
mod gateway_sweep;
mod gateway_watchdog;
mod hermes_home;
mod hermes_provider;
mod http_endpoint;
mod import_hermes;
mod job_environment;
mod journal_rollback;
mod json_schemas;
mod kanban_spawn;
mod ledger_faults;
mod ledger_tls;
mod load;
mod operators;
mod packaging;
mod properties;
mod security;
mod shared_home;
mod spawn_workers;
mod staging;
mod systemd_scope;
mod tick_claims;
mod tick_policies;
