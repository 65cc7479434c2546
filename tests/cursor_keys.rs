//! Issue #32 item 6: continuation cursors carry an HMAC-SHA256 tag under
//! a key (`--cursor-secret`, else random per process). Any change to a
//! cursor is refused with the tool's `invalid_cursor` error before any
//! upstream request; the replicas of a fleet (real processes sharing one
//! secret) accept each other's cursors, and a process with another secret,
//! or none, refuses them.

mod common;
mod util;

use common::browse::tools_for;
use common::fake_upstream::FakeUpstream;
use common::timeline::serve_followers;
use proptest::prelude::*;
use serde_json::{json, Value};
use util::*;
use xmd::x::tools::{PrepareError, Tools};

const SECRET: &str = "fleet-secret-0123456789abcdef-0123456789";
const OTHER_SECRET: &str = "another-fleet-secret-0123456789abcdef-01";

fn call(x: &Xmd, tool: &str, args: &Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})
    .to_string();
    let h = [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-11-25",
    ];
    let r = roundtrip(x, &post(&x.host(), &h, &body));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"].clone()
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap()
}

fn users(r: &Value) -> Vec<String> {
    r["structuredContent"]["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_str().unwrap().to_string())
        .collect()
}

const FORGED: &str = "The cursor is not one this server issued for these arguments";

#[test]
fn replicas_with_one_secret_accept_each_others_cursors_and_others_refuse_them() {
    let up = FakeUpstream::start();
    let ids = serve_followers(&up, "followers");
    let base = up.base_url();
    let start = |extra: &[&str]| {
        let mut a = vec!["--upstream", base.as_str(), "--cache-bytes", "0"];
        a.extend_from_slice(extra);
        Xmd::start(&a)
    };
    let a = start(&["--cursor-secret", SECRET]);
    let b = start(&["--cursor-secret", SECRET]);
    let other = start(&["--cursor-secret", OTHER_SECRET]);
    let none = start(&[]);
    let args = json!({"handle": "demo_author", "limit": 5});
    let first = call(&a, "x_md_get_followers", &args);
    assert_eq!(users(&first), ids[..5]);
    let c = first["structuredContent"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let next = json!({"handle": "demo_author", "limit": 5, "cursor": c});
    // Replica B continues A's walk exactly where A would.
    let on_a = call(&a, "x_md_get_followers", &next);
    let on_b = call(&b, "x_md_get_followers", &next);
    assert_eq!(on_b["isError"], false, "{}", text(&on_b));
    assert_eq!(users(&on_b), ids[5..10]);
    assert_eq!(users(&on_a), users(&on_b));
    // B's cursor goes on at A.
    let c2 = on_b["structuredContent"]["next_cursor"].as_str().unwrap();
    let third = call(
        &a,
        "x_md_get_followers",
        &json!({"handle": "demo_author", "limit": 5, "cursor": c2}),
    );
    assert_eq!(users(&third), ids[10..15]);
    // Another secret, or a random key: refused, no upstream request.
    let before = up.request_count();
    for x in [&other, &none] {
        let r = call(x, "x_md_get_followers", &next);
        assert_eq!(r["isError"], true);
        assert!(text(&r).starts_with(FORGED), "{}", text(&r));
        assert!(text(&r).ends_with("(HTTP 400, code invalid_cursor)"));
    }
    // Replayed for another account at B: refused.
    let r = call(
        &b,
        "x_md_get_followers",
        &json!({"handle": "someone_else", "limit": 5, "cursor": c}),
    );
    assert!(
        text(&r).starts_with("This cursor belongs to @demo_author, not @someone_else."),
        "{}",
        text(&r)
    );
    // Replayed to another tool at B: refused.
    let r = call(
        &b,
        "x_md_get_following",
        &json!({"handle": "demo_author", "cursor": c}),
    );
    assert!(text(&r).starts_with("This cursor was issued by x_md_get_followers"));
    assert_eq!(
        up.request_count(),
        before,
        "a refused cursor reached the upstream"
    );
    // The start line says where the key comes from, never the secret.
    let line = a.log.lock().unwrap()[0].clone();
    assert!(line.contains(r#""cursor_key":"--cursor-secret""#), "{line}");
    assert!(!line.contains(SECRET));
    let line = none.log.lock().unwrap()[0].clone();
    assert!(
        line.contains(r#""cursor_key":"random per process""#),
        "{line}"
    );
}

#[test]
fn a_short_secret_is_a_usage_error() {
    for (flag, env) in [(Some("short-secret"), None), (None, Some("x".repeat(31)))] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_xmd"));
        cmd.args(["serve", "--listen", "127.0.0.1:0"]);
        if let Some(f) = flag {
            cmd.args(["--cursor-secret", f]);
        }
        if let Some(e) = &env {
            cmd.env("XMD_CURSOR_SECRET", e);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        let (name, n) = if flag.is_some() {
            ("--cursor-secret", 12)
        } else {
            ("XMD_CURSOR_SECRET", 31)
        };
        assert!(
            err.contains(&format!("invalid {name}: {n} bytes, expected at least 32")),
            "{err}"
        );
        assert!(!err.contains("short-secret"), "{err}");
    }
}

/// FNV-1a, 32 bits: the check cursors carried before they had a key.
fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// One change to a valid cursor.
#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, char),
    Remove(usize),
    Insert(usize, char),
    Truncate(usize),
}

fn mutated(c: &str, m: &Mutation) -> Option<String> {
    let mut chars: Vec<char> = c.chars().collect();
    let n = chars.len();
    match *m {
        Mutation::Replace(i, ch) => {
            if chars[i % n] == ch {
                return None;
            }
            chars[i % n] = ch;
        }
        Mutation::Remove(i) => {
            chars.remove(i % n);
        }
        Mutation::Insert(i, ch) => chars.insert(i % (n + 1), ch),
        Mutation::Truncate(i) => chars.truncate(i % n),
    }
    Some(chars.into_iter().collect())
}

fn mutations() -> impl Strategy<Value = Mutation> {
    let ch = prop_oneof![
        prop::sample::select("AZaz09-_|:@!%3a.".chars().collect::<Vec<_>>()),
        any::<char>(),
    ];
    prop_oneof![
        (any::<usize>(), ch.clone()).prop_map(|(i, c)| Mutation::Replace(i, c)),
        any::<usize>().prop_map(Mutation::Remove),
        (any::<usize>(), ch).prop_map(|(i, c)| Mutation::Insert(i, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any change of any character of a real `next_cursor` (second page,
    /// with an upstream cursor and row marks): the call is refused with
    /// the tool's `invalid_cursor` error (or, for a cursor no longer
    /// between 1 and 1024 characters, the -32602 of bad arguments), and
    /// the upstream is not asked. The same change with the old unkeyed
    /// check (FNV-1a of the rest) recomputed, as anyone could: refused
    /// too; the old code accepted that one whenever the change kept the
    /// cursor well formed.
    #[test]
    fn any_change_to_a_cursor_is_refused_before_the_upstream(m in mutations()) {
        let fake = FakeUpstream::start();
        serve_followers(&fake, "followers");
        let tools = tools_for(&fake);
        let first = common::browse::ok(&tools, "x_md_get_followers", json!({"handle": "demo_author", "limit": 7}));
        let c = first.structured.unwrap()["next_cursor"].as_str().unwrap().to_string();
        let second = common::browse::ok(&tools, "x_md_get_followers", json!({"handle": "demo_author", "limit": 7, "cursor": c}));
        let c = second.structured.unwrap()["next_cursor"].as_str().unwrap().to_string();
        prop_assert!(c.contains('|') && c.contains('!'), "{}", c);
        let Some(bad) = mutated(&c, &m) else { return Ok(()) };
        let before = fake.request_count();
        let body = bad.rsplit_once(':').map_or(bad.as_str(), |(b, _)| b);
        let rechecked = format!("{body}:{:08x}", fnv1a(body));
        for bad in [bad.clone(), rechecked] {
        let args = json!({"handle": "demo_author", "limit": 7, "cursor": bad});
        match Tools::prepare("x_md_get_followers", Some(&args)) {
            Err(PrepareError::InvalidArguments(why)) => {
                prop_assert!(why.contains("cursor"), "{}", why);
            }
            Err(e) => prop_assert!(false, "{:?}", e),
            Ok(call) => {
                let out = tools.run(&call);
                prop_assert!(out.is_error, "{:?} accepted: {}", m, bad);
                prop_assert!(out.text.ends_with("(HTTP 400, code invalid_cursor)"), "{}", out.text);
            }
        }
        }
        prop_assert_eq!(fake.request_count(), before);
    }
}
