//! Issue 28: the event-loop upstream client under generated fault
//! schedules on a loopback fake upstream: a close after any number of
//! kept-alive requests (before or as the next request arrives), a reset
//! mid-body, a stall at the head or in the body, and a stall at connect
//! and at the TLS handshake.
//!
//! The oracle of each call is what the fake itself witnessed, judged by
//! RFC 9112 §9.3.1: a request that failed on a connection that had carried
//! an earlier request, before any byte of the response, is retried once on
//! a fresh connection (a GET is idempotent), and only then. So a call
//! succeeds when the last request it made was answered, and fails with
//! the cause the fault implies otherwise (`fxtwitter_network` for a close
//! or a reset, `upstream_timeout` for a stall), within `--call-timeout` +
//! 1 s. After the schedule, `/metrics` shows no parked call, no request
//! in flight, and no upstream connection once the fake has closed its own.

mod common;
mod util;

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use util::*;

const POST_ID: &str = "2087208847298015232";

/// What the fake does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Answers 200 and keeps the connection.
    Answer,
    /// Answers 200, then closes the connection (idle, no `Connection:
    /// close`).
    AnswerThenClose,
    /// Reads the request and closes the connection without a byte.
    CloseOnRequest,
    /// Sends the head and half the body, then resets the connection.
    ResetMidBody,
    /// Reads the request and sends nothing.
    StallHead,
    /// Sends the head and half the body, then nothing.
    StallBody,
    /// Sends a chunked head and a chunk-size line that never ends (`1;`
    /// and an endless extension) until the client closes.
    EndlessChunkLine,
}

/// One request the fake received.
#[derive(Debug, Clone)]
struct Seen {
    /// Requests the connection carried before this one.
    nth_on_conn: usize,
    fault: Fault,
}

type Held = Arc<Mutex<std::collections::HashMap<usize, TcpStream>>>;

/// Forgets a connection's handle when its server ends, before the
/// connection itself closes (so a close or a reset is the connection's).
struct Unhold(Held, usize);

impl Drop for Unhold {
    fn drop(&mut self) {
        self.0.lock().unwrap().remove(&self.1);
    }
}

struct Faulty {
    addr: SocketAddr,
    plan: Arc<Mutex<VecDeque<Fault>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Connections open on the fake's side.
    open: Arc<AtomicUsize>,
    /// A handle on each open connection (to close them all), by number.
    held: Held,
    stop: Arc<AtomicBool>,
}

fn body() -> Vec<u8> {
    common::fake_upstream::fixture("status-plain.json").into_bytes()
}

impl Faulty {
    fn start() -> Faulty {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let f = Faulty {
            addr,
            plan: Arc::default(),
            seen: Arc::default(),
            open: Arc::default(),
            held: Arc::default(),
            stop: Arc::default(),
        };
        let held = f.held.clone();
        let (plan, seen, open, stop) = (
            f.plan.clone(),
            f.seen.clone(),
            f.open.clone(),
            f.stop.clone(),
        );
        thread::spawn(move || {
            let mut n = 0;
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (plan, seen, open, stop) =
                    (plan.clone(), seen.clone(), open.clone(), stop.clone());
                open.fetch_add(1, Ordering::SeqCst);
                n += 1;
                if let Ok(c) = conn.try_clone() {
                    held.lock().unwrap().insert(n, c);
                }
                let unhold = Unhold(held.clone(), n);
                thread::spawn(move || {
                    serve(conn, &plan, &seen, &stop, unhold);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        f
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes every connection the fake holds (as an upstream that
    /// restarts does).
    fn close_all(&self) {
        for (_, c) in self.held.lock().unwrap().drain() {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for Faulty {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// Reads one request head; false at the end of the connection.
fn read_head(conn: &mut TcpStream) -> bool {
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut b) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&b[..n]),
        }
    }
    true
}

/// Waits until the peer closes (or the fake stops).
fn until_closed(conn: &mut TcpStream, stop: &AtomicBool) {
    let _ = conn.set_read_timeout(Some(Duration::from_millis(100)));
    let mut b = [0u8; 1024];
    while !stop.load(Ordering::SeqCst) {
        match conn.read(&mut b) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

fn serve(
    mut conn: TcpStream,
    plan: &Mutex<VecDeque<Fault>>,
    seen: &Mutex<Vec<Seen>>,
    stop: &AtomicBool,
    unhold: Unhold,
) {
    // Dropped before `conn` (locals before arguments).
    let _unhold = unhold;
    let body = body();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut nth = 0;
    loop {
        if !read_head(&mut conn) {
            return;
        }
        let fault = plan.lock().unwrap().pop_front().unwrap_or(Fault::Answer);
        seen.lock().unwrap().push(Seen {
            nth_on_conn: nth,
            fault,
        });
        nth += 1;
        match fault {
            Fault::Answer | Fault::AnswerThenClose => {
                let mut out = head.clone().into_bytes();
                out.extend_from_slice(&body);
                if conn.write_all(&out).is_err() {
                    return;
                }
                if fault == Fault::AnswerThenClose {
                    return;
                }
            }
            Fault::CloseOnRequest => return,
            Fault::ResetMidBody => {
                let mut out = head.clone().into_bytes();
                out.extend_from_slice(&body[..body.len() / 2]);
                let _ = conn.write_all(&out);
                thread::sleep(Duration::from_millis(20));
                let _ = socket2::SockRef::from(&conn).set_linger(Some(Duration::ZERO));
                return;
            }
            Fault::StallHead => {
                until_closed(&mut conn, stop);
                return;
            }
            Fault::StallBody => {
                let mut out = head.clone().into_bytes();
                out.extend_from_slice(&body[..body.len() / 2]);
                let _ = conn.write_all(&out);
                until_closed(&mut conn, stop);
                return;
            }
            Fault::EndlessChunkLine => {
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                            Transfer-Encoding: chunked\r\n\r\n1;";
                if conn.write_all(head.as_bytes()).is_err() {
                    return;
                }
                // 16 MiB at most: xmd closes a few pieces past its cap.
                let filler = [b'e'; 16 * 1024];
                for _ in 0..1024 {
                    if stop.load(Ordering::SeqCst) || conn.write_all(&filler).is_err() {
                        return;
                    }
                }
                until_closed(&mut conn, stop);
                return;
            }
        }
    }
}

fn call(x: &Xmd) -> (serde_json::Value, Duration) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{POST_ID}","handle":"demo_author","thread":"off"}}}}}}"#
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
    let (r, took) = timed(|| roundtrip(x, &raw));
    assert_eq!(r.status, 200, "{}", r.text());
    (r.json(), took)
}

fn metric(x: &Xmd, name: &str) -> f64 {
    let r = roundtrip(
        x,
        format!(
            "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            x.host()
        )
        .as_bytes(),
    );
    let text = r.text();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

/// Polls `f` until it holds or `wait` passes.
fn eventually(wait: Duration, f: impl Fn() -> bool) -> bool {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if f() {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    f()
}

const CALL_TIMEOUT_S: u64 = 3;
const UPSTREAM_TIMEOUT_S: u64 = 1;

fn server(up: &Faulty) -> Xmd {
    let base = up.base();
    Xmd::start(&[
        "--upstream-io",
        "loop",
        "--upstream",
        &base,
        "--cache-bytes",
        "0",
        "--call-timeout",
        &CALL_TIMEOUT_S.to_string(),
        "--upstream-timeout",
        &UPSTREAM_TIMEOUT_S.to_string(),
        "--log-format",
        "off",
    ])
}

/// What the call must have ended with, from the requests the fake saw for
/// it: the last one decides, and a retry happened exactly where RFC 9112
/// §9.3.1 allows one.
fn judge(requests: &[Seen]) -> Result<Option<&'static str>, String> {
    let Some(last) = requests.last() else {
        return Err("the call made no upstream request".into());
    };
    let first = &requests[0];
    match requests.len() {
        1 if first.fault == Fault::CloseOnRequest && first.nth_on_conn > 0 => {
            return Err(format!(
                "a stale kept-alive connection was not retried: {requests:?}"
            ));
        }
        1 => {}
        // A retry: only after a close (or a reset whose bytes the client
        // may not have read) on a reused connection, once, on a fresh one.
        2 if first.nth_on_conn > 0
            && matches!(first.fault, Fault::CloseOnRequest | Fault::ResetMidBody)
            && last.nth_on_conn == 0 => {}
        _ => return Err(format!("a retry the rule does not allow: {requests:?}")),
    }
    Ok(match last.fault {
        Fault::Answer | Fault::AnswerThenClose => None,
        Fault::CloseOnRequest | Fault::ResetMidBody | Fault::EndlessChunkLine => {
            Some("fxtwitter_network")
        }
        Fault::StallHead | Fault::StallBody => Some("upstream_timeout"),
    })
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        6 => Just(Fault::Answer),
        3 => Just(Fault::AnswerThenClose),
        3 => Just(Fault::CloseOnRequest),
        1 => Just(Fault::ResetMidBody),
        1 => Just(Fault::StallHead),
        1 => Just(Fault::StallBody),
        1 => Just(Fault::EndlessChunkLine),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(12),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every schedule: each call succeeds or fails with the cause its last
    /// request implies, within --call-timeout + 1 s; a kept-alive
    /// connection closed under a request is retried once, fresh; nothing
    /// leaks.
    #[test]
    fn every_call_ends_as_its_schedule_implies(plan in prop::collection::vec(fault(), 1..10)) {
        let up = Faulty::start();
        let x = server(&up);
        up.plan.lock().unwrap().extend(plan.iter().copied());
        let mut calls = 0;
        while !up.plan.lock().unwrap().is_empty() && calls < 2 * plan.len() {
            let before = up.seen.lock().unwrap().len();
            let (v, took) = call(&x);
            calls += 1;
            let requests: Vec<Seen> = up.seen.lock().unwrap()[before..].to_vec();
            let expected = judge(&requests).map_err(|e| TestCaseError::fail(format!("{e}; the call gave {v}")))?;
            let got = tool_error_code(&v);
            prop_assert_eq!(got.as_deref(), expected, "{:?} {:?}", requests, v);
            prop_assert!(took < Duration::from_secs(CALL_TIMEOUT_S + 1), "{:?} took {:?}", requests, took);
        }
        prop_assert!(up.plan.lock().unwrap().is_empty(), "the schedule was not used up");
        prop_assert_eq!(metric(&x, "xmd_parked_calls"), 0.0);
        prop_assert_eq!(metric(&x, "xmd_upstream_in_flight"), 0.0);
        // The fake closes every connection it holds: xmd's pool follows.
        up.close_all();
        prop_assert!(eventually(Duration::from_secs(3), || up.open.load(Ordering::SeqCst) == 0));
        prop_assert!(eventually(Duration::from_secs(3), || metric(&x, "xmd_upstream_connections") == 0.0));
        // And the next call finds a fresh connection.
        let (v, _) = call(&x);
        prop_assert_eq!(tool_error_code(&v), None);
    }
}

/// `--call-timeout` cuts a request in flight: an upstream that never
/// answers (with a longer `--upstream-timeout`) gives the `deadline` error
/// at the call's deadline, and the upstream connection is closed then.
#[test]
fn the_call_deadline_cuts_the_request_in_flight() {
    let up = Faulty::start();
    up.plan.lock().unwrap().push_back(Fault::StallHead);
    let base = up.base();
    let x = Xmd::start(&[
        "--upstream-io",
        "loop",
        "--upstream",
        &base,
        "--call-timeout",
        "2",
        "--upstream-timeout",
        "30",
    ]);
    let (v, took) = call(&x);
    assert_eq!(tool_error_code(&v).as_deref(), Some("deadline"), "{v}");
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(eventually(Duration::from_millis(1500), || up
        .open
        .load(Ordering::SeqCst)
        == 0));
    assert_eq!(metric(&x, "xmd_upstream_in_flight"), 0.0);
    assert_eq!(metric(&x, "xmd_upstream_connections"), 0.0);
}

/// A client that leaves cancels its call's upstream request: the fake sees
/// its connection closed within the loop's sweep (1 s).
#[test]
fn a_client_that_leaves_cuts_the_request_in_flight() {
    let up = Faulty::start();
    up.plan.lock().unwrap().push_back(Fault::StallHead);
    let base = up.base();
    let x = Xmd::start(&[
        "--upstream-io",
        "loop",
        "--upstream",
        &base,
        "--call-timeout",
        "30",
        "--upstream-timeout",
        "30",
    ]);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{POST_ID}","handle":"demo_author","thread":"off"}}}}}}"#
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
    let mut c = x.connect();
    c.write_all(&raw).unwrap();
    assert!(eventually(Duration::from_secs(3), || up
        .open
        .load(Ordering::SeqCst)
        == 1));
    drop(c);
    assert!(eventually(Duration::from_millis(2500), || up
        .open
        .load(Ordering::SeqCst)
        == 0));
    assert!(eventually(Duration::from_secs(2), || metric(
        &x,
        "xmd_parked_calls"
    ) == 0.0));
    assert_eq!(metric(&x, "xmd_upstream_in_flight"), 0.0);
}

/// A stall at connect (a listener whose backlog is full: the handshake
/// never completes) and at the TLS handshake (a peer that reads the
/// ClientHello and answers nothing) both end as `upstream_timeout` within
/// `--upstream-timeout` + 1 s.
#[test]
fn stalls_at_connect_and_at_the_tls_handshake_time_out() {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.listen(0).unwrap();
    let full: SocketAddr = s.local_addr().unwrap().as_socket().unwrap();
    // Fill the backlog (never accepted).
    let _held: Vec<_> = (0..4)
        .filter_map(|_| {
            let c = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
            c.set_nonblocking(true).ok()?;
            let _ = c.connect(&full.into());
            Some(c)
        })
        .collect();
    thread::sleep(Duration::from_millis(100));
    let silent = Faulty::start();
    silent.plan.lock().unwrap().extend([Fault::StallHead; 4]);
    for base in [format!("http://{full}"), format!("https://{}", silent.addr)] {
        let x = Xmd::start(&[
            "--upstream-io",
            "loop",
            "--upstream",
            &base,
            "--call-timeout",
            "10",
            "--upstream-timeout",
            "1",
        ]);
        let (v, took) = call(&x);
        assert_eq!(
            tool_error_code(&v).as_deref(),
            Some("upstream_timeout"),
            "{base}: {v}"
        );
        assert!(took < Duration::from_secs(2), "{base}: {took:?}");
        assert_eq!(metric(&x, "xmd_upstream_in_flight"), 0.0);
    }
}

/// Unix seconds `t` as (year, month 1..=12, day, hour, minute, second,
/// weekday with Sunday 0), by Howard Hinnant's `civil_from_days`.
fn civil(t: i64) -> (i64, i64, i64, i64, i64, i64, usize) {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let wd = (days + 4).rem_euclid(7) as usize;
    (y, m, d, secs / 3600, secs % 3600 / 60, secs % 60, wd)
}

/// A wait of `secs` seconds as each `Retry-After` form RFC 9110 allows
/// (§10.2.3: delay-seconds or an HTTP-date; §5.6.7: IMF-fixdate, RFC 850,
/// asctime).
fn retry_after_forms(secs: i64) -> [String; 4] {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const LONG: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let (y, m, d, h, mi, s, wd) = civil(now + secs);
    let mon = MONTHS[(m - 1) as usize];
    [
        secs.to_string(),
        format!(
            "{}, {d:02} {mon} {y:04} {h:02}:{mi:02}:{s:02} GMT",
            DAYS[wd]
        ),
        format!(
            "{}, {d:02}-{mon}-{:02} {h:02}:{mi:02}:{s:02} GMT",
            LONG[wd],
            y % 100
        ),
        format!("{} {mon} {d:>2} {h:02}:{mi:02}:{s:02} {y:04}", DAYS[wd]),
    ]
}

/// Through the event loops: a 429 whose `Retry-After` is 40 s in any form
/// cools the base for those 40 s; the call names 38 to 40 s, and the next
/// one is refused before any request with as much left.
#[test]
fn a_429_cools_the_loop_upstream_for_its_retry_after_in_every_form() {
    assert_eq!(civil(784_111_777), (1994, 11, 6, 8, 49, 37, 0));
    for form in retry_after_forms(40) {
        let fake = common::fake_upstream::FakeUpstream::start();
        fake.on(
            &format!("/2/status/{POST_ID}"),
            common::fake_upstream::Answer::json(429, "{}").header("Retry-After", &form),
        );
        let base = fake.base_url();
        let x = Xmd::start(&[
            "--upstream-io",
            "loop",
            "--upstream",
            &base,
            "--log-format",
            "off",
        ]);
        let secs = |v: &serde_json::Value| -> u64 {
            let t = v["result"]["content"][0]["text"].as_str().unwrap();
            t.rsplit("retry after ")
                .next()
                .unwrap()
                .trim_end_matches("s)")
                .parse()
                .unwrap()
        };
        let (v, _) = call(&x);
        assert_eq!(
            tool_error_code(&v).as_deref(),
            Some("upstream_rate_limited"),
            "{form}: {v}"
        );
        assert!((38..=40).contains(&secs(&v)), "{form}: {v}");
        let (v, _) = call(&x);
        assert_eq!(
            tool_error_code(&v).as_deref(),
            Some("upstream_rate_limited"),
            "{form}: {v}"
        );
        assert!((37..=40).contains(&secs(&v)), "{form}: {v}");
        assert_eq!(
            fake.request_count(),
            1,
            "{form}: nothing sent during the cool-down"
        );
    }
}
