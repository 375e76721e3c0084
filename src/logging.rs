//! Logging: one line per event on stderr: log records for the gateway,
//! readable under journald ([`init`]), and lines for a person from every
//! interactive command ([`init_interactive`]: `warning: ...`).
//!
//! `HERMES_CRON_LOG` sets the filter (default `info`). Under journald
//! (`JOURNAL_STREAM` set) lines carry no timestamp or colour; journald adds
//! its own. The worker's stderr is a file (`logs/hermes-cron-worker.log`), so its lines
//! always carry a timestamp ([`init_worker`]).
//!
//! Events about one run happen inside its [`run_span`], so every line says
//! which job and execution it is about (`run{job=brief execution=…}: started`)
//! without repeating the fields at each event.

use crate::ids::ExecutionId;
use tracing_subscriber::EnvFilter;

/// The environment variable holding the log filter.
pub(crate) const LOG_ENV: &str = "HERMES_CRON_LOG";

fn install(timestamps: bool) {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false);
    let _ = if timestamps {
        builder.try_init()
    } else {
        builder.without_time().try_init()
    };
}

/// Install the global subscriber once (the gateway's: log records); later
/// calls do nothing.
pub fn init() {
    install(std::env::var_os("JOURNAL_STREAM").is_none());
}

/// The subscriber of an interactive command: each event is one line for a
/// person, `warning: ...` or `error: ...` (coloured on a terminal unless
/// `NO_COLOR` is set), other events as they are; no timestamp or level
/// column, which are for the gateway's log.
pub fn init_interactive() {
    use std::io::IsTerminal;
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(HumanLine { colour })
        .try_init();
}

/// One event as one line for a person (see [`init_interactive`]).
struct HumanLine {
    colour: bool,
}

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for HumanLine
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
        let (word, ansi) = match *event.metadata().level() {
            tracing::Level::ERROR => ("error", "31"),
            tracing::Level::WARN => ("warning", "33"),
            _ => ("", ""),
        };
        match (word.is_empty(), self.colour) {
            (true, _) => {}
            (false, true) => write!(writer, "\x1b[1;{ansi}m{word}:\x1b[0m ")?,
            (false, false) => write!(writer, "{word}: ")?,
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
    install(true);
}

/// The span of one run: the job and execution every event in it is about.
pub(crate) fn run_span(job: &str, execution: &ExecutionId) -> tracing::Span {
    tracing::info_span!("run", job = %crate::text::one_line(job, 64), execution = %execution)
}
