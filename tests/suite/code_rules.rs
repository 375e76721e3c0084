//! Rules of the code itself, checked over the source of the two crates
//! (src/, with both binaries under src/bin/, and core/src/):
//!
//! - no function of any visibility wider than private returns
//!   `Result<_, String>`: an error is a type that names what failed;
//! - no error prints its cause twice: a `#[error("...")]` message does not
//!   interpolate the field that is its `#[source]` (or `#[from]`, or is named
//!   `source`), which a chain (`text::Chain`, anyhow's `{:#}`) prints again.
//!
//! Each rule is tried first on a sample that breaks it, so a rule that could
//! no longer fail fails instead.

use std::path::{Path, PathBuf};

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["src", "core/src"] {
        walk(&root.join(dir), &mut out);
    }
    assert!(out.len() > 100, "too few source files found: {}", out.len());
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text with comments and string contents blanked out, so that what is
/// searched is code (a string keeps its quotes, a comment its newlines).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            out.push('"');
            i += 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('"', '\n'): its quote is not a string's.
            let end = (i + 1..b.len())
                .find(|&j| b[j] == b'\'' && j > i + 1)
                .unwrap_or(i);
            i = end + 1;
            out.push_str("' '");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Functions wider than private whose return type is `Result<_, String>`.
fn string_errors(text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub") {
        let tail = &rest[at..];
        rest = &rest[at + 3..];
        let Some(fn_at) = tail.find("fn ") else { break };
        // `pub fn`, `pub(crate) async fn`, ...: only qualifiers between.
        let between = &tail[3..fn_at];
        if !between
            .split_whitespace()
            .all(|w| w.starts_with('(') || ["async", "const", "unsafe"].contains(&w))
        {
            continue;
        }
        let sig_end = tail[fn_at..]
            .find(['{', ';'])
            .map_or(tail.len(), |e| fn_at + e);
        let sig = &tail[fn_at..sig_end];
        let Some(ret) = sig.rsplit_once("->").map(|(_, r)| r) else {
            continue;
        };
        let ret: String = ret
            .split(" where ")
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if ret.starts_with("Result<") && ret.ends_with(",String>") {
            found.push(sig.split('(').next().unwrap_or(sig).to_string());
        }
    }
    found
}

/// Error messages that interpolate their own source.
fn doubled_causes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("#[error(\"") {
        let msg_start = i + "#[error(\"".len();
        let Some(len) = text[msg_start..].find("\")]") else {
            continue;
        };
        let message = &text[msg_start..msg_start + len];
        // The fields of this variant or struct: up to the next attribute
        // naming a message, or the end of its braces or parentheses.
        let after = &text[msg_start + len..];
        let item_end = after[3..]
            .find("#[error(")
            .map_or(after.len(), |e| e + 3)
            .min(after.find("\n}").unwrap_or(after.len()));
        let item = &after[..item_end];
        let mut fields = Vec::new();
        if let Some(open) = item.find(['(', '{']) {
            let close = if item.as_bytes()[open] == b'(' {
                ')'
            } else {
                '}'
            };
            let inner = &item[open + 1..item.rfind(close).unwrap_or(item.len())];
            for (index, field) in inner.split(',').enumerate() {
                let is_source = field.contains("#[source]")
                    || field.contains("#[from]")
                    || field.trim_start().starts_with("source:")
                    || field.contains(" source:");
                let name = field
                    .rsplit(']')
                    .next()
                    .and_then(|f| f.split(':').next())
                    .map(|f| f.trim().trim_start_matches("pub ").to_string())
                    .unwrap_or_default();
                fields.push((index, name, is_source, close == ')'));
            }
        }
        for (index, name, is_source, tuple) in fields {
            if !is_source {
                continue;
            }
            let key = if tuple { index.to_string() } else { name };
            if message.contains(&format!("{{{key}}}")) || message.contains(&format!("{{{key}:")) {
                found.push(message.to_string());
            }
        }
    }
    found
}

#[test]
fn the_rules_catch_what_they_are_about() {
    let bad = "pub(crate) fn parse(text: &str)\n -> Result<u64, String> { todo!() }\n\
               pub fn fine(x: &str) -> Result<String, Error> { todo!() }\n\
               fn private() -> Result<(), String> { Ok(()) }";
    assert_eq!(string_errors(bad), ["fn parse"]);
    let bad = "enum E {\n    #[error(\"--schedule: {0}\")]\n    Schedule(#[from] ScheduleError),\n\
               #[error(\"cannot open {path}: {source}\")]\n    Open { path: String, source: io::Error },\n\
               #[error(\"fine {0}\")]\n    Fine(String),\n}";
    assert_eq!(doubled_causes(bad).len(), 2, "{:?}", doubled_causes(bad));
    let good = "enum E {\n    #[error(\"cannot open {path}\")]\n    Open {\n        path: String,\n        #[source]\n        source: io::Error,\n    },\n}";
    assert!(
        doubled_causes(good).is_empty(),
        "{:?}",
        doubled_causes(good)
    );
}

#[test]
fn no_function_returns_a_string_as_its_error() {
    let mut found = Vec::new();
    for path in sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        for f in string_errors(&text) {
            found.push(format!("{}: {f}", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "these return Result<_, String>; give them an error type:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_error_prints_its_cause_twice() {
    let mut found = Vec::new();
    for path in sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        for m in doubled_causes(&text) {
            found.push(format!("{}: #[error(\"{m}\")]", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "these messages print their source, which a chain prints again:\n{}",
        found.join("\n")
    );
}

/// A crate's source: where its root is and how other files name it.
struct Krate {
    /// Directory of `lib.rs`/`main.rs`.
    root: PathBuf,
    /// The root file (`lib.rs` or `main.rs`).
    root_file: PathBuf,
    /// Names this crate's files use for crates (`crate`, `hermes_cron_core`).
    names: &'static [&'static str],
}

/// The file that holds module `path` (segments below the crate root), or
/// None when no file does.
fn module_file(k: &Krate, path: &[String]) -> Option<PathBuf> {
    if path.is_empty() {
        return Some(k.root_file.clone());
    }
    let dir = path.iter().fold(k.root.clone(), |d, s| d.join(s));
    let file = dir.with_extension("rs");
    if file.is_file() {
        return Some(file);
    }
    let modrs = dir.join("mod.rs");
    modrs.is_file().then_some(modrs)
}

/// The module segments of `file` below its crate's root.
fn module_of(k: &Krate, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(&k.root).unwrap();
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if segs
        .last()
        .is_some_and(|s| s == "mod" || s == "lib" || s == "main")
    {
        segs.pop();
    }
    segs
}

/// Every path a file names: `use` trees expanded, and qualified paths in
/// code (`crate::x::y`, `super::x`, `hermes_cron_core::x`).
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if is_ident(bytes[i]) && (i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':') {
            // A path starting here: idents joined by `::`, with `{...}` groups.
            let (tree, end) = path_tree(code, i);
            if tree.iter().any(|p| p.len() > 1) {
                out.extend(tree);
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The paths of the tree starting at `start` (`a::b::{c, d::e}` gives
/// `a::b::c` and `a::b::d::e`), and where it ends.
fn path_tree(code: &str, start: usize) -> (Vec<Vec<String>>, usize) {
    let b = code.as_bytes();
    let mut prefix = Vec::new();
    let mut i = start;
    loop {
        let s = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if s == i {
            break;
        }
        prefix.push(code[s..i].to_string());
        let rest = &code[i..];
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("::") {
            i = code.len() - after.trim_start().len();
            if code[i..].starts_with('{') {
                let mut depth = 0;
                let mut j = i;
                for (k, c) in code[i..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                j = i + k;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let mut out = Vec::new();
                let inner = &code[i + 1..j];
                let mut depth = 0;
                let mut part_start = 0;
                for (k, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            push_part(&inner[part_start..k], &prefix, &mut out);
                            part_start = k + 1;
                        }
                        _ => {}
                    }
                }
                push_part(&inner[part_start..], &prefix, &mut out);
                return (out, j + 1);
            }
            if code[i..].starts_with('*') {
                return (vec![prefix], i + 1);
            }
        } else {
            break;
        }
    }
    (vec![prefix], i)
}

fn push_part(part: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let part = part.trim();
    if part.is_empty() || part == "self" {
        out.push(prefix.to_vec());
        return;
    }
    let (path, alias) = match part.split_once(" as ") {
        Some((p, a)) => (p, Some(a.trim())),
        None => (part, None),
    };
    let (tree, _) = path_tree(path, 0);
    for p in tree {
        let mut full = prefix.to_vec();
        full.extend(p.into_iter().filter(|s| s != "self"));
        if let Some(a) = alias {
            full.push(format!("as {a}"));
        }
        out.push(full);
    }
}

/// The re-exports of a `mod.rs`: (the name it gives, the path it names).
fn reexports(code: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for statement in code.split(';') {
        let s = statement.trim_start();
        let Some(rest) = ["pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| s.strip_prefix(p))
        else {
            continue;
        };
        let mut paths = Vec::new();
        push_part(rest, &[], &mut paths);
        for mut p in paths {
            let name = match p.last().and_then(|l| l.strip_prefix("as ")) {
                Some(alias) => {
                    let alias = alias.to_string();
                    p.pop();
                    alias
                }
                None => p.last().cloned().unwrap_or_default(),
            };
            out.push((name, p));
        }
    }
    out
}

/// The text without its `#[cfg(test)]` items (the attribute and the item
/// after it, to its closing brace or semicolon).
fn without_tests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The graph of which file uses which, over the three crates (test files
/// and `#[cfg(test)]` items left out), each edge with the name it follows.
fn file_graph() -> std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let krates = [
        Krate {
            root: root.join("core/src"),
            root_file: root.join("core/src/lib.rs"),
            names: &["hermes_cron_core"],
        },
        Krate {
            root: root.join("src"),
            root_file: root.join("src/lib.rs"),
            names: &["hermes_cron"],
        },
    ];
    let mut graph = std::collections::BTreeMap::new();
    for (ki, k) in krates.iter().enumerate() {
        let mut files = Vec::new();
        walk(&k.root, &mut files);
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with("tests.rs") || name == "test_backends.rs" || name == "fixture.rs" {
                continue;
            }
            if k.root.join("bin").exists() && file.starts_with(k.root.join("bin")) {
                continue;
            }
            let text = without_tests(&std::fs::read_to_string(&file).unwrap());
            let here = module_of(k, &file);
            let mut uses = std::collections::BTreeSet::new();
            for path in named_paths(&code_only(&text)) {
                if let Some(target) = resolve(&krates, ki, &here, &path)
                    && target != file
                {
                    uses.insert(target);
                }
            }
            graph.insert(file, uses);
        }
    }
    graph
}

/// The file `path` (as named in a file of crate `ki` in module `here`)
/// leads to, through re-exports of a `mod.rs`.
fn resolve(krates: &[Krate], ki: usize, here: &[String], path: &[String]) -> Option<PathBuf> {
    let (k, segs): (usize, Vec<String>) = match path[0].as_str() {
        "crate" => (ki, path[1..].to_vec()),
        "self" => {
            let mut s = here.to_vec();
            s.extend_from_slice(&path[1..]);
            (ki, s)
        }
        "super" => {
            let mut base = here.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend_from_slice(rest);
            (ki, base)
        }
        other => match krates.iter().position(|k| k.names.contains(&other)) {
            Some(k) => (k, path[1..].to_vec()),
            // A child module of this one (`use table::Zone` in a `mod.rs`).
            None if module_file(&krates[ki], &[here, &path[..1]].concat()).is_some() => {
                (ki, [here, path].concat())
            }
            None => return None,
        },
    };
    // The main crate's `pub use hermes_cron_core::{...}` names core modules.
    if k == 1
        && let Some(first) = segs.first()
        && !krates[1].root.join(first).exists()
        && !krates[1].root.join(format!("{first}.rs")).exists()
        && krates[0].root.join(format!("{first}.rs")).exists() | krates[0].root.join(first).exists()
    {
        return resolve(krates, 0, &[], &[vec!["crate".to_string()], segs].concat());
    }
    // The longest prefix that is a module file.
    let krate = &krates[k];
    let mut n = segs.len();
    while n > 0 && module_file(krate, &segs[..n]).is_none() {
        n -= 1;
    }
    let file = module_file(krate, &segs[..n])?;
    // Through a `mod.rs`'s re-export to the file that defines the item.
    if n < segs.len()
        && file
            .file_name()
            .is_some_and(|f| f == "mod.rs" || f == "lib.rs")
    {
        let text = std::fs::read_to_string(&file).ok()?;
        let item = &segs[n];
        if let Some((_, target)) = reexports(&code_only(&text))
            .into_iter()
            .find(|(name, p)| name == item && p.len() > 1)
        {
            return resolve(krates, k, &segs[..n], &target).or(Some(file));
        }
    }
    Some(file)
}

/// The files of each cycle (a strongly connected set of more than one file).
fn cycles(
    graph: &std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>>,
) -> Vec<Vec<PathBuf>> {
    // Which files reach which (the graphs are small: a few hundred files).
    let nodes: Vec<&PathBuf> = graph.keys().collect();
    let index: std::collections::HashMap<&PathBuf, usize> =
        nodes.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let reach = |from: usize| {
        let mut seen = vec![false; nodes.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for next in &graph[nodes[n]] {
                if let Some(&j) = index.get(next)
                    && !seen[j]
                {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..nodes.len()).map(reach).collect();
    let mut done = vec![false; nodes.len()];
    let mut out = Vec::new();
    for i in 0..nodes.len() {
        if done[i] {
            continue;
        }
        let set: Vec<usize> = (0..nodes.len())
            .filter(|&j| j != i && reaches[i][j] && reaches[j][i])
            .collect();
        if !set.is_empty() {
            let mut files: Vec<PathBuf> = set.iter().map(|&j| nodes[j].clone()).collect();
            files.push(nodes[i].clone());
            files.sort();
            for &j in &set {
                done[j] = true;
            }
            out.push(files);
        }
        done[i] = true;
    }
    out
}

#[test]
fn no_two_files_import_each_other_even_through_others() {
    let graph = file_graph();
    assert!(graph.len() > 100, "too few files: {}", graph.len());
    let sample = graph
        .iter()
        .find(|(f, _)| f.ends_with("src/daemon/event_loop.rs"))
        .expect("the event loop's file");
    assert!(
        sample
            .1
            .iter()
            .any(|f| f.ends_with("src/daemon/staging.rs")),
        "the graph sees the loop use the stager: {:?}",
        sample.1
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found: Vec<String> = cycles(&graph)
        .into_iter()
        .map(|c| {
            c.iter()
                .map(|f| f.strip_prefix(root).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" -> ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that import each other, directly or through others:\n{}",
        found.join("\n")
    );
}

/// The layers of the main crate's modules, lowest first (ARCHITECTURE.md,
/// "Module map"): a module uses only modules of lower layers.
const LAYERS: &[&[&str]] = &[
    &[
        "clock",
        "crash",
        "fsutil",
        "home",
        "knobs",
        "logging",
        "process",
        "small_file",
    ],
    &[
        "config",
        "host_zone",
        "legacy_names",
        "state_files",
        "systemd",
    ],
    &["db"],
    &["store"],
    &["cluster", "ledger"],
    &["provider", "reconcile", "worker"],
    &["dispatch", "tick"],
    &["alerts", "ops"],
    &["daemon"],
];

#[test]
fn the_modules_of_the_main_crate_use_only_lower_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let top = |f: &Path| -> Option<String> {
        let rel = f.strip_prefix(&root).ok()?;
        let first = rel.iter().next()?.to_string_lossy();
        Some(first.trim_end_matches(".rs").to_string()).filter(|m| m != "lib" && m != "bin")
    };
    let layer = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    let mut found = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (file, uses) in file_graph() {
        let Some(from) = top(&file) else { continue };
        let Some(lf) = layer(&from) else {
            found.push(format!("src/{from} is in no layer of LAYERS"));
            continue;
        };
        for to in uses.iter().filter_map(|u| top(u)).filter(|t| *t != from) {
            match layer(&to) {
                Some(lt) if lt < lf => {}
                _ if seen.insert((from.clone(), to.clone())) => found.push(format!(
                    "{} uses {to} (e.g. {}), which is not below it",
                    from,
                    file.strip_prefix(&root).unwrap().display()
                )),
                _ => {}
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
