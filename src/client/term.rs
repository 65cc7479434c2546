//! Terminal-safe text: what a server sends must not drive the terminal
//! `xmd client` prints to (ESC sequences set the window title, clear the
//! screen, write the clipboard through OSC 52; a C1 CSI does the same on
//! terminals that honour C1; CR and BS overwrite what was printed).
//!
//! Invisible format characters are the other half of the class: the bidi
//! controls reorder what is shown so that the terminal shows text other
//! than what was sent (Trojan Source, CVE-2021-42574), and the zero-width
//! ones hide text in plain sight.
//!
//! [`escape_controls`] writes every [unsafe character](is_unsafe_control)
//! as `\u{HEX}` (lower-case hex, as Rust's `escape_debug` does), and a
//! backslash that starts `u{` as `\u{5c}`, so the output is reversible:
//! reading `\u{HEX}` back as the code point and every other character as
//! itself gives the input. Other backslashes stay as they are (Markdown
//! escapes read as before).

use std::borrow::Cow;
use std::fmt::Write;

/// True for a code point [`escape_controls`] writes escaped:
/// - every C0 control but `\n` and `\t`, DEL and every C1 control
///   (U+0080–U+009F): general category Cc;
/// - the bidi controls (Unicode's `Bidi_Control` property, UAX #9): U+061C
///   ARABIC LETTER MARK, U+200E/U+200F LRM/RLM, U+202A–U+202E (embeddings,
///   overrides, PDF), U+2066–U+2069 (isolates, PDI), and the deprecated
///   format controls U+206A–U+206F;
/// - the invisible ones that hide text: U+200B ZERO WIDTH SPACE, U+2060–
///   U+2064 (word joiner, invisible operators), U+FEFF (BOM / ZWNBSP),
///   U+FFF9–U+FFFB (interlinear annotation), U+180E MONGOLIAN VOWEL
///   SEPARATOR and the tag characters U+E0000–U+E007F (invisible ASCII).
///
/// Left as they are: U+200C/U+200D (ZWNJ/ZWJ, which join emoji and shape
/// Indic and Arabic script), U+00AD SOFT HYPHEN, and variation selectors:
/// they change how visible text looks, never which text is shown. The
/// three subdivision flags (England, Scotland, Wales) are written with tag
/// characters, so `--text` shows them as a black flag and their escapes.
pub fn is_unsafe_control(c: char) -> bool {
    matches!(
        c,
        '\0'..='\u{8}'
            | '\u{b}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e007f}'
    )
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

/// Pretty JSON with DEL, the C1 controls and every other
/// [unsafe character](is_unsafe_control) serde_json writes raw (it escapes
/// C0 only) written as `\uXXXX` (a UTF-16 surrogate pair past U+FFFF, as
/// RFC 8259 §7 says). They can only sit inside strings, where the escape
/// means the same character: the JSON value is unchanged.
pub fn json_without_c1(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_unsafe_control) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    let mut units = [0u16; 2];
    for c in json.chars() {
        if is_unsafe_control(c) {
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{:04x}", u);
            }
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
        // Trojan Source: the override and isolates, the BOM, a tag.
        assert_eq!(
            escape_controls("a\u{202e}b\u{2066}c\u{2069}\u{feff}\u{e0041}\u{200d}"),
            "a\\u{202e}b\\u{2066}c\\u{2069}\\u{feff}\\u{e0041}\u{200d}"
        );
        let j = json_without_c1("\"\u{202e}\u{e0041}\"");
        assert_eq!(j, "\"\\u202e\\udb40\\udc41\"");
        assert_eq!(
            serde_json::from_str::<String>(&j).unwrap(),
            "\u{202e}\u{e0041}"
        );
    }
}
