//! Issue 27 item 5: every URL and @handle xmd writes is exact.
//!
//! `Source: https://x.com/cobalt_wren\_/status/…`: GitHub, markdown-it
//! (linkify) and micromark (GFM) linked that to `…cobalt_wren%5C_…`, and
//! an agent that copied `@cobalt_wren\_` back got "not a valid handle".
//! Now a bare URL is an autolink `<…>` (no backslash-escape is processed
//! inside one, and no linkifier can take a backslash into it) and a link
//! destination keeps [`link_url`]'s encoding; a handle is written as typed
//! when nothing in it needs escaping, else as a code span `` `@h` ``.
//!
//! Oracle: comrak, a GFM parser, with its autolink extension (bare URLs
//! too), strikethrough and tables. Generated URLs holding `_`, `*`, `(`,
//! `)`, `~`, `<`, `>`, `&` (entity-shaped too), `\`, quotes, spaces and
//! non-ASCII, and generated handles `[A-Za-z0-9_]{1,20}`, rendered by the
//! post and list renderers: the links the parser finds are exactly the
//! URLs xmd meant (`link_url` of the post's URL, the profile link), byte
//! for byte (`link_target`); no emphasis appears in a row; the handle reads back, in the rendered
//! text and in the Markdown source, as `@handle` with no backslash.

use comrak::nodes::NodeValue;
use comrak::{parse_document, Arena, Options};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::args::{Format, UserInfo};
use xmd::x::escape::{at_handle, autolink, autolink_target, escape_inline, link_target};
use xmd::x::model::status::Status;
use xmd::x::render::browse::post_line;
use xmd::x::render::post::{render_posts, RenderOptions};

/// What a GFM parser makes of `md`: every link or image URL, in order; the
/// rendered text (text and code spans, in order); whether any emphasis.
fn parse(md: &str) -> (Vec<String>, String, bool) {
    let arena = Arena::new();
    let mut o = Options::default();
    o.extension.autolink = true;
    o.extension.strikethrough = true;
    o.extension.table = true;
    let root = parse_document(&arena, md, &o);
    let (mut urls, mut text, mut emph) = (Vec::new(), String::new(), false);
    for n in root.descendants() {
        match &n.data().value {
            NodeValue::Link(l) | NodeValue::Image(l) => urls.push(l.url.clone()),
            NodeValue::Text(t) => text.push_str(t),
            NodeValue::Code(c) => text.push_str(&c.literal),
            NodeValue::Emph | NodeValue::Strong | NodeValue::Strikethrough => emph = true,
            NodeValue::SoftBreak | NodeValue::LineBreak => text.push('\n'),
            _ => {}
        }
    }
    (urls, text, emph)
}

/// URLs of x.com and of any host, whose path and query hold the
/// characters that broke links.
fn url() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z0-9]{1,4}",
        Just("_".to_string()),
        Just("__".to_string()),
        Just("*".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("~".to_string()),
        Just("~~".to_string()),
        Just("<".to_string()),
        Just(">".to_string()),
        Just("&".to_string()),
        Just("&amp;".to_string()),
        Just("&#95;".to_string()),
        Just("\\".to_string()),
        Just("\\_".to_string()),
        Just("\"".to_string()),
        Just(" ".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("`".to_string()),
        Just("é".to_string()),
        Just("🦊".to_string()),
        Just("?".to_string()),
        Just("=".to_string()),
        Just("/".to_string()),
        Just(".".to_string()),
    ];
    (
        prop_oneof![
            Just("https://x.com/"),
            Just("http://example.org/"),
            Just("https://t.co/")
        ],
        prop::collection::vec(piece, 1..12),
    )
        .prop_map(|(host, p)| format!("{host}{}", p.concat()))
        // A URL's end is the renderer's: trailing spaces are trimmed, as
        // every URL xmd shows is.
        .prop_map(|u| u.trim_end().to_string())
}

fn handle() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_]{1,20}"
}

fn post(id: &str, handle: &str, url: &str) -> Value {
    json!({"type": "status", "id": id, "url": url, "text": "hello",
        "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "author": {"id": "7", "name": "Name", "screen_name": handle}})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A bare URL, alone or inside a sentence: the one link found is the
    /// URL xmd meant.
    #[test]
    fn a_bare_url_is_found_exactly(u in url(), after in prop_oneof![Just(""), Just("."), Just(")"), Just(" and _x_ ~")]) {
        let meant = autolink_target(&u).unwrap();
        let md = format!("Source: {}{}\n", autolink(&u), escape_inline(after));
        let (urls, _, _) = parse(&md);
        prop_assert_eq!(urls, vec![meant], "{}", md);
    }

    /// A post rendered whole (its Source line, its heading, the Author
    /// block) and as a list row (profile link, Source link): the links
    /// found are the URLs meant, the handle reads back exactly, no
    /// emphasis appears.
    #[test]
    fn rendered_posts_and_rows_keep_urls_and_handles_exact(u in url(), h in handle(), full in any::<bool>()) {
        let p = post("2087208847298015232", &h, &u);
        let meant = link_target(&u).unwrap();
        // An autolink's (the compact Source line): no entity left in it.
        let auto = autolink_target(&u).unwrap();
        let profile = format!("https://x.com/{h}");
        let opts = RenderOptions { format: Format::Markdown, full, userinfo: UserInfo::Author };
        let md = render_posts(std::slice::from_ref(&p), &opts);
        // (Emphasis here is xmd's own: `**Handle:**`.)
        let (urls, text, _) = parse(&md);
        // The Source line (compact) or the Source link of the details.
        prop_assert!(urls.contains(&meant) || urls.contains(&auto), "{:?} {}", urls, md);
        prop_assert!(urls.iter().all(|x| x == &meant || x == &auto || x == &profile), "{:?} {}", urls, md);
        let at = format!("@{h}");
        prop_assert!(text.contains(&format!("({at})")), "{}", text);
        prop_assert!(text.contains(&format!("Handle: {at}")), "{}", text);
        // What an agent copies from the source: the handle, no backslash.
        for line in md.lines().filter(|l| l.contains('@')) {
            prop_assert!(line.contains(&at), "{}", line);
        }
        prop_assert!(!md.contains(&format!("@{}", escape_inline(&h))) || escape_inline(&h) == h, "{}", md);

        let row: Status = serde_json::from_value(p).unwrap();
        let line = post_line(&row, full);
        let (urls, text, emph) = parse(&line);
        prop_assert!(!emph, "{}", line);
        prop_assert_eq!(urls, vec![profile.clone(), meant.clone()], "{}", line);
        prop_assert!(text.starts_with(&format!("{at}: ")), "{}", text);
    }

    /// `at_handle` in any inline position: exact when rendered and in the
    /// source, and never emphasis with a neighbour's underscores.
    #[test]
    fn a_handle_reads_back_exactly(h in handle(), g in handle()) {
        let md = format!("Replying to {} and {}_ · {}\n", at_handle(&h, escape_inline), at_handle(&g, escape_inline), at_handle(&h, escape_inline));
        let (urls, text, emph) = parse(&md);
        prop_assert!(!emph, "{}", md);
        prop_assert!(urls.is_empty(), "{:?}", urls);
        prop_assert_eq!(text, format!("Replying to @{h} and @{g}_ · @{h}"));
        prop_assert!(!at_handle(&h, escape_inline).contains('\\'));
    }
}

#[test]
fn the_reported_case() {
    let u = "https://x.com/cobalt_wren_/status/2087208847298015232";
    assert_eq!(autolink(u), format!("<{u}>"));
    assert_eq!(at_handle("cobalt_wren_", escape_inline), "`@cobalt_wren_`");
    assert_eq!(at_handle("demo_author", escape_inline), "@demo_author");
    let (urls, _, _) = parse(&format!("Source: {}\n", autolink(u)));
    assert_eq!(urls, [u]);
}
