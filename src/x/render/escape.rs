//! Minimal escaping of user-controlled text for Markdown output.
//!
//! Rules (chosen so ordinary post text renders unchanged):
//! - body text: leading whitespace of each line is dropped (it would start
//!   a code block); a line that starts with a block marker (`#`, `>`, `-`,
//!   `+`, `*`, `=`, `_`, `|`, `` ` ``, `~`, `[`, or digits followed by `.`
//!   or `)`) gets a backslash before that marker; `<` becomes `&lt;`
//!   everywhere, so no raw HTML or autolink can be injected;
//! - inline text (names, titles, reasons, bios): whitespace runs collapse to
//!   one space, and `\ ` * _ [ ] < > # | ~` are backslash-escaped;
//! - link targets: space, `(`, `)`, `<`, `>`, `"` and controls are
//!   percent-encoded;
//! - YAML front matter values are written plain only when safe, else as a
//!   double-quoted (JSON) string.

/// Escapes one line of body text (see the module rules).
pub fn escape_line(line: &str) -> String {
    // Controls become spaces first, so a NUL before `#` cannot leave an
    // indented (still block-starting) marker behind.
    let cleaned: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let t = cleaned.trim_start_matches(char::is_whitespace);
    let t = t.trim_end();
    let mut out = String::with_capacity(t.len() + 2);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if matches!(
        t.chars().next(),
        Some('#' | '>' | '-' | '+' | '*' | '=' | '_' | '|' | '`' | '~' | '[')
    ) {
        out.push('\\');
    } else if digits > 0 && digits <= 9 && matches!(t.as_bytes().get(digits), Some(b'.' | b')')) {
        out.push_str(&t[..digits]);
        out.push('\\');
        push_body(&mut out, &t[digits..]);
        return out;
    }
    push_body(&mut out, t);
    out
}

fn push_body(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            c if c.is_control() && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
}

/// Escapes multi-line body text into lines (trimmed as a whole first).
pub fn escape_block(text: &str) -> Vec<String> {
    text.trim().lines().map(escape_line).collect()
}

/// Escapes text for inline use (headings, bold names, list items).
pub fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        for c in word.chars() {
            if matches!(
                c,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~'
            ) {
                out.push('\\');
            }
            if !c.is_control() {
                out.push(c);
            }
        }
    }
    out
}

/// A handle printed raw when it is a plain X handle, escaped otherwise.
pub fn escape_handle(h: &str) -> String {
    if crate::x::url::is_handle(h) {
        h.to_string()
    } else {
        escape_inline(h)
    }
}

/// Makes a URL safe as a Markdown link destination.
pub fn escape_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.trim().chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '"' => out.push_str("%22"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A YAML scalar: plain when it cannot be misread, else a JSON string.
pub fn yaml_value(v: &str) -> String {
    let first_ok = v.chars().next().is_some_and(|c| c.is_alphanumeric());
    let bad_char = v.chars().any(|c| {
        c.is_control()
            || matches!(
                c,
                '#' | '"'
                    | '\''
                    | '{'
                    | '}'
                    | '['
                    | ']'
                    | ','
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '%'
                    | '`'
                    | '\\'
            )
    });
    let plain =
        first_ok && !bad_char && !v.contains(": ") && !v.ends_with(':') && !v.ends_with(' ');
    if plain {
        v.to_string()
    } else {
        serde_json::to_string(v).unwrap_or_else(|_| "\"\"".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_starts() {
        assert_eq!(escape_line("# not a heading"), "\\# not a heading");
        assert_eq!(escape_line("---"), "\\---");
        assert_eq!(escape_line("> fake quote"), "\\> fake quote");
        assert_eq!(escape_line("    code?"), "code?");
        assert_eq!(escape_line("2026. was a year"), "2026\\. was a year");
        assert_eq!(escape_line("1) first"), "1\\) first");
        assert_eq!(escape_line("[x]: https://evil"), "\\[x]: https://evil");
        assert_eq!(
            escape_line("a <script>alert(1)</script>"),
            "a &lt;script>alert(1)&lt;/script>"
        );
        assert_eq!(
            escape_line("@demo_author Agree, except for CI files. #ci 3."),
            "@demo_author Agree, except for CI files. #ci 3."
        );
        assert_eq!(escape_line("Context 🧪"), "Context 🧪");
        assert_eq!(escape_line("\0# not a heading"), "\\# not a heading");
        assert_eq!(escape_line("\u{2003}- item"), "\\- item");
    }

    #[test]
    fn block_keeps_paragraphs() {
        assert_eq!(escape_block("  a\n\n---\nb  "), vec!["a", "", "\\---", "b"]);
    }

    #[test]
    fn inline() {
        assert_eq!(
            escape_inline("Notes on *parsers* [draft]"),
            "Notes on \\*parsers\\* \\[draft\\]"
        );
        assert_eq!(
            escape_inline("Evil\n## Name <b>"),
            "Evil \\#\\# Name \\<b\\>"
        );
        assert_eq!(escape_handle("demo_author"), "demo_author");
        assert_eq!(escape_handle("bad*handle"), "bad\\*handle");
    }

    #[test]
    fn urls_and_yaml() {
        assert_eq!(
            escape_url("https://a.b/x (1)<"),
            "https://a.b/x%20%281%29%3C"
        );
        assert_eq!(yaml_value("Demo Author"), "Demo Author");
        assert_eq!(
            yaml_value("Mon Aug 10 12:41:03 +0000 2026"),
            "Mon Aug 10 12:41:03 +0000 2026"
        );
        assert_eq!(
            yaml_value("https://x.com/a/status/1"),
            "https://x.com/a/status/1"
        );
        assert_eq!(yaml_value("a: b\n---"), "\"a: b\\n---\"");
        assert_eq!(yaml_value("@x"), "\"@x\"");
    }
}
