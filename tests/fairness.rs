//! Issue 32 item 4, on the wire: a few addresses cannot starve another.
//! The real binary, and clients bound to distinct loopback addresses (on
//! Linux all of 127.0.0.0/8 is local), so the server sees distinct peers:
//!
//! - 40 addresses fill `--max-connections` with idle connections (each up
//!   to `--max-connections-per-ip`) and reopen every one the server closes;
//! - 4 addresses flood upstream-costing `tools/call`s (distinct posts, no
//!   cache) against a slow loopback upstream;
//! - 4 addresses hold request bodies of `--max-body-bytes` (head sent, body
//!   never finished), as many as the server takes;
//!
//! and meanwhile one more address, on a fresh connection per call: every
//! `tools/list` is answered, p99 at most 50 ms; every upstream-costing call
//! is served (not refused for the budget); every body over 16 KiB is read.
//! Before the fix its connections were refused (`503`: 146 of 146), its
//! upstream calls refused (1 of 12 served) and its bodies refused (`503`).

mod common;
mod util;

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::fake_upstream::{Answer, FakeUpstream};
use util::*;

const IDLE_ADDRESSES: u8 = 40;
const PER_IP: usize = 25;
const MAX_CONNECTIONS: usize = IDLE_ADDRESSES as usize * PER_IP;
const UPSTREAM_DELAY: Duration = Duration::from_millis(200);

/// A connection from `127.0.<net>.<host>` to `server`.
fn connect_from(net: u8, host: u8, server: SocketAddr) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let local = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, net, host)), 0);
    s.bind(&local.into())?;
    s.connect(&server.into())?;
    let s: TcpStream = s.into();
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(s)
}

/// Reads one response: its status and body; an error when the stream
/// ends or fails first.
fn read_response(s: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head
        .get(9..12)
        .and_then(|v| v.parse().ok())
        .ok_or(std::io::ErrorKind::InvalidData)?;
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body)?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

const HEADERS: [&str; 3] = [
    "Content-Type: application/json",
    "Accept: application/json",
    "MCP-Protocol-Version: 2025-11-25",
];

fn list(host: &str) -> Vec<u8> {
    post(
        host,
        &HEADERS,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
}

fn get_post(host: &str, n: u64) -> Vec<u8> {
    post(
        host,
        &HEADERS,
        &format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"handle":"demo_author","id":"{}","thread":"off"}}}}}}"#,
            1_000_000 + n
        ),
    )
}

/// The outcome of a `tools/call` reply body.
fn outcome(body: &str) -> &'static str {
    if body.contains("code upstream_budget") {
        "upstream_budget"
    } else if body.contains("code rate_limited") {
        "rate_limited"
    } else if body.contains(r#""isError":true"#) {
        "other_error"
    } else {
        "served"
    }
}

#[derive(Default)]
struct Counts {
    idle_opened: AtomicUsize,
    idle_reopened: AtomicUsize,
    flood_served: AtomicUsize,
    flood_budget: AtomicUsize,
    bodies_held: AtomicUsize,
    bodies_refused: AtomicUsize,
}

/// 40 addresses hold `PER_IP` idle connections each and reopen every one
/// the server closes, until `stop`.
fn idle_holders(server: SocketAddr, stop: Arc<AtomicBool>, counts: Arc<Counts>) {
    let mut held: Vec<(u8, Option<TcpStream>)> = (1..=IDLE_ADDRESSES)
        .flat_map(|a| (0..PER_IP).map(move |_| (a, None)))
        .collect();
    while !stop.load(Ordering::Relaxed) {
        for (address, slot) in held.iter_mut() {
            let closed = slot.as_ref().is_none_or(|s| {
                s.set_nonblocking(true).unwrap();
                let mut b = [0u8; 64];
                let gone =
                    !matches!(s.peek(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
                s.set_nonblocking(false).unwrap();
                gone
            });
            if closed {
                if slot.is_some() {
                    counts.idle_reopened.fetch_add(1, Ordering::Relaxed);
                }
                *slot = connect_from(1, *address, server).ok();
                if slot.is_some() {
                    counts.idle_opened.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// One flooding connection of address `127.0.2.<address>`: upstream calls
/// for distinct posts back to back (a short pause after each answer),
/// reconnecting when the server closes it, until `stop`.
fn flooder(server: SocketAddr, address: u8, seed: u64, stop: Arc<AtomicBool>, counts: Arc<Counts>) {
    let host = server.to_string();
    let mut conn: Option<TcpStream> = None;
    let mut n = seed;
    while !stop.load(Ordering::Relaxed) {
        let Some(s) = conn.as_mut() else {
            conn = connect_from(2, address, server).ok();
            continue;
        };
        n += 1;
        let answered = s
            .write_all(&get_post(&host, n))
            .and_then(|()| read_response(s));
        match answered {
            Ok((200, body)) => match outcome(&body) {
                "served" => counts.flood_served.fetch_add(1, Ordering::Relaxed),
                "upstream_budget" => counts.flood_budget.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            },
            _ => {
                conn = None;
                0
            }
        };
        thread::sleep(Duration::from_millis(30));
    }
}

/// Address `127.0.3.<address>` sends heads announcing bodies of `body`
/// bytes and one byte of each, keeping every connection the server does
/// not refuse, up to 30; returns them (held until dropped).
fn body_holder(server: SocketAddr, address: u8, body: usize, counts: &Counts) -> Vec<TcpStream> {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {body}\r\n\r\n "
    );
    let mut held = Vec::new();
    for _ in 0..30 {
        let Ok(mut s) = connect_from(3, address, server) else {
            continue;
        };
        if s.write_all(head.as_bytes()).is_err() {
            continue;
        }
        s.set_read_timeout(Some(Duration::from_millis(150)))
            .unwrap();
        match read_response(&mut s) {
            Ok((503, _)) => {
                counts.bodies_refused.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) | Err(_) if s.peek(&mut [0u8; 1]).is_ok_and(|n| n == 0) => {}
            _ => {
                counts.bodies_held.fetch_add(1, Ordering::Relaxed);
                held.push(s);
            }
        }
    }
    held
}

fn metric(x: &Xmd, name: &str) -> f64 {
    let mut s = connect_from(9, 9, x.addr).unwrap();
    s.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n\r\n", x.host()).as_bytes())
        .unwrap();
    let (status, text) = read_response(&mut s).unwrap();
    assert_eq!(status, 200);
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn a_few_addresses_cannot_starve_another() {
    let up = FakeUpstream::start();
    up.handler(|target| {
        target
            .starts_with("/2/status/")
            .then(|| Answer::fixture(200, "status-plain.json").delay(UPSTREAM_DELAY))
    });
    let max_connections = MAX_CONNECTIONS.to_string();
    let per_ip = PER_IP.to_string();
    let x = Xmd::start(&[
        "--upstream",
        &up.base_url(),
        "--cache-bytes",
        "0",
        "--max-connections",
        &max_connections,
        "--max-connections-per-ip",
        &per_ip,
        "--log-format",
        "off",
    ]);
    let server = x.addr;
    let host = x.host();
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let mut attackers = Vec::new();
    {
        let (stop, counts) = (stop.clone(), counts.clone());
        attackers.push(thread::spawn(move || idle_holders(server, stop, counts)));
    }
    // The idle connections fill the server first.
    let filled = Instant::now();
    while counts.idle_opened.load(Ordering::Relaxed) < MAX_CONNECTIONS {
        assert!(filled.elapsed() < Duration::from_secs(20), "never filled");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(200));
    for address in 1..=4u8 {
        for c in 0..4u64 {
            let (stop, counts) = (stop.clone(), counts.clone());
            let seed = (u64::from(address) * 10 + c) * 1_000_000;
            attackers.push(thread::spawn(move || {
                flooder(server, address, seed, stop, counts)
            }));
        }
    }
    let held: Vec<Vec<TcpStream>> = (1..=4u8)
        .map(|a| body_holder(server, a, 1024 * 1024, &counts))
        .collect();
    // Let the flood run into the budget.
    thread::sleep(Duration::from_secs(2));

    // The other address: tools/list on a fresh connection each time.
    let mut took = Vec::new();
    for i in 0..200 {
        let started = Instant::now();
        let mut s = connect_from(4, 1, server).unwrap();
        s.write_all(&list(&host)).unwrap();
        let (status, body) = read_response(&mut s).unwrap_or_else(|e| panic!("list {i}: {e}"));
        took.push(started.elapsed());
        assert_eq!(status, 200, "list {i}: {body}");
        assert!(body.contains("x_md_get_post"), "list {i}: {body}");
    }
    // Its upstream-costing calls, 2 a second (its fair share is 15 / 5).
    let mut outcomes = Vec::new();
    for n in 0..12u64 {
        let mut s = connect_from(4, 1, server).unwrap();
        s.write_all(&get_post(&host, 900 + n)).unwrap();
        let (status, body) = read_response(&mut s).unwrap();
        assert_eq!(status, 200, "{body}");
        outcomes.push(outcome(&body));
        thread::sleep(Duration::from_millis(500).saturating_sub(UPSTREAM_DELAY));
    }
    // Its bodies over 16 KiB (100 KiB of padding after a tools/list).
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}}{}",
        " ".repeat(100 * 1024)
    );
    let mut big_statuses = Vec::new();
    for _ in 0..3 {
        let mut s = connect_from(4, 1, server).unwrap();
        s.write_all(&post(&host, &HEADERS, &big)).unwrap();
        big_statuses.push(read_response(&mut s).unwrap().0);
    }
    let open = metric(&x, "xmd_open_connections");
    let closed_idle = metric(&x, "xmd_idle_connections_closed_total");
    stop.store(true, Ordering::Relaxed);
    for t in attackers {
        t.join().unwrap();
    }
    drop(held);

    took.sort();
    let p99 = took[took.len() * 99 / 100 - 1];
    let c = |a: &AtomicUsize| a.load(Ordering::Relaxed);
    let report = format!(
        "p50 {:?} p99 {p99:?} max {:?}; open {open}, idle closed {closed_idle}, idle reopened {}; \
         flood served {} refused for the budget {}; bodies held {} refused {}; victim calls {outcomes:?}",
        took[took.len() / 2],
        took[took.len() - 1],
        c(&counts.idle_reopened),
        c(&counts.flood_served),
        c(&counts.flood_budget),
        c(&counts.bodies_held),
        c(&counts.bodies_refused),
    );
    eprintln!("{report}");
    // The attack was on: the server was full of idle connections that
    // kept coming back, the flood ran past the upstream budget, and the
    // bodies past their addresses' shares.
    // (Within a few of the cap: connections the server closed are
    // reopened every 100 ms.)
    assert!(open >= (MAX_CONNECTIONS - 50) as f64, "{report}");
    assert!(closed_idle >= 200.0, "{report}");
    assert!(c(&counts.flood_budget) > 0, "{report}");
    assert!(
        c(&counts.bodies_refused) > 0 && c(&counts.bodies_held) >= 40,
        "{report}"
    );
    // And the other address was served throughout.
    assert!(p99 <= Duration::from_millis(50), "{report}");
    assert_eq!(outcomes, vec!["served"; 12], "{report}");
    assert_eq!(big_statuses, vec![200; 3], "{report}");
}

/// Whether an answer (or the end of the stream) is waiting on `s`.
fn answered(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let waiting =
        !matches!(s.peek(&mut [0u8; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    s.set_nonblocking(false).unwrap();
    waiting
}

/// An address's share of the memory budget shrinks as more addresses hold
/// some: one that took a quarter while alone gives back what is over its
/// share now as soon as a new address takes a body (one of its bodies is
/// refused with 503), and keeps the rest. Before, its quarter stayed for as
/// long as it kept its bodies coming (up to --body-timeout each), and then
/// until the next once-a-second sweep.
#[test]
fn an_address_over_its_share_gives_bodies_back_when_a_new_address_comes() {
    let x = Xmd::start(&[
        "--event-loops",
        "1",
        "--max-buffered-bytes",
        "4194304",
        "--max-body-bytes",
        "262144",
    ]);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: 262144\r\n\r\n ",
        x.host()
    );
    let hold = |host: u8| {
        let mut s = connect_from(5, host, x.addr).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        thread::sleep(Duration::from_millis(50));
        s
    };
    // Alone, 127.0.5.1 holds its quarter (1 MiB, 4 bodies); the rest is
    // refused.
    let first: Vec<TcpStream> = (0..8).map(|_| hold(1)).collect();
    let refused = first.iter().filter(|s| answered(s)).count();
    assert_eq!(refused, 4);
    let first: Vec<TcpStream> = first.into_iter().filter(|s| !answered(s)).collect();
    // Three more addresses take one body each: with 4 holding, a share is
    // 4 MiB / 5 (819 KiB), and the first holds 1 MiB.
    // (Each `hold` waits 50 ms: the refusal is written by then, well
    // before a sweep, which comes once a second.)
    let others: Vec<TcpStream> = (2..=4).map(hold).collect();
    let mut shed = Vec::new();
    for (i, s) in first.iter().enumerate() {
        if answered(s) {
            shed.push(i);
        }
    }
    assert_eq!(shed.len(), 1, "{shed:?}");
    let mut gone = first.into_iter().nth(shed[0]).unwrap();
    gone.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let (status, body) = read_response(&mut gone).unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("memory budget"), "{body}");
    assert!(
        others.iter().all(|s| !answered(s)),
        "the others keep theirs"
    );
}

/// The largest body of [`a_burst_of_new_addresses_never_holds_a_victims_share`]
/// (`--max-body-bytes`), and the budget (`--max-buffered-bytes`): 64 such
/// bodies.
const BURST_BODY: usize = 64 * 1024;
const BURST_BUDGET: usize = 64 * BURST_BODY;
/// The other address's calls after each burst.
const VICTIM_CALLS_PER_BURST: usize = 10;

/// Address `127.0.<net>.<host>` opens `conns` connections at once, each
/// announcing a body of [`BURST_BODY`] and sending one byte of it; returns
/// them (held until dropped).
fn burst_holder(server: SocketAddr, net: u8, host: u8, conns: usize) -> Vec<TcpStream> {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {BURST_BODY}\r\n\r\n "
    );
    (0..conns)
        .filter_map(|_| {
            let mut s = connect_from(net, host, server).ok()?;
            s.write_all(head.as_bytes()).ok()?;
            Some(s)
        })
        .collect()
}

/// Issue 32 item 4, the class behind "15 new addresses within a second
/// fill the body budget until the next sweep": shares are recomputed when
/// an address comes to hold a body, so no burst of new addresses holds
/// more than its share at any instant. Generated bursts: `k` (1 to 40)
/// addresses never seen, each opening 1 to 20 connections at once that
/// announce a body of the largest size and hold it; right after the burst
/// (within the second, before any sweep), another address sends 10 bodies
/// over 16 KiB (40 KiB each), each on a fresh connection: every one is
/// read and answered `200`, p99 at most 50 ms over all bursts. (On the
/// sweep-only shares its bodies got `503` after bursts of 8 or more.)
#[test]
fn a_burst_of_new_addresses_never_holds_a_victims_share() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let budget = BURST_BUDGET.to_string();
    let body = BURST_BODY.to_string();
    let x = Xmd::start(&[
        "--max-buffered-bytes",
        &budget,
        "--max-body-bytes",
        &body,
        "--log-format",
        "off",
    ]);
    let server = x.addr;
    let host = x.host();
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}}{}",
        " ".repeat(40 * 1024)
    );
    let call = post(&host, &HEADERS, &big);
    let net = std::cell::Cell::new(10u8);
    let took = std::cell::RefCell::new(Vec::new());
    let held_before = std::cell::RefCell::new(Vec::new());
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(12u32)
        .min(200);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    // The largest burst first, then generated ones.
    let bursts = prop_oneof![
        1 => Just(vec![20usize; 40]),
        4 => proptest::collection::vec(1usize..=20, 1..=40),
    ];
    runner
        .run(&bursts, |conns| {
            // Addresses never seen: a new /24 of 127/8 per burst.
            let n = net.get();
            net.set(if n == 250 { 10 } else { n + 1 });
            let held: Vec<Vec<TcpStream>> = thread::scope(|s| {
                let hs: Vec<_> = conns
                    .iter()
                    .enumerate()
                    .map(|(a, &c)| s.spawn(move || burst_holder(server, n, a as u8 + 1, c)))
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            // Bodies the server took (no answer yet) once the burst is in.
            thread::sleep(Duration::from_millis(20));
            let holding = held.iter().flatten().filter(|s| !answered(s)).count();
            held_before.borrow_mut().push((conns.len(), holding));
            for i in 0..VICTIM_CALLS_PER_BURST {
                let started = Instant::now();
                let mut s = connect_from(4, 2, server).unwrap();
                s.write_all(&call).unwrap();
                let (status, reply) = read_response(&mut s)
                    .unwrap_or_else(|e| panic!("burst of {}: call {i}: {e}", conns.len()));
                took.borrow_mut().push(started.elapsed());
                prop_assert_eq!(
                    status,
                    200,
                    "burst of {} addresses ({} bodies held): call {}: {}",
                    conns.len(),
                    holding,
                    i,
                    reply
                );
                prop_assert!(reply.contains("x_md_get_post"), "{}", reply);
            }
            drop(held);
            // Let the server see the burst's connections close.
            thread::sleep(Duration::from_millis(100));
            Ok(())
        })
        .unwrap();
    let mut took = took.into_inner();
    took.sort();
    let p99 = took[took.len() * 99 / 100 - 1];
    let held_before = held_before.into_inner();
    eprintln!(
        "{} bursts (addresses, bodies held before the victim): {held_before:?}; victim calls {}: p50 {:?} p99 {p99:?} max {:?}",
        held_before.len(),
        took.len(),
        took[took.len() / 2],
        took[took.len() - 1]
    );
    // Every burst held bodies, each of its addresses at least one (its
    // share is at least the largest body), however many came at once.
    for &(addresses, holding) in &held_before {
        assert!(holding >= addresses, "{held_before:?}");
    }
    assert!(p99 <= Duration::from_millis(50), "p99 {p99:?}");
}
