//! Issue 14, the classes behind items 1, 2 and 8, with generated inputs:
//!
//! - any thread (post count, post lengths, hostile characters) under any
//!   budget: every result's text is within the budget, its serialized
//!   payload within the message cap, and following `next_cursor` reads
//!   every post exactly once, in order (oracle: the thread itself);
//! - any thread of hostile text (line separators, NULs, quotes,
//!   backslashes, four-byte characters) at any budget the setting allows,
//!   through the real dispatcher and framing, in every revision: the
//!   JSON-RPC message, SSE-framed too, is at most 1,048,576 bytes and
//!   its `data:` line holds no line break of Python's `str.splitlines`;
//! - any sequence of upstream list pages, repeating rows and cursors at
//!   will, any `limit`, in every list tool (the post's quotes and reposts
//!   included): following `next_cursor` never yields a row twice (oracle:
//!   a set of the ids seen);
//! - any list page of hostile rows at any budget, in every list tool,
//!   revision and framing: every message within 1,048,576 bytes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::budget::{Settings, MAX_PAYLOAD_BYTES};
use xmd::x::tools::Tools;

mod common;

use common::browse::Pages;

/// The message a `tools/call` gets on the wire: the real dispatcher's
/// reply for `version`, framed as JSON or SSE by the real framing.
fn wire_message(tools: Tools, version: &str, sse: bool, args: &Value) -> Vec<u8> {
    wire_message_of(tools, "x_md_get_post", version, sse, args)
}

/// [`wire_message`] for any tool.
fn wire_message_of(tools: Tools, tool: &str, version: &str, sse: bool, args: &Value) -> Vec<u8> {
    use xmd::http::accept::Framing;
    use xmd::mcp::{Mcp, Outcome, ServerInfo};
    let info = ServerInfo {
        name: "xmd".into(),
        version: "0.1.0".into(),
        public_url: "https://tools.example.org/xmd".into(),
    };
    let mcp = Mcp::new(info, Vec::new(), Arc::new(tools));
    let modern = version == "2026-07-28";
    let mut params = json!({"name": tool, "arguments": args});
    if modern {
        params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}});
    }
    // The longest id a client may send (1024 bytes, MAX_ID_BYTES), made of
    // characters that are escaped in JSON.
    let id = "\u{2028}".repeat(341);
    let body =
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    let headers: Vec<(&str, &str)> = if modern {
        vec![
            ("mcp-protocol-version", version),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
        ]
    } else {
        vec![("mcp-protocol-version", version)]
    };
    let lookup = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_bytes())
    };
    let reply = match mcp.handle(&lookup, body.as_bytes()) {
        Outcome::Call(call) => call.run(),
        Outcome::Reply(r) => r,
    };
    let framing = if sse { Framing::Sse } else { Framing::Json };
    xmd::app::frame(reply, framing).body.to_vec()
}

fn tools(pages: HashMap<String, String>, max_chars: usize) -> Tools {
    Tools::with_cache_bytes(Arc::new(Pages(pages)), 0).with_settings(Settings {
        max_chars,
        public_url: "https://tools.example.org/xmd".into(),
        ..Settings::default()
    })
}

const FIRST: u64 = 1_900_000_000_000_000_000;

fn text_strategy() -> impl Strategy<Value = String> {
    let unit = prop::sample::select(vec![
        "word ", "\u{2028}", "\u{0}", "\"", "\\", "🦀", "é", "*", "[x](y)", "\n\n", "`",
    ]);
    (prop::collection::vec(unit, 1..8), 1usize..9000)
        .prop_map(|(units, len)| units.concat().chars().cycle().take(len).collect::<String>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_thread_is_read_whole_once_within_every_budget(
        texts in prop::collection::vec(text_strategy(), 1..24),
        max_chars in 2_000usize..30_000,
        format in prop::sample::select(vec!["markdown", "obsidian", "json"]),
    ) {
        let rows: Vec<Value> = texts.iter().enumerate().map(|(i, t)| json!({
            "type": "status", "id": (FIRST + i as u64).to_string(), "text": t,
            "author": {"id": "1", "screen_name": "demo_author", "name": "Demo"},
            "replying_to": (i > 0).then(|| json!({"status": (FIRST + i as u64 - 1).to_string()})),
        })).collect();
        let pages = HashMap::from([(
            format!("/2/thread/{FIRST}"),
            json!({"code": 200, "status": rows[0], "thread": rows}).to_string(),
        )]);
        let t = tools(pages, max_chars);
        let mut args = json!({"handle": "demo_author", "id": FIRST.to_string(), "replies": "off", "format": format});
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..=texts.len() {
            let call = Tools::prepare("x_md_get_post", Some(&args)).unwrap();
            let out = t.run(&call);
            prop_assert!(!out.is_error, "{}", out.text);
            let sc = out.structured.unwrap();
            prop_assert!(out.text.chars().count() <= max_chars, "{} > {max_chars}", out.text.chars().count());
            prop_assert!(xmd::json::len(&out.text) + xmd::json::len(&sc) <= MAX_PAYLOAD_BYTES);
            let ids: Vec<String> = sc["posts"].as_array().unwrap().iter()
                .map(|p| p["id"].as_str().unwrap().to_string()).collect();
            prop_assert!(!ids.is_empty(), "every result makes progress");
            seen.extend(ids);
            let Some(c) = sc.get("next_cursor").and_then(Value::as_str) else {
                break;
            };
            prop_assert_eq!(&sc["truncated"], &json!(true));
            let raw = format!("`cursor=\"{c}\"`");
            prop_assert!(out.text.contains(&raw), "{}", raw);
            args["cursor"] = json!(c);
        }
        let want: Vec<String> = (0..texts.len()).map(|i| (FIRST + i as u64).to_string()).collect();
        prop_assert_eq!(seen, want);
    }

    #[test]
    fn every_message_fits_one_mebibyte_in_both_framings(
        unit in prop::sample::select(vec!["\u{2028}", "\u{0}", "\"", "\\", "🦀", "\u{85}", "a\r\n"]),
        n in 1usize..40,
        len in 1usize..25_000,
        max_chars in 2_000usize..=160_000,
        version in prop::sample::select(vec!["2026-07-28", "2025-11-25", "2025-06-18"]),
    ) {
        let text: String = unit.chars().cycle().take(len).collect();
        let rows: Vec<Value> = (0..n).map(|i| json!({
            "type": "status", "id": (FIRST + i as u64).to_string(), "text": text,
            "raw_text": {"text": text},
            "author": {"id": "1", "screen_name": "demo_author", "name": text.chars().take(50).collect::<String>()},
            "quote": {"type": "status", "id": "1", "text": text.chars().take(5000).collect::<String>()},
        })).collect();
        let pages = HashMap::from([(
            format!("/2/thread/{FIRST}"),
            json!({"code": 200, "status": rows[0], "thread": rows}).to_string(),
        )]);
        let args = json!({"handle": "demo_author", "id": FIRST.to_string(), "replies": "off", "full": true});
        for sse in [false, true] {
            let msg = wire_message(tools(pages.clone(), max_chars), version, sse, &args);
            prop_assert!(msg.len() <= 1_048_576, "{} bytes", msg.len());
            let s = String::from_utf8(msg).unwrap();
            let data = if sse {
                s.strip_prefix("event: message\ndata: ").and_then(|d| d.strip_suffix("\n\n")).unwrap()
            } else {
                &s
            };
            prop_assert!(!data.chars().any(xmd::json::is_python_line_break));
            let v: Value = serde_json::from_str(data).unwrap();
            prop_assert_eq!(&v["result"]["isError"], &json!(false));
            let t = v["result"]["content"][0]["text"].as_str().unwrap();
            prop_assert!(t.chars().count() <= max_chars);
        }
    }

    #[test]
    fn list_cursors_never_yield_a_row_twice(
        // Page k: its rows (ids drawn from a small range, so repeats are
        // common) and the index of its bottom cursor (may point back).
        pages in prop::collection::vec((prop::collection::vec(0u32..12, 0..6), 0usize..6), 1..6),
        limit in 1u32..8,
        list in 0usize..LISTS.len(),
    ) {
        let (tool, base, args0, key) = LISTS[list];
        let posts = key == "posts";
        let cursor_name = |k: usize| if k == 0 { String::new() } else { format!("c{k}") };
        let mut map = HashMap::new();
        for (k, (rows, bottom)) in pages.iter().enumerate() {
            let rows: Vec<Value> = rows.iter().map(|i| if posts {
                json!({"type": "status", "id": (FIRST + u64::from(*i)).to_string(), "text": format!("post {i}"),
                       "author": {"id": "7", "screen_name": "fan", "name": "Fan"}})
            } else {
                json!({"id": i.to_string(), "screen_name": format!("u{i}")})
            }).collect();
            let sep = if base.contains('?') { '&' } else { '?' };
            let path = if k == 0 {
                format!("{base}{sep}count=20")
            } else if base.contains('?') {
                // The search puts the cursor after the feed.
                format!("{base}&cursor=c{k}&count=20")
            } else {
                format!("{base}?cursor=c{k}&count=20")
            };
            // Index 0 is the empty cursor: the end of the list.
            let b = cursor_name(*bottom % pages.len());
            map.insert(path, json!({"code": 200, "results": rows, "cursor": {"bottom": b}}).to_string());
        }
        map.insert("/2/profile/demo_author".into(), json!({"code": 200, "user": {"screen_name": "demo_author"}}).to_string());
        let t = tools(map, 60_000);
        let mut args: Value = serde_json::from_str(args0).unwrap();
        args["limit"] = json!(limit);
        let mut seen = HashSet::new();
        for _ in 0..64 {
            let call = Tools::prepare(tool, Some(&args)).unwrap();
            let out = t.run(&call);
            prop_assert!(!out.is_error, "{tool}: {}", out.text);
            let sc = out.structured.unwrap();
            for u in sc[key].as_array().unwrap() {
                let id = u["id"].as_str().unwrap().to_string();
                prop_assert!(seen.insert(id.clone()), "{tool}: row {id} twice");
            }
            match sc.get("next_cursor").and_then(Value::as_str) {
                Some(c) => args["cursor"] = json!(c),
                None => break,
            }
        }
    }

}

/// The fenced code blocks of `md` as a CommonMark parser reads them:
/// (info string, content, closed: its source ends with a closing fence,
/// not with the end of the document).
fn code_blocks(md: &str) -> Vec<(String, String, bool)> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for (e, range) in Parser::new(md).into_offset_iter() {
        match e {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                cur = Some((info.to_string(), String::new()));
            }
            Event::Text(t) if cur.is_some() => cur.as_mut().unwrap().1.push_str(&t),
            Event::End(TagEnd::CodeBlock) => {
                let (info, body) = cur.take().unwrap();
                let src = &md[range];
                let fence: String = src.chars().take_while(|c| *c == '`').collect();
                let last = src.trim_end_matches('\n').lines().last().unwrap_or("");
                let closed = src.lines().count() > 1 && last.trim() == fence;
                out.push((info, body, closed));
            }
            _ => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// One post whose text, photos' alt texts or quote make it alone
    /// exceed any budget, in every format. Before, the inside cut emptied
    /// the text ("…") and the budget's last guard cut what was left
    /// mid-image or mid-member (`**[Cut: this result alone …]**`).
    /// - Markdown: the last guard is never needed, every photo is still
    ///   an image (a CommonMark parser), and the post keeps its text,
    ///   whole or a prefix marked `text_truncated`, as the data says;
    /// - `format=json`: the text is one closed `json` block (the parser
    ///   finds its closing fence) whose content parses as JSON (serde_json)
    ///   and keeps the text the same way; the data keeps the whole post.
    #[test]
    fn a_post_over_any_budget_keeps_its_text_and_its_shape(
        text in text_strategy(),
        alts in prop::collection::vec(text_strategy(), 0..4),
        quote in prop::option::of(text_strategy()),
        max_chars in 2_000usize..12_000,
        format in prop::sample::select(vec!["markdown", "obsidian", "json"]),
    ) {
        let photos: Vec<Value> = alts.iter().enumerate().map(|(i, alt)| json!({
            "type": "photo", "url": format!("https://pbs.twimg.com/media/p{i}.jpg"),
            "width": 10, "height": 10, "altText": alt,
        })).collect();
        let mut post = json!({
            "type": "status", "id": FIRST.to_string(), "text": text,
            "author": {"id": "1", "screen_name": "demo_author", "name": "Demo", "description": "bio"},
            "likes": 1, "media": {"all": photos},
        });
        if let Some(q) = &quote {
            post["quote"] = json!({"type": "status", "id": "5", "text": q,
                                   "author": {"id": "2", "screen_name": "other", "name": "O"}});
        }
        let pages = HashMap::from([(
            format!("/2/status/{FIRST}"),
            json!({"code": 200, "status": post}).to_string(),
        )]);
        let args = json!({"handle": "demo_author", "id": FIRST.to_string(), "thread": "off", "format": format});
        let out = tools(pages, max_chars).run(&Tools::prepare("x_md_get_post", Some(&args)).unwrap());
        prop_assert!(!out.is_error, "{}", out.text);
        prop_assert!(out.text.chars().count() <= max_chars);
        prop_assert!(!out.text.contains(xmd::x::budget::HARD_CUT_MARK.trim()), "{}", out.text);
        let sc = out.structured.unwrap();
        let data = &sc["posts"][0];
        // The text the post shows: the data's for Markdown (it is cut
        // with the text), the JSON block's for `format=json`.
        let shown = if format == "json" {
            prop_assert_eq!(&data["text"], &json!(text), "the data keeps the whole text");
            let blocks = code_blocks(&out.text);
            prop_assert_eq!(blocks.len(), 1, "{}", out.text);
            let (info, body, closed) = &blocks[0];
            prop_assert_eq!(info.as_str(), "json");
            prop_assert!(*closed, "the block is closed: {}", out.text);
            let v: Value = serde_json::from_str(body)
                .map_err(|e| TestCaseError::fail(format!("{e}: {body}")))?;
            v[0].clone()
        } else {
            let images = pulldown_cmark::Parser::new(&out.text)
                .filter(|e| matches!(e, pulldown_cmark::Event::Start(pulldown_cmark::Tag::Image { .. })))
                .count();
            prop_assert_eq!(images, alts.len(), "every photo is an image: {}", out.text);
            data.clone()
        };
        let shown_text = shown["text"].as_str().unwrap_or_default();
        if shown["text_truncated"] == json!(true) {
            let prefix = shown_text.strip_suffix('…').unwrap_or_default();
            prop_assert!(text.trim().starts_with(prefix.trim()), "{:?} is no prefix of the text", prefix);
            prop_assert!(prefix.chars().count() < text.chars().count());
        } else if format == "json" {
            prop_assert_eq!(shown_text, text.as_str());
        } else {
            prop_assert_eq!(shown_text.trim(), text.trim());
        }
    }
}

proptest! {
    // Each case builds and frames six messages of up to a mebibyte.
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Item 2 for every list tool: 20 rows of hostile text at most 12,000
    /// characters each (post text, `raw_text` and a quoted post; or a bio
    /// and its `raw_description`), `full`, any budget, every revision, both
    /// framings: at most 1,048,576 bytes, no raw line break of Python's
    /// `str.splitlines` in the `data:` line, the text within the budget.
    #[test]
    fn every_list_message_fits_one_mebibyte_in_both_framings(
        unit in prop::sample::select(vec!["\u{2028}", "\u{0}", "\"", "\\", "🦀", "\u{85}", "a\r\n"]),
        len in 1usize..12_000,
        max_chars in 2_000usize..=160_000,
        version in prop::sample::select(vec!["2026-07-28", "2025-11-25", "2025-03-26"]),
        list in 0usize..LISTS.len(),
    ) {
        let (tool, base, args0, key) = LISTS[list];
        let text: String = unit.chars().cycle().take(len).collect();
        let rows: Vec<Value> = (0..20u64).map(|i| if key == "posts" {
            json!({"type": "status", "id": (FIRST + i).to_string(), "text": text,
                "raw_text": {"text": text},
                "author": {"id": "7", "screen_name": "fan", "name": text.chars().take(50).collect::<String>(),
                           "description": text, "raw_description": {"text": text}},
                "quote": {"type": "status", "id": "1", "text": text.chars().take(5000).collect::<String>()}})
        } else {
            json!({"type": "profile", "id": (5000 + i).to_string(), "screen_name": format!("u{i}"),
                "name": text.chars().take(50).collect::<String>(), "description": text,
                "raw_description": {"text": text}})
        }).collect();
        let sep = if base.contains('?') { '&' } else { '?' };
        let pages = HashMap::from([(
            format!("{base}{sep}count=20"),
            json!({"code": 200, "results": rows, "cursor": {"bottom": null}}).to_string(),
        )]);
        let mut args: Value = serde_json::from_str(args0).unwrap();
        args["full"] = json!(true);
        for sse in [false, true] {
            let msg = wire_message_of(tools(pages.clone(), max_chars), tool, version, sse, &args);
            prop_assert!(msg.len() <= 1_048_576, "{tool}: {} bytes", msg.len());
            let s = String::from_utf8(msg).unwrap();
            let data = if sse {
                s.strip_prefix("event: message\ndata: ").and_then(|d| d.strip_suffix("\n\n")).unwrap()
            } else {
                &s
            };
            prop_assert!(!data.chars().any(xmd::json::is_python_line_break));
            let v: Value = serde_json::from_str(data).unwrap();
            prop_assert_eq!(&v["result"]["isError"], &json!(false), "{}", tool);
            let t = v["result"]["content"][0]["text"].as_str().unwrap();
            prop_assert!(t.chars().count() <= max_chars);
            // (2025-03-26 has no structuredContent.)
            if version != "2025-03-26" {
                prop_assert!(!v["result"]["structuredContent"][key].as_array().unwrap().is_empty());
            }
        }
    }
}

/// Every list tool: its name, the upstream path of its first page (without
/// `count`), its arguments, and the key of its rows.
const LISTS: [(&str, &str, &str, &str); 5] = [
    (
        "x_md_get_followers",
        "/2/profile/demo_author/followers",
        r#"{"handle": "demo_author"}"#,
        "users",
    ),
    (
        "x_md_get_following",
        "/2/profile/demo_author/following",
        r#"{"handle": "Demo_Author"}"#,
        "users",
    ),
    (
        "x_md_search_posts",
        "/2/search?q=fixture&feed=latest",
        r#"{"q": "fixture"}"#,
        "posts",
    ),
    (
        "x_md_get_quotes",
        "/2/status/1900000000000000000/quotes",
        r#"{"handle": "demo_author", "id": "1900000000000000000"}"#,
        "posts",
    ),
    (
        "x_md_get_reposts",
        "/2/status/1900000000000000000/reposts",
        r#"{"url": "https://x.com/i/status/1900000000000000000"}"#,
        "users",
    ),
];

/// The budget renders a thread post by post (`post_blocks`); joined whole
/// those pieces are exactly the document `render_posts` writes, for every
/// format and option (so the two cannot drift apart).
#[test]
fn post_blocks_join_to_render_posts() {
    use xmd::x::args::{Format, UserInfo};
    use xmd::x::render::post::{join_posts, post_blocks};
    use xmd::x::render::{render_posts, RenderOptions};
    let mut posts = Vec::new();
    for name in ["thread-self.json", "conversation-reply.json"] {
        let path = format!(
            "{}/tests/fixtures/fxtwitter/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let body: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for key in ["thread", "replies"] {
            for p in body[key].as_array().into_iter().flatten() {
                posts.push(p.clone());
            }
        }
    }
    let roles = ["parent", "post", "thread", "reply"];
    for (i, p) in posts.iter_mut().enumerate() {
        xmd::x::model::normalize(p, 0);
        xmd::x::model::fill_url(p, None);
        p["context"] = json!(roles[i % 4]);
    }
    assert!(posts.len() >= 6, "{}", posts.len());
    for format in ["markdown", "obsidian", "json"] {
        for full in [false, true] {
            for userinfo in ["off", "author", "all"] {
                let opts = RenderOptions {
                    format: Format::parse(format).unwrap(),
                    full,
                    userinfo: UserInfo::parse(userinfo).unwrap(),
                };
                let (head, blocks) = post_blocks(&posts, &opts, 0, posts.len());
                assert_eq!(
                    join_posts(&head, &blocks),
                    render_posts(&posts, &opts),
                    "{format} {full} {userinfo}"
                );
            }
        }
    }
}
