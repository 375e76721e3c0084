//! The go byte: a worker is spawned holding the read end of a pipe as its
//! stdin and does nothing until the launcher writes one byte. EOF means the
//! launcher gave up (the scope could not be made): exit quietly, touch nothing.

use std::io::Read;

/// Whether the launcher said go.
#[derive(Debug, PartialEq, Eq)]
pub enum Go {
    Go,
    GiveUp,
}

/// Block until the go byte or EOF on stdin, then point stdin at /dev/null.
pub fn wait_for_go() -> Go {
    let mut byte = [0u8; 1];
    let said = loop {
        match std::io::stdin().lock().read(&mut byte) {
            Ok(1) => break Go::Go,
            Ok(_) => break Go::GiveUp,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break Go::GiveUp,
        }
    };
    if let Ok(null) = std::fs::File::open("/dev/null") {
        let _ = nix::unistd::dup2_stdin(&null);
    }
    said
}
