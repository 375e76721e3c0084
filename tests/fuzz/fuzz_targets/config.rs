//! The config loader on arbitrary bytes: never panics; whatever loads holds
//! only values in range, and a refusal is a syntax error or an invalid file.
#![no_main]

use hermes_cron::config::{ConfigError, load_bytes};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    match load_bytes(Path::new("config.yaml"), data) {
        Ok(loaded) => {
            let bad = loaded.config.keys_out_of_range();
            assert!(bad.is_empty(), "out of range after load: {bad:?}");
            // Every warning names its key (which may be YAML's empty key "").
            for warning in &loaded.warnings {
                let named = format!("`{}`", warning.key);
                assert!(warning.message.contains(&named), "{warning:?}");
            }
        }
        Err(ConfigError::Syntax { .. } | ConfigError::Invalid(_)) => {}
        Err(other) => panic!("load_bytes does no IO, yet: {other:?}"),
    }
});
