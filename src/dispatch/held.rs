//! Starting a worker held at the gate: it is spawned with the read end of a
//! pipe as stdin and does nothing until [`HeldWorker::release`] writes the go
//! line, which says how it was placed (`crate::worker::Go`).
//! [`HeldWorker::abandon`] closes the pipe instead (the worker exits quietly)
//! and reaps it. Scoped dispatch moves the held pid into its scope between
//! the two.
//!
//! A detached worker is started with no `pre_exec` hook, so std starts it
//! with `posix_spawn` (glibc's is a `vfork`: no copy of the launcher's page
//! tables, cheaper the bigger the gateway) instead of `fork`. What a hook
//! would do in the child the worker does first thing itself, told by
//! `--detach` ([`DETACH_ARG`]): `setsid`, and unblocking the signals the
//! gateway blocks for its signal thread (a spawned child keeps the mask).
//!
//! A detached worker keeps none of the launcher's stdio: its stdout is
//! /dev/null and its own diagnostics are appended to `logs/hermes-cron-worker.log` in the
//! home. Inheriting the launcher's stderr would make any caller that captures
//! the output of `spawn`, `run` or `tick` wait on that pipe for as long as the
//! job runs (for a kanban worker: hours).

use crate::home::Home;
use crate::process::start_attrs;
use crate::worker::{DETACH_ARG, Go, RELEASE};
use hermes_cron_core::health::StartAttrs;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A spawned worker waiting for its go byte.
#[derive(Debug)]
pub struct HeldWorker {
    pub child: Child,
    go: Option<std::fs::File>,
}

/// How the worker is attached to the launcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attach {
    /// Its own session (`setsid`), stdout to /dev/null: scoped and degraded.
    Detached,
    /// Detached, its stdout a pipe (`Child::stdout`) on which the worker
    /// tells its command's pid once it started, then closes: `spawn`, whose
    /// caller (a kanban dispatcher) watches and signals that pid.
    DetachedTellingPid,
    /// A plain child sharing our terminal, its output teed: `run --foreground`.
    Foreground,
}

/// Which run a worker is started for.
#[derive(Clone, Copy, Debug)]
pub struct WorkerCall<'a> {
    pub home: &'a Path,
    pub execution: &'a str,
    /// What its job starts with (the gateway's umask, nice value, limits).
    pub start: &'a StartAttrs,
}

/// The file a detached worker's stderr goes to: `logs/hermes-cron-worker.log` in the
/// home, appended, 0600; /dev/null if it cannot be opened.
fn worker_log(home: &Path) -> Stdio {
    let path = Home::at(home).worker_log();
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null())
}

impl HeldWorker {
    /// Spawn `bin` for `call`, held.
    pub fn spawn(bin: &Path, call: &WorkerCall<'_>, attach: Attach) -> std::io::Result<HeldWorker> {
        let (read, write): (OwnedFd, OwnedFd) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
        let mut cmd = Command::new(bin);
        cmd.env(start_attrs::ENV, start_attrs::to_env(call.start));
        cmd.arg("--home")
            .arg(call.home)
            .arg("--execution")
            .arg(call.execution)
            .stdin(Stdio::from(read));
        match attach {
            Attach::Detached | Attach::DetachedTellingPid => {
                // No pre_exec hook: std uses posix_spawn. The worker calls
                // setsid and clears its signal mask itself (DETACH_ARG).
                let stdout = if attach == Attach::DetachedTellingPid {
                    Stdio::piped()
                } else {
                    Stdio::null()
                };
                cmd.arg(DETACH_ARG)
                    .stdout(stdout)
                    .stderr(worker_log(call.home));
            }
            Attach::Foreground => {
                cmd.arg("--tee");
            }
        }
        let child = cmd.spawn()?;
        Ok(HeldWorker {
            child,
            go: Some(std::fs::File::from(write)),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Write the go line: the worker starts, placed as `go` says. On an
    /// error (the worker is gone) it is reaped.
    pub fn release(mut self, go: &Go) -> std::io::Result<Child> {
        if let Some(mut pipe) = self.go.take()
            && let Err(e) = pipe.write_all(go.line().as_bytes())
        {
            drop(pipe);
            self.end();
            return Err(e);
        }
        Ok(self.child)
    }

    /// Write the stage line: the worker holds its row, placed as `go` says,
    /// and waits for [`HeldWorker::release_staged`]. The gate stays open.
    pub fn stage(&mut self, go: &Go) -> std::io::Result<()> {
        match self.go.as_mut() {
            Some(pipe) => pipe.write_all(go.stage_line().as_bytes()),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        }
    }

    /// Release a staged worker: one byte, its command starts. On an error
    /// (the worker is gone) it is reaped.
    pub fn release_staged(mut self) -> std::io::Result<Child> {
        let result = match self.go.as_mut() {
            Some(pipe) => pipe.write_all(&[RELEASE]),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        };
        drop(self.go.take());
        match result {
            Ok(()) => Ok(self.child),
            Err(e) => {
                self.end();
                Err(e)
            }
        }
    }

    /// Close the gate (the worker sees EOF and exits untouched), make sure it
    /// is gone, and reap it.
    pub(crate) fn abandon(mut self) {
        drop(self.go.take());
        self.end();
    }

    /// Kill and reap the worker, unless it was reaped already (a gateway
    /// reaps every child on SIGCHLD, also one whose dispatch is in flight):
    /// never signal a pid that is no longer ours.
    fn end(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
