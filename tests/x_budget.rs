//! Issue 14, wire level: the real binary against the loopback fake
//! upstream. One test per item: the result budget and its continuation,
//! the 1 MiB message cap, lean `structuredContent`, SSE framing safe for
//! every line splitter, the call deadline, cancel on disconnect, links
//! under `--public-url`, and no repeated rows.

mod common;
mod util;

use std::io::Write;
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::*;

const FIRST_ID: u64 = 1_900_000_000_000_000_000;

fn status(i: u64, text: &str, parent: Option<u64>) -> Value {
    json!({
        "type": "status",
        "id": (FIRST_ID + i).to_string(),
        "url": format!("https://x.com/demo_author/status/{}", FIRST_ID + i),
        "text": text,
        "raw_text": {"text": text, "facets": []},
        "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "created_timestamp": 1786464342 + i,
        "likes": 1, "reposts": 0, "replies": 0,
        "author": {"id": "1625427172309102593", "screen_name": "demo_author", "name": "Demo Author"},
        "replying_to": parent.map(|p| json!({"screen_name": "demo_author", "status": (FIRST_ID + p).to_string()})),
    })
}

/// A thread of `n` posts by one author, each `chars` long (made of
/// `unit`), served for the first post.
fn thread_upstream(n: u64, chars: usize, unit: &str) -> FakeUpstream {
    thread_upstream_with(n, chars, unit, true)
}

/// [`thread_upstream`], optionally without the upstream's `raw_text`
/// copies (to keep a hostile thread under the 4 MiB upstream body cap).
fn thread_upstream_with(n: u64, chars: usize, unit: &str, raw_text: bool) -> FakeUpstream {
    let up = FakeUpstream::start();
    let body = |i: u64| {
        let t: String = format!("{i:03} ")
            .chars()
            .chain(unit.chars().cycle())
            .take(chars)
            .collect();
        t
    };
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            let mut s = status(i, &body(i), i.checked_sub(1));
            if !raw_text {
                s.as_object_mut().unwrap().remove("raw_text");
            }
            s
        })
        .collect();
    up.on(
        &format!("/2/thread/{FIRST_ID}"),
        Answer::json(
            200,
            &json!({"code": 200, "status": rows[0], "thread": rows}).to_string(),
        ),
    );
    up
}

fn start(up: &FakeUpstream, extra: &[&str]) -> Xmd {
    let base = up.base_url();
    let mut args = vec!["--upstream", base.as_str()];
    args.extend_from_slice(extra);
    Xmd::start(&args)
}

fn headers(modern: bool, sse_only: bool) -> Vec<String> {
    let accept = if sse_only {
        "Accept: text/event-stream"
    } else {
        "Accept: application/json, text/event-stream"
    };
    let mut h = vec!["Content-Type: application/json".to_string(), accept.into()];
    if modern {
        h.push("MCP-Protocol-Version: 2026-07-28".into());
        h.push("Mcp-Method: tools/call".into());
    } else {
        h.push("MCP-Protocol-Version: 2025-11-25".into());
    }
    h
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn call_body(modern: bool, id: &str, tool: &str, args: &Value) -> String {
    let meta = if modern {
        format!(",{META}")
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}{meta}}}}}"#
    )
}

fn call_raw(x: &Xmd, modern: bool, sse: bool, tool: &str, args: &Value) -> Reply {
    let h = headers(modern, sse);
    let mut h: Vec<&str> = h.iter().map(String::as_str).collect();
    let name = format!("Mcp-Name: {tool}");
    if modern {
        h.push(&name);
    }
    roundtrip(x, &post(&x.host(), &h, &call_body(modern, "7", tool, args)))
}

fn call(x: &Xmd, tool: &str, args: &Value) -> Value {
    let r = call_raw(x, false, false, tool, args);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

fn ids(sc: &Value) -> Vec<String> {
    sc["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

/// Item 1: a 64-post thread of 25,000-character posts under a 60,000
/// character budget: two posts per result, a note naming the exact call,
/// the cursor in structuredContent; following the cursors reads the whole
/// thread once, in order; the REST route answers the same Markdown.
#[test]
fn i1_budget_cuts_at_post_boundaries_and_continues_without_repeats() {
    let up = thread_upstream(64, 25_000, "long note ");
    // The budget these numbers were chosen for (the default is 40,000).
    let x = start(&up, &["--max-result-chars", "60000"]);
    let args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off"});
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut calls = 0;
    loop {
        let mut a = args.clone();
        if let Some(c) = &cursor {
            a["cursor"] = json!(c);
        }
        let r = call(&x, "x_md_get_post", &a);
        calls += 1;
        assert_eq!(r["isError"], false, "{}", text(&r));
        let t = text(&r);
        assert!(t.chars().count() <= 60_000, "{}", t.chars().count());
        let sc = &r["structuredContent"];
        seen.extend(ids(sc));
        if sc["truncated"] == false {
            assert_eq!(sc.get("next_cursor"), None);
            break;
        }
        let c = sc["next_cursor"].as_str().unwrap().to_string();
        let shown = ids(sc);
        assert_eq!(shown.len(), 2, "two 25,000-character posts fit 60,000");
        let start = seen.len() - shown.len();
        let note = format!(
            "> **Note:** Result budget of 60000 characters (30000 estimated tokens) reached: this result shows posts {}–{} of 64; posts {}–64 were left out. Continue with `x_md_get_post {{\"cursor\":\"{c}\",\"handle\":\"demo_author\",\"id\":\"{FIRST_ID}\",\"replies\":\"off\"}}` (the raw cursor: `cursor=\"{c}\"`), or open [Continue →](http://{}/demo_author/status/{FIRST_ID}?replies=off&cursor={}).",
            start + 1,
            seen.len(),
            seen.len() + 1,
            x.addr,
            c.replace(':', "%3A").replace('@', "%40")
        );
        assert!(t.ends_with(&note), "{}", &t[t.len().saturating_sub(900)..]);
        assert_eq!(
            sc["warnings"].as_array().unwrap().last().unwrap(),
            &json!(note["> **Note:** ".len()..])
        );
        if calls == 1 {
            // The REST route applies the same budget: the same Markdown.
            let path = format!("/demo_author/status/{FIRST_ID}?replies=off");
            let raw = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", x.host());
            let rest = roundtrip(&x, raw.as_bytes());
            assert_eq!(rest.status, 200);
            assert_eq!(rest.text(), t);
        }
        cursor = Some(c);
    }
    let want: Vec<String> = (0..64).map(|i| (FIRST_ID + i).to_string()).collect();
    assert_eq!(seen, want, "every post once, in order");
    assert_eq!(calls, 32);
}

/// Item 1, a post that alone exceeds the budget: cut inside, marked.
#[test]
fn i1_one_post_over_the_budget_is_cut_inside_and_marked() {
    let up = thread_upstream(2, 25_000, "word ");
    let x = start(&up, &["--max-result-chars", "5000"]);
    let r = call(
        &x,
        "x_md_get_post",
        &json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off"}),
    );
    let t = text(&r);
    assert!(t.chars().count() <= 5000);
    assert!(
        t.contains("**[Cut: this post alone exceeds the result budget; "),
        "{t}"
    );
    assert!(t.contains(" of 25000 characters of its text are shown. The whole post: <https://x.com/demo_author/status/1900000000000000000>]**"));
    let sc = &r["structuredContent"];
    assert_eq!(sc["truncated"], true);
    assert_eq!(sc["posts"][0]["text_truncated"], true);
    // The continuation starts after the cut post.
    let r = call(
        &x,
        "x_md_get_post",
        &json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off", "cursor": sc["next_cursor"]}),
    );
    assert_eq!(ids(&r["structuredContent"]), [(FIRST_ID + 1).to_string()]);
}

/// Item 2: hostile text at the largest accepted budget, both framings,
/// both eras: every message is at most 1,048,576 bytes; a larger setting
/// is refused at startup.
#[test]
fn i2_every_message_fits_one_mebibyte() {
    // U+2028 and NUL escape to six bytes each: the worst case.
    let up = thread_upstream_with(20, 25_000, "\u{2028}\u{0}\"\\🦀", false);
    let x = start(&up, &["--max-result-chars", "160000"]);
    let args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off", "full": true});
    for modern in [false, true] {
        for sse in [false, true] {
            let r = call_raw(&x, modern, sse, "x_md_get_post", &args);
            assert_eq!(r.status, 200);
            assert!(r.body.len() <= 1_048_576, "{} bytes", r.body.len());
            let v = r.json();
            assert_eq!(v["result"]["isError"], false, "{}", v);
            assert_eq!(v["result"]["structuredContent"]["truncated"], true);
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xmd"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-result-chars",
            "160001",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().next().unwrap(),
        "xmd: invalid --max-result-chars '160001' (expected a whole number from 2000 to 160000: larger results would not fit one 1 MiB message)"
    );
}

/// Item 3: one post's text appears twice on the wire (the text content
/// and `posts[0].text`), never as Markdown or `raw_text` copies.
#[test]
fn i3_structured_content_holds_each_text_once() {
    let up = FakeUpstream::start();
    let marker = "UNIQUE-MARKER-abcdef";
    let mut s = status(0, marker, None);
    s["text"] = json!(marker);
    up.on(
        &format!("/2/status/{FIRST_ID}"),
        Answer::json(200, &json!({"code": 200, "status": s}).to_string()),
    );
    let x = start(&up, &[]);
    let args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "thread": "off"});
    let r = call_raw(&x, false, false, "x_md_get_post", &args);
    assert_eq!(r.text().matches(marker).count(), 2, "{}", r.text());
    let sc = &r.json()["result"]["structuredContent"];
    assert_eq!(sc.get("markdown"), None);
    assert_eq!(sc["posts"][0].get("raw_text"), None);
    assert_eq!(sc["posts"][0]["text"], marker);
    // `full` asks for the upstream's raw_text too.
    let mut full = args.clone();
    full["full"] = json!(true);
    let r = call_raw(&x, false, false, "x_md_get_post", &full);
    assert_eq!(r.text().matches(marker).count(), 3);
}

/// Item 4: text with every Unicode line break, a string id with them too:
/// the SSE `data:` line and the JSON body hold none raw (the only line
/// breaks are the SSE framing's), and both parse back to the same text.
#[test]
fn i4_sse_data_lines_survive_every_line_splitter() {
    let nasty = "a\u{2028}b\u{2029}c\u{85}d\re\nf\u{b}g\u{c}h\u{1c}i\u{1d}j\u{1e}k";
    let up = FakeUpstream::start();
    let mut s = status(0, nasty, None);
    s["text"] = json!(nasty);
    up.on(
        &format!("/2/status/{FIRST_ID}"),
        Answer::json(200, &json!({"code": 200, "status": s}).to_string()),
    );
    let x = start(&up, &[]);
    let args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "thread": "off"});
    let h = headers(false, true);
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let body = call_body(false, "\"id\u{2028}\u{85}\"", "x_md_get_post", &args);
    let r = roundtrip(&x, &post(&x.host(), &h, &body));
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    let text = r.text();
    let data = text
        .strip_prefix("event: message\ndata: ")
        .and_then(|t| t.strip_suffix("\n\n"))
        .expect("one SSE event");
    assert!(
        !data.chars().any(xmd::json::is_python_line_break),
        "{data:?}"
    );
    assert!(data.contains(r#"a\u2028b\u2029c\u0085d\re"#), "{data}");
    let v: Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["id"], "id\u{2028}\u{85}");
    assert_eq!(v["result"]["structuredContent"]["posts"][0]["text"], nasty);
    // JSON framing and the REST JSON route: no raw line break at all.
    let r = call_raw(&x, true, false, "x_md_get_post", &args);
    let t = r.text();
    let payload = t
        .strip_prefix("event: message\ndata: ")
        .and_then(|t| t.strip_suffix("\n\n"))
        .unwrap_or(&t);
    assert!(
        !payload.chars().any(xmd::json::is_python_line_break),
        "{payload}"
    );
    let raw = format!(
        "GET /demo_author/status/{FIRST_ID}?thread=off HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\r\n",
        x.host()
    );
    let r = roundtrip(&x, raw.as_bytes());
    assert_eq!(r.status, 200);
    assert!(!r.text().chars().any(xmd::json::is_python_line_break));
}

/// A reply 30 levels deep whose ancestors answer in 300 ms each.
fn slow_chain(depth: u64, delay: Duration) -> FakeUpstream {
    let up = FakeUpstream::start();
    let focal = status(depth, "the reply", Some(depth - 1));
    up.on(
        &format!("/2/thread/{}", FIRST_ID + depth),
        Answer::json(200, &json!({"code": 200, "thread": [focal]}).to_string()),
    );
    for i in 0..depth {
        let s = status(i, &format!("ancestor {i}"), i.checked_sub(1));
        up.on(
            &format!("/2/status/{}", FIRST_ID + i),
            Answer::json(200, &json!({"code": 200, "status": s}).to_string()).delay(delay),
        );
    }
    up
}

/// Item 5: a walk that reaches `--call-timeout` returns what it has with
/// a note; with nothing loaded the result is isError, code deadline.
#[test]
fn i5_one_deadline_per_call() {
    let up = slow_chain(30, Duration::from_millis(300));
    let x = start(&up, &["--call-timeout", "1"]);
    let t0 = Instant::now();
    let r = call(
        &x,
        "x_md_get_post",
        &json!({"handle": "demo_author", "id": (FIRST_ID + 30).to_string(), "replies": "off"}),
    );
    let took = t0.elapsed();
    // The deadline plus the one request in flight (300 ms), and slack.
    assert!(took < Duration::from_millis(2500), "{took:?}");
    assert_eq!(r["isError"], false);
    let sc = &r["structuredContent"];
    let n = sc["post_count"].as_u64().unwrap();
    assert!((2..=5).contains(&n), "{n}");
    assert_eq!(sc["thread_complete"], false);
    assert_eq!(
        sc["warnings"],
        json!([format!("Stopped walking up the reply chain at the call deadline (--call-timeout); showing the {n} posts loaded.")])
    );
    assert!(text(&r).ends_with("> The thread may be incomplete."));

    // Nothing to show: the thread answers 500 after the deadline.
    let up = FakeUpstream::start();
    up.on(
        &format!("/2/thread/{FIRST_ID}"),
        Answer::json(500, r#"{"code":500,"message":"slow"}"#).delay(Duration::from_millis(1200)),
    );
    let x = start(&up, &["--call-timeout", "1"]);
    let r = call(
        &x,
        "x_md_get_post",
        &json!({"handle": "demo_author", "id": FIRST_ID.to_string()}),
    );
    assert_eq!(r["isError"], true);
    assert_eq!(
        text(&r),
        "The call reached its deadline of 1 s (--call-timeout) before the upstream answered; retry, or ask for less (for a post thread=off or a smaller max_posts; for a list an earlier page). (HTTP 504, code deadline)"
    );
    assert_eq!(up.request_count(), 1, "no request after the deadline");
}

fn metric(x: &Xmd, name: &str) -> u64 {
    let raw = format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", x.host());
    let r = roundtrip(x, raw.as_bytes());
    r.text()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name}"))
        .parse()
        .unwrap()
}

/// Item 6: a client that closes its connection mid-walk stops the walk
/// within one upstream round trip, in both eras; the one worker is free
/// for the next call; /metrics counts the cancelled calls.
#[test]
fn i6_closing_the_connection_cancels_the_call() {
    closing_cancels_the_call("loop");
}

/// The same with the workers blocking through the upstream requests (the
/// fallback, `--upstream-io threads`).
#[test]
fn i6_with_the_workers_closing_the_connection_cancels_the_call() {
    closing_cancels_the_call("threads");
}

/// Item 6's cancelled walk, the upstream requests made by `io`.
fn closing_cancels_the_call(io: &str) {
    let up = slow_chain(30, Duration::from_millis(300));
    let x = start(&up, &["--workers", "1", "--upstream-io", io]);
    for (round, modern) in [false, true].into_iter().enumerate() {
        let before = up.request_count();
        let h = headers(modern, false);
        let mut h: Vec<&str> = h.iter().map(String::as_str).collect();
        h.push("Mcp-Name: x_md_get_post");
        let args = json!({"handle": "demo_author", "id": (FIRST_ID + 30).to_string(), "replies": "off", "full": round == 1});
        let mut s = x.connect();
        s.write_all(&post(
            &x.host(),
            &h,
            &call_body(modern, "1", "x_md_get_post", &args),
        ))
        .unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        drop(s);
        // One round trip (300 ms) for the request in flight, then nothing
        // (with slack for a loaded machine).
        std::thread::sleep(Duration::from_millis(800));
        let stopped = up.request_count();
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(up.request_count(), stopped, "requests after the close");
        assert!(stopped - before <= 6, "{}", stopped - before);
        assert_eq!(
            metric(&x, "xmd_tool_calls_cancelled_total"),
            round as u64 + 1
        );
    }
    // The worker is free: a call answers at once (from the cache).
    let t0 = Instant::now();
    let r = call(
        &x,
        "x_md_get_post",
        &json!({"handle": "demo_author", "id": (FIRST_ID + 29).to_string(), "thread": "off"}),
    );
    assert_eq!(r["isError"], false);
    assert!(
        t0.elapsed() < Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
}

/// Item 6 for a post's quotes and reposts (tools added after this issue),
/// over MCP in both eras and over their HTTP routes: upstream pages of one
/// row each answering in 300 ms, so a 20-row result needs 20 of them; a
/// client that leaves after one second stops the walk within one round
/// trip, and each such call is counted.
#[test]
fn i6_closing_the_connection_cancels_a_post_list_walk() {
    let up = FakeUpstream::start();
    up.handler(|target| {
        let (path, query) = target.split_once('?')?;
        let which = path.rsplit('/').next()?;
        let k: u64 = match query.strip_prefix("cursor=c") {
            Some(rest) => rest.split('&').next()?.parse().ok()?,
            None => 0,
        };
        let row = if which == "quotes" {
            status(k, &format!("quote {k}"), None)
        } else {
            json!({"id": (5000 + k).to_string(), "screen_name": format!("u{k}"), "name": "U"})
        };
        let body =
            json!({"code": 200, "results": [row], "cursor": {"bottom": format!("c{}", k + 1)}});
        Some(Answer::json(200, &body.to_string()).delay(Duration::from_millis(300)))
    });
    let x = start(&up, &["--workers", "1"]);
    let id = FIRST_ID.to_string();
    let cases: [(&str, Option<bool>, String); 4] = [
        ("x_md_get_quotes", Some(true), String::new()),
        ("x_md_get_reposts", Some(false), String::new()),
        (
            "x_md_get_reposts",
            None,
            format!("/demo_author/status/{id}/retweets"),
        ),
        (
            "x_md_get_quotes",
            None,
            format!("/i/status/{id}/quotes?full=true"),
        ),
    ];
    for (round, (tool, modern, route)) in cases.into_iter().enumerate() {
        let before = up.request_count();
        let mut s = x.connect();
        match modern {
            Some(modern) => {
                let h = headers(modern, false);
                let mut h: Vec<&str> = h.iter().map(String::as_str).collect();
                let name = format!("Mcp-Name: {tool}");
                h.push(&name);
                // Each round its own post, so nothing comes from the cache.
                let args =
                    json!({"handle": "demo_author", "id": (FIRST_ID + round as u64).to_string()});
                s.write_all(&post(&x.host(), &h, &call_body(modern, "1", tool, &args)))
                    .unwrap();
            }
            None => {
                let route = route.replace(&id, &(FIRST_ID + round as u64).to_string());
                let raw = format!("GET {route} HTTP/1.1\r\nHost: {}\r\n\r\n", x.host());
                s.write_all(raw.as_bytes()).unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(1000));
        drop(s);
        std::thread::sleep(Duration::from_millis(800));
        let stopped = up.request_count();
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(
            up.request_count(),
            stopped,
            "{tool} {route}: requests after the close"
        );
        let made = stopped - before;
        assert!((1..=7).contains(&made), "{tool} {route}: {made}");
        assert_eq!(
            metric(&x, "xmd_tool_calls_cancelled_total"),
            round as u64 + 1,
            "{tool} {route}"
        );
    }
}

/// Item 7: with a public URL under a path prefix every link is absolute
/// under it; the cursor copied from a link (percent-encoded) works too.
#[test]
fn i7_links_resolve_under_the_public_url() {
    let up = FakeUpstream::start();
    let base = "/2/profile/demo_author/followers";
    let page = |rows: &[u32], bottom: &str| {
        let rows: Vec<Value> = rows.iter().map(|&i| follower(i)).collect();
        Answer::json(
            200,
            &json!({"code": 200, "results": rows, "cursor": {"bottom": bottom}}).to_string(),
        )
    };
    up.on(&format!("{base}?count=20"), page(&[1, 2, 3], "c1"));
    up.on(&format!("{base}?cursor=c1&count=20"), page(&[4, 5], "c2"));
    up.on(&format!("{base}?cursor=c2&count=20"), page(&[], "c3"));
    let x = start(&up, &["--public-url", "https://tools.example.org/xmd/"]);
    let r = call(
        &x,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "limit": 2}),
    );
    let t = text(&r);
    let c = r["structuredContent"]["next_cursor"].as_str().unwrap();
    let mark = |id: &str| format!("{:06x}", xmd::x::cursor::row_mark(id));
    assert_eq!(
        c.rsplit_once(':').unwrap().0,
        format!("followers:demo_author:@2!{}.{}", mark("1001"), mark("1002"))
    );
    let encoded = c
        .replace(':', "%3A")
        .replace('@', "%40")
        .replace('!', "%21");
    assert!(
        t.ends_with(&format!("[Continue →](https://tools.example.org/xmd/demo_author/followers?limit=2&cursor={encoded}) · [Next page (2) →](https://tools.example.org/xmd/demo_author/followers?limit=2&page=2)\n\nnext_cursor: `{c}` (pass it as `cursor`, with the same other arguments, to continue)\n")),
        "{t}"
    );
    let raw = call(
        &x,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "limit": 2, "cursor": c}),
    );
    let enc = call(
        &x,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "limit": 2, "cursor": encoded}),
    );
    assert_eq!(raw["isError"], false, "{}", text(&raw));
    assert_eq!(text(&raw), text(&enc));
    assert_eq!(
        raw["structuredContent"]["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["1003", "1004"]
    );

    // A thread continuation link too.
    let up = thread_upstream(4, 25_000, "x ");
    let x = start(&up, &["--public-url", "https://tools.example.org/xmd/"]);
    let r = call(
        &x,
        "x_md_get_post",
        &json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off"}),
    );
    assert!(text(&r).contains(&format!("[Continue →](https://tools.example.org/xmd/demo_author/status/{FIRST_ID}?replies=off&cursor=thread%3A")));
}

fn follower(i: u32) -> Value {
    json!({"id": (1000 + i).to_string(), "screen_name": format!("f{i}"), "name": format!("F {i}")})
}

/// Item 8 (and issue 27 item 1): a page that repeats rows of the one
/// before (new cursor) never shows a row twice, within one result or
/// across consecutive ones, and the walk goes on past the repeats; it
/// ends where the cursor does not advance. Pages without a new row stop
/// it at `MAX_PAGES_WITHOUT_NEW_ROWS` with a note and a cursor.
#[test]
fn i8_repeated_rows_are_skipped_not_the_end() {
    let up = FakeUpstream::start();
    let page = |rows: &[u32], bottom: &str| {
        let rows: Vec<Value> = rows.iter().map(|&i| follower(i)).collect();
        Answer::json(
            200,
            &json!({"code": 200, "results": rows, "cursor": {"bottom": bottom}}).to_string(),
        )
    };
    let base = "/2/profile/demo_author/followers";
    up.on(&format!("{base}?count=20"), page(&[1, 2, 3], "c1"));
    up.on(
        &format!("{base}?cursor=c1&count=20"),
        page(&[3, 1, 4, 4, 2], "c2"),
    );
    up.on(&format!("{base}?cursor=c2&count=20"), page(&[4, 5], "c2"));
    let x = start(&up, &[]);
    let users = |r: &Value| -> Vec<String> {
        r["structuredContent"]["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["id"].as_str().unwrap().to_string())
            .collect()
    };
    // Within one result.
    let r = call(&x, "x_md_get_followers", &json!({"handle": "demo_author"}));
    assert_eq!(users(&r), ["1001", "1002", "1003", "1004", "1005"]);
    assert_eq!(r["structuredContent"].get("warnings"), None);
    assert_eq!(r["structuredContent"].get("next_cursor"), None);
    // Across consecutive results.
    let r = call(
        &x,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "limit": 3}),
    );
    assert_eq!(users(&r), ["1001", "1002", "1003"]);
    let c = r["structuredContent"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let r = call(
        &x,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "limit": 3, "cursor": c}),
    );
    assert_eq!(users(&r), ["1004", "1005"]);
    assert_eq!(r["structuredContent"].get("warnings"), None);
    assert_eq!(r["structuredContent"].get("next_cursor"), None);
    // Two pages in a row without a new row: a note and a cursor.
    let up = FakeUpstream::start();
    up.on(&format!("{base}?count=20"), page(&[1, 2], "c1"));
    up.on(&format!("{base}?cursor=c1&count=20"), page(&[1, 2], "c2"));
    up.on(&format!("{base}?cursor=c2&count=20"), page(&[], "c3"));
    up.on(&format!("{base}?cursor=c3&count=20"), page(&[6], "c3"));
    let x = start(&up, &[]);
    let r = call(&x, "x_md_get_followers", &json!({"handle": "demo_author"}));
    assert_eq!(users(&r), ["1001", "1002"]);
    assert_eq!(
        r["structuredContent"]["warnings"],
        json!([xmd::x::browse::nothing_new_note()])
    );
    let c = r["structuredContent"]["next_cursor"].as_str().unwrap();
    let r = call(
        &x,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "cursor": c}),
    );
    assert_eq!(users(&r), ["1006"]);
    assert_eq!(r["structuredContent"].get("next_cursor"), None);
}

/// Item 1 for rows: a search page of five 25,000-character posts is cut
/// at a row boundary (two rows fit 60,000 characters); the cursors read
/// every row once, and the HTTP route answers the same Markdown.
#[test]
fn i1_rows_are_cut_at_row_boundaries_and_continue() {
    let up = FakeUpstream::start();
    let rows: Vec<Value> = (0..5)
        .map(|i| status(i, &format!("{i} {}", "row text ".repeat(2778)), None))
        .collect();
    up.on(
        "/2/search?q=long&feed=latest&count=20",
        Answer::json(
            200,
            &json!({"code": 200, "results": rows, "cursor": {"bottom": null}}).to_string(),
        ),
    );
    let x = start(&up, &["--max-result-chars", "60000"]);
    let mut args = json!({"q": "long"});
    let mut seen = Vec::new();
    for call_no in 0.. {
        let r = call(&x, "x_md_search_posts", &args);
        assert_eq!(r["isError"], false, "{}", text(&r));
        let t = text(&r);
        assert!(t.chars().count() <= 60_000);
        let sc = &r["structuredContent"];
        seen.extend(ids(sc));
        if call_no == 0 {
            assert_eq!(ids(sc).len(), 2);
            assert_eq!(sc["truncated"], true);
            let raw = format!("GET /search?q=long HTTP/1.1\r\nHost: {}\r\n\r\n", x.host());
            assert_eq!(roundtrip(&x, raw.as_bytes()).text(), t);
        }
        match sc.get("next_cursor").and_then(Value::as_str) {
            Some(c) => {
                assert!(
                    t.contains(&format!("(the raw cursor: cursor=\"{c}\")")),
                    "{t}"
                );
                args["cursor"] = json!(c);
            }
            None => break,
        }
    }
    let want: Vec<String> = (0..5).map(|i| (FIRST_ID + i).to_string()).collect();
    assert_eq!(seen, want);
}

/// Item 2, the last guard: one upstream field larger than any budget (a
/// display name of a million line separators; a bio that long is cut by
/// the profile itself, see x_budget_links) still gives a result within
/// the budget in one message under 1 MiB, marked as cut.
#[test]
fn i2_a_field_larger_than_the_budget_is_still_cut() {
    let up = FakeUpstream::start();
    let name = "\u{2028}x".repeat(500_000);
    up.on(
        "/2/profile/demo_author",
        Answer::json(
            200,
            &json!({"code": 200, "user": {"screen_name": "demo_author", "name": name, "description": "Demo"}}).to_string(),
        ),
    );
    up.on(
        "/2/profile/demo_author/statuses?count=20&with_replies=false",
        Answer::json(200, r#"{"code":200,"results":[],"cursor":{"bottom":null}}"#),
    );
    let x = start(&up, &[]);
    for sse in [false, true] {
        let r = call_raw(
            &x,
            false,
            sse,
            "x_md_get_profile",
            &json!({"handle": "demo_author"}),
        );
        assert!(r.body.len() <= 1_048_576, "{}", r.body.len());
        let v = r.json();
        let t = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(t.chars().count() <= 60_000);
        assert!(t.ends_with(
            "\n\n**[Cut: this result alone exceeds the result budget; the rest is not shown.]**"
        ));
        assert_eq!(v["result"]["structuredContent"]["truncated"], true);
        assert_eq!(
            v["result"]["structuredContent"]["profile"],
            json!({"screen_name": "demo_author"})
        );
    }
}

/// Item 6 for a queued call: its client leaves while it waits for the
/// one worker; it never starts (no upstream request), and is counted.
/// With the workers blocking through the upstream requests
/// (`--upstream-io threads`): with the event loops making them (the
/// default) a call waiting for the upstream holds no worker, so nothing
/// queues behind it.
#[test]
fn i6_a_queued_call_whose_client_left_never_runs() {
    let up = slow_chain(30, Duration::from_millis(300));
    let x = start(&up, &["--workers", "1", "--upstream-io", "threads"]);
    let h = headers(false, false);
    let h: Vec<&str> = h.iter().map(String::as_str).collect();
    let busy =
        json!({"handle": "demo_author", "id": (FIRST_ID + 30).to_string(), "replies": "off"});
    let mut first = x.connect();
    first
        .write_all(&post(
            &x.host(),
            &h,
            &call_body(false, "1", "x_md_get_post", &busy),
        ))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let queued =
        json!({"handle": "demo_author", "id": (FIRST_ID + 5).to_string(), "thread": "off"});
    let mut second = x.connect();
    second
        .write_all(&post(
            &x.host(),
            &h,
            &call_body(false, "2", "x_md_get_post", &queued),
        ))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(second);
    drop(first);
    std::thread::sleep(Duration::from_millis(1200));
    let asked = up
        .targets()
        .iter()
        .filter(|t| *t == &format!("/2/status/{}", FIRST_ID + 5))
        .count();
    assert_eq!(asked, 0, "the queued call reached the upstream");
    assert_eq!(metric(&x, "xmd_tool_calls_cancelled_total"), 2);
}

/// A thread that shrank between two calls (posts deleted): its cursor now
/// points past the end and is refused plainly, not as a forgery.
#[test]
fn i1_a_cursor_past_the_end_of_a_shrunk_thread_is_refused_plainly() {
    let up = thread_upstream(6, 25_000, "note ");
    let whole = {
        let rows: Vec<Value> = (0..6)
            .map(|i| {
                status(
                    i,
                    &format!("{i:03} {}", "note ".repeat(5_000)),
                    i.checked_sub(1),
                )
            })
            .collect();
        json!({"code": 200, "status": rows[0], "thread": rows}).to_string()
    };
    let alone = json!({"code": 200, "status": status(0, "alone", None), "thread": [status(0, "alone", None)]}).to_string();
    up.route(
        &format!("/2/thread/{FIRST_ID}"),
        vec![Answer::json(200, &whole), Answer::json(200, &alone)],
    );
    let x = start(&up, &["--cache-bytes", "0"]);
    let args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off", "max_chars": 30_000});
    let r = call(&x, "x_md_get_post", &args);
    assert_eq!(ids(&r["structuredContent"]).len(), 1);
    let mut next = args.clone();
    next["cursor"] = r["structuredContent"]["next_cursor"].clone();
    let e = call(&x, "x_md_get_post", &next);
    assert_eq!(e["isError"], true);
    assert_eq!(
        text(&e),
        "The cursor points past the end of this thread (1 posts now); omit `cursor` to start at the first post. (HTTP 400, code invalid_cursor)"
    );
}

/// Item 1, the per-call argument: `max_chars` lowers the budget (and is
/// kept in the continuation), and can never raise it.
#[test]
fn i1_max_chars_only_lowers_the_budget() {
    let up = thread_upstream(6, 25_000, "note ");
    up.on(
        &format!("/2/status/{FIRST_ID}"),
        Answer::json(
            200,
            &json!({"code": 200, "status": status(0, "alone", None)}).to_string(),
        ),
    );
    let x = start(&up, &["--max-result-chars", "60000"]);
    let base = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off"});
    let mut lower = base.clone();
    lower["max_chars"] = json!(30_000);
    let r = call(&x, "x_md_get_post", &lower);
    let t = text(&r);
    assert!(t.chars().count() <= 30_000);
    assert_eq!(ids(&r["structuredContent"]).len(), 1);
    assert!(t.contains("Result budget of 30000 characters (15000 estimated tokens) reached"));
    assert!(
        t.contains("\"max_chars\":30000"),
        "the continuation keeps it"
    );
    assert!(t.contains("&max_chars=30000&cursor="));
    // A thread cursor is bound to the arguments that shape the thread:
    // with thread=off it is refused, before any upstream request.
    let mut off = lower.clone();
    off["thread"] = json!("off");
    off["cursor"] = r["structuredContent"]["next_cursor"].clone();
    let asked = up.request_count();
    let e = call(&x, "x_md_get_post", &off);
    assert_eq!(e["isError"], true);
    assert!(
        text(&e).starts_with("The cursor is not one this server issued for these arguments"),
        "{}",
        text(&e)
    );
    assert!(text(&e).ends_with("(HTTP 400, code invalid_cursor)"));
    assert_eq!(up.request_count(), asked);
    let mut higher = base.clone();
    higher["max_chars"] = json!(160_000);
    let r = call(&x, "x_md_get_post", &higher);
    assert!(text(&r).chars().count() <= 60_000);
    assert_eq!(ids(&r["structuredContent"]).len(), 2);
}
