//! Soak test (ignored by default; loopback only, bounded in time):
//!
//! ```sh
//! cargo test --release --test soak -- --ignored --nocapture
//! SOAK_REQUESTS=100000 cargo test --release --test soak -- --ignored --nocapture
//! ```
//!
//! Starts the real binary against an in-process fake upstream and sends
//! `SOAK_REQUESTS` (default 1,000,000) requests from [`CLIENT_THREADS`]
//! threads over many short keep-alive connections, pipelined in small
//! batches: valid JSON-RPC in both eras (`tools/list`, `ping`,
//! `server/discover`, a cached `tools/call`, notifications), valid HTTP
//! that MCP refuses (bad JSON, wrong media type, unknown route, wrong
//! method), and — always last on their connection — requests the HTTP layer
//! rejects and closes (`Content-Length` plus `Transfer-Encoding`, a garbage
//! request line, an oversized head) or connections dropped mid-request.
//! [`IDLE_CONNECTIONS`] extra connections stay open and idle throughout.
//!
//! Checks: every request that should be answered got its answer, in order,
//! with the expected status (and, for JSON-RPC, its own id); afterwards the
//! server's open file descriptors return to their baseline and its RSS to
//! within [`RSS_SLACK_BYTES`] of it. Prints the figures.
//!
//! Knobs for narrowing a failure down: `SOAK_BATCH` (requests pipelined per
//! write, default [`BATCH`]; 1 turns pipelining off), `SOAK_IDLE` (idle
//! connections, default [`IDLE_CONNECTIONS`]) and `SOAK_NO_CLOSE` (set: no
//! connection-ending requests).

mod common;
mod util;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use util::Xmd;

/// Requests sent when `SOAK_REQUESTS` is unset.
const DEFAULT_REQUESTS: u64 = 1_000_000;
/// Client threads, each with one connection at a time.
const CLIENT_THREADS: usize = 8;
/// Most requests pipelined before reading their answers.
const BATCH: u64 = 16;
/// Most requests on one connection before the client closes it.
const MAX_PER_CONNECTION: u64 = 200;
/// Connections opened before the soak and kept idle until it ends.
const IDLE_CONNECTIONS: usize = 200;
/// The whole soak must end within this (else it fails).
const DEADLINE: Duration = Duration::from_secs(600);
/// How far above its baseline the server's RSS may end.
const RSS_SLACK_BYTES: u64 = 32 * 1024 * 1024;
/// How long the server gets to close everything after the clients are done.
const SETTLE: Duration = Duration::from_secs(10);

const POST_ID: &str = "2087208847298015232";
const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// What a request should get back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// This status with a JSON-RPC body carrying this id.
    Rpc(u16, u64),
    /// This status, any body.
    Status(u16),
    /// This status, then the server closes the connection.
    Close(u16),
    /// Nothing: the client drops the connection mid-request.
    Drop,
}

struct Req {
    bytes: Vec<u8>,
    expect: Expect,
}

fn post(host: &str, extra: &str, body: &str) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn modern(host: &str, id: u64, method: &str) -> Vec<u8> {
    post(
        host,
        &format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"),
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"_meta":{META}}}}}"#
        ),
    )
}

/// One request of the mix; `last` allows the connection-ending kinds.
fn request(host: &str, id: u64, roll: u64, last: bool) -> Req {
    let legacy = "MCP-Protocol-Version: 2025-11-25\r\n";
    if last && roll % 10 == 0 && std::env::var("SOAK_NO_CLOSE").is_err() {
        return match (roll / 10) % 4 {
            0 => Req {
                bytes: format!(
                    "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                )
                .into_bytes(),
                expect: Expect::Close(400),
            },
            1 => Req {
                bytes: b"GARBAGE\r\n\r\n".to_vec(),
                expect: Expect::Close(400),
            },
            2 => Req {
                bytes: format!(
                    "GET /healthz HTTP/1.1\r\nHost: {host}\r\nX-Big: {}\r\n\r\n",
                    "a".repeat(20 * 1024)
                )
                .into_bytes(),
                expect: Expect::Close(431),
            },
            _ => Req {
                bytes: format!(
                    "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
                )
                .into_bytes(),
                expect: Expect::Drop,
            },
        };
    }
    let (bytes, expect) = match roll % 20 {
        0..=5 => (modern(host, id, "tools/list"), Expect::Rpc(200, id)),
        6 | 7 => (modern(host, id, "server/discover"), Expect::Rpc(200, id)),
        8..=10 => (
            post(
                host,
                legacy,
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
            ),
            Expect::Rpc(200, id),
        ),
        11..=13 => (
            post(
                host,
                legacy,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{POST_ID}","handle":"demo_author","thread":"off"}}}}}}"#
                ),
            ),
            Expect::Rpc(200, id),
        ),
        14 => (
            post(
                host,
                legacy,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            Expect::Status(202),
        ),
        15 => (
            post(host, legacy, r#"{"jsonrpc":"2.0","id":"#),
            Expect::Status(400),
        ),
        16 => (
            format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes(),
            Expect::Status(200),
        ),
        17 => (
            format!("GET /no-such-route HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes(),
            Expect::Status(404),
        ),
        18 => (
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi"
            )
            .into_bytes(),
            Expect::Status(415),
        ),
        _ => (
            format!("PUT /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n").into_bytes(),
            Expect::Status(405),
        ),
    };
    Req { bytes, expect }
}

/// Reads one response: status, and the JSON-RPC id when `want_id`.
fn read_response(r: &mut BufReader<TcpStream>, want_id: bool) -> Option<(u16, Option<u64>)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let status: u16 = line.get(9..12)?.parse().ok()?;
    let mut len = 0usize;
    loop {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((n, v)) = line.split_once(':') {
            if n.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    let id = if want_id {
        // `{"jsonrpc":"2.0","id":N,…`: no full parse needed.
        let text = std::str::from_utf8(&body).ok()?;
        let rest = text.split_once(r#""id":"#)?.1;
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    } else {
        None
    };
    Some((status, id))
}

#[derive(Default)]
struct Tally {
    sent: AtomicU64,
    answered: AtomicU64,
    wrong: AtomicU64,
    connections: AtomicU64,
}

fn client(
    host: String,
    addr: std::net::SocketAddr,
    seed: u64,
    quota: u64,
    tally: Arc<Tally>,
    next_id: Arc<AtomicU64>,
) {
    let mut rng = seed | 1;
    let mut roll = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut done = 0u64;
    while done < quota {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        tally.connections.fetch_add(1, Ordering::Relaxed);
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::with_capacity(64 * 1024, stream);
        let on_conn = (1 + roll() % MAX_PER_CONNECTION).min(quota - done);
        let mut sent_here = 0u64;
        'conn: while sent_here < on_conn {
            let n = batch().min(on_conn - sent_here);
            let mut out = Vec::new();
            let mut expects = Vec::new();
            for k in 0..n {
                let last = sent_here + k + 1 == on_conn;
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let r = request(&host, id, roll(), last);
                out.extend_from_slice(&r.bytes);
                expects.push(r.expect);
            }
            sent_here += n;
            done += n;
            tally.sent.fetch_add(n, Ordering::Relaxed);
            if writer.write_all(&out).is_err() {
                tally.wrong.fetch_add(n, Ordering::Relaxed);
                break 'conn;
            }
            for e in expects {
                let want_id = matches!(e, Expect::Rpc(..));
                if e == Expect::Drop {
                    tally.answered.fetch_add(1, Ordering::Relaxed);
                    break 'conn;
                }
                let got = read_response(&mut reader, want_id);
                let ok = match (e, got) {
                    (Expect::Rpc(s, id), Some((gs, gid))) => gs == s && gid == Some(id),
                    (Expect::Status(s), Some((gs, _))) => gs == s,
                    (Expect::Close(s), Some((gs, _))) => {
                        let mut rest = [0u8; 1];
                        gs == s && matches!(reader.read(&mut rest), Ok(0))
                    }
                    _ => false,
                };
                if ok {
                    tally.answered.fetch_add(1, Ordering::Relaxed);
                } else {
                    if tally.wrong.fetch_add(1, Ordering::Relaxed) < 5 {
                        eprintln!("soak: expected {e:?}, got {got:?}");
                    }
                    break 'conn;
                }
            }
        }
    }
}

/// Requests pipelined per write: `SOAK_BATCH`, default [`BATCH`].
fn batch() -> u64 {
    std::env::var("SOAK_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(BATCH)
}

/// (VmRSS in bytes, open fds) of a process.
fn usage(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    (kb * 1024, fds)
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

#[test]
#[ignore = "soak: cargo test --release --test soak -- --ignored --nocapture"]
fn soak_many_valid_and_malformed_requests() {
    let total: u64 = std::env::var("SOAK_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_REQUESTS);
    let up = FakeUpstream::start();
    up.handler(|t| {
        t.starts_with("/2/status/")
            .then(|| Answer::fixture(200, "status-plain.json"))
    });
    let base = up.base_url();
    let x = Xmd::start(&[
        "--upstream",
        &base,
        "--log-format",
        "off",
        "--rate-limit",
        "0",
    ]);
    let pid = x.child.id();
    let host = x.host();
    let addr = x.addr;
    let tally = Arc::new(Tally::default());
    let next_id = Arc::new(AtomicU64::new(1));
    let run = |n: u64| {
        let per = n / CLIENT_THREADS as u64;
        let threads: Vec<_> = (0..CLIENT_THREADS)
            .map(|i| {
                let (host, tally, next_id) = (host.clone(), tally.clone(), next_id.clone());
                let quota = if i == 0 {
                    n - per * (CLIENT_THREADS as u64 - 1)
                } else {
                    per
                };
                std::thread::spawn(move || {
                    client(
                        host,
                        addr,
                        0x9E37_79B9_7F4A_7C15 ^ ((i as u64 + 1) * 7919),
                        quota,
                        tally,
                        next_id,
                    )
                })
            })
            .collect();
        for t in threads {
            t.join().expect("client thread");
        }
    };
    // Warm-up: workers, allocator arenas, the upstream fetch and cache.
    run(20_000.min(total));
    std::thread::sleep(Duration::from_millis(500));
    let (rss0, fds0) = usage(pid);
    let started = Instant::now();
    let idle_n: usize = std::env::var("SOAK_IDLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(IDLE_CONNECTIONS);
    let idle: Vec<TcpStream> = (0..idle_n)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let peak = Arc::new(AtomicU64::new(rss0));
    let peak_fds = Arc::new(AtomicUsize::new(fds0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (peak, peak_fds, stop) = (peak.clone(), peak_fds.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let (r, f) = usage(pid);
                peak.fetch_max(r, Ordering::Relaxed);
                peak_fds.fetch_max(f, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    let before = tally.sent.load(Ordering::Relaxed);
    let watchdog = {
        let tally = tally.clone();
        std::thread::spawn(move || {
            let t0 = Instant::now();
            loop {
                std::thread::sleep(Duration::from_secs(1));
                if tally.sent.load(Ordering::Relaxed) >= before + total {
                    return true;
                }
                if t0.elapsed() > DEADLINE {
                    return false;
                }
            }
        })
    };
    run(total);
    let took = started.elapsed();
    assert!(
        watchdog.join().unwrap(),
        "soak passed its {DEADLINE:?} deadline"
    );
    drop(idle);
    // Let the server notice every close.
    let settle = Instant::now();
    let (mut rss1, mut fds1) = usage(pid);
    while fds1 > fds0 && settle.elapsed() < SETTLE {
        std::thread::sleep(Duration::from_millis(100));
        (rss1, fds1) = usage(pid);
    }
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let sent = tally.sent.load(Ordering::Relaxed);
    let answered = tally.answered.load(Ordering::Relaxed);
    let wrong = tally.wrong.load(Ordering::Relaxed);
    let conns = tally.connections.load(Ordering::Relaxed);
    println!(
        "soak: {total} requests (+{before} warm-up) over {conns} connections (+{IDLE_CONNECTIONS} idle) \
         from {CLIENT_THREADS} threads in {:.1} s ({:.0} req/s)",
        took.as_secs_f64(),
        total as f64 / took.as_secs_f64()
    );
    println!("soak: upstream requests {}", up.request_count());
    println!("soak: answered as expected {answered} of {sent} (including warm-up), wrong or missing {wrong}");
    println!(
        "soak: server RSS baseline {:.1} MiB, peak {:.1} MiB, after {:.1} MiB; fds baseline {fds0}, peak {}, after {fds1}",
        mib(rss0),
        mib(peak.load(Ordering::Relaxed)),
        mib(rss1),
        peak_fds.load(Ordering::Relaxed)
    );
    assert_eq!(wrong, 0, "every request must get its expected answer");
    assert_eq!(answered, sent);
    assert!(
        fds1 <= fds0,
        "fds did not return to baseline: {fds0} -> {fds1}"
    );
    assert!(
        rss1 <= rss0 + RSS_SLACK_BYTES,
        "RSS did not return near its baseline: {:.1} -> {:.1} MiB",
        mib(rss0),
        mib(rss1)
    );
    assert!(x
        .log
        .lock()
        .unwrap()
        .iter()
        .all(|l| !l.contains("panicked")));
}
