//! xmd benchmark harness (a benchmark, not a test): starts the release
//! binary and an in-process fake FxTwitter upstream with a configurable
//! delay, drives load with `wrk`, and prints a table.
//!
//! Run: `cargo bench --bench xmd_bench` (needs `wrk` on PATH: `apt-get
//! install wrk`). Environment: `BENCH_SECS` (default 10), `BENCH_CONNS`
//! (default 64), `BENCH_ONLY` (comma list of a,b,b1,c,d,e,f),
//! `BENCH_REPEAT` (runs of (b) and (b1), default 1; more print the
//! range, since one run of (b) is not enough to judge it), `BENCH_BIN`
//! (the server binary to measure, e.g. the static build; by default the
//! release build is made in `target/bench`), `BENCH_SERVER_ARGS` (more
//! server arguments, e.g. `--upstream-io threads` for the blocking
//! upstream client).
//!
//! Rows:
//! - (a) `tools/list`;
//! - (b) `tools/call` `x_md_get_profile`, 20 ms upstream delay, a different
//!   handle per request (cache misses), against (b0), the fake upstream's own
//!   throughput at the same concurrency (wrk fetching a timeline page from it),
//!   and (b0×2), its throughput at twice the connections, in calls of two
//!   requests: what (b)'s two concurrent fetches per call put on it;
//! - (b1) the same misses against a one-post account (`tiny_…` handles: a
//!   small profile and a one-post timeline page), which isolates what the
//!   server adds per call (HTTP, dispatch, hand-offs, the round trip) from
//!   the JSON work a full 13.7 KB timeline page costs;
//! - (c) the same call repeated (cache hits);
//! - (d) idle RSS; (e) RSS with 5,000 idle keep-alive connections;
//! - (f) `tools/list` p99 while 1,000 `tools/call`s wait on a 2 s upstream
//!   and 64 profile misses a second start (issue 28 item 2);
//! - (a0) the floor of (a): a bare mio responder (this binary, re-run as
//!   one) sending the same reply bytes, its CPU per request beside (a)'s;
//! - (g) 10,000 `tools/call`s in flight against a 2 s upstream (2,500
//!   posts, four calls each): every answer's latency and the peak RSS
//!   (issue 28 item 3; `BENCH_G_CALLS`, `BENCH_G_POSTS`; `BENCH_SHOW_FAIL` prints each reply that is not a 200 result);
//! - (s) system calls per miss: (b) under `strace -c -f` (slow; only when
//!   asked, `BENCH_ONLY=s`).
//!
//! Server CPU µs per request = (utime + stime of the server over the run) /
//! requests served, read from `/proc/<pid>/stat`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

mod bare;
mod support;

use support::{bench_bin, listening_addr, serve_args, Upstream, LIST, PROFILE, TINY_PROFILE};

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(bin: &str, upstream: SocketAddr, extra: &[&str]) -> Server {
        let mut child = Command::new(bin)
            .args(serve_args(upstream))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the xmd binary (BENCH_BIN, or built into target/bench)");
        let mut first = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let addr = listening_addr(&first);
        Server { child, addr }
    }

    /// (utime, stime) of the server in clock ticks.
    fn cpu_ticks(&self) -> (u64, u64) {
        cpu_ticks(&self.child.id().to_string())
    }

    fn status_kib(&self, key: &str) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TICKS_PER_SEC: f64 = 100.0;

/// (utime, stime) of process `pid` (or `self`) in clock ticks (fields 14
/// and 15 of `/proc/<pid>/stat`, 12 and 13 after the command name's `)`).
fn cpu_ticks(pid: &str) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (field(11), field(12))
}

/// CPU the fake upstream spent per request it served during `f`, in µs:
/// this process's CPU (the upstream's threads; the main thread only waits
/// on wrk) over the upstream's answers. It shares the machine's cores with
/// the server in rows (b) and (b1), so what it spends the server lacks.
fn upstream_cpu<T>(upstream: &Upstream, f: impl FnOnce() -> T) -> (T, f64) {
    let (u0, s0) = cpu_ticks("self");
    let served0 = upstream.served.load(Ordering::Relaxed);
    let out = f();
    let (u1, s1) = cpu_ticks("self");
    let served = upstream.served.load(Ordering::Relaxed) - served0;
    let ticks = (u1 - u0 + s1 - s0) as f64;
    (out, ticks / TICKS_PER_SEC * 1e6 / served.max(1) as f64)
}

struct WrkResult {
    requests: u64,
    rps: f64,
    p50_ms: f64,
    p99_ms: f64,
    non2xx: u64,
}

fn wrk(addr: SocketAddr, lua: &str, secs: u64, conns: u64) -> WrkResult {
    wrk_url(&format!("http://{addr}/mcp"), lua, secs, conns)
}

fn wrk_url(url: &str, lua: &str, secs: u64, conns: u64) -> WrkResult {
    let script = std::env::temp_dir().join(format!("xmd-bench-{}.lua", std::process::id()));
    std::fs::write(&script, lua).unwrap();
    let threads = conns.clamp(1, 2);
    let out = Command::new("wrk")
        .args([
            "-t",
            &threads.to_string(),
            "-c",
            &conns.to_string(),
            "-d",
            &format!("{secs}s"),
            "--latency",
            "-s",
        ])
        .arg(&script)
        .arg(url)
        .output()
        .expect("wrk on PATH (apt-get install wrk)");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let ms = |label: &str| -> f64 {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split_whitespace().nth(1))
            .map(parse_duration_ms)
            .unwrap_or(f64::NAN)
    };
    let requests = text
        .lines()
        .find(|l| l.contains("requests in"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let rps = text
        .lines()
        .find(|l| l.starts_with("Requests/sec:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let non2xx = text
        .lines()
        .find(|l| l.contains("Non-2xx or 3xx responses:"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    WrkResult {
        requests,
        rps,
        p50_ms: ms("50%"),
        p99_ms: ms("99%"),
        non2xx,
    }
}

fn parse_duration_ms(v: &str) -> f64 {
    let (num, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
    let n: f64 = num.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => f64::NAN,
    }
}

fn lua(body: &str, per_request_handle: bool) -> String {
    let headers = "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Accept\"] = \"application/json, text/event-stream\"\nwrk.headers[\"MCP-Protocol-Version\"] = \"2025-11-25\"\n";
    if per_request_handle {
        format!(
            "{headers}counter = 0\nthreads = 0\nsetup = function(thread)\n  threads = threads + 1\n  thread:set(\"tid\", threads)\nend\nrequest = function()\n  counter = counter + 1\n  local h = string.format(\"u%d_%d\", tid, counter)\n  local body = string.gsub('{body}', 'HANDLE', h)\n  return wrk.format(nil, nil, nil, body)\nend\n"
        )
    } else {
        format!("{headers}wrk.body = '{body}'\n")
    }
}

/// Server CPU per request in µs: (total, user).
type Cpu = (f64, f64);

fn row(name: &str, r: &WrkResult, cpu: Cpu, peak_kib: u64, note: &str) {
    println!(
        "| {name} | {:.0} | {:.2} | {:.2} | {:.1} | {:.1} | {:.1} | {} | {note} |",
        r.rps,
        r.p50_ms,
        r.p99_ms,
        cpu.0,
        cpu.1,
        peak_kib as f64 / 1024.0,
        r.non2xx
    );
}

fn measured(server: &Server, f: impl FnOnce() -> WrkResult) -> (WrkResult, Cpu) {
    let (u0, s0) = server.cpu_ticks();
    let r = f();
    let (u1, s1) = server.cpu_ticks();
    let per = |ticks: u64| {
        if r.requests > 0 {
            ticks as f64 / TICKS_PER_SEC * 1e6 / r.requests as f64
        } else {
            f64::NAN
        }
    };
    let cpu = (per(u1 - u0 + s1 - s0), per(u1 - u0));
    (r, cpu)
}

fn main() {
    if let Ok(reply) = std::env::var("XMD_BENCH_RESPONDER") {
        bare::respond(&reply);
        return;
    }
    let secs: u64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let conns: u64 = std::env::var("BENCH_CONNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let repeat: usize = std::env::var("BENCH_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let only = std::env::var("BENCH_ONLY").unwrap_or_else(|_| "a,a0,b,b1,c,d,e,f,g".into());
    let want = |k: &str| only.split(',').any(|o| o.trim() == k);
    let bin = bench_bin();
    let upstream = Upstream::start();
    println!("xmd benchmark: {secs} s per row, {conns} keep-alive connections, wrk on loopback, {} cores", thread::available_parallelism().map_or(0, |n| n.get()));
    println!();
    println!(
        "| row | req/s | p50 ms | p99 ms | server CPU µs/req | of which user | peak RSS MiB | non-2xx | note |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    let server = Server::start(&bin, upstream.addr, &[]);
    thread::sleep(Duration::from_millis(200));
    if want("d") {
        println!(
            "| (d) idle RSS | | | | | | {:.1} | | VmRSS after start |",
            server.status_kib("VmRSS:") as f64 / 1024.0
        );
    }
    if want("a") {
        let (r, cpu) = measured(&server, || wrk(server.addr, &lua(LIST, false), secs, conns));
        row("(a) tools/list", &r, cpu, server.status_kib("VmHWM:"), "");
    }
    if want("a0") {
        let reply = bare::capture(server.addr, LIST);
        let floor = bare::Responder::start(&reply);
        let (u0, s0) = cpu_ticks(&floor.child.id().to_string());
        let r = wrk_url(
            &format!("http://{}/mcp", floor.addr),
            &lua(LIST, false),
            secs,
            conns,
        );
        let (u1, s1) = cpu_ticks(&floor.child.id().to_string());
        let per = |t: u64| t as f64 / TICKS_PER_SEC * 1e6 / r.requests.max(1) as f64;
        row(
            "(a0) bare mio responder, the same reply bytes",
            &r,
            (per(u1 - u0 + s1 - s0), per(u1 - u0)),
            0,
            &format!("{} reply bytes; (a)'s floor", reply.len()),
        );
    }
    if want("s") {
        upstream.delay_ms.store(20, Ordering::Relaxed);
        syscalls_per_miss(&server, secs);
    }
    let mut b0: Option<(f64, f64)> = None;
    if want("b") || want("b1") {
        upstream.delay_ms.store(20, Ordering::Relaxed);
        // The yardstick: the fake upstream's own throughput at this
        // concurrency, driven directly (one timeline page per request).
        let (alone, up_cpu) = upstream_cpu(&upstream, || {
            wrk_url(
                &format!("http://{}/2/profile/bench/statuses", upstream.addr),
                "wrk.method = \"GET\"\n",
                secs,
                conns,
            )
        });
        println!(
            "| (b0) the fake upstream alone, 20 ms delay | {:.0} | {:.2} | {:.2} | | | | {} | timeline page fetched directly; upstream CPU {up_cpu:.0} µs/req |",
            alone.rps, alone.p50_ms, alone.p99_ms, alone.non2xx
        );
        // A call fetches the profile and the page at once, so (b) puts
        // twice the connections' requests on the upstream: its throughput
        // there, in calls (two requests each), is the second yardstick.
        let (doubled, up_cpu) = upstream_cpu(&upstream, || {
            wrk_url(
                &format!("http://{}/2/profile/bench/statuses", upstream.addr),
                "wrk.method = \"GET\"\n",
                secs,
                conns * 2,
            )
        });
        println!(
            "| (b0×2) the fake upstream alone, {} connections | {:.0} | {:.2} | {:.2} | | | | {} | = {:.0} calls/s at two requests per call; upstream CPU {up_cpu:.0} µs/req |",
            conns * 2, doubled.rps, doubled.p50_ms, doubled.p99_ms, doubled.non2xx, doubled.rps / 2.0
        );
        b0 = Some((alone.rps, doubled.rps / 2.0));
    }
    // (b) and (b1): misses, a new handle per call, against the yardsticks.
    // `BENCH_REPEAT` runs of each: one run of (b) moved between 73 % and
    // 86 % of (b0) in one session, so one run does not judge the row.
    let misses = |name: &str, body: &str| {
        let (alone, doubled) = b0.unwrap_or((f64::NAN, f64::NAN));
        let bound = conns as f64 / 0.020;
        let mut shares = Vec::with_capacity(repeat);
        for _ in 0..repeat {
            let served0 = upstream.served.load(Ordering::Relaxed);
            let ((r, cpu), up_cpu) = upstream_cpu(&upstream, || {
                measured(&server, || wrk(server.addr, &lua(body, true), secs, conns))
            });
            let up = (upstream.served.load(Ordering::Relaxed) - served0) as f64 / secs as f64;
            let share = 100.0 * r.rps / alone;
            shares.push(share);
            row(
                name,
                &r,
                cpu,
                server.status_kib("VmHWM:"),
                &format!(
                    "{share:.1} % of (b0), {:.1} % of (b0×2); bound {bound:.0} calls/s; upstream served {up:.0}/s at {up_cpu:.0} µs CPU each",
                    100.0 * r.rps / doubled
                ),
            );
        }
        if repeat > 1 {
            shares.sort_by(f64::total_cmp);
            println!(
                "| {name}: {repeat} runs | | | | | | | | % of (b0): min {:.1}, median {:.1}, max {:.1} |",
                shares[0],
                shares[repeat / 2],
                shares[repeat - 1]
            );
        }
    };
    if want("b") {
        misses("(b) get_profile, 20 ms upstream, misses", PROFILE);
    }
    if want("b1") {
        misses(
            "(b1) get_profile, 20 ms upstream, misses, one-post account",
            TINY_PROFILE,
        );
    }
    if want("c") {
        upstream.delay_ms.store(20, Ordering::Relaxed);
        let body = PROFILE.replace("HANDLE", "cached_handle");
        let (r, cpu) = measured(&server, || {
            wrk(server.addr, &lua(&body, false), secs, conns)
        });
        row(
            "(c) get_profile, cache hits",
            &r,
            cpu,
            server.status_kib("VmHWM:"),
            "",
        );
    }
    drop(server);
    if want("e") {
        let server = Server::start(&bin, upstream.addr, &[]);
        thread::sleep(Duration::from_millis(200));
        let before = server.status_kib("VmRSS:");
        let mut idle = Vec::with_capacity(5000);
        let req = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{LIST}", server.addr, LIST.len());
        for _ in 0..5000 {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            idle.push(s);
        }
        for s in idle.iter_mut() {
            read_one(s);
        }
        thread::sleep(Duration::from_millis(300));
        let after = server.status_kib("VmRSS:");
        println!("| (e) 5,000 idle keep-alive connections | | | | | | {:.1} | | VmRSS {:.1} MiB before, each connection answered one tools/list |", after as f64 / 1024.0, before as f64 / 1024.0);
        drop(idle);
    }
    if want("f") {
        let server = Server::start(&bin, upstream.addr, &["--workers", "64", "--queue", "2048"]);
        upstream.delay_ms.store(2000, Ordering::Relaxed);
        let misses = bare::misses_per_second(server.addr, 64, 3.min(secs));
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x_md_get_post","arguments":{"url":"https://x.com/demo_author/status/2087208847298015232","thread":"off"}}}"#;
        let req = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{call}", server.addr, call.len());
        let mut slow = Vec::with_capacity(1000);
        for _ in 0..1000 {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            slow.push(s);
        }
        let started = Instant::now();
        // One connection, one request every 2 ms: the latency a client
        // sees, not a load of its own (64 connections of tools/list
        // saturate both cores, row (a)). Over 4 s: the slow calls' answers
        // (at 2 s) and their renders fall inside it.
        let lat = bare::probe(server.addr, 4, Duration::from_millis(2));
        let pct = |p: usize| lat[(lat.len() * p / 100).min(lat.len() - 1)];
        println!(
            "| (f) tools/list, 1 request / 2 ms, while 1,000 calls wait on a 2 s upstream | {} requests | {:.3} | {:.3} | | | {:.1} | | max {:.3} ms; over the first {:.1} s of the slow calls, with 64 profile misses/s starting |",
            lat.len(),
            pct(50),
            pct(99),
            server.status_kib("VmHWM:") as f64 / 1024.0,
            lat[lat.len() - 1],
            started.elapsed().as_secs_f64()
        );
        let _ = misses.join();
        upstream.delay_ms.store(0, Ordering::Relaxed);
        drop(slow);
    }
    if want("g") {
        let calls: usize = std::env::var("BENCH_G_CALLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000);
        let posts: usize = std::env::var("BENCH_G_POSTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2_500);
        // Default settings (issue 28), on a server of its own: its posts
        // are new to it, so every call waits for the upstream, calls for
        // one post at once joined into one request. An upstream on a mio
        // loop: thousands of connections at once, where the
        // thread-per-connection fake spends its time starting threads and
        // its accept queue (128) drops SYNs (connects retried after 1 s).
        let slow = bare::slow_upstream(Duration::from_secs(2));
        let server = Server::start(&bin, slow.addr, &[]);
        let before = server.status_kib("VmRSS:");
        let served0 = slow.served.load(Ordering::Relaxed);
        let (u0, s0) = server.cpu_ticks();
        let (bu0, bs0) = cpu_ticks("self");
        let g = bare::many_calls(server.addr, calls, posts);
        let (bu1, bs1) = cpu_ticks("self");
        let bench_s = (bu1 - bu0 + bs1 - bs0) as f64 / TICKS_PER_SEC;
        let (u1, s1) = server.cpu_ticks();
        let cpu_s = (u1 - u0 + s1 - s0) as f64 / TICKS_PER_SEC;
        println!(
            "| (g) {calls} calls in flight, 2 s upstream | | {:.0} | {:.0} | {:.0} | | {:.1} | {} | max {:.0} ms, {} answered 200 without isError, {} upstream requests, sent over {:.0} ms; server CPU {cpu_s:.2} s in all, the bench's (client and upstream) {bench_s:.2} s; VmRSS {:.1} MiB before |",
            g.p50_ms,
            g.p99_ms,
            cpu_s * 1e6 / calls as f64,
            server.status_kib("VmHWM:") as f64 / 1024.0,
            calls - g.ok,
            g.max_ms,
            g.ok,
            slow.served.load(Ordering::Relaxed) - served0,
            g.sent_ms,
            before as f64 / 1024.0,
        );
        upstream.delay_ms.store(0, Ordering::Relaxed);
    }
}

/// Row (s): system calls per profile miss, counted by `strace -c -f` on
/// the server while wrk runs (b)'s load (slowed by strace: only the count
/// per call is read from it).
fn syscalls_per_miss(server: &Server, secs: u64) {
    let out = std::env::temp_dir().join(format!("xmd-bench-strace-{}", std::process::id()));
    let mut strace = Command::new("strace")
        .args(["-c", "-f", "-o"])
        .arg(&out)
        .args(["-p", &server.child.id().to_string()])
        .stderr(Stdio::null())
        .spawn()
        .expect("strace on PATH");
    thread::sleep(Duration::from_millis(500));
    let r = wrk(server.addr, &lua(PROFILE, true), secs, 16);
    let _ = Command::new("kill")
        .args(["-INT", &strace.id().to_string()])
        .status();
    let _ = strace.wait();
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    let total: u64 = text
        .lines()
        .find(|l| l.trim_end().ends_with("total"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let top: Vec<String> = text
        .lines()
        .skip(2)
        .take(6)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 5).then(|| format!("{} {}", f[f.len() - 1], f[3]))
        })
        .collect();
    println!(
        "| (s) system calls per miss (strace -c -f, 16 connections) | {:.0} | | | | | | {} | {:.1} per call over {} calls; most: {} |",
        r.rps,
        r.non2xx,
        total as f64 / r.requests.max(1) as f64,
        r.requests,
        top.join(", ")
    );
}

fn read_one(s: &mut TcpStream) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap_or(0) == 0 {
            return;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    let _ = s.read_exact(&mut body);
}
