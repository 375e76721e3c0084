//! `completions` and `manpages`: the shell completions and the manual pages,
//! generated from the command line's own definition (and, for
//! hermes-cron-config(5), from the config's key table), so they cannot drift.

use super::args::Cli;
use anyhow::Context;
use clap::CommandFactory;
use hermes_cron::config::{KeyInfo, key_table};
use std::path::Path;

/// Print `shell`'s completion script on stdout.
pub(super) fn completions(shell: clap_complete::Shell) -> anyhow::Result<i32> {
    let mut cmd = Cli::command();
    // Into memory first: clap_complete panics on a failed write, and a
    // closed pipe (`| head`) must end the command quietly (`print!` does).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hermes-cron", &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == clap_complete::Shell::Bash {
        // clap_complete's bash script spells the state of a subcommand of a
        // hyphenated binary two ways (`hermes__cron__subcmd__add` where it
        // walks the words, `hermes__subcmd__cron__subcmd__add` in the arms
        // that complete it), so no subcommand's flags would ever complete
        // (clap-rs/clap#6421). One spelling, the walk's.
        script = script.replace("hermes__subcmd__cron", "hermes__cron");
    }
    print!("{script}");
    Ok(hermes_cron::exit::OK)
}

/// Write hermes-cron(1), a page per command and hermes-cron-config(5) into
/// `dir`; prints each file written.
pub(super) fn manpages(dir: &Path, json: bool) -> anyhow::Result<i32> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let written = |e: std::io::Error| anyhow::anyhow!("cannot write in {}: {e}", dir.display());
    clap_mangen::generate_to(Cli::command(), dir).map_err(written)?;
    let config = dir.join("hermes-cron-config.5");
    std::fs::write(
        &config,
        config_page(&key_table(), env!("CARGO_PKG_VERSION")),
    )
    .map_err(written)?;
    let mut pages: Vec<String> = std::fs::read_dir(dir)
        .map_err(written)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| is_our_page(p))
        .map(|p| p.display().to_string())
        .collect();
    pages.sort();
    if json {
        println!("{}", serde_json::json!({ "written": pages }));
    } else {
        for page in pages {
            println!("{page}");
        }
    }
    Ok(hermes_cron::exit::OK)
}

fn is_our_page(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("hermes-cron") && (name.ends_with(".1") || name.ends_with(".5"))
}

/// hermes-cron-config(5): every key of config.yaml hermes-cron reads, its
/// default and what it accepts, in roff.
fn config_page(keys: &[KeyInfo], version: &str) -> String {
    let mut page = format!(
        ".TH HERMES-CRON-CONFIG 5 \"\" \"hermes-cron {}\" \"File Formats\"\n",
        roff(version)
    );
    page.push_str(
        ".SH NAME\nhermes\\-cron\\-config \\- the keys of config.yaml that hermes\\-cron reads\n",
    );
    page.push_str(&format!(
        ".SH DESCRIPTION\n{}\n.PP\n{}\n.SH KEYS\n",
        roff(
            "$HERMES_HOME/config.yaml (default ~/.hermes/config.yaml) is shared with the Hermes Agent, \
             which owns most of its keys; hermes-cron reads only those below. Keys may be nested \
             (gateway: {loop_watchdog_max_strikes: 5}) or dotted at the top level."
        ),
        roff(
            "Read and change them with hermes-cron config get|set|unset|show: set validates before \
             writing and changes only the lines of the key it edits. A value out of range falls back \
             to its default with one warning naming the key. The gateway reads the file once, at start."
        )
    ));
    for key in keys {
        page.push_str(&format!(
            ".TP\n.B {}\n{}\n.br\nDefault: {}.\n.br\nAccepts: {}.\n",
            roff(key.name),
            roff(key.doc),
            roff(&key.default),
            roff(&key.accepted),
        ));
    }
    page.push_str(".SH SEE ALSO\nhermes\\-cron(1), hermes\\-cron\\-config(1)\n");
    page
}

/// `text` as roff reads it literally: backslashes and dashes escaped, a
/// line never starting a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    escaped
        .lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_page_has_every_key_escaped() {
        let page = config_page(&key_table(), "1.2.3");
        for key in key_table() {
            assert!(
                page.contains(&format!(".B {}\n", roff(key.name))),
                "{}",
                key.name
            );
        }
        assert!(page.starts_with(".TH HERMES-CRON-CONFIG 5"));
        assert!(page.lines().all(|l| !l.starts_with('\'')));
    }

    #[test]
    fn roff_text_never_starts_a_request() {
        assert_eq!(roff(".hidden\n'quoted"), "\\&.hidden\n\\&'quoted");
        assert_eq!(roff("a-b \\n"), "a\\-b \\en");
    }
}
