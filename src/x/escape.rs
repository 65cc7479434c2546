//! Escaping of user-controlled text for Markdown and YAML output.
//!
//! The class it closes: text written by any X user (post text, names, bios,
//! locations, poll options, card titles, alt text, note text) must never
//! become Markdown structure, while a renderer still shows exactly the
//! characters the author typed. Rules (proved by `tests/x_render_props.rs`
//! with a CommonMark parser, tables and strikethrough enabled):
//! - every character that can open or close an inline construct is
//!   backslash-escaped, a CommonMark escape that renders as the character
//!   itself: `\` `` ` `` `*` `[` `]` `<` `~` `|` always (code span,
//!   emphasis, link, image, raw HTML, autolink, strikethrough, table cell)
//!   and `^` (superscript, footnote: common extensions);
//!   `_` unless both neighbours are alphanumeric (an intraword `_` can
//!   neither open nor close emphasis, so `snake_case` stays as typed); `&`
//!   when it starts something shaped like an entity (`&amp;` is shown as
//!   typed, not as `&`);
//! - the first character of every fragment is made unable to start a block:
//!   `>` `-` `+` `=` `:` (a definition list, an extension) are escaped, `#` when its run is followed by
//!   whitespace or the end (`#tag` stays as typed), and `1.` / `1)` get their `.` / `)`
//!   escaped; leading whitespace (an indented code block) is dropped;
//! - control characters become spaces; inline fragments collapse every
//!   whitespace run to one space (a name never spans lines), body text keeps
//!   its lines (a blank line is the author's paragraph break);
//! - bidirectional embeddings, overrides and isolates the fragment opens
//!   (U+202A–U+202E, U+2066–U+2069) are closed at its end, so they reorder
//!   only the author's own text, never what xmd writes after it (a name
//!   ending in U+202E showed `(@handle)` reversed); the author's characters
//!   stay as typed. In link destinations they are percent-encoded, in YAML
//!   escaped.
//!
//! Links are xmd's own structure, and the `http(s)` URLs in running user
//! text: [`link_url`] admits `http(s)` destinations and percent-encodes
//! what could end one; any other URL is shown as escaped text. The
//! running-text escapers ([`escape_line`], [`escape_block`],
//! [`escape_inline_text`], [`push_text`]: post text, bios, notes, card
//! descriptions, poll options, an article's preview; not yet the styled
//! blocks of an article body) write each `http(s)`
//! URL as an [`autolink`] and each @mention by [`at_handle`], found as
//! [`super::linkify`] says, so neither carries a backslash; the others
//! (names, headings, link labels and alt text, where a link would break
//! the structure around it) escape them as any text. YAML front matter values are always double-quoted
//! with every line-break-like character escaped ([`yaml_string`]).

/// True for a character around which an `_` is intraword for CommonMark
/// (it can neither open nor close emphasis): a letter or digit that is
/// not Unicode punctuation or a symbol. Rust's `is_alphanumeric` also
/// admits the enclosed letters (`Ⓐ`, `🄰`: category So, yet Alphabetic),
/// which CommonMark reads as punctuation: `Ⓐ_a_Ⓐ` would be emphasis.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() && !ENCLOSED_ALPHANUMERICS.iter().any(|r| r.contains(&c))
}

/// The blocks of symbols (So) that Rust counts as alphanumeric: Enclosed
/// Alphanumerics and its Supplement (checked exhaustively against a
/// CommonMark parser by `tests/x_escape_unicode.rs`).
const ENCLOSED_ALPHANUMERICS: [std::ops::RangeInclusive<char>; 2] =
    ['\u{2460}'..='\u{24FF}', '\u{1F100}'..='\u{1F1FF}'];

/// Whether the `&` whose following bytes are `rest` starts an
/// entity-shaped run (`&name;`, `&#123;`, `&#x1F;`): ASCII alphanumerics
/// or `#` up to a `;`.
fn entity_like(rest: &[u8]) -> bool {
    let mut body = 0;
    for &c in rest {
        match c {
            b';' => return body > 0,
            c if c.is_ascii_alphanumeric() || c == b'#' => body += 1,
            _ => return false,
        }
    }
    false
}

/// Appends `s` to `out` escaped (see the module rules). `s` has no control
/// characters and no leading whitespace. Every character the rules may
/// escape is ASCII, so the text is walked byte by byte and copied in runs
/// between escapes. URLs and mentions are escaped as any other text: this
/// is the escaping of names, headings and link labels.
pub fn push_escaped(out: &mut String, s: &str) {
    push_fragment(out, s, false);
}

/// [`push_escaped`] for running text (a post's text, a bio, a note, a card
/// description, a poll option): each `http(s)` URL
/// and each @mention found as [`super::linkify`] finds them is written
/// exact, the URL as an [`autolink`], the mention by [`at_handle`], never
/// with a backslash inside; everything else is escaped as by
/// [`push_escaped`].
pub fn push_text(out: &mut String, s: &str) {
    push_fragment(out, s, true);
}

fn push_fragment(out: &mut String, s: &str, links: bool) {
    let b = s.as_bytes();
    // Block starts: a marker as the first character, or digits then `.`/`)`.
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let list_mark = digits > 0 && matches!(b.get(digits), Some(b'.' | b')'));
    // An ATX heading needs its `#` run followed by whitespace or the end;
    // a leading hashtag cannot start one and stays as typed.
    let hashes = b.iter().take_while(|c| **c == b'#').count();
    let heading = hashes > 0 && s[hashes..].chars().next().is_none_or(char::is_whitespace);
    // A URL can start at `h`/`H` only, a mention at `@`.
    let url_at = |i: usize| {
        links && matches!(b.get(i), Some(b'h' | b'H')) && super::linkify::url_end(s, i).is_some()
    };
    out.reserve(s.len() + 4);
    let start = out.len();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if links && matches!(c, b'h' | b'H' | b'@') {
            let end = if c == b'@' {
                super::linkify::mention_end(s, i)
            } else {
                super::linkify::url_end(s, i)
            };
            if let Some(end) = end {
                out.push_str(&s[copied..i]);
                if c == b'@' {
                    out.push_str(&at_handle(&s[i + 1..end], escape_inline));
                } else {
                    out.push_str(&autolink(&s[i..end]));
                }
                i = end;
                copied = end;
                continue;
            }
        }
        let escape = match c {
            b'\\' | b'`' | b'*' | b'[' | b']' | b'<' | b'~' | b'|' | b'^' => true,
            b'>' | b'-' | b'+' | b'=' | b':' => i == 0,
            b'#' => i == 0 && heading,
            b'.' | b')' => list_mark && i == digits,
            // Before an autolink the `_` is followed by `<`, not by the
            // letter it neighbours in `s`: it could close emphasis.
            b'_' => {
                !(s[..i].chars().next_back().is_some_and(word_char)
                    && s[i + 1..].chars().next().is_some_and(word_char))
                    || url_at(i + 1)
            }
            b'&' => entity_like(&b[i + 1..]),
            _ => false,
        };
        if escape {
            out.push_str(&s[copied..i]);
            out.push('\\');
            copied = i;
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    // Counted on what was written: a URL's bidi controls are
    // percent-encoded, so they open nothing.
    let closers = bidi_closers(&out[start..]);
    out.push_str(&closers);
}

/// True for a bidirectional formatting character that opens or closes an
/// embedding, override or isolate (Unicode UAX #9 §2.1–2.4): LRE, RLE,
/// PDF, LRO, RLO (U+202A–U+202E), LRI, RLI, FSI, PDI (U+2066–U+2069).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Appends the closers of what `s` leaves open, innermost first: PDF
/// (U+202C) for an embedding or override, PDI (U+2069) for an isolate,
/// matched as UAX #9 rules X6a and X7 match them (a PDF closes only an
/// embedding opened inside the innermost isolate; a PDI closes its isolate
/// and every embedding opened inside it; an unmatched closer does nothing).
fn bidi_closers(s: &str) -> String {
    let mut out = String::new();
    // Every opener is `E2 80 AA..AE` or `E2 81 A6..A8` in UTF-8.
    if !s.as_bytes().contains(&0xE2) {
        return out;
    }
    let mut open: Vec<bool> = Vec::new(); // true: an isolate
    for c in s.chars() {
        match c {
            '\u{202A}' | '\u{202B}' | '\u{202D}' | '\u{202E}' => open.push(false),
            '\u{2066}'..='\u{2068}' => open.push(true),
            '\u{202C}' if open.last() == Some(&false) => {
                open.pop();
            }
            '\u{2069}' => {
                if let Some(i) = open.iter().rposition(|isolate| *isolate) {
                    open.truncate(i);
                }
            }
            _ => {}
        }
    }
    for isolate in open.iter().rev() {
        out.push(if *isolate { '\u{2069}' } else { '\u{202C}' });
    }
    out
}

/// Escapes one line of body text (see the module rules) as running text
/// ([`push_text`]: URLs and mentions exact): controls become spaces,
/// surrounding whitespace is trimmed, inner spacing is kept.
pub fn escape_line(line: &str) -> String {
    let spaced: String;
    let line = if line.chars().any(char::is_control) {
        spaced = line
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        &spaced
    } else {
        line
    };
    let mut out = String::new();
    push_text(&mut out, line.trim());
    out
}

/// Escapes multi-line body text into lines; an empty string in the result
/// is a paragraph break, never the first or last line (a line of controls
/// or spaces around the text is no break).
pub fn escape_block(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(escape_line).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |e| e + 1);
    lines.truncate(end);
    let start = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
    lines.drain(..start);
    lines
}

/// `text` with every run of whitespace and controls made one space and
/// none at either end; borrowed when it already is (checked byte by byte:
/// only a non-ASCII character is decoded).
fn collapsed(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let mut plain = b.first() != Some(&b' ') && b.last() != Some(&b' ');
    let mut i = 0;
    while plain && i < b.len() {
        let c = b[i];
        if c.is_ascii() {
            plain = if c == b' ' {
                b.get(i + 1) != Some(&b' ')
            } else {
                !c.is_ascii_control()
            };
            i += 1;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            plain = !(ch.is_whitespace() || ch.is_control());
            i += ch.len_utf8();
        }
    }
    if plain {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for w in text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    std::borrow::Cow::Owned(out)
}

/// Appends `text` escaped for one inline position ([`escape_inline`]).
pub fn push_inline(out: &mut String, text: &str) {
    push_escaped(out, &collapsed(text));
}

/// Appends `text` escaped for one inline position as running text
/// ([`push_text`]: URLs and mentions exact), e.g. a post's text in a list
/// row or a bio after a name.
pub fn push_inline_text(out: &mut String, text: &str) {
    push_text(out, &collapsed(text));
}

/// [`push_inline_text`] into a new string.
pub fn escape_inline_text(text: &str) -> String {
    let mut out = String::new();
    push_inline_text(&mut out, text);
    out
}

/// Escapes text for one inline position (a heading, a bold name, a list
/// item, a link label): whitespace runs and controls collapse to one space.
pub fn escape_inline(text: &str) -> String {
    let mut out = String::new();
    push_inline(&mut out, text);
    out
}

/// [`escape_inline`] for the end of an ATX heading, where a `#` after a
/// space would be read as the heading's closing sequence: every `#` is
/// escaped; and a final `}` (read as the end of heading attributes `{…}`
/// by an extension, even when escaped) is written as `&#125;`.
pub fn escape_heading(text: &str) -> String {
    let s = escape_inline(text);
    let mut out = String::with_capacity(s.len() + 8);
    let mut escaped = false;
    for c in s.chars() {
        if c == '#' && !escaped {
            out.push('\\');
        }
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    // The closers push_escaped appends (invisible) come after it.
    let end = out.trim_end_matches(is_bidi_control).len();
    if out[..end].ends_with('}') {
        let closers = out.split_off(end);
        out.pop();
        out.push_str("&#125;");
        out.push_str(&closers);
    }
    out
}

/// `@handle` for an inline position, exact in the Markdown source and
/// rendered: as typed when no character of it needs escaping (`@demo_author`);
/// a handle of `[A-Za-z0-9_]` that would need one (`_x_`, `cobalt_wren_`,
/// `a__b`: an `_` that could open or close emphasis) is written as a code
/// span, `` `@cobalt_wren_` ``, which no renderer changes and which holds
/// no backslash an agent would copy back (a backslash-escaped `@cobalt_wren\_`
/// was refused as "not a valid handle"). Anything else (not a handle X
/// serves) is escaped text. `esc` is the escaping of the position
/// ([`escape_inline`] or [`escape_heading`]).
pub fn at_handle(h: &str, esc: fn(&str) -> String) -> String {
    let e = esc(h);
    let plain = !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if e == h || !plain {
        format!("@{e}")
    } else {
        format!("`@{h}`")
    }
}

/// A bare `http(s)` URL for an inline position: an autolink `<url>` with
/// [`autolink_target`]'s encoding, so a parser finds exactly that URL (no
/// backslash-escape is processed inside an autolink, and a renderer's
/// bare-URL linkifier cannot take a backslash into it). Anything else is
/// escaped text, never linked.
pub fn autolink(url: &str) -> String {
    match autolink_target(url) {
        Some(u) => format!("<{u}>"),
        None => escape_inline(url),
    }
}

/// The URL an [`autolink`] holds, and that every parser reads out of it:
/// [`link_url`]'s encoding, except that an entity-shaped run (`&amp;`,
/// `&#95;`) keeps its `&` and has its `;` written `%3B`. Parsers disagree
/// on entities inside an autolink (cmark and comrak decode them,
/// commonmark.js and pulldown-cmark do not), so none may be left there.
pub fn autolink_target(url: &str) -> Option<String> {
    let mut out = String::new();
    http_url(url).map(|u| {
        push_url_encoded(&mut out, u, Enc::Autolink);
        out
    })
}

/// A URL as a Markdown link or image destination, or `None` when it is not
/// an absolute `http(s)` URL (then it must be shown as text, never linked).
/// Space, `(`, `)`, `<`, `>`, `"`, `\`, whitespace and controls are
/// percent-encoded, so the destination cannot end early or carry a title.
pub fn link_url(url: &str) -> Option<String> {
    let mut out = String::new();
    push_link_url(&mut out, url).then_some(out)
}

/// Appends [`link_url`] of `url` to `out` and returns true, or appends
/// nothing and returns false when it is not an absolute `http(s)` URL.
pub fn push_link_url(out: &mut String, url: &str) -> bool {
    match http_url(url) {
        Some(u) => {
            push_url_encoded(out, u, Enc::Dest);
            true
        }
        None => false,
    }
}

/// The URL a Markdown parser reads out of [`link_url`] (and out of an
/// [`autolink`]): the same percent-encoding, with each `&` as itself (the
/// `&amp;` that [`link_url`] writes before an entity-shaped run decodes to
/// it). The URL xmd means to link.
pub fn link_target(url: &str) -> Option<String> {
    let mut out = String::new();
    http_url(url).map(|u| {
        push_url_encoded(&mut out, u, Enc::Target);
        out
    })
}

/// `url` trimmed, when it is an absolute `http(s)` URL with something
/// after the scheme.
fn http_url(url: &str) -> Option<&str> {
    let url = url.trim();
    let b = url.as_bytes();
    let has =
        |scheme: &[u8]| b.len() > scheme.len() && b[..scheme.len()].eq_ignore_ascii_case(scheme);
    (has(b"https://") || has(b"http://")).then_some(url)
}

/// Appends `s` with the characters that could end a link destination
/// percent-encoded (see [`link_url`]); walked byte by byte, only a
/// non-ASCII character decoded.
/// How [`push_url_encoded`] treats an entity-shaped run (`&name;`).
#[derive(Clone, Copy, PartialEq)]
enum Enc {
    /// A link destination: its `&` written `&amp;` (decoded back to `&`).
    Dest,
    /// What a parser reads out of a [`Enc::Dest`]: as typed.
    Target,
    /// Inside an autolink: its `;` written `%3B` ([`autolink_target`]).
    Autolink,
}

fn push_url_encoded(out: &mut String, s: &str, enc: Enc) {
    // The byte index of the `;` that ends an entity-shaped run.
    let mut entity_end = usize::MAX;
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(s.len());
    let b = s.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let (code, len) = if c.is_ascii() {
            match c {
                b' ' => ("%20", 1),
                b'(' => ("%28", 1),
                b')' => ("%29", 1),
                b'<' => ("%3C", 1),
                b'>' => ("%3E", 1),
                b'"' => ("%22", 1),
                b'\\' => ("%5C", 1),
                // An entity reference (`&amp;`, `&#38;`) is decoded in a
                // link destination and an autolink: its `&` is written as
                // `&amp;`, which decodes to the `&` itself.
                b'&' if enc == Enc::Dest && entity_like(&b[i + 1..]) => ("&amp;", 1),
                b'&' if enc == Enc::Autolink && entity_like(&b[i + 1..]) => {
                    entity_end = i + b[i..].iter().position(|c| *c == b';').unwrap_or(0);
                    i += 1;
                    continue;
                }
                b';' if i == entity_end => ("%3B", 1),
                // Every other ASCII whitespace is a control.
                c if c.is_ascii_control() => ("", 1),
                _ => {
                    i += 1;
                    continue;
                }
            }
        } else {
            let ch = s[i..].chars().next().unwrap_or(' ');
            let len = ch.len_utf8();
            if !(ch.is_control() || ch.is_whitespace() || is_bidi_control(ch)) {
                i += len;
                continue;
            }
            ("", len)
        };
        out.push_str(&s[copied..i]);
        if code.is_empty() {
            for &byte in &b[i..i + len] {
                out.push('%');
                out.push(char::from(HEX[usize::from(byte >> 4)]));
                out.push(char::from(HEX[usize::from(byte & 15)]));
            }
        } else {
            out.push_str(code);
        }
        i += len;
        copied = i;
    }
    out.push_str(&s[copied..]);
}

/// The link to an account's page (`https://x.com/<handle>`, the handle
/// percent-encoded as in [`link_url`]) appended to `out`.
pub fn push_profile_url(out: &mut String, handle: &str) {
    out.push_str("https://x.com/");
    push_url_encoded(out, handle.trim_end(), Enc::Dest);
}

/// `[label](url)` when `url` is an `http(s)` URL, else the label followed by
/// the URL as escaped text. `label` must already be escaped.
pub fn link(label: &str, url: &str) -> String {
    let mut out = String::with_capacity(label.len() + url.len() + 4);
    push_link(&mut out, label, url);
    out
}

/// Appends [`link`] of `label` and `url` to `out`.
pub fn push_link(out: &mut String, label: &str, url: &str) {
    match http_url(url) {
        Some(u) => {
            out.push('[');
            out.push_str(label);
            out.push_str("](");
            push_url_encoded(out, u, Enc::Dest);
            out.push(')');
        }
        None => {
            out.push_str(label);
            out.push_str(": ");
            push_inline(out, url);
        }
    }
}

/// `![alt](url)` when `url` is an `http(s)` URL, else the alt text followed
/// by the URL as escaped text. `alt` must already be escaped.
pub fn image(alt: &str, url: &str) -> String {
    match link_url(url) {
        Some(u) => format!("![{alt}]({u})"),
        None => format!("{alt}: {}", escape_inline(url)),
    }
}

/// A YAML double-quoted scalar that YAML 1.1 (PyYAML, Obsidian) and YAML
/// 1.2 readers both read back as exactly `v`, on one line: `"` and `\` are
/// escaped, and every character outside the printable set or read as a line
/// break by YAML 1.1 (C0/C1 controls, DEL, U+0085, U+2028, U+2029), a byte
/// order mark, or a bidirectional control ([`is_bidi_control`]: it would
/// reorder the rest of the line as shown) becomes a `\uXXXX` escape.
pub fn yaml_string(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            // Front matter is read as Markdown by a renderer that does not
            // know it: a raw `<` could open an HTML tag there (`<script>`
            // in a post's `url` or an author's name). `\x3C` is YAML's own
            // escape (1.2 §5.7), so a YAML reader still gets `<` back.
            '<' => out.push_str("\\x3C"),
            c if c.is_control()
                || is_bidi_control(c)
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
                ) =>
            {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "escape_tests.rs"]
mod tests;
