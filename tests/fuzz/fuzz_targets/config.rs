//! cargo-fuzz target: see `checks::config` in `tests/fuzz/checks.rs` for what
//! it checks (the ordinary suite replays the corpus through the same check).
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::config(data));
