//! Every cursor a list walk writes is one it reads back (issue 15, helper
//! G, round 21). An upstream page of more than `MAX_CURSOR_OFFSET` (1000)
//! rows made the walk write `@1001`, `@1020`, … into `next_cursor`, and the
//! next call refused that cursor as "not one xmd issued". Now a walk reads
//! at most `MAX_CURSOR_OFFSET` rows of one upstream page (with a note) and
//! goes on at the page's bottom cursor.
//!
//! The same class from the upstream's `cursor.bottom`: one longer than
//! 900 bytes or with characters an xmd cursor does not carry (`:`, `@`,
//! `!`, spaces, non-ASCII) was written into `next_cursor` and then refused
//! (or, with `@<digits>`, misread as an offset). Now the walk ends there
//! with a note.
//!
//! Oracle: the rows the generator put on its two upstream pages: the walk
//! serves the first 1000 of each page, in order, each once, and every
//! position it hands out survives `cursor::encode` then `cursor::decode`;
//! a bottom cursor drawn from the base64 alphabet within 900 bytes always
//! reaches the second page.

mod common;

use common::browse::{ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::browse::{long_page_note, walk_list, ListPage, UNCARRIABLE_NOTE};
use xmd::x::cursor::{self, CursorKind, MAX_CURSOR_OFFSET};

fn rows(first: usize, n: usize) -> Vec<Value> {
    (first..first + n)
        .map(|i| json!({ "id": i.to_string() }))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn every_position_a_walk_hands_out_reads_back(
        n1 in prop_oneof![0usize..40, 990usize..1030, 1500usize..2100],
        n2 in prop_oneof![0usize..40, 995usize..1010],
        limit in 7usize..=20,
    ) {
        let (p1, p2) = (rows(1, n1), rows(10_001, n2));
        let mut fetch = |c: &str| -> Result<ListPage<Value>, xmd::x::error::XError> {
            Ok(match c {
                "" => ListPage { items: p1.clone(), bottom: Some("B1".into()) },
                "B1" => ListPage { items: p2.clone(), bottom: None },
                other => panic!("asked for {other}"),
            })
        };
        // An empty upstream page that carries a new cursor is read past.
        let second = &p2[..];
        let want: Vec<String> = p1.iter().take(MAX_CURSOR_OFFSET).chain(second.iter().take(MAX_CURSOR_OFFSET))
            .map(|r| r["id"].as_str().unwrap().to_string()).collect();
        let mut got = Vec::new();
        let mut start = None;
        let mut notes = Vec::new();
        for _ in 0..500 {
            let w = walk_list(&mut fetch, &|_: &Value| true, start.take(), 1, limit).unwrap();
            prop_assert!(w.items.len() <= limit);
            got.extend(w.items.iter().map(|r| r["id"].as_str().unwrap().to_string()));
            notes.extend(w.notes.clone());
            let Some(next) = w.next else { break };
            let (key, scope) = (cursor::CursorKey::random(), cursor::Bound::scope("scope"));
            let c = cursor::encode(&key, CursorKind::Followers, &scope, &next);
            let back = cursor::decode(&key, &c, CursorKind::Followers, &scope);
            prop_assert!(back.is_ok(), "{} refused: {:?}", c, back);
            let back = back.unwrap();
            prop_assert_eq!((&back.upstream, back.offset), (&next.upstream, next.offset));
            start = Some(back);
        }
        prop_assert_eq!(got, want);
        // Both pages are read whatever n1 (an empty first page that
        // carries a cursor is read past), so either page may be long.
        let long = n1 > MAX_CURSOR_OFFSET || n2 > MAX_CURSOR_OFFSET;
        prop_assert_eq!(notes.contains(&long_page_note()), long, "{:?}", notes);
    }
}

/// How a generated `cursor.bottom` is spelled, and whether it is plain
/// base64 within 900 bytes (then the walk must follow it).
fn bottom() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        "[A-Za-z0-9+/]{1,896}={0,2}".prop_map(|b| (b, true)),
        "[A-Za-z0-9]{901,1000}".prop_map(|b| (b, false)),
        "[A-Za-z0-9]{1,10}[:@! %é][0-9]{1,3}".prop_map(|b| (b, false)),
        // Any text holding a character outside base64 and URL-safe
        // punctuation (a bare `a` would be a cursor xmd carries).
        "\\PC{1,30}"
            .prop_filter("holds a character no cursor carries", |b| {
                b.bytes()
                    .any(|c| !(c.is_ascii_alphanumeric() || b"-_=+/|.~".contains(&c)))
            })
            .prop_map(|b| (b, false)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_cursor_handed_out_reads_back_whatever_the_upstream_bottom(
        (b1, plain) in bottom(),
        n1 in 1usize..6,
        limit in 1usize..=4,
    ) {
        let (p1, p2) = (rows(1, n1), rows(100, 3));
        let b = b1.clone();
        let mut fetch = |c: &str| -> Result<ListPage<Value>, xmd::x::error::XError> {
            Ok(if c.is_empty() {
                ListPage { items: p1.clone(), bottom: Some(b.clone()) }
            } else if c == b {
                ListPage { items: p2.clone(), bottom: None }
            } else {
                panic!("asked for {c:?}")
            })
        };
        let all: Vec<String> = p1.iter().chain(p2.iter())
            .map(|r| r["id"].as_str().unwrap().to_string()).collect();
        let mut got = Vec::new();
        let mut start = None;
        for _ in 0..20 {
            let w = walk_list(&mut fetch, &|_: &Value| true, start.take(), 1, limit).unwrap();
            got.extend(w.items.iter().map(|r| r["id"].as_str().unwrap().to_string()));
            let Some(next) = w.next else { break };
            let (key, scope) = (cursor::CursorKey::random(), cursor::Bound::scope("scope"));
            let c = cursor::encode(&key, CursorKind::Followers, &scope, &next);
            let back = cursor::decode(&key, &c, CursorKind::Followers, &scope);
            prop_assert!(back.is_ok(), "{} refused: {:?}", c, back);
            let back = back.unwrap();
            prop_assert_eq!((&back.upstream, back.offset), (&next.upstream, next.offset));
            start = Some(back);
        }
        // A prefix of the list, in order, each row once; whole when the
        // bottom cursor is plain base64.
        prop_assert_eq!(&all[..got.len()], &got[..]);
        prop_assert!(got.len() >= n1);
        if plain {
            prop_assert_eq!(got, all);
        }
    }
}

/// End to end through `x_md_get_quotes`: one upstream page of 1,040 quotes
/// is read by `next_cursor` to its 1000th row, and no cursor is refused.
#[test]
fn a_long_upstream_page_is_walked_to_its_bound() {
    let quotes: Vec<Value> = (0..1040)
        .map(|i| {
            json!({"type": "status", "id": (100 + i).to_string(), "text": "q",
                "created_timestamp": 1, "author": {"id": "1", "screen_name": "bob", "name": "B"}})
        })
        .collect();
    let body = json!({"code": 200, "results": quotes, "cursor": {"top": null, "bottom": null}})
        .to_string();
    let fake = FakeUpstream::start();
    fake.on("/2/status/7/quotes?count=20", Answer::json(200, &body));
    let tools = tools_for(&fake);
    let mut args = json!({"handle": "a", "id": "7"});
    let mut served = 0;
    for call in 1.. {
        let out = ok(&tools, "x_md_get_quotes", args.clone());
        let s = out.structured.unwrap();
        served += s["posts"].as_array().unwrap().len();
        assert_eq!(s["warnings"], json!([long_page_note()]), "call {call}");
        match s.get("next_cursor").and_then(Value::as_str) {
            Some(c) => args["cursor"] = json!(c),
            None => break,
        }
        assert!(call < 60, "runaway walk");
    }
    assert_eq!(served, MAX_CURSOR_OFFSET);
}

/// The list tools, the upstream path of their first page (post 7, account
/// `acct`, query `q`), their arguments and the row they are sent.
fn list_tools() -> Vec<(&'static str, &'static str, Value, Value)> {
    let status = json!({"type": "status", "id": "8", "text": "t", "created_timestamp": 1,
        "author": {"id": "1", "screen_name": "acct", "name": "A"}});
    let user = json!({"type": "profile", "id": "9", "screen_name": "someone", "name": "S"});
    vec![
        (
            "x_md_get_quotes",
            "/2/status/7/quotes?count=20",
            json!({"handle": "a", "id": "7"}),
            status.clone(),
        ),
        (
            "x_md_get_reposts",
            "/2/status/7/reposts?count=20",
            json!({"handle": "a", "id": "7"}),
            user.clone(),
        ),
        (
            "x_md_get_followers",
            "/2/profile/acct/followers?count=20",
            json!({"handle": "acct"}),
            user.clone(),
        ),
        (
            "x_md_get_following",
            "/2/profile/acct/following?count=20",
            json!({"handle": "acct"}),
            user,
        ),
        (
            "x_md_search_posts",
            "/2/search?q=q&feed=latest&count=20",
            json!({"q": "q"}),
            status.clone(),
        ),
        (
            "x_md_get_profile",
            "/2/profile/acct/statuses?count=20&with_replies=false",
            json!({"handle": "acct"}),
            status,
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// End to end, every list tool (the profile's timeline walks its own
    /// way): a bottom cursor xmd cannot carry ends the list with the note,
    /// and no `next_cursor` is handed out.
    #[test]
    fn every_list_tool_ends_at_a_bottom_it_cannot_carry(
        (bottom, plain) in bottom(),
        which in 0usize..6,
    ) {
        prop_assume!(!plain);
        let (tool, path, args, row) = list_tools().swap_remove(which);
        let fake = FakeUpstream::start();
        fake.on(path, Answer::json(200, &json!({"code": 200, "results": [row],
            "cursor": {"top": null, "bottom": bottom}}).to_string()));
        fake.on("/2/profile/acct", Answer::json(200, r#"{"code":200,"message":"OK","user":{"type":"profile","id":"1","screen_name":"acct","name":"A","protected":false}}"#));
        let tools = tools_for(&fake);
        let out = ok(&tools, tool, args);
        let s = out.structured.unwrap();
        prop_assert_eq!(s.get("next_cursor"), None, "{}", tool);
        prop_assert_eq!(&s["warnings"], &json!([UNCARRIABLE_NOTE]), "{}", tool);
    }
}
