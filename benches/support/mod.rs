//! What both benchmarks share (`xmd_bench` with wrk, `callgrind_miss` with
//! valgrind): the fake FxTwitter upstream and its bodies, the request
//! bodies, the server's command line, and the release build they measure
//! by default. One copy, so the two benchmarks measure the same calls
//! against the same answers.
//!
//! Each benchmark uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fxtwitter/");

/// Where a benchmark builds the server it measures (unless it is given
/// one: `BENCH_BIN`, or the callgrind script's argument).
pub const BENCH_TARGET_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/bench");

/// The fake upstream: thread per connection, keep-alive, every answer
/// after `delay_ms`.
pub struct Upstream {
    pub addr: SocketAddr,
    pub delay_ms: Arc<AtomicU64>,
    pub served: Arc<AtomicU64>,
}

/// A fixture as FxTwitter sends it: compact JSON (the fixtures are
/// pretty-printed for reading; FxTwitter's answers carry no whitespace
/// between tokens, and whitespace would inflate every per-byte cost).
fn fixture(name: &str) -> String {
    let pretty =
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"));
    compact_json(&pretty)
}

/// `json` without the whitespace between its tokens (strings untouched).
pub fn compact_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

impl Upstream {
    pub fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let delay_ms = Arc::new(AtomicU64::new(0));
        let served = Arc::new(AtomicU64::new(0));
        let profile = Arc::new(fixture("profile.json"));
        let statuses = Arc::new(fixture("profile-statuses-page1.json"));
        let status = Arc::new(fixture("status-plain.json"));
        let (d, s) = (Arc::clone(&delay_ms), Arc::clone(&served));
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (d, s) = (Arc::clone(&d), Arc::clone(&s));
                let (profile, statuses, status) = (
                    Arc::clone(&profile),
                    Arc::clone(&statuses),
                    Arc::clone(&status),
                );
                thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || serve(stream, &d, &s, &profile, &statuses, &status))
                    .ok();
            }
        });
        Upstream {
            addr,
            delay_ms,
            served,
        }
    }
}

fn serve(
    stream: TcpStream,
    delay: &AtomicU64,
    served: &AtomicU64,
    profile: &str,
    statuses: &str,
    status: &str,
) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let target = line.split(' ').nth(1).unwrap_or("/").to_string();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" || h == "\n" {
                break;
            }
        }
        let ms = delay.load(Ordering::Relaxed);
        if ms > 0 {
            thread::sleep(Duration::from_millis(ms));
        }
        let path = target.split('?').next().unwrap_or("");
        let parts: Vec<&str> = path.split('/').collect();
        let body = match parts.as_slice() {
            ["", "2", "profile", handle] if handle.starts_with("tiny_") => tiny_profile(handle),
            ["", "2", "profile", handle, "statuses"] if handle.starts_with("tiny_") => {
                tiny_page(handle)
            }
            ["", "2", "profile", handle] => profile.replace("demo_author", handle),
            // The first timeline page, then the end of the timeline (an
            // empty page), as X answers a short account.
            ["", "2", "profile", _, "statuses"] if target.contains("cursor=") => {
                r#"{"code":200,"results":[],"cursor":{"top":null,"bottom":null}}"#.to_string()
            }
            ["", "2", "profile", handle, "statuses"] => statuses.replace("demo_author", handle),
            // The post asked for (row (g) asks for many).
            ["", "2", "status", id] | ["", "2", "thread", id] => {
                status.replace("2087208847298015232", id)
            }
            _ => r#"{"code":404,"message":"Not found"}"#.to_string(),
        };
        // Head and body in one write, as a server sends a small answer:
        // two writes on a `TCP_NODELAY` socket are two segments, and made
        // the server read (and wake) twice per answer.
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if out.write_all(answer.as_bytes()).is_err() {
            return;
        }
        served.fetch_add(1, Ordering::Relaxed);
    }
}

/// A one-post account's profile (row (b1)).
fn tiny_profile(handle: &str) -> String {
    format!(
        r#"{{"code":200,"message":"OK","user":{{"type":"profile","screen_name":"{handle}","name":"Tiny","id":"7","followers":1,"following":1,"statuses":1,"protected":false}}}}"#
    )
}

/// A one-post account's whole timeline: one original post, no next page.
fn tiny_page(handle: &str) -> String {
    format!(
        r#"{{"code":200,"results":[{{"type":"status","id":"8","url":"https://x.com/{handle}/status/8","text":"hello","author":{{"screen_name":"{handle}","name":"Tiny","id":"7"}},"replies":0,"reposts":0,"likes":1,"created_at":"Mon Nov 30 05:00:00 +0000 2026","created_timestamp":1796014800}}],"cursor":{{"top":null,"bottom":null}}}}"#
    )
}

pub const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
/// `limit` 3: the fixture's first timeline page holds exactly 3 original
/// posts, so a call needs the profile and that page, fetched at once: one
/// upstream round trip. `HANDLE` is replaced per call.
pub const PROFILE: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x_md_get_profile","arguments":{"handle":"HANDLE","limit":3}}}"#;
/// Row (b1): a one-post account, whose whole timeline is one small page.
pub const TINY_PROFILE: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x_md_get_profile","arguments":{"handle":"tiny_HANDLE","limit":1}}}"#;

/// `GET /2/status/<id>`'s body as the fake upstream sends it (compact),
/// for the post `2087208847298015232`.
pub fn status_body() -> String {
    fixture("status-plain.json")
}

/// `xmd serve`'s arguments against `upstream`, before any extra ones;
/// `BENCH_SERVER_ARGS` (space-separated) is appended, e.g.
/// `--upstream-io threads` to measure the blocking upstream client.
pub fn serve_args(upstream: SocketAddr) -> Vec<String> {
    let extra: Vec<String> = std::env::var("BENCH_SERVER_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--log-format",
        "off",
        // One loopback client measuring throughput: the abuse limits
        // (per-client rate, upstream budget, connections per address)
        // would cap it.
        "--rate-limit",
        "0",
        "--max-connections-per-ip",
        "0",
        "--upstream-budget",
        "0",
        // Never the real syndication endpoint from a benchmark.
        "--syndication-url",
        "",
        "--upstream",
    ]
    .iter()
    .map(|a| a.to_string())
    .chain([format!("http://{upstream}")])
    .chain(extra)
    .collect()
}

/// The address in the server's first stderr line (`xmd … listening on
/// http://ADDR/mcp …`).
pub fn listening_addr(first_line: &str) -> SocketAddr {
    first_line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split("/mcp").next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no listening address in {first_line:?}"))
}

/// The binary to measure: `BENCH_BIN`, or the release build made in
/// [`BENCH_TARGET_DIR`]. Its own target directory: `cargo bench` builds
/// the library with the dev-dependencies' features, a plain release build
/// without, and sharing `target/release` made each invalidate the other.
pub fn bench_bin() -> String {
    if let Ok(bin) = std::env::var("BENCH_BIN") {
        return bin;
    }
    let status = Command::new("cargo")
        .args(["build", "--release", "--bin", "xmd", "--target-dir"])
        .arg(BENCH_TARGET_DIR)
        .status()
        .unwrap();
    assert!(status.success(), "cargo build --release failed");
    format!("{BENCH_TARGET_DIR}/release/xmd")
}
