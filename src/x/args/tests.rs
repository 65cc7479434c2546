//! The unit tests of argument parsing and validation: targets, defaults,
//! the C14 messages, ranges, types and lengths.

use super::*;
use crate::x::url::StatusRef;
use serde_json::{json, Map, Value};

fn post(v: Value) -> Result<PostArgs, String> {
    parse_post(Some(&v))
}

#[test]
fn empty_post_args_name_both_forms() {
    let e = post(json!({})).unwrap_err();
    assert!(e.starts_with("supply `url` (e.g."), "{e}");
    assert_eq!(parse_post(None).unwrap_err(), e);
    assert_eq!(post(json!({"handle": "a"})).unwrap_err(), e);
}

#[test]
fn ambiguous_target() {
    let e = post(json!({"url": "https://x.com/a/status/1", "handle": "a", "id": "1"})).unwrap_err();
    assert_eq!(
        e,
        "ambiguous target: supply either `url`, or `handle` and `id`, not both"
    );
}

#[test]
fn numeric_id_asks_for_string() {
    let e = post(json!({"handle": "a", "id": 1800000000000000001u64})).unwrap_err();
    assert!(
        e.starts_with(
            "`id` must be a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0)"
        ),
        "{e}"
    );
    assert!(e.contains("send it quoted"), "{e}");
    let e = post(json!({"handle": "a", "id": "180000000000000000199"})).unwrap_err();
    assert!(
        e.starts_with(
            "`id` must be a string of 1 to 20 decimal digits (at most 18446744073709551615, not 0)"
        ),
        "{e}"
    );
}

#[test]
fn defaults_and_handle_strip() {
    let a = post(json!({"handle": "@Example_User", "id": "18"})).unwrap();
    assert_eq!(
        a,
        PostArgs {
            target: StatusRef {
                handle: "example_user".into(),
                id: "18".into()
            },
            thread: Thread::Full,
            replies: Replies::Top,
            max_posts: 100,
            format: Format::Markdown,
            full: false,
            userinfo: UserInfo::Off,
            context: Context::Full,
            cursor: None,
            lang: None,
            max_chars: None,
        }
    );
    let a = post(
        json!({"url": "x.com/a/status/5", "thread": "off", "max_posts": 2.0, "format": "json"}),
    )
    .unwrap();
    assert_eq!(a.thread, Thread::Off);
    assert_eq!(a.max_posts, 2);
    assert_eq!(a.format, Format::Json);
}

#[test]
fn a_list_about_one_post_takes_its_target_and_list_arguments() {
    const PROPS: [Prop; 8] = [
        POST_URL,
        POST_HANDLE,
        POST_ID,
        PAGE,
        LIMIT,
        CURSOR,
        FULL,
        MAX_CHARS,
    ];
    let a = parse_post_list(
        Some(&json!({"url": "https://x.com/Demo/status/0018", "limit": 5.0, "full": true})),
        &PROPS,
    )
    .unwrap();
    assert_eq!(
        a,
        PostListArgs {
            target: StatusRef {
                handle: "demo".into(),
                id: "18".into()
            },
            list: BrowseArgs {
                handle: String::new(),
                page: 1,
                limit: 5,
                cursor: None,
                full: true,
                max_chars: None
            }
        }
    );
    let mut m = Map::new();
    a.canonical(&mut m);
    assert_eq!(
        Value::Object(m),
        json!({"handle": "demo", "id": "18", "limit": 5, "full": true})
    );
    let b = parse_post_list(
        Some(&json!({"handle": "@demo", "id": "18", "limit": 5, "full": true})),
        &PROPS,
    )
    .unwrap();
    assert_eq!(a, b);
    assert!(parse_post_list(Some(&json!({"handle": "demo"})), &PROPS)
        .unwrap_err()
        .starts_with("supply `url`"));
    assert_eq!(
        parse_post_list(
            Some(&json!({"url": "x.com/a/status/1", "thread": "off"})),
            &PROPS
        )
        .unwrap_err(),
        "unknown property `thread`; allowed: url, handle, id, page, limit, cursor, full, max_chars"
    );
}

#[test]
fn c14_messages() {
    let e = validate(
        Some(&json!({"handle": "has spaces here"})),
        &PROFILE_PROPS,
        &["handle"],
    )
    .unwrap_err();
    assert_eq!(e, format!("`handle` must be {HANDLE_WHAT}"));
    let e = validate(Some(&json!({})), &PROFILE_PROPS, &["handle"]).unwrap_err();
    assert_eq!(e, "missing required property `handle`");
    let e = validate(
        Some(&json!({"query": "rust", "limit": 500})),
        &SEARCH_PROPS,
        &["q"],
    )
    .unwrap_err();
    assert_eq!(
        e,
        "unknown property `query` (did you mean `q`?); allowed: q, feed, page, limit, cursor, full, max_chars; \
         `limit` must be an integer from 1 to 20; missing required property `q`"
    );
    let e = validate(
        Some(&json!({"handle": "example_user", "unknown_flag": true})),
        &PROFILE_PROPS,
        &["handle"],
    )
    .unwrap_err();
    assert_eq!(
        e,
        "unknown property `unknown_flag`; allowed: handle, feed, with_replies, since, page, limit, cursor, full, max_chars"
    );
    let e = validate(
        Some(&json!("handle=example_user")),
        &PROFILE_PROPS,
        &["handle"],
    )
    .unwrap_err();
    assert_eq!(
        e,
        "`arguments` must be a JSON object, e.g. {\"handle\": \"example_user\"}"
    );
}

#[test]
fn ranges_types_and_lengths() {
    let e = validate(
        Some(&json!({"q": "x", "page": 11, "full": "yes", "feed": "LATEST"})),
        &SEARCH_PROPS,
        &["q"],
    )
    .unwrap_err();
    assert_eq!(
        e,
        "`feed` must be one of: latest, top, photos, videos, media, users; `page` must be an integer from 1 to 10; \
         `full` must be a boolean (true or false)"
    );
    assert!(validate(Some(&json!({"q": "🦀".repeat(500)})), &SEARCH_PROPS, &["q"]).is_ok());
    let e = validate(Some(&json!({"q": "🦀".repeat(501)})), &SEARCH_PROPS, &["q"]).unwrap_err();
    assert!(
        e.starts_with("`q` must be a search query of 1 to 500"),
        "{e}"
    );
    let e = validate(Some(&json!({"q": "   "})), &SEARCH_PROPS, &["q"]).unwrap_err();
    assert!(e.starts_with("`q` must be a search query"), "{e}");
    let e = validate(
        Some(&json!({"handle": "a", "limit": 1.5})),
        &PROFILE_PROPS,
        &["handle"],
    )
    .unwrap_err();
    assert_eq!(e, "`limit` must be an integer from 1 to 20");
    let e = validate(
        Some(&json!({"handle": "a", "cursor": ""})),
        &PROFILE_PROPS,
        &["handle"],
    )
    .unwrap_err();
    assert!(
        e.starts_with("`cursor` must be a string of 1 to 1024 characters"),
        "{e}"
    );
    let e = validate(Some(&json!({"handle": null})), &PROFILE_PROPS, &["handle"]).unwrap_err();
    assert_eq!(e, format!("`handle` must be {HANDLE_WHAT}"));
}
