//! Logging: one line per event on stderr: log records for the gateway,
//! readable under journald ([`init`]), and lines for a person from every
//! interactive command ([`init_interactive`]: `warning: ...`).
//!
//! `HERMES_CRON_LOG` sets the filter (default `info`). Under journald
//! (`JOURNAL_STREAM` set) a line carries no timestamp or level word but
//! its priority as sd-daemon(3)'s `<N>` prefix (`<3>` error, `<4>` warning,
//! `<6>` info, `<7>` debug), which journald stores as the entry's priority
//! (`journalctl -p warning` finds the warnings). The worker's stderr is a file (`logs/hermes-cron-worker.log`), so its lines
//! always carry a timestamp ([`init_worker`]).
//!
//! Events about one run happen inside its [`run_span`], so every line says
//! which job and execution it is about (`run{job=brief execution=…}: started`)
//! without repeating the fields at each event.

use crate::ids::ExecutionId;
use tracing_subscriber::EnvFilter;

/// The environment variable holding the log filter.
pub(crate) const LOG_ENV: &str = "HERMES_CRON_LOG";

/// `HERMES_CRON_LOG`'s filter, else `info`.
fn filter() -> EnvFilter {
    EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Timestamped log records (`2026-12-01T08:00:00Z  INFO message`).
fn install_records() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false)
        .try_init();
}

/// One [`Line`] per event.
fn install_lines(line: Line) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(line)
        .try_init();
}

/// Install the global subscriber once (the gateway's: log records, or
/// journald's lines under systemd); later calls do nothing.
pub fn init() {
    match std::env::var_os("JOURNAL_STREAM") {
        Some(_) => install_lines(Line::Journal),
        None => install_records(),
    }
}

/// The subscriber of an interactive command: each event is one line for a
/// person, `warning: ...` or `error: ...` (coloured on a terminal unless
/// `NO_COLOR` is set), other events as they are; no timestamp or level
/// column, which are for the gateway's log.
pub fn init_interactive() {
    use std::io::IsTerminal;
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    install_lines(Line::Human { colour });
}

/// One event as one line: for a person ([`init_interactive`]) or for
/// journald ([`init`] under systemd). Only the start differs.
enum Line {
    /// `warning: ` / `error: ` before the message, none for other levels.
    Human { colour: bool },
    /// sd-daemon(3)'s priority prefix before every line.
    Journal,
}

/// sd-daemon(3)'s priority prefix of a level.
fn journal_priority(level: tracing::Level) -> &'static str {
    match level {
        tracing::Level::ERROR => "<3>",
        tracing::Level::WARN => "<4>",
        tracing::Level::INFO => "<6>",
        _ => "<7>",
    }
}

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Line
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = *event.metadata().level();
        match *self {
            Line::Journal => writer.write_str(journal_priority(level))?,
            Line::Human { colour } => {
                let (word, ansi) = match level {
                    tracing::Level::ERROR => ("error", "31"),
                    tracing::Level::WARN => ("warning", "33"),
                    _ => ("", ""),
                };
                match (word.is_empty(), colour) {
                    (true, _) => {}
                    (false, true) => write!(writer, "\x1b[1;{ansi}m{word}:\x1b[0m ")?,
                    (false, false) => write!(writer, "{word}: ")?,
                }
            }
        }
        // What the event is about (`run{job=brief execution=…}`), as the log says it.
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let ext = span.extensions();
                match ext.get::<tracing_subscriber::fmt::FormattedFields<N>>() {
                    Some(fields) if !fields.is_empty() => {
                        write!(writer, "{}{{{fields}}}: ", span.name())?
                    }
                    _ => write!(writer, "{}: ", span.name())?,
                }
            }
        }
        tracing_subscriber::fmt::FormatFields::format_fields(ctx, writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// The worker's subscriber: always timestamped (its stderr is a file, even
/// when the gateway that started it logs to journald).
pub fn init_worker() {
    install_records();
}

/// The span of one run: the job and execution every event in it is about.
pub(crate) fn run_span(job: &str, execution: &ExecutionId) -> tracing::Span {
    tracing::info_span!("run", job = %crate::text::one_line(job, 64), execution = %execution)
}
