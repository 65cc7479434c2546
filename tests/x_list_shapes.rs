//! Attacks on the list tools through their upstream and their arguments
//! (issue 15, helper G), each class proved with generated inputs judged by
//! an oracle that knows what it generated:
//!
//! - a list answer that is not an object is the general unexpected-answer
//!   error, one without `results` a shape error naming it; neither is an
//!   empty list;
//! - a list row of the wrong kind or without a linkable identity (an id
//!   that is not digits, a handle that is not one) is skipped, never shown
//!   as `[@ (@)](https://x.com/)` or a post linking `/status/abc`;
//! - an id above 2^64 − 1 names no post and is refused before any upstream
//!   request;
//! - every continuation link a quotes/reposts result writes is a route
//!   this server answers with the same tool, whatever the handle (`i` from
//!   `/i/status/<id>`, reserved names such as `api` and `search`).

mod common;

use common::browse::{ok, run, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::app::xroutes::{match_path, reserved_names};
use xmd::x::registry::Tool;

/// The list tools and the upstream path their first page asks for (post
/// 7, account `acct`, query `q`).
const LISTS: [(&str, &str, &str); 4] = [
    (
        "x_md_get_quotes",
        "/2/status/7/quotes?count=20",
        "a list page",
    ),
    (
        "x_md_get_reposts",
        "/2/status/7/reposts?count=20",
        "a list page",
    ),
    (
        "x_md_get_followers",
        "/2/profile/acct/followers?count=20",
        "a list page",
    ),
    (
        "x_md_search_posts",
        "/2/search?q=q&feed=latest&count=20",
        "a search page",
    ),
];

/// The account `acct`, public.
const PROFILE: &str = r#"{"code":200,"message":"OK","user":{"type":"profile","id":"1","screen_name":"acct","name":"A","protected":false}}"#;

fn args_for(tool: &str) -> Value {
    match tool {
        "x_md_get_quotes" | "x_md_get_reposts" => json!({"handle": "a", "id": "7"}),
        "x_md_get_followers" => json!({"handle": "acct"}),
        _ => json!({"q": "q"}),
    }
}

/// A top-level member of a generated list answer.
fn member() -> impl Strategy<Value = (String, Value)> {
    prop_oneof![
        Just(("code".to_string(), json!(200))),
        Just(("message".to_string(), json!("OK"))),
        Just(("cursor".to_string(), json!({"top": null, "bottom": null}))),
        Just(("results".to_string(), json!([]))),
        Just(("results".to_string(), json!(null))),
        Just(("results".to_string(), json!(["row", 1]))),
        Just(("data".to_string(), json!([{"id": "1"}]))),
        "[a-z]{1,8}".prop_map(|k| (k, json!(1))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Oracle: an answer is a list exactly when it is an object with a
    /// `results` member; any other JSON is an error that says which.
    #[test]
    fn a_list_answer_without_results_is_a_shape_error(
        members in prop::collection::vec(member(), 0..5),
        as_array in any::<bool>(),
        which in 0..LISTS.len(),
    ) {
        let (tool, path, what) = LISTS[which];
        let obj: serde_json::Map<String, Value> = members.into_iter().collect();
        let has_results = obj.contains_key("results");
        let body = if as_array {
            Value::Array(obj.into_values().collect()).to_string()
        } else {
            Value::Object(obj).to_string()
        };
        let fake = FakeUpstream::start();
        fake.on(path, Answer::json(200, &body));
        // An empty first followers page asks for the account (to say why).
        fake.on("/2/profile/acct", Answer::json(200, PROFILE));
        let tools = tools_for(&fake);
        let out = run(&tools, tool, args_for(tool));
        let want = if as_array {
            "FxTwitter upstream returned an unexpected response (not the JSON it should send).".to_string()
        } else {
            format!("FxTwitter answered {what} that is not the expected shape: `results` is missing.")
        };
        if as_array || !has_results {
            prop_assert!(out.is_error, "{body}: {}", out.text);
            prop_assert_eq!(
                out.text,
                format!("{want} (HTTP 502, code upstream_invalid_response)")
            );
        } else {
            prop_assert!(!out.is_error, "{body}: {}", out.text);
        }
    }
}

/// How a generated row spells its id.
#[derive(Debug, Clone, Copy)]
enum IdForm {
    Digits,
    Number,
    Letters,
    Negative,
    Empty,
    Absent,
}

/// How a generated row spells its handle.
#[derive(Debug, Clone, Copy)]
enum HandleForm {
    Valid,
    Space,
    Markdown,
    Dash,
    Empty,
    Absent,
}

#[derive(Debug, Clone)]
struct GenRow {
    kind: Option<&'static str>,
    id: IdForm,
    handle: HandleForm,
}

fn gen_row() -> impl Strategy<Value = GenRow> {
    let kind = prop::sample::select(vec![
        None,
        Some("status"),
        Some("profile"),
        Some("user"),
        Some("tombstone"),
    ]);
    let id = prop::sample::select(vec![
        IdForm::Digits,
        IdForm::Number,
        IdForm::Letters,
        IdForm::Negative,
        IdForm::Empty,
        IdForm::Absent,
    ]);
    let handle = prop::sample::select(vec![
        HandleForm::Valid,
        HandleForm::Space,
        HandleForm::Markdown,
        HandleForm::Dash,
        HandleForm::Empty,
        HandleForm::Absent,
    ]);
    (kind, id, handle).prop_map(|(kind, id, handle)| GenRow { kind, id, handle })
}

impl GenRow {
    /// The row's id in JSON (unique per row: `1000 + i`).
    fn id_json(&self, i: usize) -> Option<Value> {
        let n = 1000 + i as u64;
        match self.id {
            IdForm::Digits => Some(json!(n.to_string())),
            IdForm::Number => Some(json!(n)),
            IdForm::Letters => Some(json!(format!("abc{i}"))),
            IdForm::Negative => Some(json!(format!("-{n}"))),
            IdForm::Empty => Some(json!("")),
            IdForm::Absent => None,
        }
    }

    /// The row's handle (unique per row).
    fn handle_text(&self, i: usize) -> Option<String> {
        match self.handle {
            HandleForm::Valid => Some(format!("user_{i}")),
            HandleForm::Space => Some(format!("user {i}")),
            HandleForm::Markdown => Some(format!("](javascript:{i})")),
            HandleForm::Dash => Some(format!("user-{i}")),
            HandleForm::Empty => Some(String::new()),
            HandleForm::Absent => None,
        }
    }

    fn valid_id(&self) -> bool {
        matches!(self.id, IdForm::Digits | IdForm::Number)
    }

    /// The row as a status (its handle on `author`).
    fn as_status(&self, i: usize) -> Value {
        let mut m = serde_json::Map::new();
        if let Some(k) = self.kind {
            m.insert("type".into(), json!(k));
        }
        if let Some(id) = self.id_json(i) {
            m.insert("id".into(), id);
        }
        m.insert("text".into(), json!(format!("row {i}")));
        if let Some(h) = self.handle_text(i) {
            m.insert("author".into(), json!({"screen_name": h, "name": "N"}));
        }
        Value::Object(m)
    }

    /// The row as an account.
    fn as_user(&self, i: usize) -> Value {
        let mut m = serde_json::Map::new();
        if let Some(k) = self.kind {
            m.insert("type".into(), json!(k));
        }
        if let Some(id) = self.id_json(i) {
            m.insert("id".into(), id);
        }
        if let Some(h) = self.handle_text(i) {
            m.insert("screen_name".into(), json!(h));
        }
        m.insert("name".into(), json!("N"));
        Value::Object(m)
    }
}

fn page(rows: Vec<Value>) -> String {
    json!({"code": 200, "results": rows, "cursor": {"top": null, "bottom": null}}).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Oracle: the generator's own labels. A posts list (quotes, search)
    /// serves exactly the rows typed `status` or untyped, with a digit id,
    /// whose author, when named, has a valid handle; an accounts list
    /// (reposts, followers) serves exactly the rows not typed as a post or
    /// tombstone whose handle is valid. Order is kept.
    #[test]
    fn list_rows_without_a_linkable_identity_are_skipped(
        rows in prop::collection::vec(gen_row(), 0..12),
    ) {
        let fake = FakeUpstream::start();
        let statuses: Vec<Value> = rows.iter().enumerate().map(|(i, r)| r.as_status(i)).collect();
        let users: Vec<Value> = rows.iter().enumerate().map(|(i, r)| r.as_user(i)).collect();
        fake.on(LISTS[0].1, Answer::json(200, &page(statuses.clone())));
        fake.on(LISTS[3].1, Answer::json(200, &page(statuses)));
        fake.on(LISTS[1].1, Answer::json(200, &page(users.clone())));
        fake.on(LISTS[2].1, Answer::json(200, &page(users)));
        fake.on("/2/profile/acct", Answer::json(200, PROFILE));
        let tools = tools_for(&fake);

        let want_posts: Vec<String> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.kind, None | Some("status")))
            .filter(|(_, r)| r.valid_id())
            .filter(|(_, r)| matches!(r.handle, HandleForm::Valid | HandleForm::Absent))
            .map(|(i, _)| (1000 + i).to_string())
            .collect();
        let want_users: Vec<String> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| !matches!(r.kind, Some("status" | "tombstone")))
            .filter(|(_, r)| matches!(r.handle, HandleForm::Valid))
            .map(|(i, _)| format!("user_{i}"))
            .collect();
        for (tool, key, field, want) in [
            ("x_md_get_quotes", "posts", "id", &want_posts),
            ("x_md_search_posts", "posts", "id", &want_posts),
            ("x_md_get_reposts", "users", "screen_name", &want_users),
            ("x_md_get_followers", "users", "screen_name", &want_users),
        ] {
            let out = ok(&tools, tool, args_for(tool));
            let s = out.structured.unwrap();
            let got: Vec<String> = s[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r[field].as_str().unwrap_or("<none>").to_string())
                .collect();
            prop_assert_eq!(&got, want, "{}", tool);
            // No row renders as a link to X's home page.
            prop_assert!(!out.text.contains("](https://x.com/)"), "{}", out.text);
        }
    }

    /// Oracle: `u128` arithmetic. A 1–20 digit id (leading zeros allowed)
    /// is accepted exactly when its value fits an unsigned 64-bit integer.
    #[test]
    fn an_id_is_accepted_exactly_when_it_fits_u64(
        v in prop_oneof![
            0u128..=u64::MAX as u128,
            (u64::MAX as u128 + 1)..=99_999_999_999_999_999_999u128,
            (u64::MAX as u128 - 3)..=(u64::MAX as u128 + 3),
        ],
        zeros in 0usize..4,
    ) {
        let mut s = v.to_string();
        s.insert_str(0, &"0".repeat(zeros));
        prop_assume!(s.len() <= 20);
        prop_assert_eq!(xmd::x::url::is_post_id(&s), v <= u64::MAX as u128, "{}", s);
        prop_assert!(xmd::x::url::is_id(&s), "{}", s);
    }
}

#[test]
fn an_id_above_u64_is_refused_before_any_upstream_request() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/status/18446744073709551615/quotes?count=20",
        Answer::json(200, &page(vec![])),
    );
    let tools = tools_for(&fake);
    for id in ["18446744073709551616", "99999999999999999999"] {
        for tool in ["x_md_get_quotes", "x_md_get_reposts", "x_md_get_post"] {
            let e = xmd::x::tools::Tools::prepare(tool, Some(&json!({"handle": "a", "id": id})))
                .unwrap_err();
            assert_eq!(
                format!("{e:?}"),
                format!("InvalidArguments(\"`id` must be a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0), e.g. \\\"1800000000000000001\\\" (send it quoted: JSON numbers cannot hold post ids exactly)\")"),
                "{tool} {id}"
            );
        }
        let url = format!("https://x.com/a/status/{id}");
        assert!(
            xmd::x::tools::Tools::prepare("x_md_get_quotes", Some(&json!({ "url": url }))).is_err()
        );
    }
    // The largest u64 is a post id like any other.
    let out = ok(
        &tools,
        "x_md_get_quotes",
        json!({"handle": "a", "id": "18446744073709551615"}),
    );
    assert!(
        out.text.contains("\nNo quotes on this page.\n"),
        "{}",
        out.text
    );
    assert_eq!(fake.request_count(), 1);
}

/// The self-link targets in Markdown text (the runner's public URL is
/// empty, so they are paths), without their query.
fn link_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let tail = &rest[i + 2..];
        let end = tail.find(')').unwrap();
        let target = &tail[..end];
        if target.starts_with('/') {
            out.push(target.split('?').next().unwrap().to_string());
        }
        rest = &tail[end..];
    }
    out
}

fn handle_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_]{1,20}",
        prop::sample::select(reserved_names()).prop_map(str::to_string),
        prop::sample::select(reserved_names()).prop_map(|s| s.to_ascii_uppercase()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Oracle: the server's own router. Every self link a quotes or
    /// reposts result writes (continue, next page) is a route of the same
    /// tool, for any handle the arguments accept.
    #[test]
    fn every_continuation_link_is_a_route_of_its_tool(handle in handle_strategy()) {
        let fake = FakeUpstream::start();
        let two: Vec<Value> = (0..2)
            .map(|i| json!({"type": "status", "id": format!("{}", 10 + i), "text": "t",
                "author": {"screen_name": "q", "name": "Q"}}))
            .collect();
        let users: Vec<Value> = (0..2)
            .map(|i| json!({"type": "profile", "id": format!("{}", 10 + i), "screen_name": format!("r{i}")}))
            .collect();
        fake.on("/2/status/7/quotes?count=20", Answer::json(200, &page(two)));
        fake.on("/2/status/7/reposts?count=20", Answer::json(200, &page(users)));
        let tools = tools_for(&fake);
        for (tool, name) in [(Tool::GetQuotes, "x_md_get_quotes"), (Tool::GetReposts, "x_md_get_reposts")] {
            let out = ok(&tools, name, json!({"handle": handle, "id": "7", "limit": 1}));
            let links = link_paths(&out.text);
            prop_assert_eq!(links.len(), 2, "{}", out.text);
            for p in links {
                let m = match_path(&p);
                prop_assert!(m.is_some(), "{} writes {}, which no route answers", name, p);
                prop_assert_eq!(m.unwrap().tool, tool, "{}", p);
            }
        }
    }
}

#[test]
fn a_handle_less_permalink_names_no_author() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/status/7/quotes?count=20",
        Answer::json(200, &page(vec![])),
    );
    let tools = tools_for(&fake);
    let out = ok(
        &tools,
        "x_md_get_quotes",
        json!({"url": "https://x.com/i/status/7"}),
    );
    assert_eq!(
        out.text,
        "# Quotes of post 7\n\nPost: <https://x.com/i/status/7>\n\nNo quotes on this page.\n"
    );
    let m = match_path("/i/status/7/retweets").unwrap();
    assert_eq!(
        (m.tool, m.handle, m.id),
        (Tool::GetReposts, Some("i"), Some("7"))
    );
    let m = match_path("/i/status/7/quotes").unwrap();
    assert_eq!(
        (m.tool, m.handle, m.id),
        (Tool::GetQuotes, Some("i"), Some("7"))
    );
}
