//! Text for terminals: names made safe for one line of a table or a log.

/// `text` on one line: control characters shown escaped (`\n`), cut to
/// `max` characters with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let clean: String = text
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if clean.chars().count() > max {
        let cut: String = clean.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_cuts() {
        assert_eq!(one_line("a\nb", 10), "a\\nb");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
