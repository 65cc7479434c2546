//! Issue 32 item 5: a server gets at most `MAX_SERVER_REQUESTS_ANSWERED`
//! answers to its own requests in one command, however many exchanges the
//! command takes: the pages of a `tools/list` walk, the `tools/list` a
//! typed call reads before the call, the retry on a new session, a
//! resumed stream. The hostile server sends `ping`s (and other methods) on
//! the SSE reply of every request, then the response; the oracle counts
//! the answers it receives.

mod client_support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use client_support::{legacy_basics, xmd_client, Fake, Reply, Req};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::client::{cli, Client, Era, MAX_SERVER_REQUESTS_ANSWERED};

const CAP: usize = MAX_SERVER_REQUESTS_ANSWERED as usize;

/// The SSE events of `n` server requests (every third one not a `ping`),
/// then `response`.
fn requests_then(n: usize, tag: &str, response: Value) -> String {
    let mut out = String::new();
    for i in 0..n {
        let method = if i % 3 == 2 {
            "sampling/createMessage"
        } else {
            "ping"
        };
        out.push_str(&format!(
            "data: {}\n\n",
            json!({"jsonrpc": "2.0", "id": format!("{tag}-{i}"), "method": method})
        ));
    }
    out.push_str(&format!("data: {response}\n\n"));
    out
}

/// A legacy server: `tools/list` in `pages` pages (tool `t<i>` on page
/// `i`, cursors `c<i>`), `tools/call` of `echo` answering `ok`; every reply
/// to a request is an SSE stream with `per_reply` server requests before
/// the response. Counts the answers (responses POSTed to it) and checks
/// each answers a request it sent.
fn flooding_server(pages: usize, per_reply: usize) -> (Fake, Arc<AtomicUsize>) {
    let answers = Arc::new(AtomicUsize::new(0));
    let a = answers.clone();
    let fake = Fake::start(move |req: &Req| {
        if req.verb == "POST" && req.body.get("method").is_none() {
            let id = req.body["id"].as_str().unwrap_or("");
            assert!(
                id.starts_with("r"),
                "an answer to a request never sent: {id}"
            );
            a.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(r) = legacy_basics(req, "s-1") {
            return r;
        }
        let result = match req.method() {
            "tools/list" => {
                let page: usize = match req.body["params"]["cursor"].as_str() {
                    Some(c) => c[1..].parse().unwrap(),
                    None => 0,
                };
                let mut r = json!({"tools": [{"name": format!("t{page}"), "inputSchema": {"type": "object"}}]});
                if page + 1 < pages {
                    r["nextCursor"] = json!(format!("c{}", page + 1));
                }
                r
            }
            "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
            other => panic!("unexpected {other}"),
        };
        let tag = format!("r{}", req.id());
        let body = requests_then(
            per_reply,
            &tag,
            json!({"jsonrpc": "2.0", "id": req.id(), "result": result}),
        );
        Reply::sse_stream(move |w: &mut TcpStream| {
            let _ = w.write_all(body.as_bytes());
        })
    });
    (fake, answers)
}

/// 10 pages with 10 server requests on each: 100 sent, 16 answered, and
/// the walk still returns every page (the rest are read and ignored).
#[test]
fn a_paged_walk_answers_at_most_the_cap_in_total() {
    let (fake, answers) = flooding_server(10, 10);
    let c = Client::new(&fake.url()).era(Era::Legacy);
    let tools = c.list_tools().unwrap();
    let names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
    assert_eq!(names, (0..10).map(|i| format!("t{i}")).collect::<Vec<_>>());
    drop(c);
    assert_eq!(answers.load(Ordering::SeqCst), CAP);
}

/// The budget is the client's: a second walk on the same client gets none.
#[test]
fn a_second_call_on_the_same_client_gets_no_more_answers() {
    let (fake, answers) = flooding_server(1, 12);
    let c = Client::new(&fake.url()).era(Era::Legacy);
    c.list_tools().unwrap();
    assert_eq!(answers.load(Ordering::SeqCst), 12);
    c.list_tools().unwrap();
    c.call_tool("echo", Value::Null).unwrap();
    drop(c);
    assert_eq!(answers.load(Ordering::SeqCst), CAP);
}

/// The session expires between two calls: the 404 starts a new session
/// and the retry's stream brings 12 more requests; 16 answered in all.
#[test]
fn the_retry_on_a_new_session_shares_the_budget() {
    let answers = Arc::new(AtomicUsize::new(0));
    let sessions = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let (a, s, n) = (answers.clone(), sessions.clone(), calls.clone());
    let fake = Fake::start(move |req: &Req| {
        if req.verb == "POST" && req.body.get("method").is_none() {
            a.fetch_add(1, Ordering::SeqCst);
            return Reply::empty(202);
        }
        if req.method() == "initialize" {
            let k = s.fetch_add(1, Ordering::SeqCst);
            return client_support::init_result(req, "2025-11-25")
                .header("Mcp-Session-Id", &format!("s-{k}"));
        }
        if let Some(r) = legacy_basics(req, "unused") {
            return r;
        }
        // The first session serves one call, then is gone.
        if req.header("Mcp-Session-Id") == Some("s-0") && n.fetch_add(1, Ordering::SeqCst) == 1 {
            return Reply::empty(404);
        }
        let response = json!({"jsonrpc": "2.0", "id": req.id(), "result": {"tools": []}});
        let body = requests_then(12, &format!("r{}", req.id()), response);
        Reply::sse_stream(move |w: &mut TcpStream| {
            let _ = w.write_all(body.as_bytes());
        })
    });
    let c = Client::new(&fake.url()).era(Era::Legacy);
    assert_eq!(c.list_tools().unwrap().len(), 0);
    assert_eq!(answers.load(Ordering::SeqCst), 12);
    assert_eq!(c.list_tools().unwrap().len(), 0);
    assert_eq!(sessions.load(Ordering::SeqCst), 2);
    drop(c);
    assert_eq!(answers.load(Ordering::SeqCst), CAP);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any number of pages and of server requests per reply, through the
    /// command line (`tools`, and a typed `call`, which reads `tools/list`
    /// first): the answers are the requests sent, up to the cap in total,
    /// and the command succeeds with every page.
    #[test]
    fn every_command_answers_at_most_the_cap(pages in 1usize..8, per_reply in 0usize..12) {
        let (fake, answers) = flooding_server(pages, per_reply);
        let args: Vec<String> = ["--url", &fake.url(), "--era", "legacy", "tools"]
            .iter().map(|s| s.to_string()).collect();
        let inv = cli::parse(&args, &mut std::io::empty()).unwrap();
        let o = cli::run(&cli::client_for(&inv), &inv);
        prop_assert_eq!(o.code, 0);
        let listed: Value = serde_json::from_str(&o.stdout).unwrap();
        prop_assert_eq!(listed["tools"].as_array().map(Vec::len), Some(pages));
        prop_assert_eq!(answers.load(Ordering::SeqCst), (pages * per_reply).min(CAP));

        answers.store(0, Ordering::SeqCst);
        let args: Vec<String> = ["--url", &fake.url(), "--era", "legacy", "call", "t0", "x=1"]
            .iter().map(|s| s.to_string()).collect();
        let inv = cli::parse(&args, &mut std::io::empty()).unwrap();
        let client = cli::client_for(&inv);
        let o = cli::run(&client, &inv);
        drop(client);
        prop_assert_eq!(o.code, 0, "{:?}", o.stderr);
        // A typed call walks tools/list, then calls: pages + 1 replies.
        prop_assert_eq!(answers.load(Ordering::SeqCst), ((pages + 1) * per_reply).min(CAP));
    }
}

/// A legacy server whose every reply (each page, each resumption) is an
/// endless SSE stream of fat server requests with hostile method names
/// (ESC sequences, an RLO, a BOM): `xmd client -v tools` answers 16, keeps
/// its memory bounded, ends within `--timeout` + 1 s, and prints no raw
/// control or bidi character on stderr (the `--verbose` lines name each
/// request it leaves unanswered).
#[test]
fn an_endless_flood_of_fat_hostile_requests_is_bounded_in_answers_memory_time_and_output() {
    let answers = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(AtomicUsize::new(0));
    let (a, n) = (answers.clone(), sent.clone());
    let fake = Fake::start(move |req: &Req| {
        if req.verb == "POST" && req.body.get("method").is_none() {
            a.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(r) = legacy_basics(req, "s-1") {
            return r;
        }
        let n = n.clone();
        Reply::sse_stream(move |w: &mut TcpStream| {
            let pad = "p".repeat(256 * 1024);
            for i in 0u64.. {
                let m = json!({"jsonrpc": "2.0", "id": i, "params": {"pad": pad},
                               "method": "\u{1b}]0;owned\u{7}\u{202e}gpj.exe\u{feff}\u{9b}2J"});
                if w.write_all(format!("id: {i}\ndata: {m}\n\n").as_bytes())
                    .is_err()
                {
                    return;
                }
                n.fetch_add(1, Ordering::SeqCst);
                if i % 64 == 63 {
                    thread::sleep(Duration::from_millis(1));
                }
            }
        })
    });
    let run = xmd_client(&[
        "--url",
        &fake.url(),
        "--era",
        "legacy",
        "--timeout",
        "2",
        "-v",
        "tools",
    ]);
    assert_eq!(run.code, 4);
    assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    let sent = sent.load(Ordering::SeqCst);
    assert!(sent > 2 * CAP, "the flood sent only {sent} requests");
    assert_eq!(answers.load(Ordering::SeqCst), CAP);
    eprintln!(
        "{sent} requests of 256 KiB sent; peak RSS {} KiB",
        run.peak_rss_kib
    );
    assert!(
        run.peak_rss_kib < 48 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(
        !stderr
            .chars()
            .any(|c| (c.is_control() && c != '\n') || matches!(c, '\u{202e}' | '\u{feff}')),
        "raw control on stderr"
    );
    // One line for the unanswered flood, not one per request.
    let unanswered: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not answered"))
        .collect();
    assert_eq!(
        unanswered,
        ["xmd client: < SSE request '\\u{1b}]0;owned\\u{7}\\u{202e}gpj.exe\\u{feff}\\u{9b}2J' not answered, nor any later one (more than 16 in this command)"]
    );
    assert!(
        stderr.ends_with(" (--timeout bounds the whole command)\n"),
        "{}",
        &stderr[stderr.len().saturating_sub(300)..]
    );
}

/// Resumed streams share the budget: each page's POST stream carries 4
/// requests, an event id and a 20 ms `retry`, then closes; its `GET` with
/// `Last-Event-ID` carries 4 more and the page. 3 pages: 24 sent, 16
/// answered, every page listed.
#[test]
fn resumed_streams_share_the_budget() {
    let answers = Arc::new(AtomicUsize::new(0));
    let last_id = Arc::new(std::sync::Mutex::new((Value::Null, 0usize)));
    let (a, l) = (answers.clone(), last_id.clone());
    let fake = Fake::start(move |req: &Req| {
        if req.verb == "POST" && req.body.get("method").is_none() {
            a.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(r) = legacy_basics(req, "s-1") {
            return r;
        }
        if req.verb == "POST" {
            let page: usize = match req.body["params"]["cursor"].as_str() {
                Some(c) => c[1..].parse().unwrap(),
                None => 0,
            };
            *l.lock().unwrap() = (req.id(), page);
            let mut body = requests_then(4, &format!("r{}", req.id()), json!({"not": "ours"}));
            body.push_str(&format!("id: page-{page}\nretry: 20\ndata:\n\n"));
            return Reply::sse_stream(move |w: &mut TcpStream| {
                let _ = w.write_all(body.as_bytes());
            });
        }
        let (id, page) = l.lock().unwrap().clone();
        assert_eq!(
            req.header("Last-Event-ID"),
            Some(format!("page-{page}").as_str())
        );
        let mut result =
            json!({"tools": [{"name": format!("t{page}"), "inputSchema": {"type": "object"}}]});
        if page < 2 {
            result["nextCursor"] = json!(format!("c{}", page + 1));
        }
        let body = requests_then(
            4,
            &format!("r{id}-resumed"),
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
        Reply::sse_stream(move |w: &mut TcpStream| {
            let _ = w.write_all(body.as_bytes());
        })
    });
    let c = Client::new(&fake.url()).era(Era::Legacy);
    let names: Vec<String> = c
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["t0", "t1", "t2"]);
    drop(c);
    assert_eq!(answers.load(Ordering::SeqCst), CAP);
    let gets = fake.requests().iter().filter(|r| r.verb == "GET").count();
    assert_eq!(gets, 3);
}
