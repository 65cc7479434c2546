//! The bench's own mio pieces (xmd_bench only; `support` stays std-only
//! for callgrind_miss): the bare responder of row (a0), the 64 misses a
//! second of row (f), and the 10,000 calls of row (g).

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

/// The raw HTTP reply xmd sends to one `body` POSTed to /mcp (status
/// line, headers and body), captured once.
pub fn capture(addr: SocketAddr, body: &str) -> Vec<u8> {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let req = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        let n = s.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if let Some(total) = complete(&got) {
            got.truncate(total);
            break;
        }
    }
    got
}

/// The length of the first whole HTTP message in `buf` (head and
/// Content-Length body), if it is whole.
fn complete(buf: &[u8]) -> Option<usize> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    (buf.len() >= end + len).then_some(end + len)
}

/// The bare responder, a process of its own (this binary re-run).
pub struct Responder {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Responder {
    pub fn start(reply: &[u8]) -> Responder {
        let file = std::env::temp_dir().join(format!("xmd-bench-reply-{}", std::process::id()));
        std::fs::write(&file, reply).unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env("XMD_BENCH_RESPONDER", &file)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line.trim().parse().unwrap();
        Responder { child, addr }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Row (a0)'s server: one mio loop, one thread; reads requests (head and
/// Content-Length body) and answers each with the bytes in file `reply`.
pub fn respond(reply: &str) {
    let reply = std::fs::read(reply).unwrap();
    let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    println!("{}", listener.local_addr().unwrap());
    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(&mut listener, Token(0), Interest::READABLE)
        .unwrap();
    struct C {
        s: TcpStream,
        inb: Vec<u8>,
        out: Vec<u8>,
        pos: usize,
    }
    let mut conns: HashMap<usize, C> = HashMap::new();
    let mut next = 1;
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        poll.poll(&mut events, None).unwrap();
        for ev in events.iter() {
            if ev.token() == Token(0) {
                while let Ok((mut s, _)) = listener.accept() {
                    let _ = s.set_nodelay(true);
                    poll.registry()
                        .register(&mut s, Token(next), Interest::READABLE | Interest::WRITABLE)
                        .unwrap();
                    conns.insert(
                        next,
                        C {
                            s,
                            inb: Vec::new(),
                            out: Vec::new(),
                            pos: 0,
                        },
                    );
                    next += 1;
                }
                continue;
            }
            let id = ev.token().0;
            let Some(c) = conns.get_mut(&id) else {
                continue;
            };
            let mut closed = read_all(&mut c.s, &mut buf, &mut c.inb);
            while let Some(n) = complete(&c.inb) {
                c.inb.drain(..n);
                c.out.extend_from_slice(&reply);
            }
            while c.pos < c.out.len() {
                match c.s.write(&c.out[c.pos..]) {
                    Ok(n) => c.pos += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        closed = true;
                        break;
                    }
                }
            }
            if c.pos == c.out.len() {
                c.out.clear();
                c.pos = 0;
            }
            if closed {
                conns.remove(&id);
            }
        }
    }
}

fn call_request(addr: SocketAddr, body: &str) -> Vec<u8> {
    format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Row (f)'s background: `per_second` profile misses (one-post accounts,
/// a new handle each) started every second for `secs` seconds, each on a
/// connection of its own, held until its answer.
pub fn misses_per_second(addr: SocketAddr, per_second: usize, secs: u64) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut held = Vec::new();
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < Duration::from_secs(secs) {
            let due = (start.elapsed().as_secs_f64() * per_second as f64) as u64;
            while n < due {
                n += 1;
                let body = super::support::TINY_PROFILE.replace("HANDLE", &format!("fmiss{n}"));
                if let Ok(mut s) = std::net::TcpStream::connect(addr) {
                    let _ = s.write_all(&call_request(addr, &body));
                    held.push(s);
                }
            }
            thread::sleep(Duration::from_millis(5));
        }
        drop(held);
    })
}

/// What row (g) measured.
pub struct Many {
    pub ok: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub sent_ms: f64,
}

/// One call of row (g): its socket, its request (until sent), when it
/// went, what came back, and its latency and success once whole.
struct Pending {
    s: TcpStream,
    request: Option<Vec<u8>>,
    sent: Instant,
    got: Vec<u8>,
    result: Option<(f64, bool)>,
}

/// Sends the requests of connections that connected, reads what the ready
/// ones sent; returns how many answers completed.
fn drain(
    poll: &mut Poll,
    events: &mut Events,
    conns: &mut [Pending],
    buf: &mut [u8],
    wait: Duration,
) -> usize {
    poll.poll(events, Some(wait)).unwrap();
    let mut done = 0;
    for ev in events.iter() {
        let c = &mut conns[ev.token().0];
        if c.result.is_some() {
            continue;
        }
        if ev.is_writable() {
            if let Some(req) = c.request.take() {
                if c.s.peer_addr().is_ok() && c.s.write_all(&req).is_ok() {
                    c.sent = Instant::now();
                } else {
                    c.request = Some(req);
                }
            }
        }
        loop {
            match c.s.read(buf) {
                Ok(0) => break,
                Ok(n) => c.got.extend_from_slice(&buf[..n]),
                Err(_) => break,
            }
        }
        if let Some(n) = complete(&c.got) {
            let text = String::from_utf8_lossy(&c.got[..n]);
            let ok = text.starts_with("HTTP/1.1 200") && text.contains("\"isError\":false");
            if !ok && std::env::var("BENCH_SHOW_FAIL").is_ok() {
                eprintln!("FAIL: {}", &text[..text.len().min(900)]);
            }
            c.result = Some((c.sent.elapsed().as_secs_f64() * 1000.0, ok));
            done += 1;
        }
    }
    done
}

/// Row (g): `calls` `x_md_get_post` calls over `posts` posts, every
/// connection opened at once (non-blocking connects), each request sent
/// as its connection is up, every answer's latency from its own send.
pub fn many_calls(addr: SocketAddr, calls: usize, posts: usize) -> Many {
    let mut poll = Poll::new().unwrap();
    let mut events = Events::with_capacity(4096);
    let mut buf = vec![0u8; 64 * 1024];
    let mut conns: Vec<Pending> = Vec::with_capacity(calls);
    let t0 = Instant::now();
    for i in 0..calls {
        let id = 3_000_000_000_000_000_000u64 + (i % posts.max(1)) as u64;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"https://x.com/demo_author/status/{id}","thread":"off"}}}}}}"#
        );
        let mut s = TcpStream::connect(addr).unwrap();
        poll.registry()
            .register(&mut s, Token(i), Interest::READABLE | Interest::WRITABLE)
            .unwrap();
        conns.push(Pending {
            s,
            request: Some(call_request(addr, &body)),
            sent: Instant::now(),
            got: Vec::new(),
            result: None,
        });
    }
    let mut done = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut sent_ms = f64::NAN;
    while done < calls && Instant::now() < deadline {
        done += drain(
            &mut poll,
            &mut events,
            &mut conns,
            &mut buf,
            Duration::from_millis(50),
        );
        if sent_ms.is_nan() && conns.iter().all(|c| c.request.is_none()) {
            sent_ms = t0.elapsed().as_secs_f64() * 1000.0;
        }
    }
    let mut lat: Vec<f64> = conns
        .iter()
        .map(|c| c.result.map_or(f64::INFINITY, |r| r.0))
        .collect();
    lat.sort_by(f64::total_cmp);
    let ok = conns
        .iter()
        .filter(|c| c.result.is_some_and(|r| r.1))
        .count();
    Many {
        ok,
        p50_ms: lat[lat.len() / 2],
        p99_ms: lat[lat.len() * 99 / 100],
        max_ms: lat[lat.len() - 1],
        sent_ms,
    }
}

/// Row (f)'s probe: `tools/list` on one connection every `every`, for
/// `secs` seconds, each answer's latency in ms (sorted).
pub fn probe(addr: SocketAddr, secs: u64, every: Duration) -> Vec<f64> {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = call_request(addr, super::support::LIST);
    let mut lat = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        let t = Instant::now();
        s.write_all(&req).unwrap();
        let mut got = Vec::new();
        while complete(&got).is_none() {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "the probe's connection closed");
            got.extend_from_slice(&buf[..n]);
        }
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        if let Some(rest) = every.checked_sub(t.elapsed()) {
            thread::sleep(rest);
        }
    }
    lat.sort_by(f64::total_cmp);
    lat
}

/// Row (g)'s upstream: one mio loop (no thread per connection: thousands
/// of connections at once are what the row is about), answering each
/// `GET /2/status/<id>` after `delay` with the post fixture for that id.
pub struct SlowUpstream {
    pub addr: SocketAddr,
    pub served: Arc<AtomicU64>,
}

pub fn slow_upstream(delay: Duration) -> SlowUpstream {
    let body = super::support::status_body();
    let mut listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    // A deep accept queue, as a real upstream has (mio's is 128: past it
    // the kernel drops handshakes and xmd's connects wait 1 s to retry).
    socket2::SockRef::from(&listener).listen(4096).unwrap();
    let addr = listener.local_addr().unwrap();
    let served = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&served);
    thread::spawn(move || {
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut listener, Token(0), Interest::READABLE)
            .unwrap();
        struct C {
            s: TcpStream,
            inb: Vec<u8>,
            out: Vec<u8>,
        }
        let mut conns: HashMap<usize, C> = HashMap::new();
        let mut due: VecDeque<(Instant, usize, Vec<u8>)> = VecDeque::new();
        let mut next = 1;
        let mut events = Events::with_capacity(1024);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let wait = due
                .front()
                .map(|(at, _, _)| at.saturating_duration_since(Instant::now()));
            poll.poll(&mut events, wait).unwrap();
            for ev in events.iter() {
                if ev.token() == Token(0) {
                    while let Ok((mut s, _)) = listener.accept() {
                        let _ = s.set_nodelay(true);
                        poll.registry()
                            .register(&mut s, Token(next), Interest::READABLE | Interest::WRITABLE)
                            .unwrap();
                        conns.insert(
                            next,
                            C {
                                s,
                                inb: Vec::new(),
                                out: Vec::new(),
                            },
                        );
                        next += 1;
                    }
                    continue;
                }
                let id = ev.token().0;
                let Some(c) = conns.get_mut(&id) else {
                    continue;
                };
                let closed = read_all(&mut c.s, &mut buf, &mut c.inb);
                while let Some(end) = c.inb.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&c.inb[..end]).to_string();
                    c.inb.drain(..end + 4);
                    let target = head.split(' ').nth(1).unwrap_or("/");
                    let post = target.rsplit('/').next().unwrap_or("");
                    let body = body.replace("2087208847298015232", post);
                    let answer = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                    due.push_back((Instant::now() + delay, id, answer.into_bytes()));
                }
                if !c.out.is_empty() {
                    if let Ok(n) = c.s.write(&c.out) {
                        c.out.drain(..n);
                    }
                }
                if closed {
                    conns.remove(&id);
                }
            }
            let now = Instant::now();
            while due.front().is_some_and(|(at, _, _)| *at <= now) {
                let (_, id, answer) = due.pop_front().unwrap();
                if let Some(c) = conns.get_mut(&id) {
                    c.out.extend_from_slice(&answer);
                    if let Ok(n) = c.s.write(&c.out) {
                        c.out.drain(..n);
                    }
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    });
    SlowUpstream { addr, served }
}

/// Reads `s` until it would block, appending to `into` through `buf`;
/// true when the peer closed (or the socket failed).
fn read_all(s: &mut TcpStream, buf: &mut [u8], into: &mut Vec<u8>) -> bool {
    loop {
        match s.read(buf) {
            Ok(0) => return true,
            Ok(n) => into.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}
