//! [`ImportContext`]: what the caller knows besides the file's text: the
//! clock, the zone and the zone table, the jobs already defined, where the file and the homes
//! are, and a way to ask whether a file exists. The importer stays pure: the
//! caller reads the store and the filesystem, or passes a probe that does.

use crate::schedule::{Timestamp, Tz, ZoneTable};
use std::fmt;
use std::path::Path;

/// A job that already exists where the plan will be created.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExistingJob {
    /// Its hermes-cron id.
    pub id: String,
    /// Its name: an imported job that wants it is renamed.
    pub name: String,
    /// The Hermes job it was imported from: that Hermes job is not imported
    /// again.
    pub hermes_id: Option<String>,
    /// Kept by the Hermes provider sync: hermes-cron already fires that
    /// Hermes job, as Hermes's provider.
    pub managed: bool,
}

/// Everything an import reads besides the text.
#[derive(Clone, Copy)]
pub struct ImportContext<'a> {
    /// The instant schedules are checked at (intervals are anchored here).
    pub now: Timestamp,
    /// The zone of jobs whose source names none.
    pub default_zone: Tz,
    /// Where the zone names the source gives are read.
    pub zones: &'a ZoneTable,
    /// The jobs already defined.
    pub existing: &'a [ExistingJob],
    /// The file's absolute path, when the caller knows it (a file given by a
    /// relative or symlinked name): a `<home>/cron/jobs.json` there names the
    /// Hermes home its relative scripts live in. Without it, the file name
    /// as given is looked at.
    pub path: Option<&'a Path>,
    /// `HERMES_HOME` when the imported jobs run (the hermes-cron home): where
    /// a relative Hermes script is looked up when the file's own home is not
    /// known.
    pub run_home: Option<&'a Path>,
    /// `HOME` when the imported jobs run, for `~/` scripts.
    pub user_home: Option<&'a Path>,
    /// Whether a regular file exists at a path; with it, a script that does
    /// not exist is noted ([`NoteCode::ScriptMissing`](super::NoteCode)).
    pub is_file: Option<&'a dyn Fn(&Path) -> bool>,
}

impl<'a> ImportContext<'a> {
    /// An import at `now` with nothing else known: no existing jobs, homes
    /// found from the file name only, scripts not checked.
    pub fn new(now: Timestamp, default_zone: Tz, zones: &'a ZoneTable) -> ImportContext<'a> {
        ImportContext {
            now,
            default_zone,
            zones,
            existing: &[],
            path: None,
            run_home: None,
            user_home: None,
            is_file: None,
        }
    }

    /// Whether `path` is known to be missing (false when scripts are not
    /// checked).
    pub(super) fn is_missing(&self, path: &Path) -> bool {
        self.is_file.is_some_and(|is_file| !is_file(path))
    }
}

impl fmt::Debug for ImportContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportContext")
            .field("now", &self.now)
            .field("default_zone", &self.default_zone)
            .field("zones", self.zones)
            .field("existing", &self.existing.len())
            .field("path", &self.path)
            .field("run_home", &self.run_home)
            .field("user_home", &self.user_home)
            .field("is_file", &self.is_file.is_some())
            .finish()
    }
}
