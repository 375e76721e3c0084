//! The docs are tested: every ```` ```console ```` block of README.md and of
//! docs/*.md runs for real, in order, and the test fails, naming the file,
//! the line and the command, when what the binaries print drifts from what
//! the docs show.
//!
//! Each file runs in a fresh home of its own ([`TestHome::scoped`]: the tour
//! shows `dispatch=scoped`, so a missing systemd user manager fails the test
//! with the way to boot one, never a skip). In a block:
//!
//! - `$ LINE` is a command: `sh -c LINE` as a user would type it, with
//!   `HERMES_HOME` the test's home, the directory of the `hermes-cron` cargo
//!   built first on `PATH`, `TZ=Etc/UTC` (the zone the tour was recorded in),
//!   in a scratch directory. The lines after it, up to the next `$ `, are
//!   what it prints: stdout and stderr together, in the order written, as a
//!   terminal shows them (the line runs after `exec 2>&1`). Exit codes are
//!   not compared (the docs do not show them).
//! - `$ hermes-cron gateway` starts the gateway in the background for the rest
//!   of the file. Its lines are log records, checked loosely: each, normalized,
//!   must become a line of the gateway's log, normalized, within
//!   [`READY_TIMEOUT`], in any order and among others. At the end of the file
//!   the gateway gets SIGINT (the tour's Ctrl-C) and must exit 0.
//! - `$ sleep N` is not slept: each command after it, to the end of its block,
//!   is run again until its output matches, all of them within 3*N+30 s of
//!   the sleep. A command that does not match the first time fails at once.
//! - An id the docs show, or 8 hex digits or more of its beginning or end,
//!   in a command line is replaced by the same part of the id this run got
//!   in its place (`logs c4b0184b` names the run the docs' `runs` showed).
//! - A block that cannot run is skipped only when the Markdown says so, on
//!   the line above its fence: `<!-- docs-test: skip (the reason) -->`.
//!
//! Both sides are normalized before they are compared ([`Normalizer`]):
//! instants, ids, durations, pids, loop counters, the home, the user's home
//! directory and the host name become placeholders, and runs of spaces one
//! space (table columns are as wide as their values). Ids are numbered by
//! first appearance on each side (`[ID1]`, `[ID2]`), so the run `show`
//! names must be the one `run --wait` started; a scope's unit name carries
//! its run's id, without hyphens, and gets the same number.
//!
//! The clock: the tour's jobs fire by themselves at 00:00 and 08:00 UTC and
//! on Mondays, and `status` names whichever is next, so what the tour prints
//! depends on the time of day. Every command and the gateway run with the
//! clock moved (`HERMES_CRON_NOW=+N`, a test knob, CONTRIBUTING.md; N less
//! than a day, the same for all) to the time of day the tour was recorded at,
//! [`RECORDED_AT`]: nothing fires by itself during the test, and the next fire
//! is the one the docs show. Real time passes as it does for a user.

use crate::support::TestHome;
use crate::support::cli::{Out, bin};
use crate::support::gateway::{Gateway, READY_TIMEOUT, STOP_TIMEOUT};
use crate::support::waiting::{poll, wait_for_or, wall_clock};
use hermes_cron::clock::{elapsed, monotonic};
use nix::sys::signal::Signal;
use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

/// Issue 25: the README is a front door, at most 20 KiB.
const README_MAX_BYTES: usize = 20 * 1024;

/// The zone of the shell the tour was recorded in: what `show` prints as a
/// job's zone when `add` had no `--tz`.
const TOUR_TZ: &str = "Etc/UTC";

/// The time of day (UTC) the tour was recorded at: its gateway's first log line.
const RECORDED_AT: (u32, u32, u32) = (21, 53, 26);

/// What was particular to the machine the docs were recorded on, and the
/// placeholder each becomes: the home the tour exports, the user's home
/// directory (a job's default `workdir`), the host name (`runs`'s `HOST`).
const RECORDED_ON: &[(&str, &str)] = &[
    ("/tmp/hermes-tour", "[HOME]"),
    ("/root", "[USER_HOME]"),
    ("vm", "[HOST]"),
];

/// The marker that skips the block below it, with a reason in parentheses.
const SKIP_MARKER: &str = "<!-- docs-test: skip (";

#[test]
fn the_readme_is_at_most_20_kib() {
    let size = std::fs::metadata(repo().join("README.md"))
        .expect("README.md")
        .len();
    assert!(
        size <= README_MAX_BYTES as u64,
        "README.md is {size} bytes, more than {README_MAX_BYTES} (issue 25): move reference \
         material to docs/"
    );
}

#[test]
fn the_console_examples_of_the_docs_run_as_shown() {
    let files = doc_files();
    let readme = &files[0];
    assert!(
        console_blocks(&readme.0, &readme.1)
            .iter()
            .any(|b| b.skip.is_none()),
        "README.md has no console block to run: the tour is its tested example"
    );
    // A missing user manager fails here, with the way to boot one.
    TestHome::scoped().require_scopes();
    for (name, text) in &files {
        let blocks = console_blocks(name, text);
        for block in blocks.iter().filter(|b| b.skip.is_some()) {
            eprintln!(
                "{name}:{}: console block skipped ({})",
                block.line,
                block.skip.as_deref().unwrap_or_default()
            );
        }
        let blocks: Vec<Block> = blocks.into_iter().filter(|b| b.skip.is_none()).collect();
        if !blocks.is_empty() {
            let started = monotonic();
            Session::new(name).run(&blocks);
            eprintln!(
                "{name}: {} blocks ran as shown in {:?}",
                blocks.len(),
                elapsed(started)
            );
        }
    }
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then docs/*.md by name: (path from the repository, text).
fn doc_files() -> Vec<(String, String)> {
    let read = |path: &Path| std::fs::read_to_string(path).expect("read a doc");
    let mut files = vec![("README.md".to_string(), read(&repo().join("README.md")))];
    let mut docs: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for path in docs {
        let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        files.push((name, read(&path)));
    }
    files
}

/// One console block.
#[derive(Debug)]
struct Block {
    /// The line of its opening fence (1-based).
    line: usize,
    /// The reason given by a skip marker above it.
    skip: Option<String>,
    steps: Vec<Step>,
}

/// A command of a block and the output the docs show for it.
#[derive(Debug)]
struct Step {
    /// The line of its `$ ` (1-based).
    line: usize,
    command: String,
    /// The lines after it, each with its line number.
    expected: Vec<(usize, String)>,
}

/// The console blocks of `text` (the file `name`).
fn console_blocks(name: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```console" {
            i += 1;
            continue;
        }
        let above = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
        let skip = above.and_then(|l| skip_reason(name, i, l));
        let mut block = Block {
            line: i + 1,
            skip,
            steps: Vec::new(),
        };
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            let line = lines[i];
            if let Some(command) = line.strip_prefix("$ ") {
                block.steps.push(Step {
                    line: i + 1,
                    command: command.to_string(),
                    expected: Vec::new(),
                });
            } else if let Some(step) = block.steps.last_mut() {
                step.expected.push((i + 1, line.to_string()));
            } else {
                panic!("{name}:{}: output before any `$ ` command", i + 1);
            }
            i += 1;
        }
        assert!(
            i < lines.len(),
            "{name}:{}: console block never closed",
            block.line
        );
        blocks.push(block);
        i += 1;
    }
    blocks
}

/// The reason of a skip marker; panics on any other `docs-test` comment.
fn skip_reason(name: &str, fence: usize, line: &str) -> Option<String> {
    let line = line.trim();
    if !line.contains("docs-test") {
        return None;
    }
    let reason = line
        .strip_prefix(SKIP_MARKER)
        .and_then(|rest| rest.strip_suffix(") -->"))
        .filter(|reason| !reason.trim().is_empty());
    match reason {
        Some(reason) => Some(reason.to_string()),
        None => panic!(
            "{name}:{fence}: unknown docs-test marker {line:?}; the one there is is \
             `{SKIP_MARKER}the reason) -->`"
        ),
    }
}

/// One file's blocks being run: its home, its gateway, what each side has
/// seen so far.
struct Session<'a> {
    file: &'a str,
    /// Before `home`: dropped (killed) first.
    gateway: Option<Gateway>,
    home: TestHome,
    /// `PATH` with the binaries under test first.
    path: OsString,
    /// `HERMES_CRON_NOW`: the clock moved to [`RECORDED_AT`].
    clock: String,
    docs: Normalizer,
    actual: Normalizer,
}

impl<'a> Session<'a> {
    fn new(file: &'a str) -> Session<'a> {
        let home = TestHome::scoped();
        let bin_dir = bin().parent().expect("bin dir").to_path_buf();
        let mut dirs = vec![bin_dir];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        let path = std::env::join_paths(dirs).expect("PATH");
        let now = wall_clock();
        let (h, m, s) = RECORDED_AT;
        let recorded = now
            .date_naive()
            .and_hms_opt(h, m, s)
            .expect("RECORDED_AT")
            .and_utc();
        let clock = format!("{:+}", (recorded - now).num_seconds());
        let docs = Normalizer::new(
            RECORDED_ON
                .iter()
                .map(|(literal, placeholder)| (literal.to_string(), *placeholder))
                .collect(),
        );
        let actual = Normalizer::new(vec![
            (home.path().display().to_string(), "[HOME]"),
            (hermes_cron::process::account().home, "[USER_HOME]"),
            (host_name(), "[HOST]"),
        ]);
        Session {
            file,
            gateway: None,
            home,
            path,
            clock,
            docs,
            actual,
        }
    }

    fn run(mut self, blocks: &[Block]) {
        for block in blocks {
            // After a `sleep`: when it was reached, and how long may pass.
            let mut retry: Option<(Instant, Duration)> = None;
            for step in &block.steps {
                if let Some(secs) = step.command.strip_prefix("sleep ") {
                    assert!(
                        step.expected.is_empty(),
                        "{}:{}: `sleep` prints nothing",
                        self.file,
                        step.line
                    );
                    let secs: u64 = secs.trim().parse().unwrap_or_else(|_| {
                        panic!("{}:{}: `sleep` takes whole seconds", self.file, step.line)
                    });
                    retry = Some((monotonic(), Duration::from_secs(3 * secs + 30)));
                } else if step.command == "hermes-cron gateway" {
                    self.start_gateway(step);
                } else {
                    self.command(step, retry);
                }
            }
        }
        if let Some(mut gateway) = self.gateway.take() {
            gateway.signal(Signal::SIGINT);
            let status = gateway.wait_exit(STOP_TIMEOUT);
            assert!(
                status.success(),
                "{}: Ctrl-C (SIGINT) should stop the gateway with 0, it exited {status}\n{}",
                self.file,
                gateway.log()
            );
        }
    }

    /// `$ hermes-cron gateway`: started for the rest of the file; each line
    /// the docs show must become a line of its log.
    fn start_gateway(&mut self, step: &Step) {
        let file = self.file;
        assert!(
            self.gateway.is_none(),
            "{file}:{}: a second gateway on the same home",
            step.line
        );
        let mut gateway = self
            .home
            .gateway(&[("TZ", TOUR_TZ), ("HERMES_CRON_NOW", self.clock.as_str())]);
        for (line, expected) in &step.expected {
            let want = self.docs.clone().line(expected, true);
            let mut exited = None;
            wait_for_or(
                &format!("{file}:{line}: the gateway to log a line that normalizes to {want:?}"),
                READY_TIMEOUT,
                || {
                    let log = gateway.log();
                    let mut actual = self.actual.clone();
                    if log.lines().any(|l| actual.line(l, true) == want) {
                        return Some(());
                    }
                    exited = gateway.exited();
                    exited.map(|_| ())
                },
                || {
                    let log = self.actual.clone().text(&self.home.logs(), true);
                    format!("its log, normalized:\n{}", log.join("\n"))
                },
            );
            if let Some(status) = exited {
                panic!(
                    "{file}:{line}: the gateway exited ({status}) without logging a line that \
                     normalizes to {want:?}\n{}",
                    gateway.log()
                );
            }
        }
        self.gateway = Some(gateway);
    }

    /// A command: run (again, while `retry` allows) until its output matches.
    fn command(&mut self, step: &Step, retry: Option<(Instant, Duration)>) {
        let line = rewrite_ids(&step.command, &self.docs, &self.actual);
        let outcome = match retry {
            None => self.attempt(step, &line),
            Some((since, limit)) => {
                let mut last = None;
                let left = limit.saturating_sub(elapsed(since));
                poll(left, || match self.attempt(step, &line) {
                    Ok(seen) => Some(seen),
                    Err(failure) => {
                        last = Some(failure);
                        None
                    }
                })
                .ok_or_else(|| {
                    format!(
                        "{}(and still so {limit:?} after the `sleep` above it)",
                        last.unwrap_or_default()
                    )
                })
            }
        };
        match outcome {
            Ok((docs, actual)) => {
                self.docs = docs;
                self.actual = actual;
            }
            Err(failure) => panic!("{failure}"),
        }
    }

    /// Run `line` (the step's command, its ids this run's) once. When its
    /// output matches, both sides' normalizers having seen it; else the
    /// failure message.
    fn attempt(&self, step: &Step, line: &str) -> Result<(Normalizer, Normalizer), String> {
        let out = self
            .home
            .shell(&format!("exec 2>&1; {line}"))
            .env("PATH", &self.path)
            .env("TZ", TOUR_TZ)
            .env("HERMES_CRON_NOW", &self.clock)
            .in_dir(self.home.scratch())
            .run();
        let times = !pins_its_instant(&step.command);
        let mut docs = self.docs.clone();
        let mut actual = self.actual.clone();
        let expected: Vec<&str> = step.expected.iter().map(|(_, l)| l.as_str()).collect();
        let want = docs.text(&expected.join("\n"), times);
        let got = actual.text(&out.stdout, times);
        if want == got {
            return Ok((docs, actual));
        }
        Err(self.mismatch(step, line, &want, &got, &out))
    }

    fn mismatch(
        &self,
        step: &Step,
        line: &str,
        want: &[String],
        got: &[String],
        out: &Out,
    ) -> String {
        let ran = if line == step.command {
            String::new()
        } else {
            format!(" (run as `{line}`)")
        };
        format!(
            "{}:{}: `$ {}`{ran} printed something else than the docs show.\n\
             Normalized, `-` the docs, `+` this run:\n{}\
             As printed ({}):\n{}",
            self.file,
            step.line,
            step.command,
            diff(want, got),
            out.status,
            out.stdout
        )
    }
}

/// A command that names its own instant (`next --from`) prints no volatile
/// time: its instants are compared as they are.
fn pins_its_instant(command: &str) -> bool {
    command.split_whitespace().any(|w| w == "--from")
}

/// This machine's name, as `runs` shows it in `HOST`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("host name")
        .trim()
        .to_string()
}

/// `command` with each id of the docs, or piece of one (its beginning or
/// its end, 8 characters or more), replaced by the same piece of the id
/// that this run has in its place.
fn rewrite_ids(command: &str, docs: &Normalizer, actual: &Normalizer) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < command.len() {
        let rest = &command[i..];
        if starts_word(command, i)
            && let Some(len) = hex_run(rest)
            && let Some(piece) = docs.piece(&rest[..len])
        {
            let theirs = actual.cut(&piece).unwrap_or_else(|| {
                panic!(
                    "`{command}` names id [ID{}], which this run has not shown",
                    piece.number
                )
            });
            out.push_str(&theirs);
            i += len;
            continue;
        }
        let c = rest.chars().next().expect("a char");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// A line diff: `  ` both, `- ` only `want` (the docs), `+ ` only `got`.
pub(crate) fn diff(want: &[String], got: &[String]) -> String {
    let (n, m) = (want.len(), got.len());
    // common[i][j]: the longest common subsequence of want[i..] and got[j..].
    let mut common = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if want[i] == got[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && want[i] == got[j] {
            out.push_str(&format!("  {}\n", want[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || common[i + 1][j] >= common[i][j + 1]) {
            out.push_str(&format!("- {}\n", want[i]));
            i += 1;
        } else {
            out.push_str(&format!("+ {}\n", got[j]));
            j += 1;
        }
    }
    out
}

/// What one side (the docs, or this run) prints, made comparable: its
/// machine's particulars (`literals`) and every volatile value become
/// placeholders, and the ids it has shown are numbered in order of first
/// appearance.
#[derive(Clone, Debug)]
struct Normalizer {
    /// Text particular to the side's machine and the placeholder for it.
    literals: Vec<(String, &'static str)>,
    /// The ids seen, hyphenated; `[ID1]` is the first.
    ids: Vec<String>,
}

/// A piece of a known id: which id, in which form, which end, how long.
#[derive(Debug, PartialEq)]
struct Piece {
    number: usize,
    hyphens: bool,
    beginning: bool,
    len: usize,
}

impl Normalizer {
    fn new(literals: Vec<(String, &'static str)>) -> Normalizer {
        Normalizer {
            literals,
            ids: Vec::new(),
        }
    }

    /// `text` normalized line by line, without its trailing blank lines.
    /// `times: false` keeps instants as they are.
    fn text(&mut self, text: &str, times: bool) -> Vec<String> {
        let mut lines: Vec<String> = text.lines().map(|l| self.line(l, times)).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }

    /// One line normalized.
    fn line(&mut self, line: &str, times: bool) -> String {
        let mut text = line.to_string();
        for (literal, placeholder) in &self.literals {
            text = replace_word(&text, literal, placeholder);
        }
        let mut out = String::new();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            if starts_word(&text, i)
                && let Some((len, placeholder)) = self.volatile(rest, times)
            {
                out.push_str(&placeholder);
                i += len;
                continue;
            }
            let c = rest.chars().next().expect("a char");
            out.push(c);
            i += c.len_utf8();
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The volatile value `s` starts with, if any: its length and placeholder.
    fn volatile(&mut self, s: &str, times: bool) -> Option<(usize, String)> {
        if times && let Some(len) = instant_len(s) {
            return Some((len, "[TIME]".into()));
        }
        if let Some((len, id)) = id_at(s) {
            return Some((len, format!("[ID{}]", self.number(&id))));
        }
        if let Some(len) = hex_run(s)
            && let Some(piece) = self.piece(&s[..len])
        {
            return Some((len, format!("[ID{}]", piece.number)));
        }
        if let Some(len) = duration_len(s) {
            return Some((len, "[DUR]".into()));
        }
        for (label, placeholder) in [
            ("pid=", "[PID]"),
            ("pid ", "[PID]"),
            ("loop counter ", "[N]"),
        ] {
            if let Some(tail) = s.strip_prefix(label) {
                let digits = count(tail, |b| b.is_ascii_digit());
                if digits > 0 && ends_word(tail, digits) {
                    return Some((label.len() + digits, format!("{label}{placeholder}")));
                }
            }
        }
        None
    }

    /// The number of id `id` (hyphenated), given it on first sight.
    fn number(&mut self, id: &str) -> usize {
        match self.ids.iter().position(|known| known == id) {
            Some(at) => at + 1,
            None => {
                self.ids.push(id.to_string());
                self.ids.len()
            }
        }
    }

    /// The one known id `text` (8 characters or more) begins or ends,
    /// hyphenated or not; None when none or several do.
    fn piece(&self, text: &str) -> Option<Piece> {
        if text.len() < 8 {
            return None;
        }
        let mut found = Vec::new();
        for (at, id) in self.ids.iter().enumerate() {
            for hyphens in [true, false] {
                let form = if hyphens {
                    id.clone()
                } else {
                    id.replace('-', "")
                };
                for beginning in [true, false] {
                    let hit = if beginning {
                        form.starts_with(text)
                    } else {
                        form.ends_with(text)
                    };
                    if hit {
                        found.push(Piece {
                            number: at + 1,
                            hyphens,
                            beginning,
                            len: text.len(),
                        });
                    }
                }
            }
        }
        // One id, however many ways it matches (a whole id both begins and ends itself).
        let number = found.first()?.number;
        if found.iter().all(|p| p.number == number) {
            Some(found.swap_remove(0))
        } else {
            None
        }
    }

    /// The same piece of this side's id of the same number.
    fn cut(&self, piece: &Piece) -> Option<String> {
        let id = self.ids.get(piece.number - 1)?;
        let form = if piece.hyphens {
            id.clone()
        } else {
            id.replace('-', "")
        };
        Some(if piece.beginning {
            form[..piece.len].to_string()
        } else {
            form[form.len() - piece.len..].to_string()
        })
    }
}

/// Whether a word may start at byte `i` of `text` (not inside one).
fn starts_word(text: &str, i: usize) -> bool {
    i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric()
}

/// Whether a word of `len` bytes at the start of `s` ends there.
fn ends_word(s: &str, len: usize) -> bool {
    s.as_bytes()
        .get(len)
        .is_none_or(|b| !b.is_ascii_alphanumeric())
}

/// `text` with each `word` that stands alone (not part of a longer name or
/// path component) replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let part = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].bytes().last().or(out.bytes().last());
        let after = rest.as_bytes().get(at + word.len()).copied();
        out.push_str(&rest[..at]);
        if before.is_some_and(part) || after.is_some_and(part) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// How many leading bytes of `s` satisfy `class`.
fn count(s: &str, class: impl Fn(u8) -> bool) -> usize {
    s.bytes().take_while(|&b| class(b)).count()
}

/// Whether `s` starts with text of `shape`: `9` a digit, `A` an upper-case
/// letter, `a` a lower-case one, `_` a space or a digit, anything else itself.
fn shaped(s: &str, shape: &str) -> bool {
    s.len() >= shape.len()
        && s.bytes().zip(shape.bytes()).all(|(b, p)| match p {
            b'9' => b.is_ascii_digit(),
            b'A' => b.is_ascii_uppercase(),
            b'a' => b.is_ascii_lowercase(),
            b'_' => b == b' ' || b.is_ascii_digit(),
            _ => b == p,
        })
}

/// The length of the instant `s` starts with: `2026-12-07 21:53:28 UTC`,
/// RFC 3339 (`2026-12-07T21:53:59Z`, `...T21:53:59.000302Z`, `+01:00`), either
/// after a weekday (`Mon 2026-12-14 09:00:00 CET`), or date(1)'s
/// `Mon Dec  7 21:53:59 UTC 2026`.
fn instant_len(s: &str) -> Option<usize> {
    let weekday = if shaped(s, "Aaa 9999-") { 4 } else { 0 };
    let t = &s[weekday..];
    if shaped(t, "9999-99-99T99:99:99") || shaped(t, "9999-99-99 99:99:99") {
        let mut len = 19;
        if t[len..].starts_with('.') {
            let digits = count(&t[len + 1..], |b| b.is_ascii_digit());
            len += 1 + digits;
        }
        let tail = &t[len..];
        if t.as_bytes()[10] == b'T' {
            if tail.starts_with('Z') {
                len += 1;
            } else if shaped(tail, "+99:99") || shaped(tail, "-99:99") {
                len += 6;
            }
        } else if let Some(zone) = tail.strip_prefix(' ') {
            let z = zone_len(zone);
            if z > 0 {
                len += 1 + z;
            }
        }
        return Some(weekday + len);
    }
    if shaped(s, "Aaa Aaa _9 99:99:99 ") {
        let z = zone_len(&s[20..]);
        if z > 0 && shaped(&s[20 + z..], " 9999") {
            return Some(20 + z + 5);
        }
    }
    None
}

/// The length of the zone abbreviation `s` starts with (`UTC`, `CEST`, `+03`, `-0330`), or 0.
fn zone_len(s: &str) -> usize {
    let letters = count(s, |b| b.is_ascii_uppercase());
    if (2..=5).contains(&letters) && ends_word(s, letters) {
        return letters;
    }
    let digits = s
        .strip_prefix(['+', '-'])
        .map_or(0, |rest| count(rest, |b| b.is_ascii_digit()));
    if (digits == 2 || digits == 4) && ends_word(s, 1 + digits) {
        1 + digits
    } else {
        0
    }
}

/// The id `s` starts with: a UUID, or its 32 hex digits (a scope's unit
/// name), as (its length, the id hyphenated).
fn id_at(s: &str) -> Option<(usize, String)> {
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if s.len() >= 36
        && s.bytes().take(36).enumerate().all(|(i, b)| {
            if [8, 13, 18, 23].contains(&i) {
                b == b'-'
            } else {
                hex(b)
            }
        })
        && ends_word(s, 36)
    {
        return Some((36, s[..36].to_string()));
    }
    if count(s, hex) == 32 && ends_word(s, 32) {
        let h = &s[..32];
        let id = format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        );
        return Some((32, id));
    }
    None
}

/// The length of the run of hex digits and hyphens `s` starts with, when
/// it is a word of 8 bytes or more (a candidate piece of an id).
fn hex_run(s: &str) -> Option<usize> {
    let len = count(s, |b| {
        b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'-'
    });
    (len >= 8 && ends_word(s, len)).then_some(len)
}

/// The length of the duration `s` starts with: `2ms`, `43s`, `1m5s`, `2h`, `1d`.
fn duration_len(s: &str) -> Option<usize> {
    let mut len = 0;
    loop {
        let digits = count(&s[len..], |b| b.is_ascii_digit());
        if digits == 0 {
            break;
        }
        let after = &s[len + digits..];
        let unit = ["ms", "s", "m", "h", "d", "w"]
            .into_iter()
            .find(|u| after.starts_with(u))?;
        len += digits + unit.len();
    }
    (len > 0 && ends_word(s, len)).then_some(len)
}

mod normalizer {
    use super::*;

    fn tour() -> Normalizer {
        Normalizer::new(vec![
            ("/tmp/hermes-tour".into(), "[HOME]"),
            ("vm".into(), "[HOST]"),
        ])
    }

    const RUNS_RECORDED: &str = "\
ID                                    JOB    SCHEDULED                STARTED                  DURATION  STATE      MODE    EXIT  HOST
01a2527f-d0f2-7488-a273-da91c4b0184b  tea    2026-12-07 21:53:59 UTC  2026-12-07 21:53:59 UTC  2ms       succeeded  scoped  0     vm
01a2527f-5d79-7721-a09d-674f1e3f259b  brief  -                        2026-12-07 21:53:28 UTC  0ms       succeeded  scoped  0     vm
";

    const RUNS_LATER: &str = "\
ID                                    JOB    SCHEDULED                STARTED                  DURATION  STATE      MODE    EXIT  HOST
01a252a7-5df3-7451-a4be-7e5426d34f85  tea    2027-01-02 03:04:05 UTC  2027-01-02 03:04:05 UTC  1m38s     succeeded  scoped  0     build-7
01a252a6-eb31-7262-95ef-3ea67f02b1fa  brief  -                        2027-01-02 03:03:01 UTC  38ms      succeeded  scoped  0     build-7
";

    fn later() -> Normalizer {
        Normalizer::new(vec![
            ("/tmp/x/home".into(), "[HOME]"),
            ("build-7".into(), "[HOST]"),
        ])
    }

    #[test]
    fn runs_taken_at_other_times_on_other_hosts_normalize_equal() {
        let want = tour().text(RUNS_RECORDED, true);
        assert_eq!(want, later().text(RUNS_LATER, true));
        assert_eq!(
            want[1],
            "[ID1] tea [TIME] [TIME] [DUR] succeeded scoped 0 [HOST]"
        );
    }

    #[test]
    fn a_changed_state_exit_or_name_does_not() {
        for (from, to) in [
            (" succeeded", " failed   "),
            ("0     build", "3     build"),
            ("tea ", "tee "),
        ] {
            let changed = RUNS_LATER.replacen(from, to, 1);
            assert_ne!(
                tour().text(RUNS_RECORDED, true),
                later().text(&changed, true),
                "{to}"
            );
        }
    }

    #[test]
    fn ids_are_numbered_by_first_appearance_and_a_unit_name_carries_its_run() {
        let mut n = tour();
        let got = n.text(
            "01a2527f-5d79-7721-a09d-674f1e3f259b started scoped in hermes-cron-brief-01a2527f5d797721a09d674f1e3f259b.scope\n\
             last run      01a2527f-5d4a-716d-a501-376438eabd03 succeeded\n\
             tea 01a2527f-5d79-7721-a09d-674f1e3f259b (succeeded, claimed 2026-12-07 21:53:28 UTC)",
            true,
        );
        assert_eq!(
            got,
            [
                "[ID1] started scoped in hermes-cron-brief-[ID1].scope",
                "last run [ID2] succeeded",
                "tea [ID1] (succeeded, claimed [TIME])",
            ]
        );
        // The same text with the ids swapped is not the same.
        let mut other = tour();
        other.line("01a2527f-5d4a-716d-a501-376438eabd03", true);
        assert_eq!(
            other.line("01a2527f-5d79-7721-a09d-674f1e3f259b", true),
            "[ID2]"
        );
    }

    #[test]
    fn pieces_of_known_ids_are_those_ids() {
        let mut n = tour();
        n.line(
            "01a2527f-d0f2-7488-a273-da91c4b0184b 01a2527f-5d79-7721-a09d-674f1e3f259b",
            true,
        );
        assert_eq!(n.line("logs c4b0184b", true), "logs [ID1]");
        assert_eq!(n.line("runs 674f1e3f259b", true), "runs [ID2]");
        // The beginning both share names neither; a shorter piece is not one.
        assert_eq!(n.line("01a2527f c4b0184", true), "01a2527f c4b0184");
    }

    #[test]
    fn a_command_names_the_id_this_run_has_in_the_docs_ids_place() {
        let mut docs = tour();
        let mut actual = later();
        docs.line("01a2527f-d0f2-7488-a273-da91c4b0184b", true);
        actual.line("01a252a7-5df3-7451-a4be-7e5426d34f85", true);
        assert_eq!(
            rewrite_ids("hermes-cron logs c4b0184b", &docs, &actual),
            "hermes-cron logs 26d34f85"
        );
        assert_eq!(
            rewrite_ids(
                "hermes-cron show 01a2527f-d0f2-7488-a273-da91c4b0184b",
                &docs,
                &actual
            ),
            "hermes-cron show 01a252a7-5df3-7451-a4be-7e5426d34f85"
        );
        assert_eq!(
            rewrite_ids("hermes-cron logs brief --run 2", &docs, &actual),
            "hermes-cron logs brief --run 2"
        );
    }

    #[test]
    fn every_form_of_instant_is_one() {
        let mut n = tour();
        for (text, want) in [
            (
                "2026-12-07T21:53:26.392523Z  INFO gateway starting home=/tmp/hermes-tour pid=21592",
                "[TIME] INFO gateway starting home=[HOME] pid=[PID]",
            ),
            (
                "Mon 2026-12-14 09:00:00 CET  2026-12-14T08:00:00Z",
                "[TIME] [TIME]",
            ),
            (
                "Sun 2026-03-29 03:00:00 CEST  2026-03-29T01:00:00Z  moved by DST gap: 2026-03-29 02:30:00 does not exist",
                "[TIME] [TIME] moved by DST gap: [TIME] does not exist",
            ),
            ("Mon Dec  7 21:53:59 UTC 2026", "[TIME]"),
            (
                "next run      2026-12-08 08:00:00 UTC  (2026-12-08T08:00:00.000Z)",
                "next run [TIME] ([TIME])",
            ),
            (
                "at 2026-12-08 08:00:00 +03 or 2026-12-08T08:00:00+03:00",
                "at [TIME] or [TIME]",
            ),
        ] {
            assert_eq!(n.line(text, true), want, "{text}");
        }
    }

    #[test]
    fn durations_pids_and_counters_are_placeholders_other_numbers_are_not() {
        let mut n = tour();
        assert_eq!(
            n.line("gateway:    running (pid 21592, up 1m43s)", true),
            "gateway: running (pid [PID], up [DUR])"
        );
        assert_eq!(
            n.line(
                "heartbeat:  3s old, loop counter 63 (last moved 3s ago)",
                true
            ),
            "heartbeat: [DUR] old, loop counter [N] (last moved [DUR] ago)"
        );
        assert_eq!(
            n.line(
                "last tick:  ok at 2026-12-07 21:53:58 UTC (claimed 1, skipped 0, missed 0)",
                true
            ),
            "last tick: ok at [TIME] (claimed 1, skipped 0, missed 0)"
        );
        assert_eq!(
            n.line("every monday 9am  (0 8 * * *)  exit 3", true),
            "every monday 9am (0 8 * * *) exit 3"
        );
    }

    #[test]
    fn a_pinned_command_keeps_its_instants() {
        let line = "Sat 2026-03-28 02:30:00 CET  2026-03-28T01:30:00Z";
        assert_eq!(
            tour().line(line, false),
            "Sat 2026-03-28 02:30:00 CET 2026-03-28T01:30:00Z"
        );
        assert!(pins_its_instant(
            "hermes-cron next --schedule '30 2 * * *' --from 2026-03-28T00:00:00Z"
        ));
    }

    #[test]
    fn literals_stand_alone_only() {
        let mut n = tour();
        assert_eq!(
            n.line("home=/tmp/hermes-tour/cron vm vmx avm", true),
            "home=[HOME]/cron [HOST] vmx avm"
        );
    }

    #[test]
    fn the_diff_marks_what_only_one_side_has() {
        let s = |v: &[&str]| v.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        assert_eq!(
            diff(&s(&["a", "b", "c"]), &s(&["a", "x", "c", "d"])),
            "  a\n- b\n+ x\n  c\n+ d\n"
        );
    }

    #[test]
    fn blocks_steps_and_skip_markers_are_read() {
        let md = "text\n\n```console\n$ hermes-cron list\nID  NAME\n$ sleep 4\n```\n\n<!-- docs-test: skip (needs a second host) -->\n```console\n$ hermes-cron runs\n```\n";
        let blocks = console_blocks("x.md", md);
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].line, blocks[0].skip.as_deref()), (3, None));
        assert_eq!(blocks[0].steps[0].command, "hermes-cron list");
        assert_eq!(blocks[0].steps[0].expected, [(5, "ID  NAME".to_string())]);
        assert_eq!(
            (blocks[0].steps[1].line, blocks[0].steps[1].expected.len()),
            (6, 0)
        );
        assert_eq!(blocks[1].skip.as_deref(), Some("needs a second host"));
    }
}
