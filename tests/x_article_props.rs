//! An article block's inline styles (issue 27 item 2), judged by a
//! CommonMark parser (pulldown-cmark, strikethrough on; the extended
//! reader adds what Obsidian and GitHub add).
//!
//! The class: Draft.js `inlineStyleRanges` are UTF-16 offsets into the
//! block's text; the text is user text (escaped, never structure), and a
//! style range over escaped text must still be emphasis. Property: over
//! generated texts (Markdown punctuation, white space, letters, non-ASCII
//! and astral characters, line breaks) and generated, overlapping ranges,
//! the parsed events' text is the block's text (each line trimmed, blank
//! lines dropped, controls as spaces), no other inline structure appears,
//! and every character is inside exactly the Strong / Emphasis /
//! Strikethrough the ranges give it. In a paragraph, a list item, a quote
//! and a heading.

use proptest::prelude::*;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use xmd::x::render::styled::{styled_lines, Range, Style};

const BOLD: u8 = 1;
const ITALIC: u8 = 2;
const STRIKE: u8 = 4;

fn bit(s: Style) -> u8 {
    match s {
        Style::Bold => BOLD,
        Style::Italic => ITALIC,
        Style::Strikethrough => STRIKE,
    }
}

fn options(extended: bool) -> Options {
    let base = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    if extended {
        base | Options::ENABLE_FOOTNOTES
            | Options::ENABLE_TASKLISTS
            | Options::ENABLE_GFM
            | Options::ENABLE_DEFINITION_LIST
            | Options::ENABLE_SUPERSCRIPT
            | Options::ENABLE_SUBSCRIPT
            | Options::ENABLE_WIKILINKS
    } else {
        base
    }
}

/// What a styled block reads back as: its characters with their style
/// bits, and the spans (character ranges) written whole as an autolink or
/// a code span.
struct Read {
    chars: Vec<(char, u8)>,
    spans: Vec<(usize, usize)>,
}

/// `%XX` of an autolink's text back to the characters typed (the
/// generated texts hold no `%` of their own).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).expect("decoded autolink text is UTF-8")
}

/// The text and style bits the events carry, lines separated by `\n`
/// (bits 0), and the autolinks and code spans among them; `Err` naming
/// any event that is not text, a break, a style, the one container
/// expected, an autolink of an `http(s)` URL or a code span of an
/// `@handle` (issue 27 item 5: a URL or mention in an article's text is
/// written whole, exact in the source).
fn read(md: &str, opts: Options, container: &Tag) -> Result<Read, String> {
    let mut out = Vec::new();
    let mut spans = Vec::new();
    let mut bits = 0u8;
    let mut link: Option<(usize, String)> = None;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::Link {
                link_type: pulldown_cmark::LinkType::Autolink,
                dest_url,
                ..
            }) if link.is_none() => link = Some((out.len(), dest_url.to_string())),
            Event::End(TagEnd::Link) if link.is_some() => {
                let (start, dest) = link.take().unwrap();
                let typed: String = out[start..].iter().map(|(c, _)| *c).collect();
                let decoded = percent_decode(&typed);
                if !decoded.to_ascii_lowercase().starts_with("http") || dest != typed {
                    return Err(format!("autolink {typed:?} to {dest:?}"));
                }
                let b = out[start].1;
                out.truncate(start);
                out.extend(decoded.chars().map(|c| (c, b)));
                spans.push((start, out.len()));
            }
            Event::Code(t) if t.starts_with('@') => {
                spans.push((out.len(), out.len() + t.chars().count()));
                out.extend(t.chars().map(|c| (c, bits)));
            }
            Event::Start(Tag::Strong) => bits |= BOLD,
            Event::End(TagEnd::Strong) => bits &= !BOLD,
            Event::Start(Tag::Emphasis) => bits |= ITALIC,
            Event::End(TagEnd::Emphasis) => bits &= !ITALIC,
            Event::Start(Tag::Strikethrough) => bits |= STRIKE,
            Event::End(TagEnd::Strikethrough) => bits &= !STRIKE,
            Event::Text(t) => out.extend(t.chars().map(|c| (c, bits))),
            Event::HardBreak | Event::SoftBreak => out.push(('\n', 0)),
            Event::Start(t) if same_container(&t, container) => {}
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph)
                if matches!(container, Tag::Item | Tag::BlockQuote(_)) => {}
            Event::Start(Tag::List(_)) | Event::End(TagEnd::List(_))
                if matches!(container, Tag::Item) => {}
            Event::End(_) => {}
            other => return Err(format!("unexpected {other:?}")),
        }
    }
    if link.is_some() {
        return Err("an unclosed link".into());
    }
    Ok(Read { chars: out, spans })
}

fn same_container(t: &Tag, c: &Tag) -> bool {
    match (t, c) {
        (Tag::Heading { level: a, .. }, Tag::Heading { level: b, .. }) => a == b,
        (Tag::BlockQuote(_), Tag::BlockQuote(_)) => true,
        _ => t == c,
    }
}

/// The oracle's expectation: per character its style bits by the ranges
/// (UTF-16 offsets), controls as spaces, each line trimmed, blank lines
/// dropped, lines joined by `\n` (bits 0).
fn expected(text: &str, ranges: &[Range], one_line: bool) -> Vec<(char, u8)> {
    let mut at = 0u64;
    let mut chars = Vec::new();
    for c in text.chars() {
        let mut b = 0;
        for &(s, e, st) in ranges {
            if s <= at && at < e {
                b |= bit(st);
            }
        }
        let c = if c.is_control() && c != '\n' { ' ' } else { c };
        let c = if one_line && c == '\n' { ' ' } else { c };
        chars.push((c, b));
        at += c.len_utf16() as u64;
    }
    let mut out: Vec<(char, u8)> = Vec::new();
    for line in chars.split(|(c, _)| *c == '\n') {
        let Some(s) = line.iter().position(|(c, _)| !c.is_whitespace()) else {
            continue;
        };
        let e = line.iter().rposition(|(c, _)| !c.is_whitespace()).unwrap() + 1;
        if !out.is_empty() {
            out.push(('\n', 0));
        }
        out.extend_from_slice(&line[s..e]);
    }
    out
}

fn text_strategy() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "b",
        "Z",
        "7",
        " ",
        "  ",
        "\t",
        "\n",
        "*",
        "**",
        "_",
        "__",
        "~",
        "~~",
        "`",
        "\\",
        "#",
        "&",
        "&amp;",
        ";",
        "-",
        "+",
        ".",
        "1.",
        "!",
        "(",
        ")",
        "[",
        "]",
        "<",
        ">",
        "|",
        "\"",
        "'",
        "=",
        ":",
        "^",
        "{",
        "}",
        "é",
        "€",
        "中",
        "𝔸",
        "😀",
        "\u{a0}",
        "\u{3000}",
        "http://x.co/a_b",
        "https://x.co/(a)_b*c~",
        "@",
        "@a_b_",
        "@Zed",
        "\u{1}",
    ]);
    prop::collection::vec(pieces, 1..24).prop_map(|v| v.concat())
}

/// Text and ranges over it, in UTF-16 offsets on character boundaries.
fn block_strategy() -> impl Strategy<Value = (String, Vec<Range>)> {
    text_strategy().prop_flat_map(|text| {
        let mut bounds = vec![0u64];
        let mut at = 0u64;
        for c in text.chars() {
            at += c.len_utf16() as u64;
            bounds.push(at);
        }
        let n = bounds.len();
        let range = (
            0..n,
            0..n,
            prop::sample::select(vec![Style::Bold, Style::Italic, Style::Strikethrough]),
        )
            .prop_map(move |(a, b, st)| {
                let (a, b) = (a.min(b), a.max(b));
                (bounds[a], bounds[b], st)
            });
        (Just(text), prop::collection::vec(range, 0..5))
    })
}

fn check(
    text: &str,
    ranges: &[Range],
    container: Tag<'static>,
    wrap: impl Fn(&[String]) -> String,
    one_line: bool,
    before: &str,
) -> Result<(), TestCaseError> {
    let heading = matches!(container, Tag::Heading { .. });
    let source = if one_line {
        text.replace('\n', " ")
    } else {
        text.to_string()
    };
    let lines = styled_lines(&source, ranges, heading);
    let mut want = expected(text, ranges, one_line);
    if lines.is_empty() {
        prop_assert!(want.is_empty());
        return Ok(());
    }
    want.splice(0..0, before.chars().map(|c| (c, 0)));
    let md = wrap(&lines);
    // Exact URLs: whatever a GFM linkifier links is a URL as typed in the
    // block (the old escaper's `a\_b` made it link `a%5C_b`). Headings
    // write URLs as escaped text, unlinked by xmd.
    if !heading {
        for url in gfm_urls(&md) {
            prop_assert!(
                source.contains(&url),
                "GFM links {:?}, not typed, in {:?} (text {:?})",
                url,
                md,
                text
            );
        }
    }
    for extended in [false, true] {
        let got = read(&md, options(extended), &container).map_err(|e| {
            TestCaseError::fail(format!("{e} in {md:?} (text {text:?}, ranges {ranges:?})"))
        })?;
        // A URL or mention written whole carries the styles that cover
        // all of it (a delimiter cannot stand inside a link).
        let mut want = want.clone();
        for &(a, e) in &got.spans {
            prop_assert!(e <= want.len(), "span past the text in {:?}", md);
            let common = want[a..e].iter().fold(u8::MAX, |b, (_, x)| b & x);
            for w in &mut want[a..e] {
                w.1 = common;
            }
        }
        if heading {
            prop_assert!(got.spans.is_empty(), "a link in a heading: {:?}", md);
        }
        prop_assert_eq!(
            &got.chars,
            &want,
            "markdown {:?} (text {:?}, ranges {:?}, extended {})",
            md,
            text,
            ranges,
            extended
        );
    }
    Ok(())
}

/// Every `http(s)` URL a GFM parser with the autolink extension (comrak)
/// links in `md`, percent-decoded: the independent reader of issue 27
/// item 5. (Its e-mail autolinks, `mailto:…`, are not URLs xmd links.)
fn gfm_urls(md: &str) -> Vec<String> {
    let arena = comrak::Arena::new();
    let mut o = comrak::Options::default();
    o.extension.autolink = true;
    o.extension.strikethrough = true;
    let root = comrak::parse_document(&arena, md, &o);
    root.descendants()
        .filter_map(|n| match &n.data().value {
            comrak::nodes::NodeValue::Link(l) => Some(percent_decode(&l.url)),
            _ => None,
        })
        .filter(|u| u.to_ascii_lowercase().starts_with("http"))
        .collect()
}

fn hard(lines: &[String], prefix: &str, cont: &str) -> String {
    let mut s = String::new();
    for (i, l) in lines.iter().enumerate() {
        s.push_str(if i == 0 { prefix } else { cont });
        s.push_str(l);
        if i + 1 < lines.len() {
            s.push('\n');
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn styles_in_a_paragraph((text, ranges) in block_strategy()) {
        check(&text, &ranges, Tag::Paragraph, |l| hard(l, "", ""), false, "")?;
    }

    #[test]
    fn styles_in_a_list_item((text, ranges) in block_strategy()) {
        check(&text, &ranges, Tag::Item, |l| hard(l, "- ", "  "), false, "")?;
        // Nested one level, as the renderer nests (4 spaces a level).
        check(&text, &ranges, Tag::Item, |l| format!("- p\n{}", hard(l, "    1. ", "       ")), false, "p")?;
    }

    #[test]
    fn styles_in_a_quote((text, ranges) in block_strategy()) {
        check(&text, &ranges, Tag::BlockQuote(None), |l| hard(l, "> ", "> "), false, "")?;
    }

    #[test]
    fn styles_in_a_heading((text, ranges) in block_strategy()) {
        let tag = Tag::Heading { level: HeadingLevel::H4, id: None, classes: vec![], attrs: vec![] };
        check(&text, &ranges, tag, |l| format!("#### {}", l[0]), true, "")?;
    }
}

/// Regression cases named by what they exercise.
#[test]
fn emphasis_next_to_punctuation_and_inside_words() {
    let one = |text: &str, ranges: &[Range]| styled_lines(text, ranges, false).join("\n");
    // Bold over a quoted word inside a word: both neighbours made safe.
    assert_eq!(
        one("a\"b\"c", &[(1, 4, Style::Bold)]),
        "&#97;**\"b\"**&#99;"
    );
    // Italic and bold overlapping without nesting: closed and reopened.
    assert_eq!(
        one("abcd", &[(0, 3, Style::Bold), (1, 4, Style::Italic)]),
        "**&#97;_bc_**_d_"
    );
    // Offsets are UTF-16: the astral 𝔸 counts two.
    assert_eq!(one("𝔸xy", &[(2, 3, Style::Strikethrough)]), "𝔸~~x~~y");
    // Markdown in the text stays text.
    assert_eq!(one("*not* bold", &[]), "\\*not\\* bold");
}
