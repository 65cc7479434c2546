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
//! Proved with pulldown-cmark over generated texts and ranges, in a
//! paragraph, list item, quote and heading (`tests/x_article_props.rs`).

use super::escape::push_escaped;

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
/// [`super::escape::escape_heading`]).
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
            let mut out = styled_line(&line[start..end]);
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
    Char { c: char, reference: bool },
    Delim { style: Style, open: bool },
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

fn side(t: Option<&Tok>) -> Side {
    match t {
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

/// One trimmed, non-empty line of styled characters as Markdown.
fn styled_line(line: &[(char, u8)]) -> String {
    let mut toks: Vec<Tok> = Vec::with_capacity(line.len() + 8);
    let mut open: Vec<Style> = Vec::new();
    for &(c, bits) in line {
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
        toks.push(Tok::Char {
            c,
            reference: false,
        });
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
            let a = side(before.map(|b| &toks[b]));
            let b = side(after.map(|x| &toks[x]));
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
    let end = out.trim_end_matches(super::escape::is_bidi_control).len();
    if out[..end].ends_with('}') && !out[..end].ends_with("\\}") {
        let closers = out.split_off(end);
        out.pop();
        out.push_str("&#125;");
        out.push_str(&closers);
    }
    out
}
