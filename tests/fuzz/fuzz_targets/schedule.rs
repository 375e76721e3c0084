//! cargo-fuzz target: see `checks::schedule` in `tests/fuzz/checks.rs` for what
//! it checks (the ordinary suite replays the corpus through the same check).
#![no_main]

#[path = "../checks.rs"]
mod checks;

/// One zone table for the run (see `checks.rs`).
static ZONES: std::sync::LazyLock<hermes_cron_core::schedule::ZoneTable> =
    std::sync::LazyLock::new(hermes_cron_core::schedule::ZoneTable::compiled_in_only);

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::schedule(data, &ZONES));
