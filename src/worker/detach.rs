//! A detached worker's first act (`--detach`): what a `pre_exec` hook of its
//! launcher would do in the child. The launcher starts detached workers
//! with `posix_spawn`, which can run no code of ours between fork and exec.
//!
//! - `setsid`: a session of its own, so nothing that ends the launcher's
//!   session or process group (a terminal hangup, `kill -- -PGID`) reaches
//!   it. A spawned child is never a group leader, so it cannot fail for
//!   that reason.
//! - An empty signal mask: the gateway blocks SIGTERM and SIGINT in every
//!   thread for its signal thread, and a spawned child keeps the mask; a
//!   held worker must die of a SIGTERM (`hermes-cron stop`, a stopped scope)
//!   as any process does.

/// The worker argument that makes it `setsid` and unblock every signal
/// before anything else.
pub const DETACH_ARG: &str = "--detach";

/// `setsid` and unblock every signal; failures are left to show later (a
/// worker that cannot do either still runs its job).
pub fn detach() {
    let _ = nix::unistd::setsid();
    let _ = crate::process::unblock_all_signals();
}
