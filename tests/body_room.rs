//! Issue 32, item 3, with either upstream client (`--upstream-io threads`
//! or `loop`): an upstream body counts in the working budget
//! (`--max-working-bytes`) from its head on, before it is read; a body
//! there is no room for waits unread at most 2 s
//! (`x::memory::MAX_INCOMING_WAIT`), then its call is refused, retryably,
//! and once room is given back the same call succeeds.
//!
//! A loopback fake upstream answers post A with its head and half its body,
//! then holds the rest until the test releases it: A's body holds room for
//! twice its announced length, more than the budget (a call alone always
//! runs). Post B, asked meanwhile, finds no room.

mod util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use util::*;

const A: u64 = 1_700_000_000_000_000_001;
const B: u64 = 1_700_000_000_000_000_002;
/// Characters of each post's text: a body of about 600 KB, so that its
/// room (twice its length) is more than the budget.
const TEXT_CHARS: usize = 600_000;
const BUDGET_BYTES: &str = "1000000";
/// The refusal, as `tests/memory_budget.rs` has it.
const REFUSED: &str = "xmd is at its memory budget for tool calls (--max-working-bytes) right now; nothing was read. (HTTP 503, code memory_budget, retry after 1s)";

fn answer(id: u64) -> Vec<u8> {
    let text: String = "room ".chars().cycle().take(TEXT_CHARS).collect();
    json!({"code": 200, "message": "OK", "status": {
        "type": "status", "id": id.to_string(),
        "url": format!("https://x.com/demo_author/status/{id}"),
        "text": text, "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "created_timestamp": 1786464342, "likes": 1, "reposts": 0, "replies": 0,
        "author": {"id": "1625427172309102593", "screen_name": "demo_author", "name": "Demo Author"},
    }})
    .to_string()
    .into_bytes()
}

/// The fake: A's body held at half until `release`; `a_held` once it is.
fn fake(release: Arc<AtomicBool>, a_held: Arc<AtomicBool>) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for conn in l.incoming().map_while(Result::ok) {
            let (release, a_held) = (release.clone(), a_held.clone());
            thread::spawn(move || serve(conn, &release, &a_held));
        }
    });
    addr
}

fn serve(mut conn: TcpStream, release: &AtomicBool, a_held: &AtomicBool) {
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut b) {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&b[..n]),
        }
    }
    let head = String::from_utf8_lossy(&got).to_string();
    let id = if head.contains(&format!("/2/status/{A}")) {
        A
    } else {
        B
    };
    let body = answer(id);
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if id == A {
        out.extend_from_slice(&body[..body.len() / 2]);
        let _ = conn.write_all(&out);
        a_held.store(true, Ordering::SeqCst);
        while !release.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(10));
        }
        let _ = conn.write_all(&body[body.len() / 2..]);
    } else {
        out.extend_from_slice(&body);
        let _ = conn.write_all(&out);
    }
}

fn call(x: &Xmd, id: u64) -> (Value, Duration) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{id}","handle":"demo_author","thread":"off","max_chars":2000}}}}}}"#
    );
    let raw = post(
        &x.host(),
        &[
            "Content-Type: application/json",
            "Accept: application/json",
            "MCP-Protocol-Version: 2025-11-25",
        ],
        &body,
    );
    let t = Instant::now();
    let r = roundtrip(x, &raw);
    assert_eq!(r.status, 200, "{}", r.text());
    (r.json()["result"].clone(), t.elapsed())
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or("")
}

fn shown_id(r: &Value) -> String {
    assert_eq!(r["isError"], false, "{}", text(r));
    r["structuredContent"]["posts"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn a_body_waits_unread_for_room(io: &str) {
    let (release, a_held) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let addr = fake(release.clone(), a_held.clone());
    let base = format!("http://{addr}");
    let x = Xmd::start(&[
        "--upstream-io",
        io,
        "--upstream",
        &base,
        "--syndication-url",
        "",
        "--max-working-bytes",
        BUDGET_BYTES,
        "--cache-bytes",
        "0",
        "--rate-limit",
        "0",
        "--upstream-budget",
        "0",
        "--log-format",
        "off",
    ]);
    let a = thread::scope(|s| {
        let a = s.spawn(|| call(&x, A));
        let until = Instant::now() + Duration::from_secs(10);
        while !a_held.load(Ordering::SeqCst) {
            assert!(Instant::now() < until, "A's half body never sent");
            thread::sleep(Duration::from_millis(10));
        }
        // A's body holds the budget: B's waits unread, then is refused.
        let (b, took) = call(&x, B);
        assert_eq!((b["isError"].clone(), text(&b)), (json!(true), REFUSED));
        assert!(
            took >= Duration::from_millis(1900) && took < Duration::from_millis(3500),
            "{io}: refused after {took:?}, not the 2 s wait"
        );
        release.store(true, Ordering::SeqCst);
        a.join().unwrap()
    });
    assert_eq!(shown_id(&a.0), A.to_string());
    // Room given back: B reads.
    let (b, _) = call(&x, B);
    assert_eq!(shown_id(&b), B.to_string());
}

#[test]
fn with_the_threads_upstream_a_body_waits_unread_for_room() {
    a_body_waits_unread_for_room("threads");
}

#[test]
fn with_the_loop_upstream_a_body_waits_unread_for_room() {
    a_body_waits_unread_for_room("loop");
}
