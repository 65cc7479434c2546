//! The post path on a real worker thread (`WORKER_STACK_BYTES`, in the
//! unoptimised test build): a thread and its replies whose posts carry
//! every attached block and quotes nested as deep as JSON allows are
//! read, shape-checked and rendered without exhausting the stack.

mod common;
mod util;

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::*;

const FIRST_ID: u64 = 1_910_000_000_000_000_000;

/// A status with a poll, a card, an article, a Community Note, a photo and
/// a chain of `depth` quotes, each carrying the same.
fn status(id: u64, parent: Option<u64>, depth: usize) -> Value {
    let mut s = json!({
        "type": "status", "id": id.to_string(), "text": format!("post {id}"),
        "author": {"id": "42", "screen_name": "deep", "name": "Deep", "website": {"url": "https://d.example/"}},
        "likes": 1, "reposts": 2, "replies": 3,
        "poll": {"choices": [{"label": "a", "count": 1, "percentage": 50.0}, {"label": "b", "count": 1, "percentage": 50.0}], "total_votes": 2},
        "card": {"title": "c", "url": "https://c.example/", "domain": "c.example"},
        "article": {"title": "t", "content": {"blocks": [{"type": "unstyled", "text": "p"}]}},
        "community_note": {"text": "n", "facets": [], "entities": [{"ref": {"url": "https://n.example/"}}]},
        "media": {"all": [{"type": "photo", "url": "https://p.example/1.jpg", "altText": "alt"}]},
        "replying_to": parent.map(|p| json!({"screen_name": "deep", "status": p.to_string()})),
    });
    let mut q = None;
    for level in (0..depth).rev() {
        let mut inner = json!({"type": "status", "id": (id + 1000 + level as u64).to_string(), "text": "quoted",
            "author": {"screen_name": "q"}, "poll": {"choices": [{"label": "x"}]}, "media": {"photos": [{"url": "https://p.example/q.jpg"}]}});
        if let Some(q) = q.take() {
            inner["quote"] = q;
        }
        q = Some(inner);
    }
    if let Some(q) = q {
        s["quote"] = q;
    }
    s
}

fn call(x: &Xmd, args: &Value) -> Value {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{args}}}}}"#
    );
    let h = [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-11-25",
    ];
    let r = roundtrip(x, &post(&x.host(), &h, &body));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"].clone()
}

#[test]
fn deep_quotes_in_a_thread_and_its_replies_fit_a_worker_stack() {
    // xmd refuses JSON nested past MAX_JSON_DEPTH (64) levels by name;
    // the envelopes, rows and attached objects take a few of them. Quotes
    // past MAX_QUOTE_NESTING (16) stand as one tombstone that says so.
    for depth in [8, 16, 17, 40, 100] {
        let up = FakeUpstream::start();
        let rows: Vec<Value> = (0..3)
            .map(|i| status(FIRST_ID + i, i.checked_sub(1).map(|p| FIRST_ID + p), depth))
            .collect();
        up.on(
            &format!("/2/thread/{FIRST_ID}"),
            Answer::json(
                200,
                &json!({"code": 200, "status": rows[0], "thread": rows}).to_string(),
            ),
        );
        let replies: Vec<Value> = (10..13)
            .map(|i| status(FIRST_ID + i, Some(FIRST_ID), depth))
            .collect();
        up.on(
            &format!("/2/conversation/{FIRST_ID}?ranking_mode=likes"),
            Answer::json(200, &json!({"code": 200, "replies": replies}).to_string()),
        );
        up.on(
            &format!("/2/status/{FIRST_ID}"),
            Answer::json(200, &json!({"code": 200, "status": rows[0]}).to_string()),
        );
        let base = up.base_url();
        let x = Xmd::start(&["--upstream", base.as_str()]);
        for format in ["markdown", "json"] {
            let r = call(
                &x,
                &json!({"handle": "deep", "id": FIRST_ID.to_string(), "format": format}),
            );
            if depth == 100 {
                assert_eq!(r["isError"], json!(true), "{r}");
                let text = r["content"][0]["text"].as_str().unwrap();
                assert_eq!(
                    text,
                    "FxTwitter answered a status answer that is not the expected shape: its \
                     JSON is nested deeper than 64 levels, which xmd does not read. (HTTP 502, \
                     code upstream_invalid_response)"
                );
                continue;
            }
            assert_eq!(r["isError"], json!(false), "depth {depth}: {r}");
            let sc = &r["structuredContent"];
            let ids: Vec<&str> = sc["posts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["id"].as_str().unwrap())
                .collect();
            let want: Vec<String> = [0, 1, 2, 10, 11, 12]
                .iter()
                .map(|i| (FIRST_ID + i).to_string())
                .collect();
            if format == "json" && sc["next_cursor"].is_string() {
                // Deep quotes as JSON may pass the result budget: a prefix,
                // continued by the cursor.
                assert!(!ids.is_empty() && ids.len() < 6, "depth {depth}");
                assert_eq!(ids, want[..ids.len()], "depth {depth}");
                continue;
            }
            assert_eq!(ids, want, "depth {depth}: {}", sc["warnings"]);
            assert_eq!(sc["warnings"], json!([]), "depth {depth}");
            if format == "markdown" {
                // The renderer shows three levels, then names the fourth.
                let md = r["content"][0]["text"].as_str().unwrap();
                let nested = md.matches("(nested quote not shown)").count();
                assert_eq!(nested, if depth > 3 { 6 } else { 0 }, "depth {depth}");
            }
        }
    }
}
