//! Several event loops on one listening socket (`--event-loops`): every
//! connection is served whichever loop accepted it, a tool call's answer
//! comes back to the connection that asked (the worker pool has one lane
//! per loop), `--max-connections` counts the whole server, and SIGTERM
//! stops every loop.

mod common;
mod util;

use std::io::Write;
use std::net::TcpStream;
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use util::*;

const LEGACY: [&str; 3] = [
    "Content-Type: application/json",
    "Accept: application/json",
    "MCP-Protocol-Version: 2025-11-25",
];

fn call(x: &Xmd, id: usize) -> Vec<u8> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"https://x.com/a/status/{id}"}}}}}}"#
    );
    post(&x.host(), &LEGACY, &body)
}

#[test]
fn calls_on_many_loops_come_back_to_the_connection_that_asked() {
    // Nothing listens on the upstream port: each call fails fast on a
    // worker, as an isError result carrying the request's own id.
    let x = Xmd::start(&[
        "--event-loops",
        "4",
        "--workers",
        "3",
        "--upstream",
        "http://127.0.0.1:9",
    ]);
    let mut conns: Vec<TcpStream> = (0..24).map(|_| x.connect()).collect();
    for round in 0..3 {
        for (i, s) in conns.iter_mut().enumerate() {
            s.write_all(&call(&x, 1000 * round + i + 1)).unwrap();
        }
        for (i, s) in conns.iter_mut().enumerate() {
            let r = read_reply(s, false);
            assert_eq!(r.status, 200, "{}", r.text());
            let v = r.json();
            assert_eq!(v["id"], 1000 * round + i + 1);
            assert_eq!(v["result"]["isError"], true);
        }
    }
}

#[test]
fn the_connection_limit_counts_every_loop() {
    let x = Xmd::start(&["--event-loops", "4", "--max-connections", "6"]);
    let list = post(
        &x.host(),
        &LEGACY,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let mut open: Vec<TcpStream> = (0..6).map(|_| x.connect()).collect();
    for s in &mut open {
        s.write_all(&list).unwrap();
        assert_eq!(read_reply(s, false).status, 200);
        // A request in progress: no longer an idle connection the server
        // may close to make room.
        s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    }
    sleep(Duration::from_millis(100));
    let mut seventh = x.connect();
    let r = read_reply(&mut seventh, false);
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after").as_deref(), Some("1"));
    // A closed connection frees its place, whichever loop served it.
    drop(open.pop());
    sleep(Duration::from_millis(200));
    let mut again = x.connect();
    again.write_all(&list).unwrap();
    assert_eq!(read_reply(&mut again, false).status, 200);
}

#[test]
fn sigterm_stops_every_loop() {
    let mut x = Xmd::start(&["--event-loops", "3"]);
    let mut idle: Vec<TcpStream> = (0..9).map(|_| x.connect()).collect();
    let list = post(
        &x.host(),
        &LEGACY,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    for s in &mut idle {
        s.write_all(&list).unwrap();
        assert_eq!(read_reply(s, false).status, 200);
    }
    x.sigterm();
    let status = x.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    for s in &mut idle {
        assert!(closed_within(s, Duration::from_secs(2)));
    }
}

/// A client that pipelines megabytes of requests and never reads its
/// replies fills its read buffer while parsing waits for output room: the
/// loop must leave it parked (its socket registered for writability) and
/// serve everyone else, rather than retry the full buffer forever.
#[test]
fn a_client_that_never_reads_does_not_stall_its_loop() {
    let x = Xmd::start(&["--event-loops", "1"]);
    let mut hog = x.connect();
    hog.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
    let writer = std::thread::spawn(move || {
        let req = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(4096);
        for _ in 0..40 {
            if hog.write_all(&req).is_err() {
                break;
            }
        }
        hog
    });
    sleep(Duration::from_millis(1500));
    for _ in 0..3 {
        let (reply, took) = timed(|| {
            roundtrip(
                &x,
                format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes(),
            )
        });
        assert_eq!(reply.status, 200);
        assert!(took < Duration::from_secs(1), "healthz took {took:?}");
    }
    drop(writer.join().unwrap());
}

/// SIGTERM ends the process within `--shutdown-grace` even with tool calls
/// running and queued behind a slow upstream: the connections still
/// waiting are closed at the deadline, and the queued calls are dropped
/// rather than run one by one for nobody. Calls queue only when the one
/// worker blocks through its upstream request (`--upstream-io threads`).
#[test]
fn shutdown_ends_within_the_grace_with_calls_running_and_queued() {
    shutdown_with_slow_calls("threads");
}

/// The same with the event loops making the upstream requests (the
/// default): the eight calls hold no worker and queue for none; they wait
/// parked on the loops, each for its own 2 s request in flight, and the
/// shutdown drops them and their requests at the deadline.
#[test]
fn shutdown_ends_within_the_grace_with_calls_parked_on_the_loops() {
    shutdown_with_slow_calls("loop");
}

/// Eight calls of 2 s misses on one worker, then SIGTERM with a 1 s grace,
/// the upstream requests made by `io` (`--upstream-io`).
fn shutdown_with_slow_calls(io: &str) {
    let up = FakeUpstream::start();
    for id in 1..=8 {
        up.on(
            &format!("/2/status/{id}"),
            Answer::fixture(200, "status-plain.json").delay(Duration::from_secs(2)),
        );
    }
    let mut x = Xmd::start(&[
        "--upstream",
        &up.base_url(),
        "--rate-limit",
        "0",
        "--workers",
        "1",
        "--queue",
        "100",
        "--shutdown-grace",
        "1",
        "--upstream-io",
        io,
    ]);
    // Eight different posts: each queued call would be its own 2 s miss.
    let mut waiting: Vec<TcpStream> = (0..8).map(|_| x.connect()).collect();
    for (i, s) in waiting.iter_mut().enumerate() {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"url":"https://x.com/a/status/{}","thread":"off"}}}}}}"#,
            i + 1
        );
        s.write_all(&post(&x.host(), &LEGACY, &body)).unwrap();
    }
    // The premise: with the workers, one request in flight (the others'
    // calls queued); with the loops, all eight. Either way no answer comes
    // before 2 s, so at the signal every call still waits.
    let in_flight = if io == "loop" { 8 } else { 1 };
    let t0 = Instant::now();
    while up.request_count() < in_flight && t0.elapsed() < Duration::from_millis(1500) {
        sleep(Duration::from_millis(10));
    }
    sleep(Duration::from_millis(100));
    assert_eq!(up.request_count(), in_flight, "upstream requests in flight");
    let (status, took) = timed(|| {
        x.sigterm();
        x.child.wait().unwrap()
    });
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_millis(2500), "shutdown took {took:?}");
    for s in &mut waiting {
        assert!(closed_within(s, Duration::from_secs(1)));
    }
}

/// A client that pipelines without pause gets at most a bounded turn of
/// its loop at a time (`MAX_ROUNDS_PER_TURN` rounds of reading, parsing
/// and writing): the other connections on that loop are answered between
/// its turns. Before, they waited until it stopped sending. (The bound is
/// generous here: tests run the debug build, where a turn of 60 KB
/// requests takes a few hundred milliseconds.)
#[test]
fn a_pipelining_client_leaves_its_loop_to_the_others_between_turns() {
    let x = Xmd::start(&["--event-loops", "1"]);
    let probes: Vec<TcpStream> = (0..10).map(|_| x.connect()).collect();
    let hog = x.connect();
    let mut reader = hog.try_clone().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reading = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 20];
            let mut total = 0usize;
            reader
                .set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(n) = std::io::Read::read(&mut reader, &mut buf) {
                    if n == 0 {
                        break;
                    }
                    total += n;
                }
            }
            total
        })
    };
    let writing = {
        let stop = stop.clone();
        let mut hog = hog;
        let host = x.host();
        std::thread::spawn(move || {
            // Large requests with small replies: the loop's rounds are
            // bounded by reading, not by a client slow to read.
            let ping = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"pad":"{}"}}}}}}"#,
                "x".repeat(60_000)
            );
            let batch = post(&host, &LEGACY, &ping).repeat(40);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if hog.write_all(&batch).is_err() {
                    break;
                }
            }
        })
    };
    sleep(Duration::from_millis(1500));
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", x.host());
    for mut probe in probes {
        let (reply, took) = timed(|| {
            probe.write_all(request.as_bytes()).unwrap();
            read_reply(&mut probe, false)
        });
        assert_eq!(reply.status, 200);
        assert!(took < Duration::from_secs(2), "a probe waited {took:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(
        reading.join().unwrap() > 0,
        "the pipelining client was served too"
    );
    drop(writing);
}

/// Whether the server has closed `s` (EOF or reset) rather than leaving
/// it open and silent.
fn is_closed(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 16];
    let closed = !matches!(s.peek(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    s.set_nonblocking(false).unwrap();
    closed
}

/// At `--max-connections` a new connection is admitted by closing the
/// connection idle the longest, whichever of the loops holds it (a loop
/// asks another through its waker), oldest first, round after round; a
/// connection with a request in progress is never closed for it, so with
/// none idle the new one gets the 503.
#[test]
fn the_longest_idle_connection_makes_room_on_any_loop() {
    let x = Xmd::start(&["--event-loops", "2", "--max-connections", "4"]);
    let list = post(
        &x.host(),
        &LEGACY,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let mut open = std::collections::VecDeque::new();
    for _ in 0..4 {
        let mut s = x.connect();
        s.write_all(&list).unwrap();
        assert_eq!(read_reply(&mut s, false).status, 200);
        open.push_back(s);
        sleep(Duration::from_millis(30));
    }
    for round in 0..10 {
        let mut s = x.connect();
        s.write_all(&list).unwrap();
        assert_eq!(read_reply(&mut s, false).status, 200, "round {round}");
        let mut oldest = open.pop_front().unwrap();
        assert!(
            closed_within(&mut oldest, Duration::from_secs(2)),
            "round {round}: the oldest stays open"
        );
        sleep(Duration::from_millis(30));
        for (i, other) in open.iter().enumerate() {
            assert!(!is_closed(other), "round {round}: #{i} was closed");
        }
        open.push_back(s);
    }
    // Every connection with a request in progress: none is closed for a
    // newcomer, which is refused.
    for s in &mut open {
        s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    }
    sleep(Duration::from_millis(100));
    let mut refused = x.connect();
    let r = read_reply(&mut refused, false);
    assert_eq!(r.status, 503);
    for (i, s) in open.iter().enumerate() {
        assert!(!is_closed(s), "#{i} was closed");
    }
    // Finishing a request makes its connection idle again: the next
    // newcomer takes its place.
    let mut first = open.pop_front().unwrap();
    first
        .write_all(format!("Host: {}\r\n\r\n", x.host()).as_bytes())
        .unwrap();
    assert_eq!(read_reply(&mut first, false).status, 200);
    sleep(Duration::from_millis(30));
    let mut s = x.connect();
    s.write_all(&list).unwrap();
    assert_eq!(read_reply(&mut s, false).status, 200);
    assert!(closed_within(&mut first, Duration::from_secs(2)));
    let metrics = roundtrip_metrics(&mut s, &x);
    assert!(
        metrics.contains("xmd_idle_connections_closed_total 11\n"),
        "{metrics}"
    );
}

fn roundtrip_metrics(s: &mut TcpStream, x: &Xmd) -> String {
    s.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes())
        .unwrap();
    read_reply(s, false).text()
}
