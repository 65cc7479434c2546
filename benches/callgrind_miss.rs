//! Instructions per call, counted by callgrind (a benchmark, not a test).
//!
//! Run: `benches/callgrind_miss.sh BIN` (any built `xmd`; the script
//! compiles this file with plain `rustc`, so no dev-dependency is built),
//! or `cargo bench --bench callgrind_miss` (measures `BENCH_BIN`, or a
//! release build made in `target/bench`). Needs `valgrind` on PATH.
//!
//! For each row it runs `xmd serve` under `valgrind --tool=callgrind`
//! twice against the fake upstream of `xmd_bench` (`support`: the same
//! bodies as its rows (b) and (b1), no delay), once making N1 calls and
//! once N2, one after another on one keep-alive connection, then stops the
//! server with SIGTERM. Start-up, the first connection and shutdown cost
//! the same in both runs, so the instructions one call costs are
//! (I(N2) − I(N1)) / (N2 − N1), where I is callgrind's total of
//! user-space instructions over all threads (kernel time is not counted).
//!
//! Rows (`CALLGRIND_ROWS`, a comma list; default all):
//! - `list`: `tools/list`;
//! - `miss`: `tools/call x_md_get_profile` with `limit` 3, a new handle per
//!   call (cache misses: the profile and a 13.7 KB timeline page), row (b);
//! - `tiny`: the same against a one-post account, row (b1);
//! - `hit`: one handle, called once before the counted calls (cache hits),
//!   row (c).
//!
//! `CALLGRIND_N1` (default 20) and `CALLGRIND_N2` (default 220) set the
//! call counts. Every answer must be HTTP 200 with a JSON-RPC result that
//! is not a tool error, or the run fails.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{bench_bin, listening_addr, serve_args, Upstream, LIST, PROFILE, TINY_PROFILE};

/// Default call counts of the two runs per row.
const DEFAULT_N1: u64 = 20;
const DEFAULT_N2: u64 = 220;

/// How long one answer may take under valgrind before the run fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// What a row sends: the request body of call `i`, and a call made before
/// the counted ones (the hit row's warm-up), if any.
struct Row {
    key: &'static str,
    name: &'static str,
    body: fn(u64) -> String,
    warm_up: bool,
}

const ROWS: [Row; 4] = [
    Row {
        key: "list",
        name: "tools/list",
        body: |_| LIST.to_string(),
        warm_up: false,
    },
    Row {
        key: "miss",
        name: "x_md_get_profile, cache miss (row b)",
        body: |i| PROFILE.replace("HANDLE", &format!("miss_{i}")),
        warm_up: false,
    },
    Row {
        key: "tiny",
        name: "x_md_get_profile, cache miss, one-post account (row b1)",
        body: |i| TINY_PROFILE.replace("HANDLE", &format!("miss_{i}")),
        warm_up: false,
    },
    Row {
        key: "hit",
        name: "x_md_get_profile, cache hit (row c)",
        body: |_| PROFILE.replace("HANDLE", "cached_handle"),
        warm_up: true,
    },
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("usage: callgrind_miss [BIN]   (BIN: the xmd binary; default BENCH_BIN or a release build)\nenv: CALLGRIND_ROWS=list,miss,tiny,hit  CALLGRIND_N1=20  CALLGRIND_N2=220  CALLGRIND_OUT=DIR");
        return;
    }
    // `cargo bench` passes `--bench`; a path is the binary to measure.
    let bin = match args.iter().find(|a| !a.starts_with("--")) {
        Some(bin) => bin.clone(),
        None => bench_bin(),
    };
    let n = |var: &str, default: u64| {
        std::env::var(var)
            .ok()
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{var}={v}: not a count"))
            })
            .unwrap_or(default)
    };
    let (n1, n2) = (n("CALLGRIND_N1", DEFAULT_N1), n("CALLGRIND_N2", DEFAULT_N2));
    assert!(
        n2 > n1,
        "CALLGRIND_N2 ({n2}) must exceed CALLGRIND_N1 ({n1})"
    );
    let only = std::env::var("CALLGRIND_ROWS").unwrap_or_else(|_| "list,miss,tiny,hit".into());
    let out_dir = std::env::var("CALLGRIND_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            std::env::temp_dir().join(format!("xmd-callgrind-{}", std::process::id()))
        });
    std::fs::create_dir_all(&out_dir).unwrap();
    let upstream = Upstream::start();
    println!(
        "callgrind: {bin}, N1 = {n1}, N2 = {n2} calls, outputs in {}",
        out_dir.display()
    );
    println!();
    println!("| row | I(N1) | I(N2) | instructions per call |");
    println!("|---|---:|---:|---:|");
    for row in ROWS
        .iter()
        .filter(|r| only.split(',').any(|o| o.trim() == r.key))
    {
        let i1 = instructions(&bin, upstream.addr, row, n1, &out_dir);
        let i2 = instructions(&bin, upstream.addr, row, n2, &out_dir);
        let per = (i2 as f64 - i1 as f64) / (n2 - n1) as f64;
        println!(
            "| {} | {} | {} | {} |",
            row.name,
            grouped(i1),
            grouped(i2),
            grouped(per.round() as u64)
        );
    }
}

/// Total user-space instructions of one `xmd serve` run under callgrind
/// that answers `calls` calls of `row`.
fn instructions(bin: &str, upstream: SocketAddr, row: &Row, calls: u64, dir: &Path) -> u64 {
    let out = dir.join(format!("callgrind.{}.{calls}.out", row.key));
    let log = dir.join(format!("valgrind.{}.{calls}.log", row.key));
    let mut child = Running(
        Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(format!("--log-file={}", log.display()))
            .arg(bin)
            .args(serve_args(upstream))
            // Set (as xmd sets it, unless `CALLGRIND_PURGE_DELAY` says
            // otherwise), so that xmd does not re-exec itself to set it
            // (src/heap.rs): valgrind would count the first image only
            // and the run would find no server.
            .env(
                "MIMALLOC_PURGE_DELAY",
                std::env::var("CALLGRIND_PURGE_DELAY").unwrap_or_else(|_| "0".into()),
            )
            // Likewise glibc's stack cache (src/heap.rs,
            // `STACK_CACHE_TUNABLE`), which xmd also sets by re-exec.
            .env("GLIBC_TUNABLES", "glibc.pthread.stack_cache_size=0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("valgrind on PATH (apt-get install valgrind)"),
    );
    let child = &mut child.0;
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = listening_addr(&first);
    {
        let mut conn = TcpStream::connect(addr).unwrap();
        conn.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        if row.warm_up {
            call(&mut conn, &mut reader, addr, &(row.body)(0));
        }
        for i in 1..=calls {
            call(&mut conn, &mut reader, addr, &(row.body)(i));
        }
    }
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success(), "kill -TERM {}", child.id());
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "xmd under valgrind: {status} (see {})",
        log.display()
    );
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    // `summary:` (and `totals:`) is the first event, Ir, summed over all
    // threads and functions.
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no summary line in {}", out.display()))
}

/// A server under valgrind, killed if the run fails before it is stopped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// One MCP POST and its answer, which must be a 200 JSON-RPC result that
/// is not a tool error.
fn call(conn: &mut TcpStream, reader: &mut BufReader<TcpStream>, addr: SocketAddr, body: &str) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).unwrap();
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200 "), "{status:?} for {body}");
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut answer = vec![0; length.expect("a Content-Length answer")];
    reader.read_exact(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    // The Accept of the wrk rows allows an SSE answer: one `message` event.
    let json = match answer.strip_prefix("event: message\n") {
        Some(event) => event.strip_prefix("data: ").unwrap_or(event),
        None => &answer,
    };
    assert!(
        json.starts_with(r#"{"jsonrpc":"2.0","id":"#)
            && json.contains(r#""result":"#)
            && !json.contains(r#""isError":true"#),
        "not a successful result for {body}: {}",
        &answer[..answer.len().min(400)]
    );
}

/// `1234567` → `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
