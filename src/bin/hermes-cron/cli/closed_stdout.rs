//! A reader that stops reading is not an error: `hermes-cron list | head -1`
//! ends quietly with exit 0, as ripgrep and fd do, instead of a panic.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe returns EPIPE and
//! `println!` panics on it ("failed printing to stdout: Broken pipe"). The
//! commands print through `println!` in many places, so the one place to
//! catch it is the panic hook: that panic, and only that one, exits 0 with
//! nothing on stderr; every other panic goes to the default hook.
//!
//! Not for the gateway: a daemon whose stdout went away must not exit 0
//! (its unit would not restart it); it keeps the default behaviour.

const STDOUT_FAILED: &str = "failed printing to stdout";

/// The result of a write to stdout that does not go through `println!` (a
/// document streamed with serde_json): a closed pipe ends the command
/// quietly, as the hook does for `println!`.
pub(crate) fn or_quiet_exit<T>(written: Result<T, serde_json::Error>) -> anyhow::Result<T> {
    match written {
        Err(e) if e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => {
            std::process::exit(hermes_cron::exit::OK)
        }
        other => Ok(other?),
    }
}

/// Install the hook (once, at start, before any output).
pub(crate) fn exit_quietly_on_a_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_stdout(info) {
            std::process::exit(hermes_cron::exit::OK);
        }
        default(info);
    }));
}

fn is_closed_stdout(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    // std's message ends with the OS error: "... (os error 32)".
    message.starts_with(STDOUT_FAILED)
        && message.ends_with(&format!("(os error {})", nix::libc::EPIPE))
}
