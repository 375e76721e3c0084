//! The go message: a worker is spawned holding the read end of a pipe as its
//! stdin and does nothing until the launcher writes one line on it, saying
//! how the worker was placed:
//!
//! ```text
//! g scoped hermes-cron-brief-<execution>.scope
//! g degraded no_address
//! g in_process
//! ```
//!
//! EOF before a line means the launcher gave up (the run was refused, or the
//! scope could not be made): exit quietly, touch nothing. A bare `g` (then
//! EOF) is a go whose placement the command line gave (`--mode`, `--unit`,
//! `--cause`), for launchers that only write one byte.
//!
//! A run prepared ahead of its instant (staging) gets a stage line instead,
//! `s scoped <unit>` or `s degraded <cause>`: the worker holds its row
//! (`staged`) and prepares everything, then waits for one more byte, `g`,
//! written at the instant ([`wait_for_release`]); EOF instead means the run
//! is not to start (its gateway went away, or took it back).
//!
//! The placement is decided after the worker is spawned (the scope is made
//! around the held worker), which is why it comes on the pipe and not on the
//! command line.

use crate::ledger::DispatchMode;
use hermes_cron_core::placement::CauseCode;
use std::io::{Read, Write};

/// How the launcher placed the worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Go {
    pub mode: DispatchMode,
    /// The scope the worker was moved into (scoped).
    pub unit: Option<String>,
    /// Why not scoped (degraded).
    pub cause: Option<CauseCode>,
}

/// What the launcher said.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// Go, placed as the command line says.
    Go,
    /// Go, placed as this says.
    GoPlaced(Go),
    /// Stage, placed as this says: hold the row, then wait for the release.
    Stage(Go),
    GiveUp,
}

impl Go {
    /// Placed in the scope `unit`.
    pub fn scoped(unit: String) -> Go {
        Go {
            mode: DispatchMode::Scoped,
            unit: Some(unit),
            cause: None,
        }
    }

    /// Placed without a scope, because of `cause`.
    pub fn degraded(cause: CauseCode) -> Go {
        Go {
            mode: DispatchMode::Degraded,
            unit: None,
            cause: Some(cause),
        }
    }

    /// The line the launcher writes.
    pub fn line(&self) -> String {
        self.line_of('g')
    }

    /// The stage line: the same placement, for a run released later.
    pub fn stage_line(&self) -> String {
        self.line_of('s')
    }

    fn line_of(&self, verb: char) -> String {
        let mut line = format!("{verb} {}", self.mode);
        if let Some(detail) = self.unit.as_deref().or(self.cause.map(|c| c.as_str())) {
            line.push(' ');
            line.push_str(detail);
        }
        line.push('\n');
        line
    }

    /// Read a go or stage line (without its newline); None when it is not one.
    pub fn parse(line: &str) -> Option<Heard> {
        let mut words = line.split(' ');
        let stage = match words.next()? {
            "g" => false,
            "s" => true,
            _ => return None,
        };
        let Some(mode) = words.next() else {
            return (!stage).then_some(Heard::Go);
        };
        let mode: DispatchMode = mode.parse().ok()?;
        let detail = words.next().map(str::to_string);
        if words.next().is_some() {
            return None;
        }
        let (unit, cause) = match mode {
            DispatchMode::Scoped => (detail, None),
            _ => (None, detail.map(|d| d.parse().ok()).unwrap_or(None)),
        };
        let go = Go { mode, unit, cause };
        Some(if stage {
            Heard::Stage(go)
        } else {
            Heard::GoPlaced(go)
        })
    }
}

/// The release byte of a staged run.
pub const RELEASE: u8 = b'g';

/// Staged: block until the release byte (true) or EOF (false: do not start).
pub(crate) fn wait_for_release() -> bool {
    let mut byte = [0u8; 1];
    loop {
        match std::io::stdin().lock().read(&mut byte) {
            Ok(1) => return byte[0] == RELEASE,
            Ok(_) => return false,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

/// Block until the launcher's go (or EOF) on stdin, then point stdin at /dev/null.
pub(crate) fn wait_for_go() -> Heard {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let heard = loop {
        match std::io::stdin().lock().read(&mut byte) {
            Ok(1) if byte[0] == b'\n' => break Go::parse(&String::from_utf8_lossy(&line)),
            Ok(1) if line.len() < 512 => line.push(byte[0]),
            Ok(1) => break None,
            Ok(_) => break (line == b"g").then_some(Heard::Go),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break None,
        }
    };
    // A staged worker keeps the pipe: its release comes on it.
    if !matches!(heard, Some(Heard::Stage(_))) {
        stdin_to_null();
    }
    heard.unwrap_or(Heard::GiveUp)
}

/// Tell the launcher the pid of the command just started, as one line on
/// stdout, then point stdout at /dev/null. `spawn` gives its worker a pipe
/// there and reads the line (the pid a kanban dispatcher watches and
/// signals); other detached workers have /dev/null there already.
pub(crate) fn tell_command_pid(pid: u32) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{pid}").and_then(|()| out.flush());
    drop(out);
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
    }
}

/// Point stdin at /dev/null: the job must not read the launcher's pipe.
pub(crate) fn stdin_to_null() {
    if let Ok(null) = std::fs::File::open("/dev/null") {
        let _ = nix::unistd::dup2_stdin(&null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        for go in [
            Go {
                mode: DispatchMode::Scoped,
                unit: Some("hermes-cron-a\\x2db-1.scope".into()),
                cause: None,
            },
            Go {
                mode: DispatchMode::Degraded,
                unit: None,
                cause: Some(CauseCode::NoAddress),
            },
            Go {
                mode: DispatchMode::InProcess,
                unit: None,
                cause: None,
            },
        ] {
            let line = go.line();
            assert!(line.ends_with('\n'));
            assert_eq!(
                Go::parse(line.trim_end_matches('\n')),
                Some(Heard::GoPlaced(go))
            );
        }
        assert_eq!(Go::parse("g"), Some(Heard::Go));
        assert_eq!(Go::parse("x scoped"), None);
        assert_eq!(Go::parse("g sideways"), None);
        assert_eq!(Go::parse("s"), None, "a stage line says where");
        let staged = Go {
            mode: DispatchMode::Scoped,
            unit: Some("hermes-cron-a-1.scope".into()),
            cause: None,
        };
        assert_eq!(
            Go::parse(staged.stage_line().trim_end_matches('\n')),
            Some(Heard::Stage(staged))
        );
    }
}
