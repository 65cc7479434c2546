//! The event-loop upstream client against an upstream that floods: it
//! sends, as fast as the socket takes them, bytes that are a valid answer
//! only far away (a chunked body of 1-byte chunks with 20-character size
//! lines: 25 bytes on the wire for each body byte, 100 MiB to reach the
//! 4 MiB body cap) or never (`100 Continue` without end).
//!
//! The oracles: the loop's other clients are served while it reads (a
//! `tools/list` on the same and only loop answers within
//! [`MAX_LIST_WAIT`], as `tests/fairness.rs` asks of busy loops), and the
//! flood ends as its class implies: the body cap (`body too large`), or
//! the head cap counting every interim head (a bad response), long before
//! `--upstream-timeout`.

mod util;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use util::*;

/// The longest a `tools/list` may wait while the loop reads a flood. A
/// loop that read the flood to its end before looking at anything else
/// made it wait for the whole flood (seconds in a debug build; 239 ms in
/// release, and 16.7 s behind an endless `100 Continue`).
const MAX_LIST_WAIT: Duration = Duration::from_millis(1000);

/// A loopback upstream that answers every request with `prefix`, then
/// `block` again and again until the client closes.
struct Flood {
    addr: SocketAddr,
    /// Connections that received their request.
    asked: Arc<AtomicUsize>,
    /// The request lines received.
    targets: Arc<std::sync::Mutex<Vec<String>>>,
    /// Connections closed by the client while flooded.
    cut: Arc<AtomicUsize>,
}

impl Flood {
    fn start(prefix: &'static [u8], block: Vec<u8>) -> Flood {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let asked = Arc::new(AtomicUsize::new(0));
        let cut = Arc::new(AtomicUsize::new(0));
        let block = Arc::new(block);
        let targets = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (a, c, t) = (Arc::clone(&asked), Arc::clone(&cut), Arc::clone(&targets));
        thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let (a, c, t) = (Arc::clone(&a), Arc::clone(&c), Arc::clone(&t));
                let block = Arc::clone(&block);
                thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let line = String::from_utf8_lossy(&head);
                    t.lock()
                        .unwrap()
                        .push(line.lines().next().unwrap_or("").to_string());
                    a.fetch_add(1, Ordering::SeqCst);
                    if conn.write_all(prefix).is_err() {
                        c.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                    while conn.write_all(&block).is_ok() {}
                    c.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Flood {
            addr,
            asked,
            targets,
            cut,
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// One loop, whose upstream requests may last 60 s: only the caps and
/// the loop's turns are under test.
fn server(up: &Flood) -> Xmd {
    Xmd::start(&[
        "--event-loops",
        "1",
        "--upstream-io",
        "loop",
        "--upstream",
        &up.base(),
        "--upstream-timeout",
        "60",
        "--call-timeout",
        "60",
        "--log-format",
        "off",
    ])
}

fn rpc(x: &Xmd, body: &str) -> serde_json::Value {
    let raw = post(
        &x.host(),
        &[
            "Content-Type: application/json",
            "Accept: application/json",
            "MCP-Protocol-Version: 2025-11-25",
        ],
        body,
    );
    let mut s = x.connect();
    s.set_read_timeout(Some(Duration::from_secs(90))).unwrap();
    s.write_all(&raw).unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

const GET_POST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x_md_get_post","arguments":{"url":"https://x.com/a/status/20","thread":"off"}}}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// Runs the call against the flood and, while it lasts, `tools/list`
/// calls on the same loop; returns the call's answer, how long it took,
/// and each `tools/list`'s wait.
fn call_while_listing(x: &Xmd, up: &Flood) -> (serde_json::Value, Duration, Vec<Duration>) {
    let done = Arc::new(AtomicBool::new(false));
    let caller = {
        let (addr, done) = (x.addr, Arc::clone(&done));
        let host = x.host();
        thread::spawn(move || {
            let raw = post(
                &host,
                &[
                    "Content-Type: application/json",
                    "Accept: application/json",
                    "MCP-Protocol-Version: 2025-11-25",
                ],
                GET_POST,
            );
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(90))).unwrap();
            let (r, took) = timed(|| {
                s.write_all(&raw).unwrap();
                read_reply(&mut s, false)
            });
            done.store(true, Ordering::SeqCst);
            assert_eq!(r.status, 200, "{}", r.text());
            (r.json(), took)
        })
    };
    let until = Instant::now() + Duration::from_secs(10);
    while up.asked.load(Ordering::SeqCst) == 0 && Instant::now() < until {
        thread::sleep(Duration::from_millis(2));
    }
    let mut waits = Vec::new();
    while !done.load(Ordering::SeqCst) {
        let (v, took) = timed(|| rpc(x, TOOLS_LIST));
        assert!(v["result"]["tools"].is_array(), "{v}");
        waits.push(took);
        thread::sleep(Duration::from_millis(10));
    }
    let (v, took) = caller.join().unwrap();
    (v, took, waits)
}

/// A chunked body of 1-byte chunks, each size line 20 characters
/// (`00000000000000000001`, the longest ureq-proto reads), sent without
/// pause: the loop reads it a turn at a time and serves its other clients
/// in between; the call ends at the body cap, well before its timeout.
#[test]
fn a_flood_of_tiny_chunks_holds_neither_the_loop_nor_its_clients() {
    let up = Flood::start(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"00000000000000000001\r\na\r\n".repeat(40_000),
    );
    let x = server(&up);
    let (v, took, waits) = call_while_listing(&x, &up);
    assert_eq!(
        tool_error_code(&v).as_deref(),
        Some("upstream_invalid_response"),
        "{v}"
    );
    let text = v["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("body too large"), "{text}");
    assert!(took < Duration::from_secs(50), "{took:?}");
    assert!(!waits.is_empty(), "the flood ended before a tools/list");
    let worst = waits.iter().max().copied().unwrap_or_default();
    assert!(
        worst < MAX_LIST_WAIT,
        "a tools/list waited {worst:?} while the loop read the flood ({} calls, the call took {took:?})",
        waits.len()
    );
    assert_eq!(*up.targets.lock().unwrap(), ["GET /2/status/20 HTTP/1.1"]);
}

/// `100 Continue` without end: the interim heads count in the head cap
/// (64 KiB), so the request fails as a bad response at once, not at its
/// timeout (60 s here), and the connection is closed.
#[test]
fn an_endless_run_of_100_continue_fails_at_the_head_cap() {
    let up = Flood::start(b"", b"HTTP/1.1 100 Continue\r\n\r\n".repeat(4096));
    let x = server(&up);
    let (v, took, waits) = call_while_listing(&x, &up);
    assert_eq!(
        tool_error_code(&v).as_deref(),
        Some("fxtwitter_network"),
        "{v}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(waits.iter().all(|w| *w < MAX_LIST_WAIT), "{waits:?}");
    let until = Instant::now() + Duration::from_secs(5);
    while up.cut.load(Ordering::SeqCst) == 0 && Instant::now() < until {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(up.cut.load(Ordering::SeqCst), 1);
}
