//! The configuration reference's table of keys (docs/configuration.md,
//! between `<!-- keys:begin -->` and `<!-- keys:end -->`) is generated from
//! the key table, `hermes_cron::config::key_table()`, the one place a key,
//! its default and what it accepts are spelled (`config get` and `set` print
//! from it too). The test renders the table and fails when the docs differ;
//! with `HERMES_CRON_BLESS=1` it writes the rendered table there instead.

use crate::docs_examples::diff;
use hermes_cron::config::key_table;
use std::path::Path;

const DOC: &str = "docs/configuration.md";
const BEGIN: &str = "<!-- keys:begin -->\n";
const END: &str = "<!-- keys:end -->";

/// The table, one row per key in the key table's order.
fn rendered() -> String {
    let mut out = String::from("| key | default | accepted | what it does |\n|---|---|---|---|\n");
    for key in key_table() {
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} |\n",
            cell(key.name),
            cell(&key.default),
            cell(&key.accepted),
            cell(key.doc)
        ));
    }
    out
}

/// Text made safe for a table cell: a `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[test]
fn the_configuration_reference_lists_every_key_as_the_key_table_has_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC);
    let text = std::fs::read_to_string(&path).expect("read docs/configuration.md");
    let start = text
        .find(BEGIN)
        .unwrap_or_else(|| panic!("{DOC}: no {BEGIN:?} marker"))
        + BEGIN.len();
    let end = start
        + text[start..]
            .find(END)
            .unwrap_or_else(|| panic!("{DOC}: no {END:?} marker after {BEGIN:?}"));
    let want = rendered();
    let have = &text[start..end];
    if have == want {
        return;
    }
    if std::env::var("HERMES_CRON_BLESS").as_deref() == Ok("1") {
        let blessed = format!("{}{want}{}", &text[..start], &text[end..]);
        std::fs::write(&path, blessed).expect("write docs/configuration.md");
        return;
    }
    let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    let first = text[..start].lines().count() + 1;
    panic!(
        "{DOC}:{first}: the table of keys is not the one key_table() gives (`-` the docs, `+` \
         the key table); run this test with HERMES_CRON_BLESS=1 to write it:\n{}",
        diff(&lines(have), &lines(&want))
    );
}

#[test]
fn a_pipe_in_a_cell_does_not_end_it() {
    assert_eq!(cell("a|b"), "a\\|b");
    let table = rendered();
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), key_table().len() + 2);
    // Every row has its four cells: as many unescaped bars as the header.
    let bars = |row: &str| row.replace("\\|", "").matches('|').count();
    assert!(rows.iter().all(|row| bars(row) == 5), "{table}");
}
