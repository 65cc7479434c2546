//! Issue 14, the classes behind items 1, 2 and 8, with generated inputs:
//!
//! - any thread (post count, post lengths, hostile characters) under any
//!   budget: every result's text is within the budget, its serialized
//!   payload within the message cap, and following `next_cursor` reads
//!   every post exactly once, in order (oracle: the thread itself);
//! - any sequence of upstream list pages, repeating rows and cursors at
//!   will, any `limit`: following `next_cursor` never yields a row twice
//!   (oracle: a set of the ids seen).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::budget::{wire_bytes, Settings, MAX_PAYLOAD_BYTES};
use xmd::x::tools::Tools;
use xmd::x::upstream::{FetchError, Upstream, UpstreamResponse};

/// An in-memory upstream: exact path and query to a JSON body.
struct Pages(HashMap<String, String>);

impl Upstream for Pages {
    fn get(&self, path: &str) -> Result<UpstreamResponse, FetchError> {
        let (status, body) = match self.0.get(path) {
            Some(b) => (200, b.clone()),
            None => (404, r#"{"code":404,"message":"Not found"}"#.to_string()),
        };
        Ok(UpstreamResponse {
            status,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: body.into_bytes().into(),
        })
    }
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
            prop_assert!(wire_bytes(&out.text, &sc) <= MAX_PAYLOAD_BYTES);
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
    fn list_cursors_never_yield_a_row_twice(
        // Page k: its rows (ids drawn from a small range, so repeats are
        // common) and the index of its bottom cursor (may point back).
        pages in prop::collection::vec((prop::collection::vec(0u32..12, 0..6), 0usize..6), 1..6),
        limit in 1u32..8,
    ) {
        let base = "/2/profile/demo_author/followers";
        let cursor_name = |k: usize| if k == 0 { String::new() } else { format!("c{k}") };
        let mut map = HashMap::new();
        for (k, (rows, bottom)) in pages.iter().enumerate() {
            let users: Vec<Value> = rows.iter().map(|i| json!({"id": i.to_string(), "screen_name": format!("u{i}")})).collect();
            let path = if k == 0 {
                format!("{base}?count=20")
            } else {
                format!("{base}?cursor=c{k}&count=20")
            };
            // Index 0 is the empty cursor: the end of the list.
            let b = cursor_name(*bottom % pages.len());
            map.insert(path, json!({"code": 200, "results": users, "cursor": {"bottom": b}}).to_string());
        }
        map.insert("/2/profile/demo_author".into(), json!({"code": 200, "user": {"screen_name": "demo_author"}}).to_string());
        let t = tools(map, 60_000);
        let mut args = json!({"handle": "demo_author", "limit": limit});
        let mut seen = HashSet::new();
        for _ in 0..64 {
            let call = Tools::prepare("x_md_get_followers", Some(&args)).unwrap();
            let out = t.run(&call);
            prop_assert!(!out.is_error, "{}", out.text);
            let sc = out.structured.unwrap();
            for u in sc["users"].as_array().unwrap() {
                let id = u["id"].as_str().unwrap().to_string();
                prop_assert!(seen.insert(id.clone()), "row {id} twice");
            }
            match sc.get("next_cursor").and_then(Value::as_str) {
                Some(c) => args["cursor"] = json!(c),
                None => break,
            }
        }
    }
}
