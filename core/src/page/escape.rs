//! Text into HTML and SVG: every character that could end a text node or an
//! attribute is escaped, so a job named `<script>` is shown, never run.

/// `text` safe inside an element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push(' '),
            // Shown, not obeyed: a right-to-left override would reverse
            // what follows it on the page.
            c if crate::text::is_invisible_format(c) => {
                out.extend(c.escape_unicode());
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_characters_are_shown_not_obeyed() {
        assert_eq!(escape("a\u{202e}gpj.exe"), "a\\u{202e}gpj.exe");
        assert_eq!(escape("x\u{200b}y"), "x\\u{200b}y");
    }

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape("<script>alert('x' & \"y\")</script>"),
            "&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;"
        );
        assert_eq!(escape("a\u{0}b"), "a b");
    }
}
