//! Terminal-safe text: what a server sends must not drive the terminal
//! `xmd client` prints to (ESC sequences set the window title, clear the
//! screen, write the clipboard through OSC 52; a C1 CSI does the same on
//! terminals that honour C1; CR and BS overwrite what was printed).
//!
//! [`escape_controls`] writes every C0 control except `\n` and `\t`, DEL
//! and every C1 control (U+0080–U+009F) as `\u{XX}` (lower-case hex, as
//! Rust's `escape_debug` does), and a backslash that starts `u{` as
//! `\u{5c}`, so the output is reversible: reading `\u{HEX}` back as the
//! code point and every other character as itself gives the input. Other
//! backslashes stay as they are (Markdown escapes read as before).

use std::borrow::Cow;
use std::fmt::Write;

/// True for a code point [`escape_controls`] writes escaped.
pub fn is_unsafe_control(c: char) -> bool {
    matches!(c, '\0'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// `s` with its controls escaped (see the module documentation).
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    let needs =
        |i: usize, c: char| is_unsafe_control(c) || (c == '\\' && s[i + 1..].starts_with("u{"));
    if !s.char_indices().any(|(i, c)| needs(i, c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for (i, c) in s.char_indices() {
        if needs(i, c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Pretty JSON with DEL and the C1 controls written as `\u00XX` (serde_json
/// escapes C0 only). They can only sit inside strings, where the escape
/// means the same character: the JSON value is unchanged.
pub fn json_without_c1(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            escape_controls("plain\n\ttext \\* ok"),
            "plain\n\ttext \\* ok"
        );
        assert_eq!(
            escape_controls("\u{1b}]0;title\u{7}\r\u{9b}2J"),
            "\\u{1b}]0;title\\u{7}\\u{d}\\u{9b}2J"
        );
        assert_eq!(escape_controls("a\\u{1b}"), "a\\u{5c}u{1b}");
        assert_eq!(
            escape_controls("\u{7f}\u{80}\u{a0}"),
            "\\u{7f}\\u{80}\u{a0}"
        );
        let j = json_without_c1("{\"a\": \"x\u{9b}y\u{7f}\"}");
        assert_eq!(j, "{\"a\": \"x\\u009by\\u007f\"}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&j).unwrap()["a"],
            "x\u{9b}y\u{7f}"
        );
    }
}
