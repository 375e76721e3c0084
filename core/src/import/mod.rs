//! `import FILE`: a crontab or a Hermes `cron/jobs.json`, read into an
//! [`ImportPlan`] of jobs to create. Pure: the caller reads the file and
//! passes its text, `now` and the default zone, and what else it knows in an
//! [`ImportContext`] (the existing jobs, the homes, a probe for files);
//! nothing here touches the clock, the filesystem or the store.
//!
//! Invariants: a plan holds only schedules that `Schedule::parse` accepted
//! in the job's zone at `now`, each with its next fire; names are unique
//! within a plan and differ from the existing jobs' names. A malformed file
//! (a crontab line, JSON that does not parse, a top level that is not a
//! jobs.json) is an [`ImportError`] and yields no plan at all, so nothing is
//! half-imported; a malformed *record* of a jobs.json is skipped alone, as
//! Hermes's scheduler skips it. Entries that are not imported (malformed
//! records, agent-prompt jobs, finished one-shots, Hermes jobs imported
//! before, commands with cron's `%` stdin) are listed in
//! [`ImportPlan::skipped`] with the reason and a [`SkipCode`]; dropped
//! settings (MAILTO, delivery targets), renames, missing scripts and the
//! warning that Hermes keeps firing what was imported are in
//! [`ImportPlan::notes`] with a [`NoteCode`].
//!
//! ## Map
//! - `read.rs`: the entry points and format detection.
//! - `crontab.rs`: the crontab walk: environment, zone and shell in force,
//!   names, notes. `crontab_line.rs`: one line classified, `%` handling.
//! - `hermes.rs`: `jobs.json` (the schema is documented there);
//!   `hermes_schedule.rs`: its schedule objects; `hermes_script.rs`: its
//!   scripts as commands.
//! - `names.rs`: comment names, derived names, uniqueness.
//! - `checked.rs`: schedule validation and the next fire.
//! - `plan.rs`: the output and error types; `context.rs`: the input besides
//!   the text.

mod checked;
mod context;
mod crontab;
mod crontab_line;
mod hermes;
mod hermes_schedule;
mod hermes_script;
mod names;
mod plan;
mod read;

#[cfg(test)]
mod crontab_tests;
#[cfg(test)]
mod hermes_tests;

pub use context::{ExistingJob, ImportContext};
pub(crate) use hermes_schedule::recurring_text;
pub use plan::{ImportError, ImportNote, ImportPlan, ImportedJob, NotImported, NoteCode, SkipCode};
pub use read::{detect_and_parse, import_file, parse_crontab, parse_hermes_jobs};
