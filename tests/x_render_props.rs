//! Property tests for the renderer (issue 16), judged by independent
//! oracles:
//! - a CommonMark parser (pulldown-cmark, tables + strikethrough): for
//!   generated hostile user text in every field a post or profile shows
//!   (post text, names, bios, locations, poll options, card fields, alt
//!   text, note text, article text, search queries), the parsed block and
//!   inline structure equals the template's (the same render with inert
//!   placeholders), and the visible text equals the template's with each
//!   placeholder replaced by what the author typed (whitespace runs
//!   compared as one space, control characters as whitespace);
//! - bidirectional controls (UAX #9 explicit embeddings, overrides and
//!   isolates) in any field never reach xmd's own text: every line of the
//!   output ends with none open, by a UAX #9 X1–X8 stack kept here. The
//!   generated fields hold openers only, so a fragment that left one open
//!   would leave it open to the end of its line (the server writes no
//!   closers); the visible text is compared without bidi controls;
//! - every link or image destination is `http(s)`, whatever the URLs are,
//!   and holds no raw bidi control;
//! - a YAML 1.2 parser (yaml-rust2) reads the Obsidian front matter as one
//!   mapping with exactly the fields written, for hostile names, handles and
//!   URLs; and no YAML 1.1 line break (U+0085, U+2028, U+2029) is left raw.

mod common;

use std::collections::BTreeMap;

use common::cmark::{bidi, bidi_left_open, norm, plain};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};
use xmd::x::args::{Format, UserInfo};
use xmd::x::escape::autolink_target;
use xmd::x::linkify::url_end;
use xmd::x::model::normalize;
use xmd::x::model::status::Status;
use xmd::x::model::user::User;
use xmd::x::render::browse::{profile_markdown, search_markdown};
use xmd::x::render::date::iso;
use xmd::x::render::{render_posts, RenderOptions};
use yaml_rust2::{Yaml, YamlLoader};

/// A post or user `Value` read into the typed model, as the list tools
/// read it from the upstream.
fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> T {
    serde_json::from_str(&v.to_string()).expect("a model value")
}

/// What a reader's CommonMark renderer makes of a document.
#[derive(Debug, Default)]
struct Parsed {
    /// Block and inline tags in order, `T` for a run of visible text.
    shape: Vec<String>,
    /// The visible text (text, link labels, image alt), soft breaks as spaces.
    visible: String,
    /// Link and image destinations (autolinks' apart).
    dests: Vec<String>,
    /// Autolink destinations: xmd's own and, in running text, the URLs
    /// its author typed (issue 27 item 5).
    auto: Vec<String>,
    /// The YAML of a front matter block, if any.
    meta: Option<String>,
}

/// The issue's oracle: CommonMark with tables and strikethrough (and the
/// front matter recognised as such).
fn base_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
}

/// A stricter reader: the extensions renderers such as Obsidian or GitHub
/// add (footnotes, task lists, heading attributes, alert blockquotes,
/// definition lists, super/subscript, wiki links).
fn extended_options() -> Options {
    base_options()
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_GFM
        | Options::ENABLE_DEFINITION_LIST
        | Options::ENABLE_SUPERSCRIPT
        | Options::ENABLE_SUBSCRIPT
        | Options::ENABLE_WIKILINKS
}

fn parse(md: &str) -> Parsed {
    parse_with(md, base_options())
}

fn parse_with(md: &str, opts: Options) -> Parsed {
    let mut p = Parsed::default();
    let mut in_meta = false;
    // Per open link: whether it is an autolink.
    let mut autolink: Vec<bool> = Vec::new();
    let text = |p: &mut Parsed, t: &str| {
        p.visible.push_str(t);
        if p.shape.last().map(String::as_str) != Some("T") {
            p.shape.push("T".into());
        }
    };
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::MetadataBlock(_)) => {
                in_meta = true;
                p.meta = Some(String::new());
                p.shape.push("Meta".into());
            }
            Event::End(TagEnd::MetadataBlock(_)) => in_meta = false,
            Event::Text(t) if in_meta => p.meta.as_mut().unwrap().push_str(&t),
            // An autolink is judged by its text (in `visible`) and its
            // destination (in `auto`): a URL in running user text is one
            // now, where it was text before (issue 27 item 5).
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink,
                dest_url,
                ..
            }) => {
                p.auto.push(dest_url.to_string());
                autolink.push(true);
            }
            Event::End(TagEnd::Link) if autolink.pop() == Some(true) => {}
            Event::Start(tag) => {
                if let Tag::Link { .. } = &tag {
                    autolink.push(false);
                }
                if let Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } = &tag {
                    p.dests.push(dest_url.to_string());
                }
                // A link's destination is compared in `dests`, not in
                // the shape (an autolink's is its text).
                match &tag {
                    Tag::Link { link_type, .. } => p.shape.push(format!("Link({link_type:?})")),
                    _ => p.shape.push(format!("{tag:?}")),
                }
            }
            Event::End(tag) => p.shape.push(format!("/{tag:?}")),
            Event::Text(t) => text(&mut p, &t),
            // A code span shows its text as typed (an `@handle` that
            // would need escaping, issue 27 item 5).
            Event::Code(t) => text(&mut p, &t),
            Event::SoftBreak => text(&mut p, " "),
            other => p.shape.push(format!("{other:?}")),
        }
    }
    p
}

/// The top-level blocks CommonMark finds, as (byte offset, kind).
fn top_blocks(md: &str, opts: Options) -> Vec<(usize, &'static str)> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (ev, range) in Parser::new_ext(md, opts).into_offset_iter() {
        match ev {
            Event::Start(tag) => {
                if depth == 0 {
                    let kind = match tag {
                        Tag::MetadataBlock(_) => "meta",
                        Tag::Heading { .. } => "heading",
                        Tag::BlockQuote(_) => "quote",
                        Tag::List(_) => "list",
                        Tag::Paragraph => "paragraph",
                        _ => "other",
                    };
                    out.push((range.start, kind));
                }
                depth += 1;
            }
            Event::End(_) => depth -= 1,
            Event::Rule if depth == 0 => out.push((range.start, "rule")),
            _ if depth == 0 => out.push((range.start, "other")),
            _ => {}
        }
    }
    out
}

/// xmd's layout: every chunk of lines after a blank line is its own
/// top-level block, of the kind its first line announces (`#` heading, `>`
/// quote, `- ` or `1. ` list, `---` rule, the opening `---` front matter,
/// else a paragraph; the line after an ATX heading starts a block too). A merged block (a `Source:` line pulled into a quote,
/// a paragraph turned into a heading by `---`) breaks it.
fn check_layout(md: &str) -> Result<(), TestCaseError> {
    let mut want = Vec::new();
    let mut offset = 0;
    let mut prev_blank = true;
    let mut in_meta = false;
    let atx = |l: &str| {
        let h = l.chars().take_while(|c| *c == '#').count();
        (1..=6).contains(&h) && l[h..].chars().next().is_none_or(|c| c == ' ')
    };
    for line in md.split_inclusive('\n') {
        let l = line.trim_end_matches('\n');
        if in_meta {
            in_meta = l != "---";
        } else if prev_blank && !l.is_empty() {
            let kind = if offset == 0 && l == "---" {
                in_meta = true;
                "meta"
            } else if l == "---" {
                "rule"
            } else if atx(l) {
                "heading"
            } else if l.starts_with('>') {
                "quote"
            } else if l.starts_with("- ") || l.starts_with("1. ") {
                "list"
            } else {
                "paragraph"
            };
            want.push((offset, kind));
        }
        // An ATX heading is one line: the next line starts a block.
        prev_blank = l.is_empty() || (!in_meta && atx(l));
        offset += line.len();
    }
    for opts in [base_options(), extended_options()] {
        prop_assert_eq!(top_blocks(md, opts), want.clone(), "{}", md);
    }
    Ok(())
}

/// Hostile text: every ASCII punctuation character, Unicode line
/// separators and controls, URLs with odd schemes, nested brackets, HTML,
/// entity references, Markdown block and inline syntax, and any char.
fn hostile() -> impl Strategy<Value = String> {
    const SNIPPETS: &[&str] = &[
        "![](https://tracker.example/p.gif)",
        "[https://x.com/someone](https://phish.example/login)",
        "[x](javascript:alert(1))",
        "[[a](b)](c)",
        "![![x](y)](z)",
        "[ref]: https://e.example/r",
        "[ref]",
        "[[wiki]]",
        "<b>bold</b>",
        "<!-- c -->",
        "<https://a.example/x>",
        "<javascript:alert(1)>",
        "<script>alert(1)</script>",
        "`code`",
        "``a`b``",
        "*em*",
        "**strong**",
        "_em_",
        "__VA_ARGS__",
        "snake_case_name",
        "Ⓐ_a_Ⓐ 🄰_b_🄰",
        "~~strike~~",
        "~one~",
        "| a | b |\n|---|---|\n| c | d |",
        "a|b\n-|-",
        "&amp;",
        "&#60;",
        "&#x3C;",
        "&lt;",
        "&copy",
        "AT&T",
        "1. ",
        "1) ",
        "2026. ",
        "- ",
        "+ ",
        "* ",
        "# ",
        "###### ",
        "#tag",
        "> ",
        "---",
        "===",
        "***",
        "___",
        "    indented",
        "```",
        "~~~",
        "\\",
        "\\*",
        "https://e.example/a_b*c*_(d)",
        "javascript:alert(1)",
        "data:text/html,<b>x</b>",
        "vbscript:x",
        "HTTPS://E.EXAMPLE/",
        "www.example.com",
        "a@b.example",
        "Name\u{2028}injected:\u{2028}- x",
        "key: value",
        " #comment",
        "'quoted'",
        "\"dq\"",
        "{a: 1}",
        "[1, 2]",
        "&anchor *alias !tag",
        "%YAML",
        "? q",
        "$x$",
        "==hl==",
    ];
    const PUNCT: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    const SPACES: &[&str] = &[
        " ", "  ", "\n", "\n\n", "\r\n", "\r", "\t", "\u{2028}", "\u{2029}", "\u{85}", "\u{a0}",
        "\u{feff}", "\u{0}", "\u{1b}", "\u{7f}", "\u{200d}", "\u{3000}",
    ];
    // Bidi openers: LRE, RLE, LRO, RLO, LRI, RLI, FSI.
    const BIDI_OPENERS: &[&str] = &[
        "\u{202A}", "\u{202B}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}",
    ];
    prop::collection::vec(
        prop_oneof![
            1 => prop::sample::select(BIDI_OPENERS).prop_map(str::to_string),
            3 => prop::sample::select(SNIPPETS).prop_map(str::to_string),
            3 => prop::sample::select(PUNCT.chars().collect::<Vec<_>>()).prop_map(String::from),
            2 => prop::sample::select(SPACES).prop_map(str::to_string),
            2 => "[a-zA-Z0-9]{1,6}",
            1 => Just("é🦊".to_string()),
            1 => any::<char>().prop_map(String::from),
        ],
        0..16,
    )
    .prop_map(|v| v.concat())
}

/// A field value that shows at least one visible character (an empty one
/// takes a fallback the template does not have).
fn shown(s: String) -> String {
    if norm(&s).is_empty() {
        "x".into()
    } else {
        s
    }
}

/// Placeholders and what each must be replaced by in the visible text.
#[derive(Default)]
struct Fields {
    expect: BTreeMap<String, String>,
    /// The URLs the running-text fields hold, as a parser must read them.
    urls: Vec<String>,
}

/// The fields that are running text (post and quote text, bios, notes,
/// poll options, card descriptions, an article's list items and
/// paragraphs): their URLs are autolinks, their mentions exact (issue 27
/// item 5). The others (names, headings, alt text, locations) escape them
/// as text.
const RUNNING: &[&str] = &[
    "text", "bio", "pbio", "poll", "qpoll", "card1", "note", "qtext", "line", "artli", "artp",
];

/// The running fields of an article's styled blocks, where a URL starts
/// at any `http(s)://`, after a letter too (render/styled.rs: a delimiter
/// or a character reference may stand before it in the Markdown).
const STYLED: &[&str] = &["artli", "artp"];

/// The visible text of running text `s` (already `norm`ed): each URL
/// found (`linkify`, as the escapers find it) shown as the parser reads
/// the autolink written for it (`autolink_target`: the documented
/// percent-encoding), every other character as typed; and those URLs.
fn running_visible(s: &str, styled: bool) -> (String, Vec<String>) {
    let (mut out, mut urls) = (String::new(), Vec::new());
    let mut i = 0;
    while i < s.len() {
        let end = if styled {
            url_end(&s[i..], 0).map(|e| i + e)
        } else {
            url_end(s, i)
        };
        if let Some(end) = end {
            let u = autolink_target(&s[i..end]).expect("an http(s) URL");
            out.push_str(&u);
            urls.push(u);
            i = end;
            continue;
        }
        let c = s[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    (out, urls)
}

impl Fields {
    /// A one-line field: the placeholder, and the expected visible text.
    fn inline(&mut self, key: &str, value: &str) -> String {
        let ph = format!("QQ{key}QQ");
        let field = key.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'P');
        let field = if key.starts_with("card") { key } else { field };
        let v = if RUNNING.contains(&field) {
            let (v, urls) = running_visible(&norm(value), STYLED.contains(&field));
            self.urls.extend(urls);
            v
        } else {
            norm(value)
        };
        self.expect.insert(ph.clone(), v);
        ph
    }

    /// A body field whose blank lines are paragraph breaks: a placeholder
    /// per paragraph, joined by blank lines.
    fn body(&mut self, key: &str, value: &str) -> String {
        let mut paras: Vec<String> = Vec::new();
        let mut cur = String::new();
        for line in value.trim().lines() {
            if norm(line).is_empty() {
                if !cur.is_empty() {
                    paras.push(std::mem::take(&mut cur));
                }
            } else {
                cur.push(' ');
                cur.push_str(line);
            }
        }
        if !cur.is_empty() {
            paras.push(cur);
        }
        paras
            .iter()
            .enumerate()
            .map(|(i, p)| self.inline(&format!("{key}P{i}"), p))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// The template's visible text with every placeholder replaced.
    fn expected(&self, template_visible: &str) -> String {
        let mut v = template_visible.to_string();
        for (ph, val) in &self.expect {
            assert!(v.contains(ph.as_str()), "placeholder {ph} not shown in {v}");
            v = v.replace(ph.as_str(), val);
        }
        norm(&v)
    }
}

/// Every user-text field of a post (and the profile of its author).
#[derive(Debug, Clone)]
struct PostText {
    text: String,
    name: String,
    bio: String,
    location: String,
    website: String,
    poll: [String; 2],
    alt: [String; 3],
    card: [String; 4],
    note: String,
    quote_text: String,
    quote_name: String,
    article: [String; 4],
}

fn post_text() -> impl Strategy<Value = PostText> {
    let s = || hostile().prop_map(shown);
    (
        (s(), s(), s(), s(), s()),
        (s(), s(), s(), s(), s()),
        (s(), s(), s(), s(), s()),
        (s(), s(), s(), s(), s(), s()),
    )
        .prop_map(|(a, b, c, d)| PostText {
            text: a.0,
            name: a.1,
            bio: a.2,
            location: a.3,
            website: a.4,
            poll: [b.0, b.1],
            alt: [b.2, b.3, b.4],
            card: [c.0, c.1, c.2, c.3],
            note: c.4,
            quote_text: d.0,
            quote_name: d.1,
            article: [d.2, d.3, d.4, d.5],
        })
}

/// The posts of a thread render: a reply (its parent not shown) carrying
/// every attached item, and an article post. With `f` = `None` the fields
/// hold the raw values; with `Some` they hold placeholders.
fn thread(t: &PostText, f: Option<&mut Fields>) -> Vec<Value> {
    let mut owned = Fields::default();
    let (f, raw) = match f {
        Some(f) => (f, false),
        None => (&mut owned, true),
    };
    let mut inl = |k: &str, v: &str| if raw { v.to_string() } else { f.inline(k, v) };
    let name = inl("name", &t.name);
    let bio = inl("bio", &t.bio);
    let location = inl("location", &t.location);
    let website = inl("website", &t.website);
    let poll: Vec<String> = (0..2)
        .map(|i| inl(&format!("poll{i}"), &t.poll[i]))
        .collect();
    let alt: Vec<String> = (0..3).map(|i| inl(&format!("alt{i}"), &t.alt[i])).collect();
    // An http(s) card URL is xmd's own link, an autolink (issue 27 item
    // 5; its exactness is tests/x_exact_links.rs): a fixed one in both
    // renders. Any other card URL is text, and must stay text.
    let linked = |u: &str| {
        let l = u.trim().to_ascii_lowercase();
        ["https://", "http://"]
            .iter()
            .any(|s| l.starts_with(s) && l.len() > s.len())
    };
    let card: Vec<String> = (0..4)
        .map(|i| {
            if i == 2 && linked(&t.card[2]) {
                "https://card.example/u".to_string()
            } else {
                inl(&format!("card{i}"), &t.card[i])
            }
        })
        .collect();
    let quote_name = inl("qname", &t.quote_name);
    // The quote carries a poll, a photo and a quote of its own (nested
    // blockquotes), reusing two hostile values under their own placeholders.
    let qpoll = inl("qpoll", &t.poll[1]);
    let qalt = inl("qalt", &t.alt[0]);
    let art_title = inl("arttitle", &t.article[0]);
    let art_h = inl("arth", &t.article[1]);
    let art_li = inl("artli", &t.article[2]);
    let mut body = |k: &str, v: &str| if raw { v.to_string() } else { f.body(k, v) };
    let text = body("text", &t.text);
    let note = body("note", &t.note);
    let quote_text = body("qtext", &t.quote_text);
    let art_p = body("artp", &t.article[3]);
    let author = json!({"screen_name": "u", "name": name, "description": bio, "location": location,
        "website": {"url": "https://e.example/w", "display_url": website}, "followers": 1, "following": 2,
        "joined": "Tue Feb 14 09:30:11 +0000 2023"});
    let mut first = json!({
        "type": "status", "id": "1800000000000000002", "url": "https://x.com/u/status/1800000000000000002",
        "context": "post", "text": text, "author": author,
        "created_at": "Mon Aug 10 12:41:03 +0000 2026", "likes": 1, "reposts": 2, "replies": 3, "views": 4,
        "replying_to": {"screen_name": "p", "status": "1800000000000000001"},
        "poll": {"choices": [{"label": poll[0], "count": 1, "percentage": 50.0},
                             {"label": poll[1], "count": 1, "percentage": 50.0}],
                 "total_votes": 2, "time_left_en": "Final results"},
        "media": {"all": [
            {"type": "photo", "url": "https://pbs.twimg.com/media/a.jpg", "altText": alt[0]},
            {"type": "video", "url": "https://video.twimg.com/v.mp4", "thumbnail_url": "https://pbs.twimg.com/t.jpg",
             "altText": alt[1], "duration": 1.5, "width": 2, "height": 2,
             "formats": [{"url": "https://video.twimg.com/v.mp4", "container": "mp4", "bitrate": 1}]},
            {"type": "gif", "url": "https://video.twimg.com/g.mp4", "thumbnail_url": "https://pbs.twimg.com/g.jpg",
             "altText": alt[2], "formats": [{"url": "https://video.twimg.com/g.mp4", "container": "mp4"}]}]},
        "card": {"title": card[0], "description": card[1], "url": card[2], "domain": card[3]},
        "community_note": {"text": note, "facets": [{"type": "url", "indices": [0, 1],
            "original": "https://t.co/n", "replacement": "https://e.example/source"}]},
        "quote": {"type": "status", "id": "1700000000000000001", "url": "https://x.com/q/status/1700000000000000001",
                  "text": quote_text, "author": {"screen_name": "q", "name": quote_name},
                  "created_at": "Sun Aug 09 10:00:00 +0000 2026",
                  "poll": {"choices": [{"label": qpoll, "count": 1, "percentage": 100.0}], "total_votes": 1},
                  "media": {"all": [{"type": "photo", "url": "https://pbs.twimg.com/media/q.jpg", "altText": qalt}]},
                  "quote": {"type": "status", "id": "1600000000000000001", "text": "inner",
                            "author": {"screen_name": "r", "name": "R"}}}
    });
    let mut second = json!({
        "type": "status", "id": "1800000000000000003", "url": "https://x.com/u/status/1800000000000000003",
        "context": "thread", "text": "", "author": {"screen_name": "u", "name": "Second"},
        "created_at": "Mon Aug 10 13:00:00 +0000 2026",
        "article": {"title": art_title, "content": {"blocks": [
            {"type": "header-two", "text": art_h},
            {"type": "unordered-list-item", "text": art_li},
            {"type": "unstyled", "text": art_p}]}}
    });
    normalize(&mut first, 0);
    normalize(&mut second, 0);
    vec![first, second]
}

/// Renders both ways and compares structure and visible text.
/// Every line of `md` ends with no embedding, override or isolate open.
fn bidi_closed(md: &str) -> Result<(), TestCaseError> {
    match bidi_left_open(md) {
        Some(line) => Err(TestCaseError::fail(format!(
            "left open at the end of {line:?}"
        ))),
        None => Ok(()),
    }
}

fn check_same_shape(render: impl Fn(bool) -> String, fields: &Fields) -> Result<(), TestCaseError> {
    let (template, actual) = (render(true), render(false));
    check_layout(&template)?;
    check_layout(&actual)?;
    bidi_closed(&actual)?;
    for opts in [base_options(), extended_options()] {
        let (t, a) = (parse_with(&template, opts), parse_with(&actual, opts));
        prop_assert_eq!(
            &a.shape,
            &t.shape,
            "template:\n{}\n\nactual:\n{}",
            template,
            actual
        );
        prop_assert_eq!(
            norm(&plain(&a.visible)),
            norm(&plain(&fields.expected(&t.visible))),
            "template:\n{}\n\nactual:\n{}",
            template,
            actual
        );
        prop_assert_eq!(&a.dests, &t.dests);
        // xmd's own autolinks in order; every other one a URL of the
        // running text, as meant.
        let mut own = t.auto.iter().peekable();
        for u in &a.auto {
            if own.peek() == Some(&u) {
                own.next();
            } else {
                prop_assert!(
                    fields.urls.contains(u),
                    "{:?} not meant: {:?}\n{}",
                    u,
                    fields.urls,
                    actual
                );
            }
        }
        prop_assert!(own.next().is_none(), "{:?} {:?}", t.auto, a.auto);
    }
    Ok(())
}

fn http(dest: &str) -> bool {
    let l = dest.to_ascii_lowercase();
    (l.starts_with("https://") || l.starts_with("http://"))
        && !dest.chars().any(|c| c.is_whitespace() || c.is_control())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]

    /// Post and thread Markdown, every format and detail level.
    #[test]
    fn post_text_never_becomes_structure(t in post_text(), mode in 0..4usize) {
        let (format, full) = [("markdown", false), ("markdown", true), ("obsidian", false), ("obsidian", true)][mode];
        let mut fields = Fields::default();
        let template = thread(&t, Some(&mut fields));
        let actual = thread(&t, None);
        let opts = RenderOptions { format: Format::parse(format).unwrap(), full, userinfo: UserInfo::All };
        check_same_shape(
            |tpl| render_posts(if tpl { &template } else { &actual }, &opts),
            &fields,
        )?;
    }

    /// Profile, search and user lines.
    #[test]
    fn browse_text_never_becomes_structure(t in post_text(), query in hostile().prop_map(shown), full in any::<bool>()) {
        let mut fields = Fields::default();
        let tpl_posts = thread(&t, Some(&mut fields));
        let posts = thread(&t, None);
        let bio_raw = t.bio.clone();
        let bio_ph = fields.body("pbio", &bio_raw);
        let q_ph = fields.inline("query", &query);
        // The post's text is one line in browse: one placeholder for it all.
        let line_ph = fields.inline("line", &t.text);
        let to_user = |p: &Value, bio: &str, text: Option<&str>| {
            let mut p = p.clone();
            p["author"]["description"] = json!(bio);
            if let Some(text) = text {
                p["text"] = json!(text);
            }
            p
        };
        let user_of = |p: &Value| p["author"].clone();
        let tpl_first = to_user(&tpl_posts[0], &bio_ph, Some(&line_ph));
        let first = to_user(&posts[0], &bio_raw, None);
        // Only the fields browse layouts show (the location only with `full`).
        let shows: &[&str] = if full { &["name", "location", "pbio", "query", "line"] } else { &["name", "pbio", "query", "line"] };
        fields.expect.retain(|k, _| shows.iter().any(|f| k.starts_with(&format!("QQ{f}"))));
        let render = |tpl: bool| {
            let (p, q) = if tpl { (&tpl_first, q_ph.as_str()) } else { (&first, query.as_str()) };
            let users = [typed::<User>(&user_of(p))];
            let post = typed::<Status>(p);
            let mut md = profile_markdown(&users[0], std::slice::from_ref(&post), full, &[], None);
            md.push('\n');
            md.push_str(&search_markdown(q, std::slice::from_ref(&post), None, full, &[], &[], None));
            md.push('\n');
            md.push_str(&search_markdown(q, &[], Some(&users), full, &[], &[], None));
            md
        };
        check_same_shape(render, &fields)?;
    }

    /// Whatever URLs upstream sends (odd schemes, spaces, brackets, quotes),
    /// every link and image points at http(s), and no raw HTML appears.
    #[test]
    fn only_http_is_ever_linked(urls in prop::collection::vec(prop_oneof![
        hostile(),
        Just("javascript:alert(1)".to_string()),
        Just("JaVaScRiPt:alert(1)".to_string()),
        Just(" data:image/svg+xml,<svg>".to_string()),
        Just("//evil.example/x".to_string()),
        Just("https://a.example/x y)(\"'<>\\`*_".to_string()),
        Just("https://a.example/\u{2028}\u{85}\n".to_string()),
        Just("https://a.example/\u{202E}gpj.exe\u{2066}x\u{202C}".to_string()),
    ], 8), full in any::<bool>()) {
        let mut p = json!({
            "type": "status", "id": "1800000000000000002", "url": urls[0], "context": "post",
            "text": "t", "author": {"screen_name": "u", "name": "N"},
            "media": {"all": [
                {"type": "photo", "url": urls[1]},
                {"type": "video", "url": urls[2], "thumbnail_url": urls[3],
                 "formats": [{"url": urls[4], "container": "mp4", "bitrate": 1}, {"url": urls[5], "container": "m3u8"}]},
                {"type": "gif", "url": urls[6], "thumbnail_url": urls[7]},
                {"type": "other", "url": urls[4]}]},
            "card": {"title": "c", "url": urls[5]},
            "community_note": {"text": "n", "facets": [{"type": "url", "replacement": urls[6]}]},
            "quote": {"type": "status", "id": "1", "url": urls[7], "text": "q", "author": {"screen_name": "q"}},
            "article": {"title": "a", "cover_media": {"media_info": {"original_img_url": urls[1]}}}
        });
        normalize(&mut p, 0);
        for format in ["markdown", "obsidian"] {
            let md = render_posts(std::slice::from_ref(&p), &RenderOptions { format: Format::parse(format).unwrap(), full, userinfo: UserInfo::All });
            let parsed = parse(&md);
            for d in &parsed.dests {
                prop_assert!(http(d), "non-http destination {:?} in\n{}", d, md);
                prop_assert!(!d.chars().any(bidi), "raw bidi control in {:?}", d);
            }
            bidi_closed(&md)?;
            for s in &parsed.shape {
                prop_assert!(!s.starts_with("Html") && !s.starts_with("InlineHtml") && !s.starts_with("Code"), "{} in\n{}", s, md);
            }
            let mut browse = p.clone();
            browse["author"]["website"] = json!({"url": urls[2]});
            let md = profile_markdown(&typed::<User>(&browse["author"]), &[typed::<Status>(&browse)], full, &[], None);
            for d in &parse(&md).dests {
                prop_assert!(http(d), "non-http destination {:?} in\n{}", d, md);
                prop_assert!(!d.chars().any(bidi), "raw bidi control in {:?}", d);
            }
            bidi_closed(&md)?;
        }
    }

    /// The Obsidian front matter is one YAML mapping holding exactly the
    /// fields written, for any name, handle and URL.
    #[test]
    fn front_matter_is_exactly_the_fields_written(name in hostile(), handle in hostile(), url in hostile(), two in any::<bool>(), date in date()) {
        front_matter_case(&name, &handle, &url, two, &date)?;
    }
}

/// Renders an Obsidian note for one or two posts by `name` (@`handle`) at
/// `url` and reads its front matter back with yaml-rust2: one mapping, the
/// keys in order, every value exactly as given. Returns the YAML and the
/// fields as JSON `[key, value]` pairs in order (for the YAML 1.1 check in
/// CI).
fn front_matter_case(
    name: &str,
    handle: &str,
    url: &str,
    two: bool,
    date: &str,
) -> Result<(String, Value), TestCaseError> {
    let post = json!({"type": "status", "id": "1", "url": url, "context": "post", "text": "t",
        "author": {"screen_name": handle, "name": name}, "created_at": date});
    let posts = if two {
        vec![post.clone(), post]
    } else {
        vec![post]
    };
    let md = render_posts(
        &posts,
        &RenderOptions {
            format: Format::Obsidian,
            full: false,
            userinfo: UserInfo::Off,
        },
    );
    let parsed = parse(&md);
    prop_assert_eq!(
        parsed.shape.first().map(String::as_str),
        Some("Meta"),
        "{}",
        md
    );
    let yaml = parsed.meta.clone().unwrap();
    // YAML 1.1 readers (PyYAML, Obsidian) break lines at these.
    prop_assert!(
        !yaml.contains(['\u{85}', '\u{2028}', '\u{2029}']),
        "{}",
        yaml
    );
    // Escaped, read back as written, never reordering the line as shown.
    prop_assert!(!yaml.chars().any(bidi), "raw bidi control in {}", yaml);
    let docs = YamlLoader::load_from_str(&yaml)
        .map_err(|e| TestCaseError::fail(format!("{e}: {yaml}")))?;
    prop_assert_eq!(docs.len(), 1);
    let Yaml::Hash(h) = &docs[0] else {
        return Err(TestCaseError::fail(format!("not a mapping: {yaml}")));
    };
    let mut want: Vec<(&str, Value)> = vec![
        ("source", json!(url)),
        ("author", json!(name)),
        ("author_handle", json!(handle)),
        (
            "published",
            json!(iso(date).unwrap_or_else(|| date.to_string())),
        ),
    ];
    if two {
        want.push(("thread_posts", json!(2)));
    }
    want.push(("tags", json!(["twitter", "x", handle])));
    let to_json = |y: &Yaml| match y {
        Yaml::String(s) => Some(json!(s)),
        Yaml::Integer(i) => Some(json!(i)),
        Yaml::Array(a) => a
            .iter()
            .map(|v| v.as_str().map(|s| json!(s)))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        _ => None,
    };
    let got: Vec<(String, Option<Value>)> = h
        .iter()
        .map(|(k, v)| (k.as_str().unwrap_or("?").to_string(), to_json(v)))
        .collect();
    let wanted: Vec<(String, Option<Value>)> = want
        .iter()
        .map(|(k, v)| (k.to_string(), Some(v.clone())))
        .collect();
    prop_assert_eq!(got, wanted, "{}", yaml);
    Ok((yaml, json!(want)))
}

/// The same check over a fixed, seeded sample (the issue's U+2028 name
/// first). With `XMD_YAML_SAMPLES=<file>` the samples are also written as
/// JSON lines `{"yaml", "fields": [[key, value], …]}` for `tests/interop/yaml11_check.py`,
/// which reads them with PyYAML, a YAML 1.1 reader (`.ci/run`, phase
/// `yaml11`).
/// A post whose author, parent and quoted authors have the given handles.
fn handles_post(h: [&str; 4]) -> Vec<Value> {
    let mut v = json!({
        "type": "status", "id": "1800000000000000002",
        "text": "text", "author": {"screen_name": h[0], "name": "N"},
        "created_at": "Mon Aug 10 12:41:03 +0000 2026",
        "replying_to": {"screen_name": h[1], "status": "1800000000000000001"},
        "quote": {"type": "status", "id": "1700000000000000001", "text": "quoted",
                  "author": {"screen_name": h[2], "name": "Q"},
                  "created_at": "Sun Aug 09 10:00:00 +0000 2026",
                  "quote": {"type": "status", "id": "1600000000000000001", "text": "inner",
                            "author": {"screen_name": h[3], "name": "R"}}}
    });
    normalize(&mut v, 0);
    vec![v]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Valid X handles (`[A-Za-z0-9_]{1,20}`, so `_x_` and `__init__`)
    /// never become emphasis: wherever a handle is shown (heading,
    /// "Replying to" and its URL, quoted authors, the Source line), the
    /// structure equals the one with plain handles, and the reader sees
    /// the handle as typed.
    #[test]
    fn valid_handles_never_become_structure(
        h in prop::array::uniform4("[A-Za-z0-9_]{1,20}"),
        mode in 0..3usize,
    ) {
        let (format, full) = [("markdown", false), ("markdown", true), ("obsidian", false)][mode];
        let opts = RenderOptions { format: Format::parse(format).unwrap(), full, userinfo: UserInfo::All };
        let template = render_posts(&handles_post(["ha", "hb", "hc", "hd"]), &opts);
        let actual = render_posts(&handles_post([&h[0], &h[1], &h[2], &h[3]]), &opts);
        check_layout(&actual)?;
        for o in [base_options(), extended_options()] {
            let (t, a) = (parse_with(&template, o), parse_with(&actual, o));
            prop_assert_eq!(&a.shape, &t.shape, "template:\n{}\n\nactual:\n{}", template, actual);
            for x in &h {
                prop_assert!(a.visible.contains(&format!("@{x}")), "@{} not shown in\n{}", x, actual);
            }
        }
    }
}

#[test]
fn front_matter_samples() {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[16; 32]),
    );
    let strategy = (hostile(), hostile(), hostile(), any::<bool>(), date());
    let mut cases = vec![(
        "Name\u{2028}injected:\u{2028}- x".to_string(),
        "u".to_string(),
        "https://x.com/u/status/1".to_string(),
        false,
        CLASSIC_DATE.to_string(),
    )];
    for _ in 0..FRONT_MATTER_SAMPLES {
        cases.push(strategy.new_tree(&mut runner).unwrap().current());
    }
    let mut out = String::new();
    for (name, handle, url, two, date) in &cases {
        let (yaml, fields) =
            front_matter_case(name, handle, url, *two, date).unwrap_or_else(|e| panic!("{e}"));
        out.push_str(&json!({"yaml": yaml, "fields": fields}).to_string());
        out.push('\n');
    }
    if let Some(path) = std::env::var_os("XMD_YAML_SAMPLES") {
        std::fs::write(path, out).unwrap();
    }
}

/// X's date form, read as `2026-08-10T12:41:03Z`.
const CLASSIC_DATE: &str = "Mon Aug 10 12:41:03 +0000 2026";

/// A post's `created_at`: X's form, ISO 8601, or hostile text (written to
/// `published` as sent when it is not a date).
fn date() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => Just(CLASSIC_DATE.to_string()),
        1 => Just("2026-08-10T12:41:03.000Z".to_string()),
        2 => hostile().prop_filter("a date field is a non-empty string", |d| !d.is_empty()),
    ]
}

/// How many seeded front matter samples [`front_matter_samples`] checks.
const FRONT_MATTER_SAMPLES: usize = 1000;

/// The issue's reported cases, one each (regressions; the class is proved
/// above).
#[test]
fn reported_cases() {
    let mut p = json!({"type": "status", "id": "1", "url": "https://x.com/u/status/1", "context": "post",
        "text": "![](https://tracker.example/p.gif) [https://x.com/someone](https://phish.example/login) [x](javascript:alert(1)) *text* _text_ __VA_ARGS__ `code`",
        "author": {"screen_name": "u", "name": "Name\u{2028}injected:\u{2028}- x"},
        "created_at": "Mon Aug 10 12:41:03 +0000 2026"});
    normalize(&mut p, 0);
    let md = render_posts(
        std::slice::from_ref(&p),
        &RenderOptions {
            format: Format::Obsidian,
            full: false,
            userinfo: UserInfo::Off,
        },
    );
    assert_eq!(
        md,
        "---\nsource: \"https://x.com/u/status/1\"\nauthor: \"Name\\u2028injected:\\u2028- x\"\nauthor_handle: \"u\"\npublished: \"2026-08-10T12:41:03Z\"\ntags: [\"twitter\", \"x\", \"u\"]\n---\n\n## Post · 1/1 — Name injected: - x (@u)\n\n!\\[\\](<https://tracker.example/p.gif>) \\[<https://x.com/someone]%28https://phish.example/login%29> \\[x\\](javascript:alert(1)) \\*text\\* \\_text\\_ \\_\\_VA_ARGS\\_\\_ \\`code\\`\n\nDate: 2026-08-10T12:41:03Z"
    );
    let parsed = parse(&md);
    // The http(s) URLs the author typed are autolinks, to exactly the
    // URL a GFM linkifier takes (up to whitespace; the unbalanced `)`
    // left out); the rest is text (issue 27 item 5).
    assert!(parsed.dests.is_empty());
    assert_eq!(
        parsed.auto,
        [
            "https://tracker.example/p.gif",
            "https://x.com/someone]%28https://phish.example/login%29"
        ]
    );
    assert!(parsed.visible.contains(
        "![](https://tracker.example/p.gif) [https://x.com/someone]%28https://phish.example/login%29 [x](javascript:alert(1)) *text* _text_ __VA_ARGS__ `code`"
    ));
}
