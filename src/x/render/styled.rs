//! Inline styles over user text: Draft.js `Bold`, `Italic` and
//! `Strikethrough` ranges (UTF-16 offsets into a block's text) as
//! `**…**`, `_…_` and `~~…~~` around text escaped as all user text is
//! ([`push_escaped`]), so that the styles are emphasis and the text stays
//! text.
//!
//! Three different delimiter characters, so runs of two styles never
//! merge; ranges that overlap without nesting are closed and reopened
//! where they cross. CommonMark opens and closes emphasis only where a
//! delimiter run is flanked right (no white space inside it; punctuation
//! inside only with white space or punctuation outside; an `_` never
//! between word characters), so a character next to a delimiter that
//! would break this is written as a numeric character reference
//! (`&#97;`), whose `&` and `;` are punctuation and which renders as the
//! character itself: `a"b"c` with `"b"` bold is `&#97;**"b"**&#99;`.
//! Outside headings, a URL is written whole as an autolink and a handle
//! holding `_` as a code span ([`links`]), so what a GFM linkifier links
//! and what an agent copies is exactly what was typed (issue 27 item 5).
//! Proved with pulldown-cmark over generated texts and ranges, in a
//! paragraph, list item, quote and heading, and with comrak's linkifier
//! (`tests/x_article_props.rs`).

use crate::x::escape::push_escaped;

/// An inline style xmd renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `**…**`
    Bold,
    /// `_…_`
    Italic,
    /// `~~…~~`
    Strikethrough,
}

impl Style {
    const ALL: [Style; 3] = [Style::Bold, Style::Italic, Style::Strikethrough];

    /// The style a Draft.js `style` names (`BOLD` too), if xmd renders it.
    pub fn named(s: &str) -> Option<Style> {
        match s.to_ascii_lowercase().as_str() {
            "bold" => Some(Style::Bold),
            "italic" => Some(Style::Italic),
            "strikethrough" => Some(Style::Strikethrough),
            _ => None,
        }
    }

    fn bit(self) -> u8 {
        match self {
            Style::Bold => 1,
            Style::Italic => 2,
            Style::Strikethrough => 4,
        }
    }

    fn delimiter(self) -> &'static str {
        match self {
            Style::Bold => "**",
            Style::Italic => "_",
            Style::Strikethrough => "~~",
        }
    }
}

/// A style over `[start, end)` of a block's text, in UTF-16 code units.
pub type Range = (u64, u64, Style);

/// `text` with `ranges` applied, as Markdown lines (one per non-blank
/// line of the text, trimmed; controls read as spaces). With `heading`,
/// every `#` is escaped and a final `}` written as `&#125;` (see
/// [`crate::x::escape::escape_heading`]).
pub fn styled_lines(text: &str, ranges: &[Range], heading: bool) -> Vec<String> {
    // Each character with its UTF-16 offset and its style bits.
    // A sweep over the ranges' ends, in offset order: linear in the text
    // and the ranges (a hostile article may send many of both).
    let mut events: Vec<(u64, i64, usize)> = Vec::with_capacity(ranges.len() * 2);
    for &(s, e, st) in ranges.iter().filter(|(s, e, _)| s < e) {
        let i = Style::ALL.iter().position(|x| *x == st).unwrap_or(0);
        events.push((s, 1, i));
        events.push((e, -1, i));
    }
    events.sort_unstable();
    let mut open = [0i64; 3];
    let mut next = events.iter().peekable();
    let mut chars: Vec<(char, u8)> = Vec::with_capacity(text.len());
    let mut at = 0u64;
    for c in text.chars() {
        while let Some(&&(_, d, i)) = next.peek().filter(|(p, _, _)| *p <= at) {
            open[i] += d;
            next.next();
        }
        let bits = Style::ALL
            .iter()
            .zip(open)
            .filter(|(_, n)| *n > 0)
            .fold(0, |b, (st, _)| b | st.bit());
        let c = if c.is_control() && c != '\n' { ' ' } else { c };
        chars.push((c, bits));
        at += c.len_utf16() as u64;
    }
    chars
        .split(|(c, _)| *c == '\n')
        .filter_map(|line| {
            let start = line.iter().position(|(c, _)| !c.is_whitespace())?;
            let end = line.iter().rposition(|(c, _)| !c.is_whitespace())? + 1;
            let mut out = styled_line(&line[start..end], !heading);
            if heading {
                out = heading_safe(&out);
            }
            Some(out)
        })
        .collect()
}

/// A piece of a styled line: a character (written as a character
/// reference when `reference`), or a delimiter (`open` for an opener).
#[derive(Debug, Clone, Copy)]
enum Tok {
    Char {
        c: char,
        reference: bool,
    },
    Delim {
        style: Style,
        open: bool,
    },
    /// A URL or a mention, written whole ([`links`]): index into the
    /// line's atoms, and how its first and last written characters count.
    Atom {
        at: usize,
        first: Side,
        last: Side,
    },
}

/// How a character next to a delimiter run counts for CommonMark's
/// flanking rules, as far as xmd can tell without Unicode tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// The line's start or end.
    Edge,
    /// White space.
    Space,
    /// ASCII punctuation, a delimiter or a character reference.
    Punct,
    /// An ASCII letter or digit.
    Word,
    /// Any other character: a letter or punctuation.
    Unknown,
}

/// How `t` counts as the neighbour before a delimiter run (its last
/// written character).
fn side_before(t: Option<&Tok>) -> Side {
    match t {
        Some(Tok::Atom { last, .. }) => *last,
        t => side(t),
    }
}

/// How `t` counts as the neighbour after a delimiter run (its first
/// written character).
fn side_after(t: Option<&Tok>) -> Side {
    match t {
        Some(Tok::Atom { first, .. }) => *first,
        t => side(t),
    }
}

fn char_side(c: char) -> Side {
    side(Some(&Tok::Char {
        c,
        reference: false,
    }))
}

fn side(t: Option<&Tok>) -> Side {
    match t {
        Some(Tok::Atom { .. }) => Side::Punct,
        None => Side::Edge,
        Some(
            Tok::Delim { .. }
            | Tok::Char {
                reference: true, ..
            },
        ) => Side::Punct,
        Some(Tok::Char { c, .. }) if c.is_whitespace() => Side::Space,
        Some(Tok::Char { c, .. }) if c.is_ascii_punctuation() => Side::Punct,
        Some(Tok::Char { c, .. }) if c.is_ascii() => Side::Word,
        Some(Tok::Char { .. }) => Side::Unknown,
    }
}

/// The URLs and mentions of a styled line (with `links`), as
/// `(first char, end char, written)`: each written whole, found as the
/// running-text escapers find them ([`crate::x::linkify`]): a URL as an
/// autolink, a handle holding `_` as a code span (one of letters and
/// digits stays text, which no escaping changes), carrying the styles
/// that cover all of it
/// (a style that starts or ends inside a URL would put a delimiter
/// inside the link; it is left off the URL, the rest of its range keeps
/// it).
fn links(line: &[(char, u8)]) -> Vec<(usize, usize, String)> {
    let text: String = line.iter().map(|(c, _)| *c).collect();
    let b = text.as_bytes();
    // Byte offset -> char index, for the spans the finders return.
    let mut index = vec![0usize; b.len() + 1];
    for (k, (o, _)) in text.char_indices().enumerate() {
        index[o] = k;
    }
    index[b.len()] = line.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // A delimiter run or a character reference may come to stand
        // before this character in the Markdown, and a GFM linkifier
        // reads that, not the letter typed before it. So in styled text a
        // URL starts at any `http(s)://` (after a letter too: linked, it
        // is still the URL as typed), and a mention also where the style
        // changes before its `@`.
        let k = index[i];
        let (from, at) = if b[i] != b'@' || (k > 0 && line[k - 1].1 != line[k].1) {
            (&text[i..], 0)
        } else {
            (text.as_str(), i)
        };
        let found = match b[i] {
            b'h' | b'H' => crate::x::linkify::url_end(from, at),
            b'@' => crate::x::linkify::mention_end(from, at),
            _ => None,
        };
        let end = found.map(|e| e - at + i);
        match end {
            // A handle of letters and digits only is never escaped: it
            // stays characters, styled as they are.
            Some(e) if b[i] == b'@' && !text[i..e].contains('_') => i = e,
            Some(e) => {
                // A handle with `_` is a code span here (inside styled
                // text an `_` next to a delimiter could not stay bare).
                let written = if b[i] == b'@' {
                    format!("`{}`", &text[i..e])
                } else {
                    crate::x::escape::autolink(&text[i..e])
                };
                out.push((index[i], index[e], written));
                i = e;
            }
            None => i += text[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// One trimmed, non-empty line of styled characters as Markdown; with
/// `link`, its URLs and mentions written exact ([`links`]).
fn styled_line(line: &[(char, u8)], link: bool) -> String {
    let atoms = if link { links(line) } else { Vec::new() };
    // Each character's style bits, those of a URL or mention narrowed to
    // the styles covering all of it.
    let mut line = line.to_vec();
    for &(a, e, _) in &atoms {
        let common = line[a..e].iter().fold(u8::MAX, |b, (_, x)| b & x);
        for ch in &mut line[a..e] {
            ch.1 = common;
        }
    }
    let mut toks: Vec<Tok> = Vec::with_capacity(line.len() + 8);
    let mut open: Vec<Style> = Vec::new();
    let mut next_atom = atoms.iter().enumerate().peekable();
    let mut k = 0;
    while k < line.len() {
        let (c, bits) = line[k];
        // Close down to the longest prefix still wanted, open the rest.
        let keep = open.iter().take_while(|s| bits & s.bit() != 0).count();
        for style in open.drain(keep..).rev() {
            toks.push(Tok::Delim { style, open: false });
        }
        for style in Style::ALL {
            if bits & style.bit() != 0 && !open.contains(&style) {
                toks.push(Tok::Delim { style, open: true });
                open.push(style);
            }
        }
        if let Some(&(n, &(a, e, ref written))) = next_atom.peek().filter(|(_, (a, _, _))| *a == k)
        {
            let side_of = |c: Option<char>| c.map_or(Side::Punct, char_side);
            toks.push(Tok::Atom {
                at: n,
                first: side_of(written.chars().next()),
                last: side_of(written.chars().last()),
            });
            next_atom.next();
            debug_assert!(e > a);
            k = e;
            continue;
        }
        toks.push(Tok::Char {
            c,
            reference: false,
        });
        k += 1;
    }
    for style in open.into_iter().rev() {
        toks.push(Tok::Delim { style, open: false });
    }
    make_flanking(&mut toks);
    let mut out = String::with_capacity(line.len() + 16);
    let mut run = String::new();
    for t in &toks {
        match *t {
            Tok::Char {
                c,
                reference: false,
            } => run.push(c),
            Tok::Char { c, .. } => {
                push_escaped(&mut out, &std::mem::take(&mut run));
                push_reference(&mut out, c);
            }
            Tok::Delim { style, .. } => {
                push_escaped(&mut out, &std::mem::take(&mut run));
                out.push_str(style.delimiter());
            }
            Tok::Atom { at, .. } => {
                push_escaped(&mut out, &std::mem::take(&mut run));
                out.push_str(&atoms[at].2);
            }
        }
    }
    push_escaped(&mut out, &run);
    out
}

/// Marks as character references the characters next to delimiter runs
/// that would keep a run from opening or closing (see the module docs),
/// until nothing changes (a reference counts as punctuation, which can
/// make its other neighbour need one too).
fn make_flanking(toks: &mut [Tok]) {
    let is_delim = |t: &Tok| matches!(t, Tok::Delim { .. });
    let underscore = |t: &Tok| {
        matches!(
            t,
            Tok::Delim {
                style: Style::Italic,
                ..
            }
        )
    };
    for _ in 0..MAX_FLANKING_PASSES {
        let mut changed = false;
        let mut i = 0;
        while i < toks.len() {
            if !is_delim(&toks[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < toks.len() && is_delim(&toks[i]) {
                i += 1;
            }
            let run = &toks[start..i];
            let closers = run
                .iter()
                .take_while(|t| matches!(t, Tok::Delim { open: false, .. }))
                .count();
            let openers = run.len() - closers;
            let before = start.checked_sub(1);
            let after = (i < toks.len()).then_some(i);
            let a = side_before(before.map(|b| &toks[b]));
            let b = side_after(after.map(|x| &toks[x]));
            let mut mark = Vec::new();
            // No run may have white space inside it.
            if closers > 0 && a == Side::Space {
                mark.extend(before);
            }
            if openers > 0 && b == Side::Space {
                mark.extend(after);
            }
            // Closers only: punctuation inside (the text's, or the closer
            // before the outermost) wants space or punctuation outside; a
            // closing `_` wants no word character after it.
            if openers == 0
                && matches!(b, Side::Word | Side::Unknown)
                && (closers > 1
                    || matches!(a, Side::Punct | Side::Unknown)
                    || underscore(&run[run.len() - 1]))
            {
                mark.extend(after);
            }
            // Openers only: the same, mirrored.
            if closers == 0
                && matches!(a, Side::Word | Side::Unknown)
                && (openers > 1 || matches!(b, Side::Punct | Side::Unknown) || underscore(&run[0]))
            {
                mark.extend(before);
            }
            for m in mark {
                if let Tok::Char { reference, .. } = &mut toks[m] {
                    if !*reference {
                        *reference = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return;
        }
    }
    // Still changing: every character next to a delimiter that is not
    // ASCII punctuation becomes a reference, which is always enough.
    for i in 0..toks.len() {
        let near = (i > 0 && is_delim(&toks[i - 1])) || toks.get(i + 1).is_some_and(is_delim);
        if let Tok::Char { c, reference } = &mut toks[i] {
            *reference |= near && !c.is_ascii_punctuation();
        }
    }
}

/// Passes of [`make_flanking`] before it makes every neighbour of a
/// delimiter a reference. Default 8 (a chain of references across
/// one-character runs settles in one pass rightwards, one more per step
/// leftwards); keeps a hostile line linear.
const MAX_FLANKING_PASSES: usize = 8;

fn push_reference(out: &mut String, c: char) {
    out.push_str(&format!("&#{};", u32::from(c)));
}

/// `s` (escaped Markdown) with every unescaped `#` escaped (but the `#`
/// of a character reference `&#…;`, which no closing sequence can start)
/// and a final `}` as `&#125;`: safe at the end of an ATX heading.
fn heading_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut escaped = false;
    let mut after_amp = false;
    for c in s.chars() {
        if c == '#' && !escaped && !after_amp {
            out.push('\\');
        }
        after_amp = c == '&' && !escaped;
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    let end = out
        .trim_end_matches(crate::x::escape::is_bidi_control)
        .len();
    if out[..end].ends_with('}') && !out[..end].ends_with("\\}") {
        let closers = out.split_off(end);
        out.pop();
        out.push_str("&#125;");
        out.push_str(&closers);
    }
    out
}
