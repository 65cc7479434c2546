//! Issue 27 item 5 for text written by X users: every `http(s)` URL and
//! every @mention in running user text (a post's text, a bio, a list row)
//! is exact, in what a GFM linkifier finds and in the Markdown source.
//! The old escapers wrote `https://example.com/a\_b\_`, which GitHub,
//! markdown-it (linkify) and micromark (GFM) link to `…a%5C_b%5C_`, and
//! `@cobalt\_wren\_`, which an agent copies back with its backslashes.
//!
//! Oracle: comrak, a GFM parser, with its autolink extension (bare URLs
//! too), strikethrough and tables. Generated texts put generated URLs
//! (paths holding `_`, `*`, `(`, `)`, `~`, `>`, `&`, entity-shaped runs,
//! `\`, quotes, non-ASCII) and generated handles (`[A-Za-z0-9_]{1,20}`)
//! among generated Markdown-hostile text, rendered by the real renderers:
//! the URLs comrak finds (xmd's own links set apart) are, byte for byte,
//! the URLs meant after the documented encoding (`autolink_target`); each
//! handle reads back as `@handle` in the rendered text and stands as
//! typed, with no backslash, in the source.

use comrak::nodes::NodeValue;
use comrak::{parse_document, Arena, Options};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::args::{Format, UserInfo};
use xmd::x::escape::autolink_target;
use xmd::x::model::status::Status;
use xmd::x::model::user::User;
use xmd::x::render::browse::{post_line, profile_markdown};
use xmd::x::render::post::{render_posts, RenderOptions};

/// Every link URL comrak finds, in order, and the rendered text (text
/// and code spans).
fn parse(md: &str) -> (Vec<String>, String) {
    let arena = Arena::new();
    let mut o = Options::default();
    o.extension.autolink = true;
    o.extension.strikethrough = true;
    o.extension.table = true;
    let root = parse_document(&arena, md, &o);
    let (mut urls, mut text) = (Vec::new(), String::new());
    for n in root.descendants() {
        match &n.data().value {
            NodeValue::Link(l) | NodeValue::Image(l) => urls.push(l.url.clone()),
            NodeValue::Text(t) => text.push_str(t),
            NodeValue::Code(c) => text.push_str(&c.literal),
            NodeValue::SoftBreak | NodeValue::LineBreak => text.push(' '),
            _ => {}
        }
    }
    (urls, text)
}

/// A URL whose extent is plain to every reader: it ends in a letter or
/// digit and holds no whitespace or `<` (where a GFM linkifier stops).
fn url() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a", "b7", "_", "__", "*", "(", ")", "~", "~~", ">", "&", "&amp;", "&#95;", "&x;", "\\",
        "\\_", "\"", "'", "[", "]", "`", "é", "🦊", "?", "=", "/", ".", ",", ":", "!", ";", "#",
        "%41", "|", "^",
    ]);
    (
        prop::sample::select(vec![
            "https://example.com/",
            "http://e.example.org/",
            "HTTPS://t.co/",
            "https://x.com/",
        ]),
        prop::collection::vec(piece, 0..12),
        "[a-z0-9]",
    )
        .prop_map(|(host, p, end)| format!("{host}{}{end}", p.concat()))
}

fn handle() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_]{1,20}"
}

/// Markdown-hostile text that holds no URL, mention, email or `www.` of
/// its own.
fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "word",
            "snake_case",
            "_em_",
            "__b__",
            "*x*",
            "**",
            "~~s~~",
            "`c`",
            "[l](m)",
            "<b>",
            "&amp;",
            "&",
            "AT&T",
            "# ",
            "- ",
            "1. ",
            "> ",
            "\\",
            "|",
            "^",
            "é",
            "字",
            "(",
            ")",
            "!",
            ":",
            ".",
            "_",
            "~",
            "=",
        ]),
        0..5,
    )
    .prop_map(|v| v.concat())
}

/// A piece of user text: hostile text, a URL or a mention.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Url(String),
    Mention(String),
}

/// User text of hostile text, URLs and mentions, each URL and mention
/// set off by a space (or an opening parenthesis) from the text around
/// it; with the URLs meant (`autolink_target`) and the handles.
fn user_text() -> impl Strategy<Value = (String, Vec<String>, Vec<String>)> {
    prop::collection::vec(
        prop_oneof![
            2 => hostile().prop_map(Piece::Text),
            2 => url().prop_map(Piece::Url),
            2 => handle().prop_map(Piece::Mention),
        ],
        1..8,
    )
    .prop_map(|pieces| {
        let (mut s, mut urls, mut handles) = (String::new(), Vec::new(), Vec::new());
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Url(u) => {
                    let balanced = u.matches('(').count() <= u.matches(')').count();
                    if i % 3 == 1 && balanced {
                        // `(https://…)`: the `)` is not the URL's (it
                        // would be if it closed a `(` of the URL).
                        s.push_str(&format!("({u})"));
                    } else {
                        s.push_str(u);
                    }
                    urls.push(autolink_target(u).unwrap());
                }
                Piece::Mention(h) => {
                    s.push('@');
                    s.push_str(h);
                    handles.push(h.clone());
                }
            }
        }
        (s, urls, handles)
    })
}

/// The links `md` holds that are not xmd's own (the author's profile and
/// the post's URL, under `https://x.com/zz9`), sorted.
fn user_links(md: &str) -> Vec<String> {
    let mut u: Vec<String> = parse(md)
        .0
        .into_iter()
        .filter(|u| !u.starts_with("https://x.com/zz9"))
        .collect();
    u.sort();
    u
}

fn check_handles(md: &str, handles: &[String]) -> Result<(), TestCaseError> {
    let (_, text) = parse(md);
    for h in handles {
        let at = format!("@{h}");
        prop_assert!(text.contains(&at), "{} not read in {:?}\n{}", at, text, md);
        prop_assert!(md.contains(&at), "{} not typed in\n{}", at, md);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// A post's text and its author's bio (the post's Author block), the
    /// post as a list row, and the bio in a profile.
    #[test]
    fn urls_and_mentions_in_user_text_are_exact(
        (text, text_urls, text_handles) in user_text(),
        (bio, bio_urls, bio_handles) in user_text(),
    ) {
        let author = json!({"id": "7", "name": "Name", "screen_name": "zz9", "description": bio});
        let p: Value = json!({"type": "status", "id": "1", "url": "https://x.com/zz9/status/1",
            "text": text, "created_at": "Tue Aug 11 16:05:42 +0000 2026", "author": author});

        // The post, with its Author block.
        let opts = RenderOptions { format: Format::Markdown, full: false, userinfo: UserInfo::All };
        let md = render_posts(std::slice::from_ref(&p), &opts);
        let mut meant: Vec<String> = text_urls.iter().chain(&bio_urls).cloned().collect();
        meant.sort();
        prop_assert_eq!(user_links(&md), meant, "{}", md);
        check_handles(&md, &text_handles)?;
        check_handles(&md, &bio_handles)?;

        // The post as a list row.
        let row: Status = serde_json::from_value(p).unwrap();
        let line = post_line(&row, true);
        let mut meant = text_urls.clone();
        meant.sort();
        prop_assert_eq!(user_links(&line), meant, "{}", line);
        check_handles(&line, &text_handles)?;

        // The bio in a profile.
        let user: User = serde_json::from_value(author).unwrap();
        let md = profile_markdown(&user, &[], false, &[], None);
        let mut meant = bio_urls.clone();
        meant.sort();
        prop_assert_eq!(user_links(&md), meant, "{}", md);
        check_handles(&md, &bio_handles)?;
    }
}

#[test]
fn the_reported_case() {
    let p = json!({"type": "status", "id": "1", "url": "https://x.com/zz9/status/1",
        "text": "see https://example.com/a_b_ and ask @cobalt_wren_",
        "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "author": {"id": "7", "name": "Name", "screen_name": "zz9"}});
    let row: Status = serde_json::from_value(p).unwrap();
    let line = post_line(&row, false);
    assert!(
        line.contains(": see <https://example.com/a_b>\\_ and ask `@cobalt_wren_` ("),
        "{line}"
    );
    assert_eq!(user_links(&line), ["https://example.com/a_b"]);
}
