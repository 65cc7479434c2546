//! User text in every list tool's output never becomes Markdown structure
//! (issue 16), through the real tool path: `Tools` over a real
//! `HttpUpstream` to the loopback fake, which serves one page of hostile
//! rows to `x_md_get_profile`, `x_md_search_posts` (posts and users),
//! `x_md_get_followers`, `x_md_get_following`, `x_md_get_quotes` and
//! `x_md_get_reposts`. The oracle is a CommonMark parser (pulldown-cmark,
//! tables and strikethrough on): each result parses to the same structure
//! as the same call over rows holding inert placeholders, and its visible
//! text is the template's with every placeholder replaced by what the
//! author typed (whitespace runs compared as one space). Link destinations
//! are equal too, so no user text adds or changes a link.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::browse::{ok, tools_for};
use common::cmark::{bidi_left_open, norm, plain};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};
use xmd::x::escape::autolink_target;
use xmd::x::linkify::url_end;

const POST_ID: &str = "1800000000000000001";
const END: Value = Value::Null;

/// Structure (tags, `T` for a run of text), visible text, destinations,
/// autolink destinations. An autolink is judged by its text and its
/// destination, not as a tag: a URL in running user text is one now
/// (issue 27 item 5); a code span (an `@handle` that would need escaping)
/// by its text.
fn parse(md: &str) -> (Vec<String>, String, Vec<String>, Vec<String>) {
    let (mut shape, mut visible, mut dests) = (Vec::new(), String::new(), Vec::new());
    let mut auto = Vec::new();
    // Per open link: whether it is an autolink.
    let mut autolink: Vec<bool> = Vec::new();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink,
                dest_url,
                ..
            }) => {
                auto.push(dest_url.to_string());
                autolink.push(true);
            }
            Event::End(TagEnd::Link) if autolink.pop() == Some(true) => {}
            Event::Start(tag) => {
                if let Tag::Link { .. } = &tag {
                    autolink.push(false);
                }
                if let Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } = &tag {
                    dests.push(dest_url.to_string());
                }
                shape.push(format!("{tag:?}"));
            }
            Event::End(tag) => shape.push(format!("/{tag:?}")),
            Event::Text(t) | Event::Code(t) => {
                visible.push_str(&t);
                if shape.last().map(String::as_str) != Some("T") {
                    shape.push("T".into());
                }
            }
            Event::SoftBreak => visible.push(' '),
            other => shape.push(format!("{other:?}")),
        }
    }
    (shape, visible, dests, auto)
}

/// The visible text of running text `s` (already `norm`ed): each URL
/// found (`linkify`, as the escapers find it) shown as the parser reads
/// the autolink written for it (`autolink_target`: the documented
/// percent-encoding), every other character as typed; and those URLs.
fn running_visible(s: &str) -> (String, Vec<String>) {
    let (mut out, mut urls) = (String::new(), Vec::new());
    let mut i = 0;
    while i < s.len() {
        if let Some(end) = url_end(s, i) {
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

/// Hostile text: Markdown and HTML syntax, every ASCII punctuation
/// character, line separators and controls, odd URLs, any char.
fn hostile() -> impl Strategy<Value = String> {
    const SNIPPETS: &[&str] = &[
        "![](https://tracker.example/p.gif)",
        "[https://x.com/someone](https://phish.example/login)",
        "[x](javascript:alert(1))",
        "<https://a.example/x>",
        "<b>hi</b>",
        "`code`",
        "*em* **st**",
        "_em_ __VA_ARGS__",
        "~~s~~",
        "| a | b |\n|---|---|",
        "&amp; &#60;",
        "1. ",
        "- ",
        "# ",
        "> ",
        "---",
        "===",
        "    code",
        "```",
        "[^1]",
        "[[wiki]]",
        "Ⓐ_a_Ⓐ",
        "Name\u{2028}injected:\u{2028}- x",
        "\\",
    ];
    const PUNCT: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    const SPACES: &[&str] = &[
        " ", "\n", "\n\n", "\r", "\t", "\u{2028}", "\u{2029}", "\u{85}", "\u{0}", "\u{a0}",
    ];
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(SNIPPETS).prop_map(str::to_string),
            3 => prop::sample::select(PUNCT.chars().collect::<Vec<_>>()).prop_map(String::from),
            2 => prop::sample::select(SPACES).prop_map(str::to_string),
            2 => "[a-zA-Z0-9]{1,5}",
            1 => any::<char>().prop_map(String::from),
            // Bidi openers (LRE, RLE, LRO, RLO, LRI, RLI, FSI): the
            // renderer must close them where the field ends.
            1 => prop::sample::select(vec!['\u{202A}', '\u{202B}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}'])
                .prop_map(String::from),
        ],
        1..12,
    )
    .prop_map(|v| v.concat())
    .prop_map(|s| if norm(&s).is_empty() { "x".into() } else { s })
}

/// The user text of one row: a name, a post text, a bio, a location.
#[derive(Debug, Clone)]
struct RowText {
    name: String,
    text: String,
    bio: String,
    location: String,
}

fn rows() -> impl Strategy<Value = Vec<RowText>> {
    prop::collection::vec(
        (hostile(), hostile(), hostile(), hostile()).prop_map(|(name, text, bio, location)| {
            RowText {
                name,
                text,
                bio,
                location,
            }
        }),
        1..3,
    )
}

/// The rows' values: as typed, or placeholders (recorded in `expect`).
/// A post's text and a bio are running text: their URLs are autolinks
/// (`urls` collects them as a parser must read them).
fn values(
    rows: &[RowText],
    expect: Option<(&mut BTreeMap<String, String>, &mut Vec<String>)>,
) -> Vec<RowText> {
    let Some((expect, urls)) = expect else {
        return rows.to_vec();
    };
    let mut ph = |i: usize, k: &str, v: &str| {
        let p = format!("QQ{k}{i}QQ");
        let v = if k == "text" || k.starts_with("bio") {
            let (v, u) = running_visible(&norm(v));
            urls.extend(u);
            v
        } else {
            norm(v)
        };
        expect.insert(p.clone(), v);
        p
    };
    rows.iter()
        .enumerate()
        .map(|(i, r)| RowText {
            name: ph(i, "name", &r.name),
            text: ph(i, "text", &r.text),
            // The profile shows a bio as body text (its blank lines are
            // paragraph breaks): a placeholder per paragraph.
            bio: paragraphs(&r.bio)
                .iter()
                .enumerate()
                .map(|(k, p)| ph(i, &format!("bio{k}P"), p))
                .collect::<Vec<_>>()
                .join("\n\n"),
            location: ph(i, "loc", &r.location),
        })
        .collect()
}

/// The paragraphs of body text: runs of lines between blank ones.
fn paragraphs(value: &str) -> Vec<String> {
    let mut paras = Vec::new();
    let mut cur = String::new();
    for line in value.lines() {
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
}

fn user_json(i: usize, r: &RowText) -> Value {
    json!({"type": "profile", "id": format!("{}", 100 + i), "screen_name": format!("user_{i}"),
        "name": r.name, "description": r.bio, "location": r.location, "followers": i + 1, "following": 2,
        "statuses": 3, "joined": "Tue Feb 14 09:30:11 +0000 2023"})
}

fn status_json(i: usize, r: &RowText) -> Value {
    json!({"type": "status", "id": format!("19000000000000000{i}"),
        "url": format!("https://x.com/user_{i}/status/19000000000000000{i}"),
        "text": r.text, "created_at": "Mon Aug 10 12:41:03 +0000 2026", "likes": 1, "reposts": 2,
        "replies": 3, "author": {"type": "profile", "id": format!("{}", 100 + i),
        "screen_name": format!("user_{i}"), "name": r.name}})
}

/// A fake serving one page of `rows` to every list route, and the profile.
fn fake(rows: &[RowText]) -> FakeUpstream {
    let f = FakeUpstream::start();
    let users: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| user_json(i, r))
        .collect();
    let posts: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| status_json(i, r))
        .collect();
    let page = |r: &Vec<Value>| {
        json!({"code": 200, "results": r, "cursor": {"top": END, "bottom": END}}).to_string()
    };
    let (users_page, posts_page) = (page(&users), page(&posts));
    let profile = json!({"code": 200, "user": user_json(0, &rows[0])}).to_string();
    let typeahead = json!({"users": users}).to_string();
    f.handler(move |t| {
        let body = if t.starts_with("/2/profile/user_0/statuses")
            || t.starts_with("/2/search")
            || t.starts_with(&format!("/2/status/{POST_ID}/quotes"))
        {
            &posts_page
        } else if t.starts_with("/2/profile/user_0/follow")
            || t.starts_with(&format!("/2/status/{POST_ID}/reposts"))
        {
            &users_page
        } else if t.starts_with("/2/typeahead") {
            &typeahead
        } else if t == "/2/profile/user_0" {
            &profile
        } else {
            return None;
        };
        Some(Answer::json(200, body))
    });
    f
}

/// Every list tool's Markdown over `fake`, one document per call.
fn outputs(f: &FakeUpstream, full: bool) -> Vec<(String, String)> {
    let tools = Arc::new(tools_for(f));
    let post = format!("https://x.com/user_0/status/{POST_ID}");
    let calls = [
        (
            "x_md_get_profile",
            json!({"handle": "user_0", "full": full}),
        ),
        ("x_md_search_posts", json!({"q": "hike", "full": full})),
        (
            "x_md_search_posts",
            json!({"q": "hike", "feed": "users", "full": full}),
        ),
        (
            "x_md_get_followers",
            json!({"handle": "user_0", "full": full}),
        ),
        (
            "x_md_get_following",
            json!({"handle": "user_0", "full": full}),
        ),
        ("x_md_get_quotes", json!({"url": post, "full": full})),
        ("x_md_get_reposts", json!({"url": post, "full": full})),
    ];
    calls
        .into_iter()
        .map(|(tool, args)| {
            let label = format!("{tool} {args}");
            (label, ok(&tools, tool, args).text)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn list_tools_user_text_never_becomes_structure(rows in rows(), full in any::<bool>()) {
        let (mut expect, mut urls) = (BTreeMap::new(), Vec::new());
        let template = values(&rows, Some((&mut expect, &mut urls)));
        let actual = outputs(&fake(&rows), full);
        let wanted = outputs(&fake(&template), full);
        for ((label, a), (_, t)) in actual.iter().zip(&wanted) {
            prop_assert!(t.contains("QQ"), "{} shows no user text:\n{}", label, t);
            let (ta, va, da, aa) = parse(a);
            let (tt, vt, dt, at) = parse(t);
            prop_assert_eq!(&ta, &tt, "{}\ntemplate:\n{}\nactual:\n{}", label, t, a);
            prop_assert_eq!(&da, &dt, "{}\n{}", label, a);
            // xmd's own autolinks in order; every other one a URL of the
            // running text, as meant.
            let mut own = at.iter().peekable();
            for u in &aa {
                if own.peek() == Some(&u) {
                    own.next();
                } else {
                    prop_assert!(urls.contains(u), "{:?} not meant: {:?}\n{}", u, urls, a);
                }
            }
            prop_assert!(own.next().is_none(), "{:?} {:?}", at, aa);
            let mut v = vt.clone();
            for (ph, val) in &expect {
                v = v.replace(ph.as_str(), val);
            }
            // Compared without bidi controls: the renderer closes what a
            // field opens, and no line may end with one open.
            prop_assert_eq!(norm(&plain(&va)), norm(&plain(&v)), "{}\ntemplate:\n{}\nactual:\n{}", label, t, a);
            prop_assert_eq!(bidi_left_open(a), None, "{}", label);
        }
    }
}

/// A list row is a post shown without its thread: a reply says whom it
/// answers (issue 16), from any upstream form of `replying_to`.
#[test]
fn list_rows_say_whom_a_reply_answers() {
    let row = |i: usize, replying_to: Value| {
        let mut p = status_json(
            i,
            &RowText {
                name: "N".into(),
                text: "agreed".into(),
                bio: String::new(),
                location: String::new(),
            },
        );
        p["replying_to"] = replying_to;
        p
    };
    let rows = vec![
        row(
            0,
            json!({"screen_name": "ada_x", "status": "1800000000000000009"}),
        ),
        row(1, json!(["_b_"])),
        row(2, json!(null)),
    ];
    let page =
        json!({"code": 200, "results": rows, "cursor": {"top": END, "bottom": END}}).to_string();
    let f = FakeUpstream::start();
    f.handler(move |t| {
        t.starts_with(&format!("/2/status/{POST_ID}/quotes"))
            .then(|| Answer::json(200, &page))
    });
    let out = ok(
        &tools_for(&f),
        "x_md_get_quotes",
        json!({"url": format!("https://x.com/user_0/status/{POST_ID}")}),
    );
    let lines: Vec<&str> = out.text.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        [
            "- [@user_0](https://x.com/user_0): agreed (2026-08-10T12:41:03Z) · Replying to @ada_x [Source](https://x.com/user_0/status/190000000000000000)",
            "- [@user_1](https://x.com/user_1): agreed (2026-08-10T12:41:03Z) · Replying to `@_b_` [Source](https://x.com/user_1/status/190000000000000001)",
            "- [@user_2](https://x.com/user_2): agreed (2026-08-10T12:41:03Z) [Source](https://x.com/user_2/status/190000000000000002)",
        ]
    );
}
