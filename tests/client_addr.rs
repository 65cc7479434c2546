//! The client address behind trusted reverse proxies (`--trusted-proxies`):
//! the class "no header value sent by an untrusted peer, and no part of a
//! header a client could have written, changes the address", proved with
//! generated headers judged by a reference walk over the generated hops
//! (and, for `Forwarded`, values generated from RFC 7239's grammar); then
//! the real binary, whose rate limit and access log use that address.

mod common;
mod util;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::Value;
use util::*;
use xmd::config::proxies::{ProxyHeader, TrustedProxies};

/// Trusted in every generated case: 10.0.0.0/8, 2001:db8:aaaa::/48 and
/// 127.0.0.1.
const TRUSTED: &str = "10.0.0.0/8, 2001:db8:aaaa::/48, 127.0.0.1";

/// One hop of a generated chain, with whether it is trusted (known by
/// construction, not asked of the code under test).
#[derive(Debug, Clone)]
struct Hop {
    ip: IpAddr,
    trusted: bool,
}

fn trusted_hop() -> impl Strategy<Value = Hop> {
    prop_oneof![
        any::<[u8; 3]>().prop_map(|b| IpAddr::V4(Ipv4Addr::new(10, b[0], b[1], b[2]))),
        any::<u128>().prop_map(|r| {
            let prefix: u128 = 0x2001_0db8_aaaa << 80;
            IpAddr::V6(Ipv6Addr::from(prefix | (r >> 48)))
        }),
        Just(IpAddr::V4(Ipv4Addr::LOCALHOST)),
    ]
    .prop_map(|ip| Hop { ip, trusted: true })
}

fn untrusted_hop() -> impl Strategy<Value = Hop> {
    prop_oneof![
        any::<u32>()
            .prop_map(Ipv4Addr::from)
            .prop_filter("outside the trusted v4 ranges", |a| {
                a.octets()[0] != 10 && *a != Ipv4Addr::LOCALHOST
            })
            .prop_map(IpAddr::V4),
        any::<u128>()
            .prop_map(Ipv6Addr::from)
            .prop_filter("a v6 address outside the trusted /48", |a| {
                let s = a.segments();
                !(s[0] == 0x2001 && s[1] == 0x0db8 && s[2] == 0xaaaa)
                    && a.to_ipv4_mapped().is_none()
            })
            .prop_map(IpAddr::V6),
    ]
    .prop_map(|ip| Hop { ip, trusted: false })
}

fn hop() -> impl Strategy<Value = Hop> {
    prop_oneof![trusted_hop(), untrusted_hop()]
}

/// The reference rule, written from the definition: walk from the right,
/// skip trusted hops, the first untrusted one is the client; all trusted:
/// the leftmost; no hops: the peer.
fn reference(peer: IpAddr, hops: &[Hop]) -> IpAddr {
    match hops.iter().rev().find(|h| !h.trusted) {
        Some(h) => h.ip,
        None => hops.first().map_or(peer, |h| h.ip),
    }
}

/// How an address is written in `X-Forwarded-For`: bare, with a port, or
/// bracketed (IPv6), with random optional whitespace around it.
fn xff_text(ip: IpAddr, form: u8, port: u16, ows: (u8, u8)) -> String {
    let sp = |n: u8| [" ", "", "\t", "  "][usize::from(n % 4)];
    let core = match (ip, form % 3) {
        (IpAddr::V4(a), 1) => format!("{a}:{port}"),
        (IpAddr::V6(a), 1) => format!("[{a}]:{port}"),
        (IpAddr::V6(a), 2) => format!("[{a}]"),
        (ip, _) => ip.to_string(),
    };
    format!("{}{core}{}", sp(ows.0), sp(ows.1))
}

/// A `Forwarded` element (RFC 7239 §4) whose `for` is `ip`: the name in
/// any case, the node as a token (IPv4 only) or a quoted-string
/// (`"[v6]:port"` etc.), and other parameters, whose values may hold
/// commas and semicolons inside quotes, before or after it.
fn forwarded_element(ip: IpAddr, form: u8, port: u16, extras: &[(u8, bool)]) -> String {
    let name = ["for", "For", "FOR", "fOr"][usize::from(form % 4)];
    let node = match (ip, form % 3) {
        (IpAddr::V4(a), 0) => a.to_string(),
        (IpAddr::V4(a), 1) => format!("\"{a}:{port}\""),
        (IpAddr::V4(a), _) => format!("\"{a}\""),
        (IpAddr::V6(a), 1) => format!("\"[{a}]:{port}\""),
        (IpAddr::V6(a), _) => format!("\"[{a}]\""),
    };
    let mut pairs = vec![format!("{name}={node}")];
    for (k, before) in extras {
        let pair = match k % 3 {
            0 => "proto=https".to_string(),
            1 => "by=\"[2001:db8::9]:80\"".to_string(),
            _ => "host=\"a,b;c\\\"d\"".to_string(),
        };
        if *before {
            pairs.insert(0, pair);
        } else {
            pairs.push(pair);
        }
    }
    pairs.join(";")
}

/// Splits `parts` into 1 to 3 field lines (the header repeated), which a
/// recipient must read as one comma-separated list (RFC 9110 §5.3).
fn field_lines(parts: &[String], cuts: (usize, usize)) -> Vec<String> {
    if parts.is_empty() {
        return Vec::new();
    }
    let a = cuts.0 % (parts.len() + 1);
    let b = a + cuts.1 % (parts.len() - a + 1);
    [&parts[..a], &parts[a..b], &parts[b..]]
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| p.join(","))
        .collect()
}

fn client(p: &TrustedProxies, peer: IpAddr, lines: &[String]) -> IpAddr {
    p.client(peer, lines.iter().map(String::as_bytes))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any header bytes at all from an untrusted peer: the peer is the client.
    #[test]
    fn untrusted_peer_headers_never_change_the_address(
        peer in untrusted_hop(),
        values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 0..4),
        chain in proptest::collection::vec(hop(), 0..6),
        forwarded in any::<bool>(),
    ) {
        for header in [ProxyHeader::XForwardedFor, ProxyHeader::Forwarded] {
            let p = TrustedProxies::parse(TRUSTED, header).unwrap();
            let peer = peer.ip;
            prop_assert_eq!(p.client(peer, values.iter().map(Vec::as_slice)), peer);
            // Well-formed headers naming trusted or untrusted hops too.
            let text: Vec<String> = chain.iter().map(|h| if forwarded {
                forwarded_element(h.ip, 0, 1, &[])
            } else {
                h.ip.to_string()
            }).collect();
            prop_assert_eq!(client(&p, peer, &text), peer);
        }
    }

    /// `X-Forwarded-For` from a trusted peer: the rightmost untrusted hop,
    /// whatever the spelling, whitespace and field-line split.
    #[test]
    fn x_forwarded_for_is_rightmost_untrusted(
        peer in trusted_hop(),
        chain in proptest::collection::vec((hop(), any::<u8>(), any::<u16>(), any::<(u8, u8)>()), 0..8),
        cuts in any::<(usize, usize)>(),
    ) {
        let p = TrustedProxies::parse(TRUSTED, ProxyHeader::XForwardedFor).unwrap();
        let hops: Vec<Hop> = chain.iter().map(|c| c.0.clone()).collect();
        let parts: Vec<String> = chain
            .iter()
            .map(|(h, form, port, ows)| xff_text(h.ip, *form, *port, *ows))
            .collect();
        let lines = field_lines(&parts, cuts);
        prop_assert_eq!(client(&p, peer.ip, &lines), reference(peer.ip, &hops), "{:?}", lines);
    }

    /// Whatever a client writes into the header itself, a trusted proxy
    /// appending the client's real address (nginx's
    /// `$proxy_add_x_forwarded_for`) makes that address the client.
    #[test]
    fn a_client_cannot_forge_past_the_proxy(
        forged in "[ -~]{0,60}",
        real in untrusted_hop(),
        inner in proptest::collection::vec(trusted_hop(), 0..3),
        peer in trusted_hop(),
    ) {
        let p = TrustedProxies::parse(TRUSTED, ProxyHeader::XForwardedFor).unwrap();
        let mut parts = vec![forged, real.ip.to_string()];
        parts.extend(inner.iter().map(|h| h.ip.to_string()));
        prop_assert_eq!(client(&p, peer.ip, &[parts.join(", ")]), real.ip);
    }

    /// RFC 7239 `Forwarded` from a trusted peer: elements generated from
    /// the grammar (parameter names in any case, quoted-strings holding
    /// `,` `;` and escaped quotes, IPv6 nodes bracketed with ports).
    #[test]
    fn forwarded_is_rightmost_untrusted(
        peer in trusted_hop(),
        chain in proptest::collection::vec(
            (hop(), any::<u8>(), 1u16.., proptest::collection::vec(any::<(u8, bool)>(), 0..3)),
            0..6,
        ),
        cuts in any::<(usize, usize)>(),
    ) {
        let p = TrustedProxies::parse(TRUSTED, ProxyHeader::Forwarded).unwrap();
        let hops: Vec<Hop> = chain.iter().map(|c| c.0.clone()).collect();
        let parts: Vec<String> = chain
            .iter()
            .map(|(h, form, port, extras)| forwarded_element(h.ip, *form, *port, extras))
            .collect();
        let lines = field_lines(&parts, cuts);
        prop_assert_eq!(client(&p, peer.ip, &lines), reference(peer.ip, &hops), "{:?}", lines);
    }
}

// --- the real binary -----------------------------------------------------------

const POST_ID: &str = "2087208847298015232";
const LIMITED: &str = "Too many tool calls from this address.";

fn call(x: &Xmd, id: u32, forwarded_for: Option<&str>) -> Value {
    let xff = forwarded_for.map(|v| format!("X-Forwarded-For: {v}"));
    let mut headers = vec![
        "Content-Type: application/json",
        "Accept: application/json",
        "MCP-Protocol-Version: 2025-11-25",
    ];
    if let Some(h) = &xff {
        headers.push(h);
    }
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x_md_get_post","arguments":{{"id":"{POST_ID}","handle":"demo_author","thread":"off"}}}}}}"#
    );
    let r = roundtrip(x, &post(&x.host(), &headers, &body));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

fn limited(v: &Value) -> bool {
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    v["result"]["isError"] == true && text.starts_with(LIMITED)
}

fn start(trusted: Option<&str>, up: &FakeUpstream) -> Xmd {
    let base = up.base_url();
    let mut args = vec![
        "--upstream",
        &base,
        "--cache-bytes",
        "0",
        "--rate-limit",
        "1",
        "--rate-burst",
        "2",
    ];
    if let Some(t) = trusted {
        args.extend(["--trusted-proxies", t]);
    }
    Xmd::start(&args)
}

fn upstream() -> FakeUpstream {
    let up = FakeUpstream::start();
    up.handler(|target| {
        target
            .starts_with("/2/status/")
            .then(|| Answer::fixture(200, "status-plain.json"))
    });
    up
}

/// The access-log lines of tool calls, once `n` have been written.
fn call_lines(x: &Xmd, n: usize) -> Vec<String> {
    for _ in 0..200 {
        let lines: Vec<String> = x
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(" POST /mcp "))
            .cloned()
            .collect();
        if lines.len() >= n {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!(
        "fewer than {n} access-log lines: {:?}",
        x.log.lock().unwrap()
    );
}

#[test]
fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket_and_log_address() {
    let up = upstream();
    // The test's own connections come from 127.0.0.1: the trusted proxy.
    let x = start(Some("127.0.0.1"), &up);
    let a = "203.0.113.10";
    assert!(!limited(&call(&x, 1, Some(a))));
    // A client-written left part changes nothing: still client a.
    assert!(!limited(&call(&x, 2, Some(&format!("198.51.100.1, {a}")))));
    // a's burst (2) is spent; the bucket refills one call a second, so on
    // a loaded machine a call or two may pass before a is refused.
    let mut n = 3;
    while !limited(&call(&x, n, Some(a))) {
        n += 1;
        assert!(n <= 8, "client a was never rate limited");
    }
    // Client b, through the same proxy, has its own bucket.
    assert!(!limited(&call(&x, n + 1, Some("203.0.113.20"))));
    let lines = call_lines(&x, n as usize + 1);
    let first = |l: &str| l.split(' ').nth(1).unwrap().to_string();
    let port = |l: &str| l.rsplit_once(" via=127.0.0.1:").map(|(_, p)| p.to_string());
    let mut want = vec![a; n as usize];
    want.push("203.0.113.20");
    want.sort_unstable();
    // Compared as a multiset: each connection may land on another event
    // loop, and a loop writes its access-log line after the answer is sent,
    // so two loops' lines can reach stderr in either order.
    let mut got = lines.iter().map(|l| first(l)).collect::<Vec<_>>();
    got.sort_unstable();
    assert_eq!(got, want, "{lines:#?}");
    assert!(lines.iter().all(|l| port(l).is_some()), "{lines:#?}");
}

#[test]
fn without_trusted_proxies_the_header_is_ignored() {
    let up = upstream();
    let x = start(None, &up);
    assert!(!limited(&call(&x, 1, Some("203.0.113.10"))));
    assert!(!limited(&call(&x, 2, Some("203.0.113.20"))));
    // Same TCP peer, same bucket, whatever the header says.
    assert!(limited(&call(&x, 3, Some("203.0.113.30"))));
    let lines = call_lines(&x, 3);
    assert!(
        lines
            .iter()
            .all(|l| l.split(' ').nth(1).unwrap().starts_with("127.0.0.1:") && !l.contains("via=")),
        "{lines:#?}"
    );
}
