//! Issue 32, item 3: one memory budget for the whole server. The real
//! binary against a loopback fake upstream: a burst of 60 concurrent calls
//! of the largest thread (64 posts of 25,000 characters, its upstream
//! answer cached) from one address, then 30 concurrent calls of hostile
//! posts whose text is 3.9 MB. The server's peak resident set (`VmHWM`,
//! and `VmRSS` sampled every few milliseconds, from `/proc/PID/status`)
//! stays within 128 MiB (the working budget plus the caches, the
//! defaults) over its idle RSS, and 10 s after the burst its RSS is back
//! within 10 % of where it was, the caches counted: what the upstream
//! cache and the result cache hold then (`xmd_cache_bytes`,
//! `xmd_result_cache_bytes`) may differ from what they held before (the
//! burst changes which answers are stored), and RSS may differ by as much.
//! No other allowance.
//!
//! The fake upstream closes every connection after its answer. Idle
//! upstream connections are otherwise kept for reuse (up to
//! `x::upstream::MAX_IDLE_UPSTREAM_CONNECTIONS`, 128; ureq drops one idle
//! past 15 s at its next request): a pool like the caches, but one that
//! counts no bytes. Kept alive, the burst leaves about 19 of them, about
//! 95 KiB of RSS each (release build, 10 s after: 40.8 MiB with the pool
//! as it is, 38.9 MiB with it held to 2 connections), so the pool is kept
//! empty before and after, and the test measures what the calls leave.

mod common;
mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use serde_json::{json, Value};
use util::*;

const MIB: u64 = 1024 * 1024;
const THREAD_ID: u64 = 1_900_000_000_000_000_000;
const THREAD_POSTS: u64 = 64;
const POST_CHARS: usize = 25_000;
/// The hostile posts' ids: `HOSTILE_ID + 0..HOSTILE_POSTS`.
const HOSTILE_ID: u64 = 1_800_000_000_000_000_000;
const HOSTILE_POSTS: u64 = 30;
/// Bytes of a hostile post's text (under the 4 MiB upstream body cap).
const HOSTILE_TEXT_BYTES: usize = 3_900_000;
const BURST: usize = 60;
/// The server's default memory budget over its idle RSS: the caches
/// (`--cache-bytes`, and half of it for results) and the working budget
/// (`--max-working-bytes`) within it.
const BUDGET_OVER_IDLE: u64 = 128 * MIB;
/// How far above where it was RSS may be 10 s after the burst, the
/// caches' own change counted apart: 10 % (issue 32).
const RSS_RETURN_PERCENT: u64 = 10;
/// Most calls refused for the memory budget that a caller retries (after
/// the `retry after` it was told) before the test gives up on it.
const MAX_RETRIES: usize = 40;

/// One `/proc/PID/status` field in bytes (`VmRSS`, `VmHWM`).
fn status_field(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    let line = s
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    let kb: u64 = line[field.len() + 1..]
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    kb * 1024
}

fn rss(pid: u32) -> u64 {
    status_field(pid, "VmRSS")
}

/// Mappings of exactly a worker's stack size (`WORKER_STACK_BYTES`, 256
/// KiB) in the server's address space: the stacks of its worker threads,
/// live or kept by the C library after they ended.
fn stack_mappings(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .expect("read /proc maps")
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_whitespace().next()?.split_once('-')?;
            let (a, b) = (
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
            );
            (b - a == 256 * 1024).then_some(())
        })
        .count()
}

/// The server's open files: its listener, its client connections and its
/// idle upstream connections kept for reuse among them.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("read /proc fd")
        .count()
}

/// Bytes both caches hold now, as they count them (`GET /metrics`:
/// `xmd_cache_bytes` plus `xmd_result_cache_bytes`).
fn cache_bytes(x: &Xmd) -> u64 {
    let mut s = x.connect();
    s.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes())
        .unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 200);
    let text = r.text();
    ["xmd_cache_bytes", "xmd_result_cache_bytes"]
        .iter()
        .map(|name| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name} in {text}"))
        })
        .sum()
}

/// A post as FxTwitter's `/2/thread` or `/2/status` answers it.
fn status(id: u64, text: &str, parent: Option<u64>) -> Value {
    json!({
        "type": "status",
        "id": id.to_string(),
        "url": format!("https://x.com/demo_author/status/{id}"),
        "text": text,
        "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "created_timestamp": 1786464342,
        "likes": 1, "reposts": 0, "replies": 1,
        "author": {"id": "1625427172309102593", "screen_name": "demo_author", "name": "Demo Author"},
        "replying_to": parent.map(|p| json!({"screen_name": "demo_author", "status": p.to_string()})),
    })
}

/// The largest thread tests/interop/fake_upstream.py serves: 64 posts of
/// 25,000 characters, each a reply to the one before.
fn long_thread() -> String {
    let unit = "A long note about caches, quotes \"like this\", and é ✓ 🦀. ";
    let rows: Vec<Value> = (0..THREAD_POSTS)
        .map(|i| {
            let text: String = format!("{:02}/{THREAD_POSTS} ", i + 1)
                .chars()
                .chain(unit.chars().cycle())
                .take(POST_CHARS)
                .collect();
            status(
                THREAD_ID + i,
                &text,
                i.checked_sub(1).map(|p| THREAD_ID + p),
            )
        })
        .collect();
    json!({"code": 200, "status": rows[0], "thread": rows}).to_string()
}

/// A post whose text is [`HOSTILE_TEXT_BYTES`] of Markdown that needs
/// escaping (every character of it is markup).
fn hostile_post(i: u64) -> String {
    let unit = "*_[<&>]`#|~!";
    let text: String = unit.chars().cycle().take(HOSTILE_TEXT_BYTES).collect();
    json!({"code": 200, "message": "OK", "status": status(HOSTILE_ID + i, &text, None)}).to_string()
}

/// Starts `xmd serve` (the binary `XMD_BIN` names, else this build's) on
/// 127.0.0.1:0 with `args`, like `util::Xmd::start`.
fn start(args: &[&str]) -> Xmd {
    let bin = std::env::var("XMD_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_xmd").to_string());
    let mut child = Command::new(&bin)
        .args(["serve", "--listen", "127.0.0.1:0", "--syndication-url", ""])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {bin}: {e}"));
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).expect("read startup line");
    let addr = line
        .split("listening on http://")
        .nth(1)
        .and_then(|r| r.split("/mcp").next())
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .parse()
        .unwrap();
    let log = Arc::new(Mutex::new(vec![line]));
    let sink = Arc::clone(&log);
    std::thread::spawn(move || {
        for l in reader.lines().map_while(Result::ok) {
            sink.lock().unwrap().push(l);
        }
    });
    Xmd { child, addr, log }
}

fn call_body(id: usize, args: &Value) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{args}}}}}"#
    )
}

/// One `tools/call` on its own connection: the JSON-RPC `result`.
fn call_once(x: &Xmd, id: usize, args: &Value) -> Value {
    let raw = post(
        &x.host(),
        &[
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            "MCP-Protocol-Version: 2025-11-25",
        ],
        &call_body(id, args),
    );
    let mut s = x.connect();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s.write_all(&raw).unwrap();
    let r = read_reply(&mut s, false);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

/// The refusal a call gets when the working budget has no room for it in
/// time: retryable, after exactly the second it names.
const REFUSED: &str = "xmd is at its memory budget for tool calls (--max-working-bytes) right now; nothing was read. (HTTP 503, code memory_budget, retry after 1s)";

/// [`call_once`] as a client that honours the refusal's `retry after`:
/// the result, and how many times it was refused first.
fn call(x: &Xmd, id: usize, args: &Value) -> (Value, usize) {
    for refused in 0..=MAX_RETRIES {
        let r = call_once(x, id, args);
        if r["isError"] == true && text(&r) == REFUSED {
            std::thread::sleep(Duration::from_secs(1));
            continue;
        }
        return (r, refused);
    }
    panic!("refused {MAX_RETRIES} times: {args}");
}

/// Runs `calls` at once, one thread and connection each: the results and
/// the refusals retried.
fn burst(x: &Xmd, calls: Vec<Value>) -> (Vec<Value>, usize) {
    let refused = AtomicUsize::new(0);
    let results = std::thread::scope(|s| {
        let hs: Vec<_> = calls
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let refused = &refused;
                s.spawn(move || {
                    let (r, n) = call(x, i + 1, &a);
                    refused.fetch_add(n, Ordering::SeqCst);
                    r
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (results, refused.into_inner())
}

/// `x_md_get_post` of the thread, with a budget of its own: distinct
/// arguments, so that no call is answered from the result cache and each
/// one parses and renders the cached answer. (Small budgets: the results
/// the result cache keeps are small, so its growth does not hide what the
/// allocator keeps.)
fn thread_args(i: usize) -> Value {
    json!({"handle": "demo_author", "id": THREAD_ID.to_string(), "replies": "off",
           "max_chars": 2_000 + i})
}

/// `x_md_get_post` of hostile post `i` alone; `variant` sets a budget of
/// its own (a result the result cache does not hold).
fn hostile_args(i: u64, variant: usize) -> Value {
    json!({"handle": "demo_author", "id": (HOSTILE_ID + i).to_string(), "thread": "off",
           "max_chars": 2_000 + variant})
}

/// The first post shown, and the number of posts shown.
fn shown(r: &Value) -> (String, usize) {
    assert_eq!(r["isError"], false, "{}", text(r));
    let posts = r["structuredContent"]["posts"].as_array().unwrap();
    (posts[0]["id"].as_str().unwrap().to_string(), posts.len())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

/// Slow (about 20 s on the release build, minutes on a debug one), so
/// ignored by `cargo test`; CI runs it against the release binary:
/// `XMD_BIN=target/release/xmd cargo test --test memory_budget -- --ignored --nocapture --test-threads 1`.
/// With the workers making the upstream requests (`--upstream-io threads`).
#[test]
#[ignore = "slow: run with XMD_BIN=target/release/xmd and --ignored"]
fn a_burst_of_large_calls_stays_within_the_memory_budget_and_memory_returns() {
    burst_within_budget("threads");
}

/// The same with the event loops making the upstream requests
/// (`--upstream-io loop`): a body counts in the working budget from its
/// head on, before it is read, and its room goes to the calls it answers.
#[test]
#[ignore = "slow: run with XMD_BIN=target/release/xmd and --ignored"]
fn with_the_loop_upstream_a_burst_of_large_calls_stays_within_the_memory_budget() {
    burst_within_budget("loop");
}

/// The burst of the module documentation against a server whose upstream
/// requests are made by `io` (`--upstream-io`).
fn burst_within_budget(io: &str) {
    let up = FakeUpstream::start();
    // Each answer closes its connection, so the server keeps no idle
    // upstream connection (see the module documentation).
    up.on(
        &format!("/2/thread/{THREAD_ID}"),
        Answer::json(200, &long_thread()).header("Connection", "close"),
    );
    for i in 0..HOSTILE_POSTS {
        up.on(
            &format!("/2/status/{}", HOSTILE_ID + i),
            Answer::json(200, &hostile_post(i)).header("Connection", "close"),
        );
    }
    let base = up.base_url();
    // One address, no rate limit in the way: every call reaches a worker.
    let x = start(&[
        "--upstream",
        &base,
        "--rate-limit",
        "0",
        "--upstream-budget",
        "0",
        "--log-format",
        "off",
        "--upstream-io",
        io,
    ]);
    let pid = x.child.id();
    std::thread::sleep(Duration::from_millis(500));
    let idle = rss(pid);

    // Warm up: the thread's answer in the cache, and every hostile post
    // read once, so the caches hold answers as they will after the burst
    // (what they hold is counted besides).
    let (first, _) = call(&x, 1, &thread_args(BURST));
    assert_eq!(shown(&first).0, THREAD_ID.to_string());
    for i in 0..HOSTILE_POSTS {
        let (r, _) = call(&x, 1, &hostile_args(i, 0));
        assert_eq!(shown(&r), ((HOSTILE_ID + i).to_string(), 1));
    }
    std::thread::sleep(Duration::from_secs(3));
    let cached_before = cache_bytes(&x);
    let files_before = open_files(pid);
    let stacks_before = stack_mappings(pid);
    let before = rss(pid);
    if let Ok(dir) = std::env::var("XMD_SMAPS_DIR") {
        let _ = std::fs::copy(format!("/proc/{pid}/smaps"), format!("{dir}/before"));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                peak.fetch_max(rss(pid), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let t = Instant::now();
    let (threads, refused_threads) = burst(&x, (0..BURST).map(thread_args).collect());
    let thread_secs = t.elapsed().as_secs_f64();
    let thread_peak = peak.swap(0, Ordering::SeqCst);
    let t = Instant::now();
    let (hostile, refused_hostile) =
        burst(&x, (0..HOSTILE_POSTS).map(|i| hostile_args(i, 1)).collect());
    let hostile_secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    let hwm = status_field(pid, "VmHWM");
    std::thread::sleep(Duration::from_secs(10));
    let after = rss(pid);
    if let Ok(dir) = std::env::var("XMD_SMAPS_DIR") {
        let _ = std::fs::copy(format!("/proc/{pid}/smaps"), format!("{dir}/after"));
    }
    let cached_after = cache_bytes(&x);
    let files_after = open_files(pid);
    let stacks_after = stack_mappings(pid);
    // Back within 10 % of where it was, with the caches holding what they
    // hold now rather than what they held before.
    let allowed =
        (before + before * RSS_RETURN_PERCENT / 100 + cached_after).saturating_sub(cached_before);
    let hostile_peak = peak.load(Ordering::SeqCst);
    let sampled = thread_peak.max(hostile_peak);
    eprintln!(
        "--upstream-io {io}: idle {:.1} MiB, before the burst {:.1} MiB, peak sampled {:.1} MiB (threads {:.1}, hostile {:.1}), VmHWM {:.1} MiB, 10 s after {:.1} MiB (allowed {:.1}: the caches held {:.1} MiB before, {:.1} MiB after; open files {files_before}, {files_after}; stack-sized mappings {stacks_before}, {stacks_after}); \
         60 thread calls {thread_secs:.1} s ({refused_threads} refusals retried), \
         30 hostile calls {hostile_secs:.1} s ({refused_hostile} refusals retried)",
        mib(idle),
        mib(before),
        mib(sampled),
        mib(thread_peak),
        mib(hostile_peak),
        mib(hwm),
        mib(after),
        mib(allowed),
        mib(cached_before),
        mib(cached_after),
    );
    for r in &threads {
        assert_eq!(shown(r).0, THREAD_ID.to_string());
    }
    for (i, r) in (0..HOSTILE_POSTS).zip(&hostile) {
        assert_eq!(shown(r), ((HOSTILE_ID + i).to_string(), 1));
    }
    assert!(
        hwm.max(sampled) <= idle + BUDGET_OVER_IDLE,
        "peak {:.1} MiB over an idle {:.1} MiB: more than {} MiB",
        mib(hwm.max(sampled)),
        mib(idle),
        BUDGET_OVER_IDLE / MIB
    );
    // The burst's workers ended (each call held 8 MiB or more): their
    // stacks are gone, not kept joinable by the pool or cached by the C
    // library (60 of them stayed, 24 KiB resident each, before).
    assert!(
        stacks_after <= stacks_before + 2,
        "{stacks_after} stack-sized mappings after the burst, {stacks_before} before"
    );
    assert!(
        after <= allowed,
        "10 s after the burst {:.1} MiB, before it {:.1} MiB: more than {RSS_RETURN_PERCENT} % above, the caches' change ({:.1} to {:.1} MiB) counted",
        mib(after),
        mib(before),
        mib(cached_before),
        mib(cached_after),
    );
}
